package handlers

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func TestPipelineCatalogList(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[pcListOut](t, call(t, reg, "pipeline_catalog.list", `{}`))
	if data.Count < 20 || len(data.DAGs) != data.Count {
		t.Fatalf("count = %d, %d dags", data.Count, len(data.DAGs))
	}
	for i := 1; i < len(data.DAGs); i++ {
		if data.DAGs[i-1].DAGID >= data.DAGs[i].DAGID {
			t.Fatalf("not sorted at %d", i)
		}
	}
}

func TestPipelineCatalogRecommend(t *testing.T) {
	reg, _ := newTestRegistry(t)
	res := call(t, reg, "pipeline_catalog.recommend", `{"framework": "xgboost", "use_case": "xgboost training with calibration", "data_type": "tabular"}`)
	recs := answer[pcRecommendOut](t, res).Recommendations
	if len(recs) == 0 || recs[0].DAGID != "xgboost_training_with_calibration" {
		t.Fatalf("first = %+v", recs)
	}
	if first := recs[0]; !strings.Contains(first.Reasoning, "calibration") || first.Components == nil {
		t.Errorf("not explained: %+v", first)
	}
	if len(res.NextSteps) == 0 || res.NextSteps[0].ArgsHint["dag_id"] != "xgboost_training_with_calibration" {
		t.Errorf("next steps = %+v", res.NextSteps)
	}
	none := call(t, reg, "pipeline_catalog.recommend", `{"framework": "sklearn"}`)
	if d := answer[pcRecommendOut](t, none); d.TotalMatches != 0 || len(none.Warnings) == 0 {
		t.Errorf("unknown framework: %+v %v", d, none.Warnings)
	}
	mustFail(t, call(t, reg, "pipeline_catalog.recommend", `{"data_type": "images"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "pipeline_catalog.recommend", `{"use_case": "`+strings.Repeat("x", 2000)+`"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "pipeline_catalog.recommend", `{"max_results": 0}`), registry.CodeInvalidInput)
}

func TestPipelineCatalogAutoSelect(t *testing.T) {
	reg, _ := newTestRegistry(t)
	first := answer[pcAutoSelected](t, call(t, reg, "pipeline_catalog.auto_select", `{"framework": "xgboost"}`))
	if !first.Matched || first.DAGID == nil {
		t.Fatalf("no DAG selected for xgboost: %+v", first)
	}
	for i := 0; i < 5; i++ {
		again := answer[pcAutoSelected](t, call(t, reg, "pipeline_catalog.auto_select", `{"framework": "xgboost"}`))
		if again.DAGID == nil || *again.DAGID != *first.DAGID {
			t.Fatalf("auto_select not deterministic: %v vs %v", *first.DAGID, again.DAGID)
		}
	}
	res := call(t, reg, "pipeline_catalog.auto_select", `{"framework": "xgboost", "features": ["nothing_like_this"], "task_type": "none", "min_score": 0.9}`)
	data := answer[pcAutoSelected](t, res)
	if data.Matched || data.DAGID != nil || len(res.Warnings) == 0 {
		t.Errorf("below threshold = %+v", data)
	}
	mustFail(t, call(t, reg, "pipeline_catalog.auto_select", `{"min_score": 2}`), registry.CodeInvalidInput)
}

func TestPipelineCatalogByID(t *testing.T) {
	reg, _ := newTestRegistry(t)
	dagID := map[string]func(*registry.Result) string{
		"pipeline_catalog.get_dag":         func(res *registry.Result) string { return answer[pcDAG](t, res).DAGID },
		"pipeline_catalog.load_dag":        func(res *registry.Result) string { return answer[pcLoadedDAG](t, res).DAGID },
		"pipeline_catalog.config_guidance": func(res *registry.Result) string { return answer[pcGuidance](t, res).DAGID },
	}
	for tool, id := range dagID {
		if got := id(call(t, reg, tool, `{"dag_id": "xgboost_complete_e2e"}`)); got != "xgboost_complete_e2e" {
			t.Errorf("%s: dag_id %q", tool, got)
		}
		res := call(t, reg, tool, `{"dag_id": "nope"}`)
		mustFail(t, res, registry.CodeNotFound)
		mustFail(t, call(t, reg, tool, `{"dag_id": "../../etc/passwd"}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{}`), registry.CodeInvalidInput)
	}
	data := answer[pcLoadedDAG](t, call(t, reg, "pipeline_catalog.load_dag", `{"dag_id": "xgboost_complete_e2e"}`))
	if data.NodeCount != len(data.Nodes) {
		t.Errorf("counts disagree: %+v", data)
	}
	g := answer[pcGuidance](t, call(t, reg, "pipeline_catalog.config_guidance", `{"dag_id": "xgboost_complete_e2e"}`))
	if g.Prerequisites == nil || g.CommonPitfalls == nil {
		t.Errorf("guidance = %+v", g)
	}
}
