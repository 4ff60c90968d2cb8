package handlers

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestStartDepsFirstReadsWait: the catalogs load while StartDeps has
// returned; reads that come at once, from many goroutines (under -race),
// all wait for the load and see the catalogs NewDeps loads, and the
// namespaces build meanwhile.
func TestStartDepsFirstReadsWait(t *testing.T) {
	want, err := NewDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	wantNames := want.catalogs(context.Background()).Steps.Names()
	wantDAGs := len(want.catalogs(context.Background()).DAGs.List())

	d, loaded, err := StartDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	nss := Namespaces(d)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			v := d.catalogs(context.Background())
			if v == nil || !slices.Equal(v.Steps.Names(), wantNames) || len(v.DAGs.List()) != wantDAGs {
				t.Error("a first read did not see the loaded catalogs")
			}
			if problems := d.LoadProblems(); len(problems) != 0 {
				t.Errorf("problems: %v", problems)
			}
		})
	}
	wg.Wait()
	if err := loaded(); err != nil {
		t.Fatal(err)
	}
	for _, build := range nss {
		if _, err := build(); err != nil {
			t.Error(err)
		}
	}
}

// TestStartDepsReportsALoadError: a catalog that cannot load fails
// loaded (and NewDeps) with the load's error.
func TestStartDepsReportsALoadError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, loaded, err := StartDeps(Options{WorkspaceRoot: t.TempDir(), StepDirs: []string{missing}})
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded(); err == nil || !strings.Contains(err.Error(), "step catalog directory") {
		t.Fatalf("loaded() = %v", err)
	}
	if _, err := NewDeps(Options{WorkspaceRoot: t.TempDir(), StepDirs: []string{missing}}); err == nil || !strings.Contains(err.Error(), "step catalog directory") {
		t.Fatalf("NewDeps = %v", err)
	}
}
