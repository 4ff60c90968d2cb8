package handlers

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPodStateDigestAndKeyID: two servers with the same catalogs and key
// report the same catalog digest and key id; a step file added to one
// changes its digest once it reloads; another key changes the id.
func TestPodStateDigestAndKeyID(t *testing.T) {
	key := []byte("shared-workflow-key-0123456789")
	dir := t.TempDir()
	stepDir := filepath.Join(dir, "steps")
	if err := os.Mkdir(stepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	one, _ := newDepsRegistry(t, Options{WorkspaceRoot: dir, StepDirs: []string{stepDir}, StepReloadInterval: -1, WorkflowKey: key})
	two, _ := newDepsRegistry(t, Options{WorkspaceRoot: t.TempDir(), StepDirs: []string{stepDir}, StepReloadInterval: -1, WorkflowKey: key})
	before := one.CatalogDigest()
	if before == "" || before != two.CatalogDigest() || one.CatalogDigest() != before {
		t.Fatalf("same catalogs, digests %q and %q", before, two.CatalogDigest())
	}
	if one.WorkflowKeyID() == "" || one.WorkflowKeyID() != two.WorkflowKeyID() {
		t.Fatalf("same key, ids %q and %q", one.WorkflowKeyID(), two.WorkflowKeyID())
	}
	if err := os.WriteFile(filepath.Join(stepDir, "shap_explain.step.yaml"), []byte(shapStep("ShapExplain", "explanations")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A scrape waits a moment at most for the reload it triggers; on a
	// loaded machine the new catalogs may take a few scrapes to arrive.
	after := one.CatalogDigest()
	for deadline := time.Now().Add(30 * time.Second); after == before && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		after = one.CatalogDigest()
	}
	if after == before {
		t.Errorf("a new step type left the catalog digest at %s", after)
	}
	other, _ := newDepsRegistry(t, Options{WorkflowKey: []byte("another-workflow-key-0123")})
	if other.WorkflowKeyID() == one.WorkflowKeyID() {
		t.Error("another key has the same id")
	}
}
