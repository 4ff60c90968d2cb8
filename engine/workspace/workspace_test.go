package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func newRoot(t *testing.T) (*Root, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.Dir()
}

func TestResolveRefusesEscapes(t *testing.T) {
	r, dir := newRoot(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", "a/../../x", outside + "/f", "/etc/passwd", "link/f", "link", ""} {
		_, err := r.Resolve(p)
		var esc *EscapeError
		if !errors.As(err, &esc) {
			t.Errorf("Resolve(%q) = %v, want EscapeError", p, err)
		}
	}
}

func TestResolveAcceptsInside(t *testing.T) {
	r, dir := newRoot(t)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A relative link inside the root is followed; the answer is the name
	// under the root, not the link's target.
	if err := os.Symlink("sub", filepath.Join(dir, "inner")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"a.json":           filepath.Join(dir, "a.json"),
		"sub/../b.json":    filepath.Join(dir, "b.json"),
		dir + "/c/d.json":  filepath.Join(dir, "c", "d.json"),
		"inner/new/x.json": filepath.Join(dir, "inner", "new", "x.json"),
	} {
		got, err := r.Resolve(p)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestWriteFileNoOverwriteNoSymlink(t *testing.T) {
	r, dir := newRoot(t)
	if err := r.WriteFile("out/a.txt", []byte("one"), false); err != nil {
		t.Fatal(err)
	}
	var exists *ExistsError
	if err := r.WriteFile("out/a.txt", []byte("two"), false); !errors.As(err, &exists) {
		t.Fatalf("second write = %v, want ExistsError", err)
	}
	if err := r.WriteFile("out/a.txt", []byte("two"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "a.txt")); string(b) != "two" {
		t.Fatalf("content = %q", b)
	}
	// A symlink inside the root pointing at another file inside the root
	// is still never written through.
	if err := os.Symlink(filepath.Join(dir, "out", "a.txt"), filepath.Join(dir, "ln")); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("ln", []byte("three"), true); err == nil {
		t.Fatal("write through symlink succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "a.txt")); string(b) != "two" {
		t.Fatalf("content changed through symlink: %q", b)
	}
}
