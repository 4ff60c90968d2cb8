package pipelines

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
)

var update = flag.Bool("update", false, "rewrite shared_dags/catalog_index.json from the DAG files")

func loadBuiltin(t *testing.T) *Catalog {
	t.Helper()
	c, problems, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("built-in catalog problems: %v", problems)
	}
	return c
}

func TestBuiltinCatalogShape(t *testing.T) {
	c := loadBuiltin(t)
	if n := len(c.List()); n < 20 {
		t.Fatalf("%d built-in DAGs, want at least 20", n)
	}
	perFramework := map[string]int{}
	features := map[string]bool{}
	for _, e := range c.List() {
		perFramework[e.Framework]++
		for _, f := range e.Features {
			features[f] = true
		}
		if e.Description == "" || e.TaskType == "" || e.AgentContext.WhenToUse == "" || len(e.AgentContext.Prerequisites) == 0 ||
			len(e.AgentContext.ConfigGuidance.UserMustProvide) == 0 {
			t.Errorf("%s: incomplete metadata", e.ID)
		}
		if _, ok := complexityOrder[e.Complexity]; !ok {
			t.Errorf("%s: complexity %q", e.ID, e.Complexity)
		}
		if !strings.HasPrefix(e.Path, e.Framework+"/") || !strings.HasSuffix(e.Path, ".dag.json") {
			t.Errorf("%s: path %q", e.ID, e.Path)
		}
	}
	for _, fw := range []string{"xgboost", "lightgbm", "pytorch"} {
		if perFramework[fw] < 4 {
			t.Errorf("framework %s has %d DAGs", fw, perFramework[fw])
		}
	}
	for _, f := range []string{"training", "calibration", "evaluation", "model_creation", "packaging", "payload", "registration", "batch_inference"} {
		if !features[f] {
			t.Errorf("no built-in DAG covers %s", f)
		}
	}
}

// hideIndex reads the built-in files without the index, so the index can
// be regenerated from the DAG files' own metadata.
func filesOnly(t *testing.T) fs.FS {
	t.Helper()
	sub, _ := fs.Sub(builtin, "shared_dags")
	m := fstest.MapFS{}
	err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == IndexFile {
			return err
		}
		data, err := fs.ReadFile(sub, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIndexInSyncWithFiles(t *testing.T) {
	entries, problems := LoadFS(filesOnly(t), "builtin")
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	c := &Catalog{byID: map[string]*Entry{}}
	c.add(entries)
	want, err := c.Index()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("shared_dags", IndexFile)
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; run: go test ./engine/pipelines -run TestIndexInSyncWithFiles -update", file)
	}
}

// Every built-in DAG must pass integrity checks against the real step
// catalog and wire every required dependency.
func TestBuiltinDAGsResolveAgainstStepCatalog(t *testing.T) {
	c := loadBuiltin(t)
	cat, problems, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Logf("step catalog problems (not ours): %v", problems)
	}
	for _, e := range c.List() {
		t.Run(e.ID, func(t *testing.T) {
			d := e.DAG()
			if r, err := d.CheckWith(context.Background(), deps.NodeLookup(cat)); err != nil || !r.Valid {
				t.Fatalf("integrity: %+v", r.Issues)
			}
			plan, err := deps.Resolve(context.Background(), d, cat)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range plan.Unresolved {
				var cands []string
				for _, c := range u.Candidates {
					cands = append(cands, c.FromNode+"."+c.FromOutput)
				}
				t.Errorf("%s.%s (%s) unresolved: %s; candidates %v", u.Node, u.Dependency, u.Type, u.Reason, cands)
			}
			for node, bs := range plan.Bindings {
				for _, b := range bs {
					if b.Reference == "" || strings.HasPrefix(b.Property, "properties.") {
						t.Errorf("%s.%s: bad reference %+v", node, b.Dependency, b)
					}
				}
			}
		})
	}
}

func TestLoadExtraDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("custom/mine.dag.json", `{"dag":{"nodes":["DummyDataLoading_training","TabularPreprocessing_training"],"edges":[["DummyDataLoading_training","TabularPreprocessing_training"]]},"metadata":{"name":"custom_prep","framework":"custom","node_count":5,"features":["preprocessing"]}}`)
	write("custom/noid.dag.json", `{"dag":{"nodes":["A","B"],"edges":[["A","B"]]}}`)
	write("custom/broken.dag.json", `{"dag":{"nodes":["A"],"edges":[["A","Z"]]}}`)
	write("custom/notjson.dag.json", `{`)
	write("xgboost/simple_training.dag.json", `{"dag":{"nodes":["X"],"edges":[]},"metadata":{"name":"xgboost_simple_training","framework":"xgboost","description":"override"}}`)
	c, problems, err := Load(dir, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, p := range problems {
		rules = append(rules, p.Rule)
	}
	joined := strings.Join(rules, ",")
	for _, want := range []string{"count", IssueDanglingRule, "dag", "directory"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %v lack rule %q", problems, want)
		}
	}
	e, ok := c.Get("custom_prep")
	if !ok || e.NodeCount != 2 || e.Source != dir {
		t.Fatalf("custom entry = %+v", e)
	}
	if _, ok := c.Get("custom_noid"); !ok {
		t.Errorf("id from path missing: %v", c.IDs())
	}
	if e, _ := c.Get("xgboost_simple_training"); e.Description != "override" {
		t.Errorf("override not applied: %+v", e)
	}
}

const IssueDanglingRule = "dangling_dependencies"

// TestLoadFSSkipsHiddenDirectories: a ConfigMap mount also shows its files
// under ..data and ..<timestamp>; only the visible copy is a DAG.
func TestLoadFSSkipsHiddenDirectories(t *testing.T) {
	files := filesOnly(t)
	m := fstest.MapFS{}
	for _, p := range []string{"xgboost/complete_e2e.dag.json"} {
		data, err := fs.ReadFile(files, p)
		if err != nil {
			t.Fatal(err)
		}
		m[p] = &fstest.MapFile{Data: data}
		// A flat ConfigMap puts its keys at ..data/<key> and
		// ..<timestamp>/<key>, two levels deep like a framework directory.
		m["..data/complete_e2e.dag.json"] = &fstest.MapFile{Data: data}
		m["..2026_11_30/complete_e2e.dag.json"] = &fstest.MapFile{Data: data}
	}
	entries, problems := LoadFS(m, "mounted")
	if len(problems) > 0 || len(entries) != 1 {
		t.Fatalf("entries=%d problems=%v", len(entries), problems)
	}
}

// A DAG file with no metadata still encodes every list and map of its
// entry as empty, never as null.
func TestEntryWithoutMetadataHasNoNulls(t *testing.T) {
	m := fstest.MapFS{"pytorch/bare.dag.json": &fstest.MapFile{Data: []byte(`{"nodes": ["a", "b"], "edges": [["a", "b"]]}`)}}
	entries, problems := LoadFS(m, "mounted")
	if len(problems) > 0 || len(entries) != 1 {
		t.Fatalf("entries=%d problems=%v", len(entries), problems)
	}
	out, err := json.Marshal(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("null")) {
		t.Fatalf("entry encodes a null: %s", out)
	}
}
