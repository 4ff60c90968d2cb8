package stepcode

import (
	"io/fs"
	"testing"
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
