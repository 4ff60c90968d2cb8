package stepcode

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/steps"
)

func TestDir(t *testing.T) {
	cases := []struct {
		stepType, dir string
		ok            bool
	}{
		{"DummyDataLoading", "dummy_data_loading", true},
		{"BatchTransform", "", false},      // no script
		{"MyOwnStep", "", false},           // a caller's step type
		{"", "", false},                    // nothing
		{"../DummyDataLoading", "", false}, // never a path outside the tree
	}
	for _, c := range cases {
		dir, ok := Dir(c.stepType)
		if dir != c.dir || ok != c.ok {
			t.Errorf("Dir(%q) = %q, %v; want %q, %v", c.stepType, dir, ok, c.dir, c.ok)
		}
	}
}

func TestFSRootedAtCode(t *testing.T) {
	if _, err := fs.Stat(FS, "dummy_data_loading/dummy_data_loading.py"); err != nil {
		t.Fatal(err)
	}
}

// Every catalog step type whose contract names an entry point has a
// built-in folder holding it (tuning types their training folder's), and
// LightGBM's folders declare the package the images lack.
func TestEveryScriptedStepTypeHasItsCode(t *testing.T) {
	cat, probs, err := steps.LoadCatalog()
	if err != nil || len(probs) > 0 {
		t.Fatalf("catalog: %v %v", err, probs)
	}
	for _, name := range cat.Names() {
		iface, _ := cat.Get(name)
		entry := iface.Contract.EntryPoint
		dir, ok := Dir(name)
		if entry == "" {
			if ok {
				t.Errorf("%s runs no script but has the folder %s", name, dir)
			}
			continue
		}
		if !ok {
			t.Errorf("%s has no built-in code folder", name)
			continue
		}
		if _, err := fs.Stat(FS, path.Join(dir, entry)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if strings.HasPrefix(name, "LightGBM") {
			req, err := fs.ReadFile(FS, path.Join(dir, "requirements.txt"))
			if err != nil || !strings.Contains(string(req), "lightgbm") {
				t.Errorf("%s: requirements.txt %q, %v; want lightgbm declared", name, req, err)
			}
		}
	}
	if dir, _ := Dir("XGBoostTuning"); dir != "xgboost_training" {
		t.Errorf("XGBoostTuning is served by %q, want xgboost_training", dir)
	}
}

func TestFiles(t *testing.T) {
	files, err := Files("tabular_preprocessing")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "tabular_preprocessing.py" || !strings.Contains(files[0].Text, "def main(input_paths, output_paths, environ_vars, job_args)") {
		t.Fatalf("files %+v", files)
	}
	if _, err := Files("no_such_folder"); err == nil {
		t.Fatal("no error for a folder that is not there")
	}
}
