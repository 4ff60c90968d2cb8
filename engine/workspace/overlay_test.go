package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

// writeTree writes files (slash path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOverlayInlineWinsAndDirectoriesMerge(t *testing.T) {
	r, dir := newRoot(t)
	writeTree(t, dir, map[string]string{
		"scripts/train.py": "disk train",
		"scripts/eval.py":  "disk eval",
		"config.json":      "{}",
		"blocked/x.py":     "under a path an inline file takes",
	})
	o, err := NewOverlay(r.FS(), map[string]string{
		"./scripts/train.py":   "inline train",
		"scripts/lib//util.py": "inline util",
		"new/only.py":          "inline only",
		"blocked":              "now a file",
	})
	if err != nil {
		t.Fatal(err)
	}
	// fstest.TestFS checks Open, ReadDir, Stat and ReadFile agree with each
	// other for every file it finds, merged directories included.
	if err := fstest.TestFS(o, "scripts/train.py", "scripts/eval.py", "scripts/lib/util.py", "new/only.py", "config.json", "blocked"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"scripts/train.py":    "inline train",
		"scripts/eval.py":     "disk eval",
		"scripts/lib/util.py": "inline util",
		"blocked":             "now a file",
	} {
		got, err := fs.ReadFile(o, name)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := fs.ReadFile(o, "blocked/x.py"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a path under an inline file: err = %v, want not exist", err)
	}
	var walked []string
	if err := fs.WalkDir(o, "scripts", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"scripts/eval.py", "scripts/lib/util.py", "scripts/train.py"}; !slices.Equal(walked, want) {
		t.Errorf("walk of scripts = %v, want %v", walked, want)
	}
}

// TestOverlayDirectoryOverABaseFile: inline files under a path the base
// holds as a file make it a directory.
func TestOverlayDirectoryOverABaseFile(t *testing.T) {
	r, dir := newRoot(t)
	writeTree(t, dir, map[string]string{"src": "a file on disk"})
	o, err := NewOverlay(r.FS(), map[string]string{"src/a.py": "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(o, "src/a.py"); err != nil {
		t.Fatal(err)
	}
	if fi, err := fs.Stat(o, "src"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(src) = %v, %v; want the inline directory", fi, err)
	}
}

func TestOverlayWithoutBase(t *testing.T) {
	o, err := NewOverlay(nil, map[string]string{"src/a.py": "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(o, "src/a.py"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(o, "elsewhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing path: %v", err)
	}
}

func TestOverlayRefusesPathsOutsideTheTree(t *testing.T) {
	for _, p := range []string{"", "/etc/passwd", "../x.py", "a/../../x.py", "a\x00b", ".", `a\b.py`} {
		_, err := NewOverlay(nil, map[string]string{p: "x"})
		var ie *InlinePathError
		if !errors.As(err, &ie) || ie.Path != p {
			t.Errorf("NewOverlay(%q): err = %v, want *InlinePathError naming it", p, err)
		}
	}
	for name, files := range map[string]map[string]string{
		"same file twice":       {"a.py": "1", "./a.py": "2"},
		"a file and its folder": {"a": "1", "a/b.py": "2"},
	} {
		var ie *InlinePathError
		if _, err := NewOverlay(nil, files); !errors.As(err, &ie) {
			t.Errorf("%s: err = %v, want *InlinePathError", name, err)
		}
	}
}

func TestOverlayWithoutFilesReadsTheBase(t *testing.T) {
	r, dir := newRoot(t)
	writeTree(t, dir, map[string]string{"a/b.txt": "b"})
	o, err := NewOverlay(r.FS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(o, "a/b.txt"); err != nil {
		t.Fatal(err)
	}
}
