package handlers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/finding"
)

// TestLoadProblemsKeepTheKeyPath: the problems logged at start-up are the
// catalogs' findings as they are, each tagged with its catalog; the key
// path inside the file stays its own field.
func TestLoadProblemsKeepTheKeyPath(t *testing.T) {
	stepDir, dagDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(stepDir, "broken.step.yaml"), []byte("step_type: Broken\nspec: [1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dagDir, "catalog_index.json"), []byte(`{"dags": [{"id": ""}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := NewDeps(Options{WorkspaceRoot: t.TempDir(), StepDirs: []string{stepDir}, PipelineDirs: []string{dagDir}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]finding.Finding{}
	for _, p := range d.LoadProblems() {
		got[p.Catalog] = p.Finding
	}
	if s := got["steps"]; len(got) != 2 || !strings.HasSuffix(s.File, "broken.step.yaml") || s.Path != "spec" || s.Rule == "" || s.Message == "" {
		t.Errorf("step problem: %+v (all: %v)", s, got)
	}
	if p := got["pipelines"]; !strings.HasSuffix(p.File, "catalog_index.json") || p.Path != "dags[0]" || p.Rule != "required" {
		t.Errorf("pipeline problem: %+v", p)
	}
}
