package workspace

import (
	"errors"
	"io/fs"
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

// The FS's Lstat sees a symlink as one (fs.Lstat falls back to Stat, which
// follows it, when an FS has no Lstat), and refuses a path through a
// symlink that leads out, as every other call does.
func TestFSLstatSeesLinksAndStaysInside(t *testing.T) {
	r, dir := newRoot(t)
	outside := t.TempDir()
	mustWrite(t, filepath.Join(dir, "f.csv"), "inside")
	mustWrite(t, filepath.Join(outside, "f.csv"), "outside")
	if err := os.Symlink("f.csv", filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	fi, err := fs.Lstat(r.FS(), "link.csv")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(link.csv) = %v, %v; want a symlink", fi, err)
	}
	if target, err := fs.ReadLink(r.FS(), "link.csv"); err != nil || target != "f.csv" {
		t.Errorf("ReadLink(link.csv) = %q, %v", target, err)
	}
	var esc *EscapeError
	if _, err := fs.Lstat(r.FS(), "out/f.csv"); !errors.As(err, &esc) {
		t.Errorf("Lstat(out/f.csv) = %v, want an *EscapeError", err)
	}
	if _, err := fs.Lstat(r.FS(), "../f.csv"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Lstat(../f.csv) = %v, want fs.ErrInvalid", err)
	}
}
