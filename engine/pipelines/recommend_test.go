package pipelines

import (
	"strings"
	"testing"
)

func ids(recs []Recommendation) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Entry.ID)
	}
	return out
}

func TestRecommendUseCaseCalibratedXGBoostFirst(t *testing.T) {
	c := loadBuiltin(t)
	for _, q := range []Query{
		{Framework: "xgboost", UseCase: "xgboost training with calibration"},
		{UseCase: "XGBoost training with calibration"},
		{Framework: "xgboost", Features: []string{"training", "calibration"}},
	} {
		recs := c.Recommend(q)
		if len(recs) == 0 || recs[0].Entry.ID != "xgboost_training_with_calibration" {
			t.Fatalf("%+v: got %v", q, ids(recs))
		}
		top := recs[0]
		if top.Score <= recs[1].Score && top.Entry.Complexity == recs[1].Entry.Complexity && top.Entry.NodeCount >= recs[1].Entry.NodeCount {
			t.Errorf("top is not strictly preferred: %+v vs %+v", top, recs[1])
		}
		if !strings.Contains(top.Reasoning, "calibration") || len(top.Components) != 4 {
			t.Errorf("score not explained: %+v", top)
		}
		sum := 0.0
		for _, comp := range top.Components {
			if comp.Score > comp.Max {
				t.Errorf("component above its max: %+v", comp)
			}
			sum += comp.Score
		}
		if diff := sum*top.Factor - top.Score; diff > 0.001 || diff < -0.001 {
			t.Errorf("components %v do not add up to %v", sum, top.Score)
		}
	}
}

func TestRecommendFiltersAndFactors(t *testing.T) {
	c := loadBuiltin(t)
	for _, r := range c.Recommend(Query{Framework: "lightgbm", MaxResults: 50}) {
		if r.Entry.Framework != "lightgbm" {
			t.Errorf("framework filter leaked %s", r.Entry.ID)
		}
	}
	if recs := c.Recommend(Query{DataType: "text", MaxResults: 50}); len(recs) == 0 {
		t.Error("text data: pytorch DAGs support text")
	} else {
		for _, r := range recs {
			if r.Entry.Framework != "pytorch" {
				t.Errorf("text data recommended %s", r.Entry.ID)
			}
		}
	}
	tab := c.Recommend(Query{DataType: "tabular", Framework: "pytorch"})
	if len(tab) == 0 || tab[0].Factor != 0.5 {
		t.Errorf("tabular+pytorch factor: %+v", tab)
	}
	if recs := c.Recommend(Query{Framework: "nope"}); len(recs) != 0 {
		t.Errorf("unknown framework returned %v", ids(recs))
	}
	if recs := c.Recommend(Query{UseCase: "registration deploy", MaxResults: 3}); len(recs) != 3 || !strings.Contains(recs[0].Entry.ID, "e2e") {
		t.Errorf("registration use case: %v", ids(recs))
	}
	no := false
	if recs := c.Recommend(Query{HasLabels: &no}); len(recs) == 0 || recs[0].Score != 0.3 || recs[0].Factors[0].Name != "labels" {
		t.Errorf("unlabelled data should cost a factor 0.3: %+v", recs)
	}
}

func TestAutoSelectDeterministic(t *testing.T) {
	c := loadBuiltin(t)
	first, ok := c.AutoSelect(Query{Framework: "xgboost"}, DefaultAutoSelectScore)
	if !ok || first.Entry.ID != "xgboost_simple_training" {
		t.Fatalf("auto_select xgboost = %+v %v (want the simplest xgboost DAG on a tie)", first.Entry, ok)
	}
	for i := 0; i < 20; i++ {
		again, _ := c.AutoSelect(Query{Framework: "xgboost"}, DefaultAutoSelectScore)
		if again.Entry.ID != first.Entry.ID {
			t.Fatalf("run %d picked %s", i, again.Entry.ID)
		}
	}
	if r, ok := c.AutoSelect(Query{Framework: "xgboost", Features: []string{"tuning"}}, 0.6); !ok || r.Entry.ID != "xgboost_hyperparameter_tuning" {
		t.Errorf("tuning pick = %+v", r.Entry)
	}
	if _, ok := c.AutoSelect(Query{Features: []string{"nonexistent"}, TaskType: "nothing"}, 0.99); ok {
		t.Error("threshold not applied")
	}
}

func TestParseUseCase(t *testing.T) {
	p := parseUseCase("PyTorch: train, then register the model; quantum stuff")
	if p.framework != "pytorch" || strings.Join(p.features, ",") != "training,registration" || strings.Join(p.ignored, ",") != "quantum,stuff" {
		t.Errorf("parsed = %+v", p)
	}
}
