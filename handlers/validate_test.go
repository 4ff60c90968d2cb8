package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// jsonData returns a result's data (or, for a failure, meta.details) as
// decoded JSON, the way a client sees it.
func jsonData(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(res.Encode(), &env); err != nil {
		t.Fatal(err)
	}
	if res.OK {
		d, _ := env["data"].(map[string]any)
		return d
	}
	meta, _ := env["meta"].(map[string]any)
	d, _ := meta["details"].(map[string]any)
	return d
}

func writeWS(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestValidateStepInterfaceAllBuiltins(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data := answer[verify.InterfaceReport](t, call(t, reg, "validate.step_interface", `{"all": true}`))
	if data.Validated < 25 || data.Errors != 0 {
		t.Errorf("step_interface all: %d validated, %d errors: %+v", data.Validated, data.Errors, data.Results)
	}
}

func TestValidateStepInterfaceInputs(t *testing.T) {
	reg, root := newTestRegistry(t)
	mustFail(t, call(t, reg, "validate.step_interface", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.step_interface", `{"all": true, "step_name": "XGBoostTraining"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.step_interface", `{"step_name": 7}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.step_interface", `{"bogus": 1}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.step_interface", `{"path": "../../etc"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.step_interface", `{"step_name": "NoSuchStep"}`), registry.CodeNotFound)
	bad := "step_type: Bad\nregistry: {sagemaker_step_type: Nope, description: x}\ncontract:\n  outputs:\n    out: {path: /tmp/x}\nspec: {}\n"
	res := call(t, reg, "validate.step_interface", `{"yaml": `+jsonString(bad)+`}`)
	mustFail(t, res, registry.CodeValidationFailed)
	writeWS(t, root, "steps/bad.step.yaml", bad)
	mustFail(t, call(t, reg, "validate.step_interface", `{"path": "steps"}`), registry.CodeValidationFailed)
	answer[verify.InterfaceReport](t, call(t, reg, "validate.step_interface", `{"step_name": "TabularPreprocessing", "job_type": "training"}`))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestValidateBuilderEveryBuiltin(t *testing.T) {
	reg, _ := newTestRegistry(t)
	d := testDeps(t)
	for _, n := range d.catalogs(t.Context()).Steps.Names() {
		res := call(t, reg, "validate.builder", `{"step_name": "`+n+`"}`)
		if !res.OK {
			t.Errorf("%s: %s", n, res.Encode())
		}
	}
	mustFail(t, call(t, reg, "validate.builder", `{}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.builder", `{"step_name": "CradleDataLoading"}`), registry.CodeUnsupported)
}

func testDeps(t *testing.T) *Deps {
	t.Helper()
	d, err := NewDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestValidateAlignmentCatalogAndScripts(t *testing.T) {
	reg, root := newTestRegistry(t)
	res := call(t, reg, "validate.alignment", `{}`)
	if !res.OK {
		t.Fatalf("built-in catalog fails alignment: %s", res.Encode())
	}
	// Cursus's detailed_results hold every step by name, numbered as
	// Cursus numbers its levels.
	all := answer[alignmentOut](t, res)
	if len(all.DetailedResults) != len(all.Results) {
		t.Errorf("detailed_results has %d steps, results %d", len(all.DetailedResults), len(all.Results))
	}
	xgb, ok := all.DetailedResults["XGBoostTraining"]
	if !ok {
		t.Fatalf("detailed_results has no XGBoostTraining: %v", slices.Sorted(maps.Keys(all.DetailedResults)))
	}
	if fmt.Sprint(xgb.EnabledLevels) != "[1 2 3 4]" || xgb.OverallStatus != "PASSED" ||
		xgb.ValidationResults["level_1"].Category != "script_contract" {
		t.Errorf("XGBoostTraining detailed result = %+v", xgb)
	}
	// A script with an undeclared env var (warning) and a never-written
	// output (error) fails with both findings located.
	writeWS(t, root, "scripts/tabular_preprocessing.py", `import os

def main(input_paths, output_paths, environ_vars, job_args):
    data = input_paths["input_data"]
    label = environ_vars["LABEL_FIELD"]
    mode = os.environ.get("SECRET_MODE")
    return None

if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--job_type")
    main({}, {}, {}, p.parse_args())
`)
	data := failure[verify.AlignmentReport](t, call(t, reg, "validate.alignment", `{"target_scripts": ["TabularPreprocessing"]}`), registry.CodeValidationFailed)
	if len(data.Results) == 0 {
		t.Fatalf("no step results: %+v", data)
	}
	got := map[string]string{}
	for _, f := range data.Results[0].Findings {
		got[f.Rule] = string(f.Level) + "@" + f.Location
	}
	if got["unwritten_output_path"] != "error@contract.outputs.processed_data" {
		t.Errorf("unwritten_output_path = %q (all: %v)", got["unwritten_output_path"], got)
	}
	if got["undeclared_env_var"] != "warning@scripts/tabular_preprocessing.py:6" {
		t.Errorf("undeclared_env_var = %q", got["undeclared_env_var"])
	}
	// Syntax error → script_analysis_error from author.check_script with the line.
	writeWS(t, root, "scripts/tabular_preprocessing.py", "def main(input_paths, output_paths, environ_vars, job_args):\n    x = (1,\n")
	type syntaxError struct {
		Script  string `json:"script"`
		Line    int    `json:"line"`
		Message string `json:"message"`
	}
	if se := failure[syntaxError](t, call(t, reg, "author.check_script", `{"step_name": "TabularPreprocessing"}`), registry.CodeScriptAnalysisError); se.Line != 2 {
		t.Errorf("line = %d (%+v)", se.Line, se)
	}
	mustFail(t, call(t, reg, "validate.alignment", `{"target_scripts": ["TabularPreprocessing"], "source_dir": "/etc"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.alignment", `{"target_scripts": "x"}`), registry.CodeInvalidInput)
	mustFail(t, call(t, reg, "validate.step", `{"step_name": "`+strings.Repeat("A", 300)+`"}`), registry.CodeInvalidInput)
}

func TestValidateInfo(t *testing.T) {
	reg, _ := newTestRegistry(t)
	iso := answer[verify.Info](t, call(t, reg, "validate.info", `{}`)).ScriptTesting.Isolation
	if len(iso["isolated"]) == 0 || len(iso["not_isolated"]) == 0 {
		t.Errorf("isolation = %v", iso)
	}
	mustFail(t, call(t, reg, "validate.info", `{"x": 1}`), registry.CodeInvalidInput)
}

// okJSON fails unless res succeeded and returns its data as a client sees it.
func valOK(t *testing.T, res *registry.Result) map[string]any {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s", res.Encode())
	}
	return jsonData(t, res)
}

// The invented path on a tuning step is refused with the step type
// and the nearest valid paths.
func TestValidateStepInterfaceRejectsInventedPropertyPath(t *testing.T) {
	reg, _ := newTestRegistry(t)
	data, err := os.ReadFile("../engine/steps/catalog/pytorch_tuning.step.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "      property_path: properties.TrainingJobSummaries[0].TrainingJobName\n      job_artifact: output/model.tar.gz\n",
		"      property_path: properties.BestTrainingJob.ModelArtifacts.S3ModelArtifacts\n", 1)
	res := call(t, reg, "validate.step_interface", `{"yaml": `+jsonString(bad)+`}`)
	mustFail(t, res, registry.CodeValidationFailed)
	out := string(res.Encode())
	for _, want := range []string{"property_path_unknown", "not a property of a Tuning step", "nearest valid paths: properties.BestTrainingJob."} {
		if !strings.Contains(out, want) {
			t.Errorf("envelope does not say %q: %s", want, out)
		}
	}
}
