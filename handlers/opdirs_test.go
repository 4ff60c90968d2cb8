package handlers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/registry"
)

// callBefore makes a call with a deadline of limit and fails the test if it
// has not answered well after that, so a reload that blocks fails the test
// rather than hangs it.
func callBefore(t *testing.T, reg *registry.Registry, limit time.Duration, tool, args string) *registry.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	answer := make(chan *registry.Result, 1)
	go func() { answer <- callAs(t, ctx, reg, tool, args) }()
	select {
	case res := <-answer:
		return res
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("%s did not answer %v after its deadline", tool, 10*time.Second)
		return nil
	}
}

// A named pipe, a symlink to /dev/zero and a symlink leading outside that
// appear in a step directory while the server runs are reported and
// skipped by the reload a call triggers: the call answers, and later
// reloads still pick up changes.
func TestStepDirReloadSkipsBadFiles(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	stepDir := filepath.Join(dir, "steps")
	if err := os.Mkdir(stepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, reg := newDepsRegistry(t, Options{WorkspaceRoot: dir, StepDirs: []string{stepDir}, StepReloadInterval: -1})
	catOK(t, callBefore(t, reg, 30*time.Second, "catalog.list_steps", `{}`))

	if err := syscall.Mkfifo(filepath.Join(stepDir, "pipe.step.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(stepDir, "zero.step.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "leak.step.yaml"), []byte(shapStep("LeakedStep", "leaked")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "leak.step.yaml"), filepath.Join(stepDir, "leak.step.yaml")); err != nil {
		t.Fatal(err)
	}
	res := callBefore(t, reg, 30*time.Second, "catalog.list_steps", `{}`)
	got := catOK(t, res)
	if strings.Contains(fmt.Sprint(got["steps"]), "LeakedStep") {
		t.Fatal("a step file outside the directory was loaded through a symlink")
	}
	rules := map[string]string{}
	for _, p := range catList(t, catMap(t, catList(t, got["step_dirs"])[0])["problems"]) {
		pm := catMap(t, p)
		rules[filepath.Base(pm["file"].(string))] = pm["rule"].(string)
	}
	want := map[string]string{"pipe.step.yaml": "not_regular", "zero.step.yaml": "outside", "leak.step.yaml": "outside"}
	if fmt.Sprint(rules) != fmt.Sprint(want) {
		t.Fatalf("problems by file %v, want %v", rules, want)
	}
	if !strings.Contains(strings.Join(res.Warnings, " "), "3 problem(s) in step directory") {
		t.Fatalf("no warning of the problems: %v", res.Warnings)
	}

	// The next change is still seen.
	if err := os.WriteFile(filepath.Join(stepDir, "shap_explain.step.yaml"), []byte(shapStep("ShapExplain", "explanations")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := catOK(t, callBefore(t, reg, 30*time.Second, "catalog.list_steps", `{}`)); !strings.Contains(fmt.Sprint(got["steps"]), "ShapExplain") {
		t.Fatal("a step file added after the bad ones is not picked up")
	}
}

// A reload that takes longer than the call that triggered it (a slow or
// hung file system) does not hold the call past its context: the call goes
// on with the catalogs loaded before, and the reload's catalogs are there
// for the calls after it ends.
func TestStepDirReloadWaitsNoLongerThanTheCall(t *testing.T) {
	dir := t.TempDir()
	stepDir := filepath.Join(dir, "steps")
	if err := os.Mkdir(stepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	deps, _ := newDepsRegistry(t, Options{WorkspaceRoot: dir, StepDirs: []string{stepDir}, StepReloadInterval: -1})
	before := deps.catalogs(t.Context())
	release := make(chan struct{})
	build := deps.live.build
	deps.live.build = func(dirs []string) (*catalogView, error) {
		<-release
		return build(dirs)
	}
	if err := os.WriteFile(filepath.Join(stepDir, "shap_explain.step.yaml"), []byte(shapStep("ShapExplain", "explanations")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got := deps.catalogs(ctx); got != before {
		t.Fatal("the call got new catalogs from a reload that has not ended")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the call waited %v for the reload; its context ended after 100ms", took)
	}
	// Calls meanwhile carry on with the old catalogs without waiting.
	if got := deps.catalogs(t.Context()); got != before {
		t.Fatal("a call during the reload did not get the current catalogs")
	}
	close(release)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := deps.catalogs(t.Context()).Steps.Get("ShapExplain"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reload's catalogs never replaced the old ones")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
