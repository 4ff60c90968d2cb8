package localrun

import (
	"context"
	"testing"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/pipelines"
)

// sharedDAG loads a shared DAG by id.
func sharedDAG(t testing.TB, id string) *dag.DAG {
	t.Helper()
	cat, _, err := pipelines.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cat.List() {
		if e.ID == id {
			return e.DAG()
		}
	}
	t.Fatalf("no shared DAG %s", id)
	return nil
}

// compileReadmeWay compiles a DAG configured as the README does: the
// config template's sample values, no caller code, extra per-node values
// on top.
func compileReadmeWay(t testing.TB, d *dag.DAG, extra map[string]map[string]any) *compiler.Result {
	t.Helper()
	cat, schemas := enginetest.Catalog(t)
	rep, err := config.Requirements(context.Background(), d, schemas)
	if err != nil {
		t.Fatal(err)
	}
	base, perNode, missing := config.SampleValues(rep)
	if len(missing) > 0 {
		t.Fatalf("no sample values for %v", missing)
	}
	for node, vals := range extra {
		if perNode[node] == nil {
			perNode[node] = map[string]any{}
		}
		for k, v := range vals {
			perNode[node][k] = v
		}
	}
	configs, probs, _ := schemas.BuildDAG(context.Background(), d, base, perNode)
	if len(probs) > 0 {
		t.Fatalf("config problems: %v", probs)
	}
	res, err := compiler.Compile(context.Background(), compiler.Input{DAG: d, Configs: configs, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
