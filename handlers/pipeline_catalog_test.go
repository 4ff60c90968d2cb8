package handlers

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func TestPipelineCatalogList(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := mustOK(t, call(t, reg, "pipeline_catalog.list", `{}`))
	dags := data["dags"].([]any)
	if data["count"].(float64) < 20 || len(dags) != int(data["count"].(float64)) {
		t.Fatalf("count = %v", data["count"])
	}
	for i := 1; i < len(dags); i++ {
		if dags[i-1].(map[string]any)["dag_id"].(string) >= dags[i].(map[string]any)["dag_id"].(string) {
			t.Fatalf("not sorted at %d", i)
		}
	}
}

func TestPipelineCatalogRecommend(t *testing.T) {
	reg, _ := newTestRegistry(t)
	res := call(t, reg, "pipeline_catalog.recommend", `{"framework": "xgboost", "use_case": "xgboost training with calibration", "data_type": "tabular"}`)
	data := mustOK(t, res)
	recs := data["recommendations"].([]any)
	if len(recs) == 0 || recs[0].(map[string]any)["dag_id"] != "xgboost_training_with_calibration" {
		t.Fatalf("first = %v", recs)
	}
	if first := recs[0].(map[string]any); !strings.Contains(first["reasoning"].(string), "calibration") || first["components"] == nil {
		t.Errorf("not explained: %v", first)
	}
	if len(res.NextSteps) == 0 || res.NextSteps[0].ArgsHint["dag_id"] != "xgboost_training_with_calibration" {
		t.Errorf("next steps = %+v", res.NextSteps)
	}
	none := call(t, reg, "pipeline_catalog.recommend", `{"framework": "sklearn"}`)
	if d := mustOK(t, none); d["total_matches"].(float64) != 0 || len(none.Warnings) == 0 {
		t.Errorf("unknown framework: %v %v", d, none.Warnings)
	}
	mustFail(t, call(t, reg, "pipeline_catalog.recommend", `{"data_type": "images"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "pipeline_catalog.recommend", `{"use_case": "`+strings.Repeat("x", 2000)+`"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "pipeline_catalog.recommend", `{"max_results": 0}`), registry.CodeInvalidInput)
}

func TestPipelineCatalogAutoSelect(t *testing.T) {
	reg, _ := newTestRegistry(t)
	first := mustOK(t, call(t, reg, "pipeline_catalog.auto_select", `{"framework": "xgboost"}`))
	for i := 0; i < 5; i++ {
		again := mustOK(t, call(t, reg, "pipeline_catalog.auto_select", `{"framework": "xgboost"}`))
		if again["dag_id"] != first["dag_id"] || first["matched"] != true {
			t.Fatalf("auto_select not deterministic: %v vs %v", first, again)
		}
	}
	res := call(t, reg, "pipeline_catalog.auto_select", `{"framework": "xgboost", "features": ["nothing_like_this"], "task_type": "none", "min_score": 0.9}`)
	data := mustOK(t, res)
	if data["matched"] != false || data["dag_id"] != nil || len(res.Warnings) == 0 {
		t.Errorf("below threshold = %v", data)
	}
	mustFail(t, call(t, reg, "pipeline_catalog.auto_select", `{"min_score": 2}`), registry.CodeInvalidInput)
}

func TestPipelineCatalogByID(t *testing.T) {
	reg, _ := newTestRegistry(t)
	for _, tool := range []string{"pipeline_catalog.get_dag", "pipeline_catalog.load_dag", "pipeline_catalog.config_guidance"} {
		data := mustOK(t, call(t, reg, tool, `{"dag_id": "xgboost_complete_e2e"}`))
		if data["dag_id"] != "xgboost_complete_e2e" {
			t.Errorf("%s: %v", tool, data)
		}
		res := call(t, reg, tool, `{"dag_id": "nope"}`)
		mustFail(t, res, registry.CodeNotFound)
		mustFail(t, call(t, reg, tool, `{"dag_id": "../../etc/passwd"}`), registry.CodeInvalidInput)
		mustFail(t, call(t, reg, tool, `{}`), registry.CodeInvalidInput)
	}
	data := mustOK(t, call(t, reg, "pipeline_catalog.load_dag", `{"dag_id": "xgboost_complete_e2e"}`))
	if int(data["node_count"].(float64)) != len(data["nodes"].([]any)) {
		t.Errorf("counts disagree: %v", data)
	}
	g := mustOK(t, call(t, reg, "pipeline_catalog.config_guidance", `{"dag_id": "xgboost_complete_e2e"}`))
	if g["prerequisites"] == nil || g["common_pitfalls"] == nil {
		t.Errorf("guidance = %v", g)
	}
}
