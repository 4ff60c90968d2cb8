package handlers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/registry"
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

// TestPipelineDirReload: two replicas share a pipeline directory. A DAG
// file added to it while they run is found by every lookup on both once
// the reload it triggers has run (each call waits for the reload it
// starts), a DAG file removed is gone, and the catalog digest follows on
// both alike.
func TestPipelineDirReload(t *testing.T) {
	dir := t.TempDir()
	dagDir := filepath.Join(dir, "dags")
	if err := os.Mkdir(dagDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var replicas []*registry.Registry
	var deps []*Deps
	for range 2 {
		d, reg := newDepsRegistry(t, Options{WorkspaceRoot: t.TempDir(), PipelineDirs: []string{dagDir}, StepReloadInterval: -1})
		deps, replicas = append(deps, d), append(replicas, reg)
	}
	before := deps[0].CatalogDigest()
	if before != deps[1].CatalogDigest() {
		t.Fatal("same directories, different digests")
	}
	for _, reg := range replicas {
		mustFail(t, callBefore(t, reg, 30*time.Second, "pipeline_catalog.get_dag", `{"dag_id": "xgboost_added_later"}`), registry.CodeNotFound)
	}

	file := filepath.Join(dagDir, "xgboost", "added_later.dag.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"nodes": ["XGBoostTraining"], "metadata": {"id": "xgboost_added_later", "framework": "xgboost", "features": ["training", "reloaded"]}}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, reg := range replicas {
		for _, tool := range []string{"pipeline_catalog.get_dag", "pipeline_catalog.load_dag", "pipeline_catalog.config_guidance"} {
			catOK(t, callBefore(t, reg, 30*time.Second, tool, `{"dag_id": "xgboost_added_later"}`))
		}
		if got := catOK(t, callBefore(t, reg, 30*time.Second, "pipeline_catalog.list", `{}`)); !strings.Contains(fmt.Sprint(got["dags"]), "xgboost_added_later") {
			t.Errorf("replica %d: pipeline_catalog.list does not list the added DAG", i)
		}
		rec := catOK(t, callBefore(t, reg, 30*time.Second, "pipeline_catalog.recommend", `{"features": ["reloaded"], "max_results": 1}`))
		if !strings.Contains(fmt.Sprint(rec["recommendations"]), "xgboost_added_later") {
			t.Errorf("replica %d: pipeline_catalog.recommend does not rank the added DAG first: %v", i, rec["recommendations"])
		}
		if values := deps[i].dags(t.Context()).IDs(); !slices.Contains(values, "xgboost_added_later") {
			t.Errorf("replica %d: cursus://dags values miss the added DAG", i)
		}
	}
	added := deps[0].CatalogDigest()
	if added == before || added != deps[1].CatalogDigest() {
		t.Errorf("digests before %s, after the DAG was added %s and %s: want changed and alike", before, added, deps[1].CatalogDigest())
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	for _, reg := range replicas {
		mustFail(t, callBefore(t, reg, 30*time.Second, "pipeline_catalog.get_dag", `{"dag_id": "xgboost_added_later"}`), registry.CodeNotFound)
	}
	if got := deps[0].CatalogDigest(); got != before {
		t.Errorf("digest %s after the DAG was removed, want %s again", got, before)
	}
}
