package pipelines

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// DirsStamp is the same for the same files and changes with every change
// Load would see: a DAG added, edited or removed, the index written, a
// directory appearing; files Load ignores leave it alone. A named pipe is
// digested as its error without blocking.
func TestDirsStamp(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(t.TempDir(), "later")
	stamp := func() string {
		var s string
		within(t, 20*time.Second, func() { s = DirsStamp([]string{dir, missing}) })
		return s
	}
	seen := map[string]string{}
	step := func(what string, change func()) {
		t.Helper()
		change()
		s := stamp()
		if prev, dup := seen[s]; dup {
			t.Fatalf("after %s the stamp is the one of %s", what, prev)
		}
		seen[s] = what
	}
	step("start", func() {})
	if again := stamp(); seen[again] != "start" {
		t.Fatal("the stamp of unchanged directories changed")
	}
	step("a DAG added", func() { dagFile(t, filepath.Join(dir, "custom", "one.dag.json"), "one_dag") })
	step("a DAG edited", func() { dagFile(t, filepath.Join(dir, "custom", "one.dag.json"), "one_dag_renamed") })
	step("an index written", func() {
		if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(`{"dags": []}`), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	step("the missing directory created", func() { dagFile(t, filepath.Join(missing, "custom", "two.dag.json"), "two_dag") })
	step("a named pipe as a DAG file", func() {
		if err := syscall.Mkfifo(filepath.Join(dir, "custom", "pipe.dag.json"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	step("a DAG removed", func() {
		if err := os.Remove(filepath.Join(dir, "custom", "one.dag.json")); err != nil {
			t.Fatal(err)
		}
	})
	before := stamp()
	for _, ignored := range []string{filepath.Join(dir, "custom", "notes.txt"), filepath.Join(dir, ".hidden", "copy.dag.json")} {
		dagFile(t, ignored, "ignored")
	}
	if stamp() != before {
		t.Error("files Load does not read changed the stamp")
	}
}
