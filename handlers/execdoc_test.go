package handlers

import (
	"testing"

	"github.com/cursus-dev/cursus/registry"
)

func TestExecdocGenerateAndValidate(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	res := call(t, reg, "execdoc.generate", `{`+exampleArgs+`}`)
	doc := answer[execDocView](t, res)
	entries := doc.StepConfigs
	for _, name := range []string{"DummyDataLoading-Training", "Registration", "XGBoostModelEval-Calibration"} {
		if _, ok := entries[name]; !ok {
			t.Fatalf("missing %s in %v", name, entries)
		}
	}
	if reg1 := entries["Registration"].StepConfig; reg1["model_package_group_name"] != "tabular-xgboost" {
		t.Fatalf("registration not filled: %v", reg1)
	}
	if entries["DummyDataLoading-Training"].StepConfig["data_source"] == nil {
		t.Fatal("data loading not filled")
	}
	delete(entries, "Payload")
	training := entries["XGBoostTraining"]
	training.StepType = []string{"PROCESSING_STEP"}
	entries["XGBoostTraining"] = training
	args := map[string]any{"execution_document": doc, "dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json"}
	v := answer[execdocValidateOut](t, reg.Call(t.Context(), "execdoc.validate", args))
	if v.Valid || len(v.Issues) != 2 {
		t.Fatalf("validate: %+v", v)
	}
	rules := map[string]bool{}
	for _, is := range v.Issues {
		rules[is.Rule] = true
	}
	if !rules["missing_step"] || !rules["wrong_type"] {
		t.Fatalf("issues: %+v", v.Issues)
	}
	if s := answer[execdocValidateOut](t, call(t, reg, "execdoc.validate", `{"execution_document": {"PIPELINE_STEP_CONFIGS": []}}`)); s.Valid {
		t.Fatalf("structure: %+v", s)
	}
	mustFail(t, call(t, reg, "execdoc.validate", `{"execution_document": {}, "config_file": "examples/xgboost-tabular/config.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "execdoc.generate", `{"dag_file": "examples/xgboost-tabular/dag.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "execdoc.generate", `{"config_path": "missing.json", "dag_file": "examples/xgboost-tabular/dag.json"}`), registry.CodeNotFound)
}

func TestExecdocTemplateAndMerge(t *testing.T) {
	reg, _ := exampleRegistry(t, "")
	if d := answer[execDocView](t, call(t, reg, "execdoc.template", `{"step_names": ["A", "B"]}`)); len(d.StepConfigs) != 2 {
		t.Fatalf("template: %+v", d)
	}
	m := answer[execDocView](t, call(t, reg, "execdoc.merge", `{"base_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_TYPE": ["PROCESSING_STEP"], "STEP_CONFIG": {"x": 1}}}}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_CONFIG": {"y": 2}}}}}`))
	if sc := m.StepConfigs["A"].StepConfig; len(sc) != 2 || sc["x"] != 1.0 || sc["y"] != 2.0 {
		t.Fatalf("merge: %+v", m)
	}
	mustFail(t, call(t, reg, "execdoc.merge", `{"base_doc": {}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {}}}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "execdoc.template", `{"step_names": [1]}`), registry.CodeInvalidInput)
}

// execDocView reads an execution document as the execdoc tools answer
// one: each step's type and config, and the additional parameters.
type execDocView struct {
	StepConfigs map[string]execDocStep `json:"PIPELINE_STEP_CONFIGS"`
	Additional  map[string]any         `json:"PIPELINE_ADDITIONAL_PARAMS,omitempty"`
}

type execDocStep struct {
	StepType   []string       `json:"STEP_TYPE,omitempty"`
	StepConfig map[string]any `json:"STEP_CONFIG,omitempty"`
}
