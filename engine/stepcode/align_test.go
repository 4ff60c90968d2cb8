package stepcode

import (
	"context"
	"io/fs"
	"path"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
)

// dataPrepSteps are the processing step types whose scripts prepare data.
var dataPrepSteps = []string{"DummyDataLoading", "TabularPreprocessing", "StratifiedSampling", "MissingValueImputation",
	"RiskTableMapping", "FeatureSelection", "CurrencyConversion", "DummyTraining"}

// The built-in data-prep scripts pass the alignment check validate.alignment
// runs on a caller's script against the step's contract (paths,
// environment variables, job arguments, main's signature).
func TestDataPrepScriptsPassTheAlignmentCheck(t *testing.T) {
	cat, probs, err := steps.LoadCatalog()
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	for _, name := range dataPrepSteps {
		iface, ok := cat.Get(name)
		if !ok {
			t.Fatalf("no step type %s", name)
		}
		dir, ok := Dir(name)
		if !ok {
			t.Fatalf("%s has no built-in code", name)
		}
		file := path.Join(dir, iface.Contract.EntryPoint)
		src, err := fs.ReadFile(FS, file)
		if err != nil {
			t.Fatal(err)
		}
		findings, _, err := validate.CheckScriptSource(context.Background(), iface, file, src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, f := range findings {
			if f.Blocking() {
				t.Errorf("%s (%s): [%s] %s: %s", name, file, f.Rule, f.Location, f.Message)
			} else {
				t.Logf("%s: %s [%s] %s", name, f.Level, f.Rule, f.Message)
			}
		}
	}
}
