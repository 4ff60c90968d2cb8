package pipelines

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/finding"
)

// within runs f and fails the test if it has not returned after limit, so
// a loader that blocks fails rather than hangs.
func within(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("still running after %v: it blocked", limit)
	}
}

// dagFile is a shared DAG file whose metadata names id.
func dagFile(t *testing.T, path, id string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"nodes": ["a", "b"], "edges": [["a", "b"]], "metadata": {"id": "` + id + `"}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A pipeline directory with a named pipe (as a DAG file and as the index),
// a symlink to /dev/zero and symlinks leading outside (a file and a whole
// framework directory) loads its good DAGs and says of each bad file why
// it was skipped, without blocking on the pipe or reading the device.
// Symlinks that stay inside (a ConfigMap mount's layout) are read.
func TestLoadSkipsFilesThatAreNotRegularOrInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	dagFile(t, filepath.Join(dir, "custom", "good.dag.json"), "good_dag")
	for _, p := range []string{filepath.Join(dir, "custom", "pipe.dag.json"), filepath.Join(dir, IndexFile)} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "custom", "zero.dag.json")); err != nil {
		t.Fatal(err)
	}
	dagFile(t, filepath.Join(outside, "leak", "secret.dag.json"), "outside_dag")
	if err := os.Symlink(filepath.Join(outside, "leak", "secret.dag.json"), filepath.Join(dir, "custom", "outside.dag.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "leak"), filepath.Join(dir, "leak")); err != nil {
		t.Fatal(err)
	}
	dagFile(t, filepath.Join(dir, "..2026_12_01", "mounted", "linked.dag.json"), "linked_dag")
	if err := os.Symlink("..2026_12_01", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/mounted", filepath.Join(dir, "mounted")); err != nil {
		t.Fatal(err)
	}

	var c *Catalog
	var problems []finding.Finding
	var err error
	within(t, 20*time.Second, func() { c, problems, err = Load(dir) })
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"good_dag", "linked_dag"} {
		if e, ok := c.Get(id); !ok || e.Source != dir {
			t.Errorf("%s is not loaded from %s", id, dir)
		}
	}
	if _, ok := c.Get("outside_dag"); ok {
		t.Error("a DAG outside the directory was loaded through a symlink")
	}
	want := map[string]string{
		"custom/pipe.dag.json": "not_regular", IndexFile: "not_regular",
		"custom/zero.dag.json": "outside", "custom/outside.dag.json": "outside", "leak": "outside",
	}
	got := map[string]string{}
	for _, p := range problems {
		got[strings.TrimPrefix(p.File, dir+"/")] = p.Rule
		if !strings.Contains(p.Message, "skipped") {
			t.Errorf("%s: the message does not say it is skipped: %s", p.File, p.Message)
		}
	}
	for f, rule := range want {
		if got[f] != rule {
			t.Errorf("%s: problem rule %q, want %q (problems %v)", f, got[f], rule, problems)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %v, want one for each of %v", problems, want)
	}
}
