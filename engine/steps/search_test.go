package steps

import (
	"reflect"
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	c := loadBuiltins(t)
	hits := c.Search("xgboost")
	if len(hits) < 5 || hits[0].StepType != "XGBoostTraining" {
		t.Fatalf("xgboost: %+v", hits)
	}
	for _, h := range hits {
		if h.MatchReason == "" || len(h.Reasons) == 0 {
			t.Fatalf("hit without a reason: %+v", h)
		}
	}
	names := func(hs []SearchHit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.StepType)
		}
		return out
	}
	cal := names(c.Search("calibrat"))
	if len(cal) < 2 || !(cal[0] == "ModelCalibration" || cal[0] == "PercentileModelCalibration") ||
		!(cal[1] == "ModelCalibration" || cal[1] == "PercentileModelCalibration") {
		t.Fatalf("calibrat: %v", cal)
	}
	// deterministic
	for range 5 {
		if !reflect.DeepEqual(c.Search("xgboost"), hits) {
			t.Fatal("search is not deterministic")
		}
	}
	if h := c.Search("XGBoostTraining"); h[0].StepType != "XGBoostTraining" || h[0].Score != 1 {
		t.Fatalf("exact: %+v", h[0])
	}
	if h := c.Search("Training"); h[0].Score < 0.5 || !strings.Contains(strings.Join(h[0].Reasons, ";"), "Training") {
		t.Fatalf("training: %+v", h)
	}
	if h := c.Search("batch transform"); len(h) == 0 || h[0].StepType != "BatchTransform" {
		t.Fatalf("two words: %+v", h)
	}
	for _, q := range []string{"", "   ", "!!!", strings.Repeat("x", 100000)} {
		if h := c.Search(q); len(h) != 0 {
			t.Fatalf("%q: %d hits", q[:min(len(q), 10)], len(h))
		}
	}
}

func TestSupportsJobType(t *testing.T) {
	c := loadBuiltins(t)
	if !c.SupportsJobType("TabularPreprocessing", "training") || !c.SupportsJobType("XGBoostModelEval", "calibration") {
		t.Fatal("job types not supported")
	}
	if c.SupportsJobType("Package", "training") || c.SupportsJobType("Nope", "x") {
		t.Fatal("Package has no job type")
	}
}

func TestIOView(t *testing.T) {
	c := loadBuiltins(t)
	x, _ := c.Get("XGBoostTraining")
	v := IO(x)
	if v.SageMakerStepType != SMTraining || v.DependencyCount != 2 || v.OutputCount != 2 {
		t.Fatalf("%+v", v)
	}
	in := v.Inputs[0]
	if in.LogicalName != "input_path" || in.ContainerPath != "/opt/ml/input/data" || strings.Join(in.Channels, ",") != "train,val,test" {
		t.Fatalf("input: %+v", in)
	}
	out := v.Outputs[0]
	if out.ContainerPath != "/opt/ml/model" || out.PropertyReference["Get"] != "Steps.XGBoostTraining.ModelArtifacts.S3ModelArtifacts" {
		t.Fatalf("output: %+v", out)
	}
	tp, _, _ := c.ForJobType("TabularPreprocessing", "training")
	tv := IO(tp)
	if got := tv.Outputs[0].PropertyReference["Get"]; got != "Steps.TabularPreprocessing-Training.ProcessingOutputConfig.Outputs['processed_data'].S3Output.S3Uri" {
		t.Fatalf("processing ref: %s", got)
	}
	if tv.Inputs[0].Channels != nil {
		t.Fatal("channels on a processing step")
	}
	d, _ := c.Get("DummyDataLoading")
	if s := IO(d).Inputs[0].Source; s != "config:data_source" {
		t.Fatalf("source: %s", s)
	}
	if got := Channels("model", InputPort{Path: "/opt/ml/input/data/graph/x"}); strings.Join(got, ",") != "graph" {
		t.Fatalf("channels: %v", got)
	}
}
