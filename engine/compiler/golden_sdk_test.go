package compiler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sdkDifferences are the key paths where our request and the SDK's differ
// for the same inputs, by step type, with the reason; docs/SDK_PARITY.md
// lists each (the test checks it does). "+" marks a key only we emit, "-"
// one only the SDK emits.
var sdkDifferences = map[string]map[string]string{
	"Processing":    {},
	"Training":      {},
	"Tuning":        {},
	"Model":         {},
	"Transform":     {},
	"RegisterModel": {},
	"RepackModel": {
		"-HyperParameters.dependencies": "the inference code arrives as the model step's own sourcedir.tar.gz on a code channel; nothing is installed into the repack job",
		"-HyperParameters.source_dir":   "the same: the repack script reads the code channel, not a source_dir baked into its own tarball",
		"+Tags":                         "the repack job carries the config's tags like every other job of the pipeline",
	},
}

// keyPaths lists the key paths of a decoded request: object keys joined
// with ".", "[]" for list elements. Free-form maps (hyperparameters,
// environments) and pipeline functions (Get, Std:Join) are leaves.
func keyPaths(v any, prefix string, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["Get"]; ok && len(t) == 1 {
			return
		}
		if _, ok := t["Std:Join"]; ok && len(t) == 1 {
			return
		}
		for k, el := range t {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			switch k {
			case "HyperParameters":
				// Their keys are the script-mode contract; values are free.
				if m, ok := el.(map[string]any); ok {
					for hk := range m {
						out[p+"."+hk] = true
					}
				}
				continue
			case "StaticHyperParameters", "Environment":
				continue
			}
			keyPaths(el, p, out)
		}
	case []any:
		for _, el := range t {
			keyPaths(el, prefix+"[]", out)
		}
	}
}

// One test per SageMaker step type: the key structure of our request for
// the inputs of testdata/sdk (compiled from shared DAGs with tags) is the
// SDK's, except for the differences listed with their reasons.
func TestGoldenKeyStructureMatchesTheSDK(t *testing.T) {
	tags := map[string]any{"tags": map[string]any{"team": "risk"}}
	sources := map[string]struct {
		typ, dag, step string
	}{
		"Processing":    {"Processing", "xgboost_complete_e2e", "TabularPreprocessing-Training"},
		"Training":      {"Training", "xgboost_complete_e2e", "XGBoostTraining"},
		"Tuning":        {"Tuning", "pytorch_tuning_e2e", "PyTorchTuning"},
		"Model":         {"Model", "pytorch_tuning_e2e", "PyTorchModel"},
		"Transform":     {"Transform", "pytorch_tuning_e2e", "BatchTransform-Testing"},
		"RegisterModel": {"RegisterModel", "xgboost_complete_e2e", "Registration"},
		"RepackModel":   {"Training", "pytorch_tuning_e2e", "PyTorchModel-RepackModel"},
	}
	doc, err := os.ReadFile("../../docs/SDK_PARITY.md")
	if err != nil {
		t.Fatal(err)
	}
	for typ, src := range sources {
		t.Run(typ, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "sdk", typ+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var sdk any
			if err := json.Unmarshal(data, &sdk); err != nil {
				t.Fatal(err)
			}
			_, steps := compileShared(t, sharedInput(t, src.dag, tags, nil))
			var ours any
			for _, s := range steps {
				if s.Name == src.step {
					if s.Type != src.typ {
						t.Fatalf("%s is a %s step", s.Name, s.Type)
					}
					ours = s.Arguments
				}
			}
			if ours == nil {
				t.Fatalf("no step %s in %s", src.step, src.dag)
			}
			want, got := map[string]bool{}, map[string]bool{}
			keyPaths(sdk, "", want)
			keyPaths(ours, "", got)
			diffs := map[string]bool{}
			for p := range got {
				if !want[p] {
					diffs["+"+p] = true
				}
			}
			for p := range want {
				if !got[p] {
					diffs["-"+p] = true
				}
			}
			for _, d := range slices.Sorted(func(yield func(string) bool) {
				for d := range diffs {
					if !yield(d) {
						return
					}
				}
			}) {
				if !listedDifference(sdkDifferences[typ], d) {
					t.Errorf("%s: %s differs from the SDK's request and is not a listed difference", typ, d)
				}
			}
			for d, reason := range sdkDifferences[typ] {
				if !diffs[d] {
					t.Errorf("%s: listed difference %s (%s) no longer differs", typ, d, reason)
				}
				if !strings.Contains(string(doc), "`"+d+"`") {
					t.Errorf("%s: difference %s is not in docs/SDK_PARITY.md", typ, d)
				}
			}
		})
	}
}

// listedDifference: d or a key path it lies under is listed.
func listedDifference(listed map[string]string, d string) bool {
	for {
		if _, ok := listed[d]; ok {
			return true
		}
		i := strings.LastIndexAny(d, ".[")
		if i <= 1 {
			return false
		}
		d = d[:i]
	}
}
