package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/registry"
)

type stepsCodeData struct {
	StepType   string          `json:"step_type"`
	Folder     string          `json:"folder"`
	EntryPoint string          `json:"entry_point"`
	Files      []stepcode.File `json:"files"`
	Override   string          `json:"override"`
}

func decodeStepsCode(t *testing.T, data map[string]any) stepsCodeData {
	t.Helper()
	b, _ := json.Marshal(data)
	var out stepsCodeData
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// steps.code serves the built-in folder of a step type, file by file, with
// its entry point; a tuning step its training folder, a node name its step
// type's; step types without code are not_found with the reason.
func TestStepsCode(t *testing.T) {
	_, reg := newDepsRegistry(t, Options{})
	for _, c := range []struct{ arg, stepType, folder, entry, file string }{
		{"XGBoostTraining", "XGBoostTraining", "xgboost_training", "xgboost_training.py", "xgboost_training.py"},
		{"XGBoostTuning", "XGBoostTuning", "xgboost_training", "xgboost_training.py", "xgboost_training.py"},
		{"TabularPreprocessing_calibration", "TabularPreprocessing", "tabular_preprocessing", "tabular_preprocessing.py", "tabular_preprocessing.py"},
		{"LightGBMTraining", "LightGBMTraining", "lightgbm_training", "lightgbm_training.py", "requirements.txt"},
		{"XGBoostModel", "XGBoostModel", "xgboost_model", "inference.py", "inference.py"},
	} {
		got := decodeStepsCode(t, mustOK(t, call(t, reg, "steps.code", `{"step_type": "`+c.arg+`"}`)))
		if got.StepType != c.stepType || got.Folder != "builtin:"+c.folder || got.EntryPoint != c.entry || !strings.Contains(got.Override, "files") {
			t.Errorf("%s: %+v", c.arg, got)
		}
		want, err := stepcode.Files(c.folder)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Files) != len(want) {
			t.Fatalf("%s: %d files, want %d", c.arg, len(got.Files), len(want))
		}
		seen := false
		for i, f := range got.Files {
			if f != want[i] {
				t.Errorf("%s: file %s differs from the built-in one", c.arg, f.Path)
			}
			seen = seen || f.Path == c.file
		}
		if !seen {
			t.Errorf("%s: no %s among the files", c.arg, c.file)
		}
	}
	res := call(t, reg, "steps.code", `{"step_type": "BatchTransform"}`)
	mustFail(t, res, registry.CodeNotFound)
	if !strings.Contains(string(res.Encode()), "runs no script") {
		t.Errorf("BatchTransform: %s", res.Encode())
	}
	mustFail(t, call(t, reg, "steps.code", `{"step_type": "NoSuchStep"}`), registry.CodeNotFound)
	mustFail(t, call(t, reg, "steps.code", `{}`), registry.CodeInvalidInput)
}

// The resource serves what the tool returns, for every step type with code.
func TestStepCodeResourceIsTheToolsData(t *testing.T) {
	d := testDeps(t)
	reg, err := registry.New(registry.Options{}, Namespaces(d)...)
	if err != nil {
		t.Fatal(err)
	}
	var res registry.Resource
	for _, r := range Resources(d) {
		if r.URI == "cursus://steps/{step_type}/code" {
			res = r
		}
	}
	values := res.Values(context.Background())
	if len(values) < 20 {
		t.Fatalf("the code resource lists %v", values)
	}
	for _, v := range values {
		text, err := res.Read(context.Background(), v, func(string) bool { return true })
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatal(err)
		}
		tool := mustOK(t, call(t, reg, "steps.code", `{"step_type": "`+v+`"}`))
		a, _ := json.Marshal(doc)
		b, _ := json.Marshal(tool)
		if string(a) != string(b) {
			t.Errorf("%s: the resource differs from steps.code", v)
		}
	}
	if _, ok := res.Match("cursus://steps/BatchTransform/code"); !ok {
		t.Error("the template does not match a step type's code URI")
	}
}
