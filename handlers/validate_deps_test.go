package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/registry"
)

// depsRegistry registers validateDepsTools on their own, so these tests do
// not depend on how the validate namespace is assembled.
func depsRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	d, err := NewDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, func() (registry.Namespace, error) {
		return registry.Namespace{Name: "validate", Description: "deps tools under test", Tools: []registry.ToolDef{validateDepsResolveTool(d), validateDepsExplainTool(d)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestValidateDepsResolve(t *testing.T) {
	reg := depsRegistry(t)
	res := call(t, reg, "validate.deps_resolve", `{}`)
	mustFail(t, res, registry.CodeInvalidInput)
	if !strings.Contains(res.Error, "step_names") || !strings.Contains(res.Error, "dag") {
		t.Errorf("empty call does not say what to pass: %s", res.Error)
	}
	mustFail(t, call(t, reg, "validate.deps_resolve", `{"step_names": []}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.deps_resolve", `{"step_names": ["A"], "nodes": ["A"]}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.deps_resolve", `{"step_names": [1]}`), registry.CodeInvalidInput)

	data := answer[deps.Report](t, call(t, reg, "validate.deps_resolve", `{"step_names": ["TabularPreprocessing_training", "XGBoostTraining", "XGBoostModelEval_calibration", "Nope"]}`))
	if data.Mode != "step_set" || fmt.Sprint(data.MissingSpecs) != "[Nope]" {
		t.Errorf("data = %+v", data)
	}
	if eval := data.Report.StepDetails["XGBoostModelEval_calibration"].ResolvedDependencies; eval["model_input"] != "XGBoostTraining.model_output" {
		t.Errorf("eval wiring = %v", eval)
	}
	res = call(t, reg, "validate.deps_resolve", `{"step_names": ["Nope", "Zilch"]}`)
	mustFail(t, res, registry.CodeNotFound)

	// DAG mode: wired along the edges.
	res = call(t, reg, "validate.deps_resolve", `{"dag": {"nodes": ["XGBoostTraining", "Package"], "edges": [["XGBoostTraining", "Package"]]}}`)
	data = answer[deps.Report](t, res)
	if sum := data.Report.ResolutionSummary; data.Mode != "dag" || sum.StepsWithErrors != 1 { // XGBoostTraining has no input
		t.Errorf("mode %s, summary = %+v", data.Mode, sum)
	}
	mustFail(t, call(t, reg, "validate.deps_resolve", `{"dag_file": "../x.json"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.deps_resolve", `{"dag_file": "missing.json"}`), registry.CodeNotFound)
}

func TestValidateDepsExplain(t *testing.T) {
	reg := depsRegistry(t)
	names := answer[deps.Explanation](t, call(t, reg, "validate.deps_explain", `{"name1": "model_input", "name2": "model_output"}`))
	if v := names.Overall; v < 0.6306 || v > 0.6307 {
		t.Errorf("overall = %v", v)
	}
	res := call(t, reg, "validate.deps_explain", `{"consumer": "XGBoostTraining", "dependency": "input_path", "producer": "TabularPreprocessing_training", "output": "processed_data"}`)
	if pair := answer[depsPairScore](t, res); !pair.Viable || !strings.Contains(string(res.Encode()), `"type_match":"compatible"`) {
		t.Errorf("pair = %s", res.Encode())
	}
	for _, bad := range []string{`{}`, `{"name1": "a"}`, `{"name1": "  ", "name2": "b"}`, `{"name1": "a", "consumer": "X"}`, `{"consumer": "XGBoostTraining"}`} {
		mustFail(t, call(t, reg, "validate.deps_explain", bad), registry.CodeInvalidInput)
	}
	mustFail(t, call(t, reg, "validate.deps_explain", `{"consumer": "Nope", "dependency": "a", "producer": "Package", "output": "b"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "validate.deps_explain", `{"consumer": "Package", "dependency": "nope", "producer": "XGBoostTraining", "output": "model_output"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "validate.deps_explain", `{"name1": "`+strings.Repeat("a", 300)+`", "name2": "b"}`), registry.CodeInvalidInput)
}
