package config

import (
	"bytes"
	"context"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/steps"
)

func builtinSchemas(t testing.TB) *Schemas {
	t.Helper()
	cat, probs, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) > 0 {
		t.Fatalf("built-in catalog problems: %v", probs)
	}
	s, err := LoadSchemas(cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Problems() {
		t.Errorf("built-in config section: %s", p)
	}
	if len(s.Names()) != len(cat.Names()) {
		t.Errorf("%d schemas for %d step types", len(s.Names()), len(cat.Names()))
	}
	return s
}

// Every built-in step type gets a valid config from sample essentials, and
// the config survives a save/load round trip byte for byte.
func TestBuiltinStepsSampleConfigs(t *testing.T) {
	s := builtinSchemas(t)
	for _, name := range s.Names() {
		d := dag.New([]string{name}, nil)
		rep, err := Requirements(context.Background(), d, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base, perNode, missing := SampleValues(rep)
		if len(missing) > 0 {
			t.Errorf("%s: no sample for %v", name, missing)
			continue
		}
		configs, probs, _ := s.BuildDAG(context.Background(), d, base, perNode)
		if len(probs) > 0 {
			t.Errorf("%s: %v", name, probs)
			continue
		}
		out, err := Marshal(configs, "2025-01-01T00:00:00Z")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f, err := Parse(out, s)
		if err != nil {
			t.Errorf("%s: reload: %v", name, err)
			continue
		}
		again, _ := Marshal(f.Configs, "2025-01-01T00:00:00Z")
		if !bytes.Equal(out, again) {
			t.Errorf("%s: not byte-stable", name)
		}
	}
}

// Resolution goes through the catalog: node names with job types resolve
// the way the compiler will resolve them.
func TestBuiltinNodeResolution(t *testing.T) {
	s := builtinSchemas(t)
	n, err := s.ResolveNode("TabularPreprocessing_training")
	if err != nil || n.StepType != "TabularPreprocessing" || n.JobType != "training" {
		t.Errorf("got %+v, %v", n, err)
	}
	if _, err := s.ResolveNode("TabularPreprocesing"); err == nil {
		t.Error("typo resolved")
	}
}

// Acceptance: for every built-in shared DAG, requirements → sample
// essentials → build → config.json → load → config.json is byte-stable.
func TestSharedDAGsRoundTrip(t *testing.T) {
	s := builtinSchemas(t)
	cat, probs, err := pipelines.Load()
	if err != nil || len(probs) > 0 {
		t.Fatalf("pipelines: %v %v", err, probs)
	}
	if len(cat.List()) == 0 {
		t.Fatal("no shared DAGs")
	}
	for _, e := range cat.List() {
		d := e.DAG()
		rep, err := Requirements(context.Background(), d, s)
		if err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		if len(rep.Unresolved) > 0 {
			t.Errorf("%s: unresolved nodes %+v", e.ID, rep.Unresolved)
			continue
		}
		base, perNode, missing := SampleValues(rep)
		if len(missing) > 0 {
			t.Errorf("%s: no sample for %v", e.ID, missing)
			continue
		}
		configs, probs, _ := s.BuildDAG(context.Background(), d, base, perNode)
		if len(probs) > 0 {
			t.Errorf("%s: %v", e.ID, probs)
			continue
		}
		out, err := Marshal(configs, "2025-01-01T00:00:00Z")
		if err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		f, err := Parse(out, s)
		if err != nil {
			t.Errorf("%s: reload: %v", e.ID, err)
			continue
		}
		if len(f.Configs) != len(d.Nodes) || len(f.Warnings) > 0 {
			t.Errorf("%s: %d configs for %d nodes, warnings %v", e.ID, len(f.Configs), len(d.Nodes), f.Warnings)
		}
		for _, n := range d.Nodes {
			if _, ok := f.Get(n); !ok {
				t.Errorf("%s: no config saved under node %s", e.ID, n)
			}
		}
		again, _ := Marshal(f.Configs, "2025-01-01T00:00:00Z")
		if !bytes.Equal(out, again) {
			t.Errorf("%s: not byte-stable", e.ID)
		}
	}
}
