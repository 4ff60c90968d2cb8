package handlers

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/registry"
)

// TestStartDepsFirstReadsWait: without operator directories the built-in
// catalogs load at the first read; reads that come at once, from many
// goroutines (under -race), all wait for that one load and see the
// catalogs NewDeps loads, and the namespaces build meanwhile.
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

// started says whether the first load of l has begun, and whether it has
// ended.
func started(l *liveCatalogs) (begun, ended bool) {
	select {
	case <-l.ready:
		return true, true
	default:
	}
	return l.begun.Load(), false
}

// TestBuiltinCatalogsLoadOnFirstUse: without operator directories,
// start-up (StartDeps, the namespaces, the registry, what start-up waits
// for, the load problems it logs) parses no catalog; the first call that
// needs one loads it and gets its answer, and later calls share it.
func TestBuiltinCatalogsLoadOnFirstUse(t *testing.T) {
	d, loaded, err := StartDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{}, Namespaces(d)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded(); err != nil {
		t.Fatal(err)
	}
	if problems := d.LoadProblems(); len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if Resources(d) == nil || Prompts(d) == nil {
		t.Fatal("no resources or prompts")
	}
	if begun, _ := started(d.live); begun || d.live.current.Load() != nil {
		t.Fatal("start-up loaded the built-in catalogs")
	}
	steps := catOK(t, call(t, reg, "catalog.list_steps", `{}`))
	if len(catList(t, steps["steps"])) == 0 {
		t.Fatalf("catalog.list_steps: %v", steps)
	}
	if _, ended := started(d.live); !ended {
		t.Fatal("the first call did not load the catalogs")
	}
	first := d.live.current.Load()
	catOK(t, call(t, reg, "pipeline_catalog.list", `{}`))
	if d.live.current.Load() != first {
		t.Fatal("a second call loaded the catalogs again")
	}
}

// TestOperatorDirsLoadAtStart: with an operator step or pipeline
// directory the load starts with StartDeps and what start-up waits for
// includes it, so a bad directory is reported before the server serves.
func TestOperatorDirsLoadAtStart(t *testing.T) {
	for name, opts := range map[string]Options{
		"steps":     {StepDirs: []string{t.TempDir()}},
		"pipelines": {PipelineDirs: []string{t.TempDir()}},
	} {
		t.Run(name, func(t *testing.T) {
			opts.WorkspaceRoot = t.TempDir()
			d, loaded, err := StartDeps(opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := loaded(); err != nil {
				t.Fatal(err)
			}
			if _, ended := started(d.live); !ended || d.live.current.Load() == nil {
				t.Fatal("start-up did not load the catalogs")
			}
		})
	}
	// A pipeline directory that is not one is a load problem, logged at
	// start-up.
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := NewDeps(Options{WorkspaceRoot: t.TempDir(), PipelineDirs: []string{notDir}})
	if err != nil {
		t.Fatal(err)
	}
	if problems := d.LoadProblems(); len(problems) != 1 || problems[0].Catalog != "pipelines" {
		t.Fatalf("problems: %v", problems)
	}
}

// TestBuiltinCatalogsLoadClean: the built-in catalogs, which load on
// first use when no operator directory is configured, load without an
// error or a problem (a broken embedded file fails here, not at run time).
func TestBuiltinCatalogsLoadClean(t *testing.T) {
	view, err := buildView(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Problems) != 0 || len(view.Config.Problems()) != 0 || view.Steps.Len() == 0 {
		t.Fatalf("step catalog: %d step types, problems %v, config problems %v", view.Steps.Len(), view.Problems, view.Config.Problems())
	}
	dags, problems, err := pipelines.Load()
	if err != nil || len(problems) != 0 || len(dags.List()) == 0 {
		t.Fatalf("pipeline catalog: %d DAGs, problems %v, err %v", len(dags.List()), problems, err)
	}
}
