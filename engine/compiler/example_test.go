package compiler

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/enginetest"
	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// The example project compiles from the repository root with every script
// present, and its definition validates.
func TestExampleProjectCompiles(t *testing.T) {
	c, s := fixtures(t)
	root := "../.."
	data, err := os.ReadFile(root + "/examples/xgboost-tabular/dag.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	f := enginetest.ConfigFile(t, os.DirFS(root), "examples/xgboost-tabular/config.json", s)
	res, err := Compile(context.Background(), Input{DAG: d, Configs: f.Configs, Catalog: c, Sources: os.DirFS(root)})
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, res.JSON)
	for _, w := range res.Warnings {
		t.Errorf("warning: %s", w)
	}
	m := res.Manifest()
	if len(m) != len(res.Artifacts) {
		t.Fatalf("manifest has %d entries for %d artifacts: %v", len(m), len(res.Artifacts), m)
	}
	for local := range m {
		if !strings.HasPrefix(local, "examples/xgboost-tabular/scripts") && !strings.HasPrefix(local, "generated:") {
			t.Errorf("unexpected manifest entry %s", local)
		}
	}
}
