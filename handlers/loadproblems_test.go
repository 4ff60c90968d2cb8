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

// TestLoadProblemsCarryOverrides: an operator's step file that overrides a
// built-in step type joins the catalog, and start-up's list says so as a
// warning-level remark (the operator may not know the name was taken).
func TestLoadProblemsCarryOverrides(t *testing.T) {
	builtin, err := os.ReadFile(filepath.Join("..", "engine", "steps", "catalog", "xgboost_training.step.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	stepDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(stepDir, "mine.step.yaml"), builtin, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := NewDeps(Options{WorkspaceRoot: t.TempDir(), StepDirs: []string{stepDir}})
	if err != nil {
		t.Fatal(err)
	}
	var overrides []finding.Finding
	for _, p := range d.LoadProblems() {
		if p.Catalog == "steps" && p.Rule == "override" {
			overrides = append(overrides, p.Finding)
		}
	}
	if len(overrides) != 1 || overrides[0].Level != finding.Warning || !strings.HasSuffix(overrides[0].File, "mine.step.yaml") ||
		!strings.Contains(overrides[0].Message, "XGBoostTraining") {
		t.Errorf("override remarks: %+v, want one warning naming XGBoostTraining from mine.step.yaml", overrides)
	}
}
