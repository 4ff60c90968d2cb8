package steps

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

func copyBuiltin(t *testing.T, name, to string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("catalog", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An operator's step directory with a named pipe, a symlink to /dev/zero
// and a symlink leading outside loads its good files, and says of each bad
// one why it was skipped, without blocking on the pipe or reading the
// device. A symlink that stays inside (a ConfigMap mount's layout) is read.
func TestLoadCatalogSkipsFilesThatAreNotRegularOrInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	copyBuiltin(t, "batch_transform.step.yaml", filepath.Join(dir, "batch_transform.step.yaml"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.step.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.step.yaml")); err != nil {
		t.Fatal(err)
	}
	copyBuiltin(t, "currency_conversion.step.yaml", filepath.Join(outside, "currency_conversion.step.yaml"))
	if err := os.Symlink(filepath.Join(outside, "currency_conversion.step.yaml"), filepath.Join(dir, "outside.step.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "..2026_12_01"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyBuiltin(t, "dummy_training.step.yaml", filepath.Join(dir, "..2026_12_01", "dummy_training.step.yaml"))
	if err := os.Symlink("..2026_12_01", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/dummy_training.step.yaml", filepath.Join(dir, "dummy_training.step.yaml")); err != nil {
		t.Fatal(err)
	}

	var cat *Catalog
	var problems []finding.Finding
	var err error
	within(t, 20*time.Second, func() { cat, problems, err = LoadCatalog(dir) })
	if err != nil {
		t.Fatal(err)
	}
	prefix := dir + string(os.PathSeparator)
	for step, from := range map[string]string{"BatchTransform": prefix, "DummyTraining": prefix, "CurrencyConversion": BuiltinPrefix} {
		iface, ok := cat.Get(step)
		if !ok || !strings.HasPrefix(iface.Source, from) {
			t.Errorf("%s: loaded %v from %q, want from %s", step, ok, iface.Source, from)
		}
	}
	want := map[string]string{"pipe.step.yaml": "not_regular", "zero.step.yaml": "outside", "outside.step.yaml": "outside"}
	got := map[string]string{}
	for _, p := range problems {
		got[strings.TrimPrefix(p.File, prefix)] = p.Rule
		if !strings.Contains(p.Message, "skipped") {
			t.Errorf("%s: the message does not say the file is skipped: %s", p.File, p.Message)
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
	// The stamp that decides a reload reads the same files the same way.
	within(t, 20*time.Second, func() { DirsStamp([]string{dir}) })
}

// A symlink to a named pipe inside the directory is refused as the pipe is.
func TestLoadCatalogSkipsSymlinkToPipeInside(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "via_link.step.yaml")); err != nil {
		t.Fatal(err)
	}
	var problems []finding.Finding
	within(t, 20*time.Second, func() { _, problems, _ = LoadCatalog(dir) })
	if len(problems) != 1 || problems[0].Rule != "not_regular" || !strings.Contains(problems[0].Message, "named pipe") {
		t.Fatalf("problems: %v", problems)
	}
}
