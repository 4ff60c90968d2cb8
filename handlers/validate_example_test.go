package handlers

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cursus-dev/cursus/engine/validate"
)

// copyExample copies examples/xgboost-tabular into the test workspace.
func copyExample(t *testing.T, root string) {
	t.Helper()
	src := "../examples/xgboost-tabular"
	if _, err := os.Stat(src); err != nil {
		t.Skipf("example project missing: %v", err)
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, "ex", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestExampleProjectPassesAlignmentAndRuns(t *testing.T) {
	reg, root := newTestRegistry(t)
	copyExample(t, root)
	res := call(t, reg, "validate.alignment", `{"target_scripts": ["DummyDataLoading", "TabularPreprocessing", "XGBoostTraining", "XGBoostModelEval", "Package", "Payload", "Registration"], "source_dir": "ex/scripts"}`)
	if !res.OK {
		t.Fatalf("example fails alignment: %s", res.Encode())
	}
	if n := valOK(t, res)["critical_issue_count"].(float64); n != 0 {
		t.Errorf("%v critical issues", n)
	}
	if validate.NewRunner(1).Available() != nil {
		t.Skip("no python3")
	}
	res = call(t, reg, "validate.run_scripts", `{"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training"],
		"edges": [["DummyDataLoading_training", "TabularPreprocessing_training"]], "config_path": "ex/config.json",
		"source_dir": "ex/scripts", "sample_inputs": {"DummyDataLoading_training": {"data_source": "ex/data/tabular.csv"}}}`)
	data := valOK(t, res)
	if data["pipeline_success"] != true {
		t.Fatalf("example run failed: %s", res.Encode())
	}
	tp := data["script_results"].(map[string]any)["TabularPreprocessing_training"].(map[string]any)
	if len(tp["output_files"].([]any)) < 3 {
		t.Errorf("preprocessing produced %v", tp["output_files"])
	}
}
