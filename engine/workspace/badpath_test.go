package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadPathsAreFileErrors: names too long, a file used as a directory
// and a directory read as a file are the caller's mistakes, named by the
// caller's path, never the absolute one.
func TestBadPathsAreFileErrors(t *testing.T) {
	r, dir := newRoot(t)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 300)
	for name, do := range map[string]func() error{
		"ReadFile long":        func() error { _, err := r.ReadFile(long); return err },
		"ReadFile directory":   func() error { _, err := r.ReadFile("sub"); return err },
		"ReadFile through":     func() error { _, err := r.ReadFile("plain.json/x"); return err },
		"ReadRegular long":     func() error { _, _, err := r.ReadRegular("sub/"+long, 1<<20); return err },
		"ReadRegular dir":      func() error { _, _, err := r.ReadRegular("sub", 1<<20); return err },
		"Stat long":            func() error { _, err := r.Stat(long); return err },
		"Lstat through":        func() error { _, err := r.Lstat("plain.json/x"); return err },
		"ReadDir file":         func() error { _, err := r.ReadDir("plain.json"); return err },
		"MkdirAll through":     func() error { _, err := r.MkdirAll("plain.json/x"); return err },
		"WriteFile long":       func() error { return r.WriteFile(long, nil, false) },
		"WriteFile through":    func() error { return r.WriteFile("plain.json/x", nil, false) },
		"WriteFile onto a dir": func() error { return r.WriteFile("sub", nil, true) },
		"FS open long":         func() error { _, err := r.FS().Open(long); return err },
	} {
		err := do()
		if _, ok := errors.AsType[*FileError](err); !ok {
			t.Errorf("%s: %T %v, want FileError", name, err, err)
		}
		if err != nil && strings.Contains(err.Error(), dir) {
			t.Errorf("%s: the error shows the root: %v", name, err)
		}
	}
}
