package handlers

import (
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func TestExecdocGenerateAndValidate(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	res := call(t, reg, "execdoc.generate", `{`+exampleArgs+`}`)
	doc := mustOK(t, res)
	entries := doc["PIPELINE_STEP_CONFIGS"].(map[string]any)
	for _, name := range []string{"DummyDataLoading-Training", "Registration", "XGBoostModelEval-Calibration"} {
		if _, ok := entries[name]; !ok {
			t.Fatalf("missing %s in %v", name, entries)
		}
	}
	reg1 := entries["Registration"].(map[string]any)["STEP_CONFIG"].(map[string]any)
	if reg1["model_package_group_name"] != "tabular-xgboost" {
		t.Fatalf("registration not filled: %v", reg1)
	}
	if entries["DummyDataLoading-Training"].(map[string]any)["STEP_CONFIG"].(map[string]any)["data_source"] == nil {
		t.Fatal("data loading not filled")
	}
	delete(entries, "Payload")
	entries["XGBoostTraining"].(map[string]any)["STEP_TYPE"] = []any{"PROCESSING_STEP"}
	args := map[string]any{"execution_document": doc, "dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json"}
	v := mustOK(t, reg.Call(t.Context(), "execdoc.validate", args))
	issues := v["issues"].([]any)
	if v["valid"] != false || len(issues) != 2 {
		t.Fatalf("validate: %v", v)
	}
	text := string(registry.OK(v).Encode())
	if !strings.Contains(text, "missing_step") || !strings.Contains(text, "wrong_type") {
		t.Fatalf("issues: %s", text)
	}
	s := mustOK(t, call(t, reg, "execdoc.validate", `{"execution_document": {"PIPELINE_STEP_CONFIGS": []}}`))
	if s["valid"] != false {
		t.Fatalf("structure: %v", s)
	}
	mustFail(t, call(t, reg, "execdoc.validate", `{"execution_document": {}, "config_file": "examples/xgboost-tabular/config.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "execdoc.generate", `{"dag_file": "examples/xgboost-tabular/dag.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "execdoc.generate", `{"config_path": "missing.json", "dag_file": "examples/xgboost-tabular/dag.json"}`), registry.CodeNotFound)
}

func TestExecdocTemplateAndMerge(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	d := mustOK(t, call(t, reg, "execdoc.template", `{"step_names": ["A", "B"]}`))
	if len(d["PIPELINE_STEP_CONFIGS"].(map[string]any)) != 2 {
		t.Fatalf("template: %v", d)
	}
	m := mustOK(t, call(t, reg, "execdoc.merge", `{"base_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_TYPE": ["PROCESSING_STEP"], "STEP_CONFIG": {"x": 1}}}}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_CONFIG": {"y": 2}}}}}`))
	sc := m["PIPELINE_STEP_CONFIGS"].(map[string]any)["A"].(map[string]any)["STEP_CONFIG"].(map[string]any)
	if len(sc) != 2 {
		t.Fatalf("merge: %v", m)
	}
	mustFail(t, call(t, reg, "execdoc.merge", `{"base_doc": {}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {}}}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "execdoc.template", `{"step_names": [1]}`), registry.CodeInvalidInput)
}
