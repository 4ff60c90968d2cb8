package deps

import (
	"context"
	"errors"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// TestResolversStopWhenCancelled: the resolver, its report, the set
// resolution and the integrity check and Mermaid rendering it is used
// with return the context's error instead of finishing a large DAG.
func TestResolversStopWhenCancelled(t *testing.T) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	d := catalogDAG("chain", 2000)
	plan, err := Resolve(context.Background(), d, cat)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := map[string]func() error{
		"Resolve":    func() error { _, err := Resolve(ctx, d, cat); return err },
		"PlanReport": func() error { _, err := PlanReport(ctx, plan, cat); return err },
		"SetReport":  func() error { _, err := SetReport(ctx, d.Nodes[:200], cat); return err },
		"CheckWith":  func() error { _, err := d.CheckWith(ctx, NodeLookup(cat)); return err },
		"Mermaid":    func() error { _, err := d.Mermaid(ctx, dag.MermaidOptions{}); return err },
	}
	for name, run := range runs {
		if err := run(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
		}
	}
}
