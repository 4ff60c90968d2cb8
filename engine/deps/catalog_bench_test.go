package deps

import (
	"context"
	"fmt"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
)

// catalogDAG builds a synthetic DAG of n nodes over the real step catalog.
// Node names carry unique job types (TabularPreprocessing_n17), as large
// generated DAGs would.
func catalogDAG(shape string, n int) *dag.DAG {
	nodes := []string{"DummyDataLoading_training"}
	var edges [][2]string
	prep := func(i int) string { return fmt.Sprintf("TabularPreprocessing_n%d", i) }
	switch shape {
	case "chain":
		for i := 1; i < n; i++ {
			nodes = append(nodes, prep(i))
			edges = append(edges, [2]string{nodes[i-1], nodes[i]})
		}
	case "fanout":
		for i := 1; i < n; i++ {
			nodes = append(nodes, prep(i))
			edges = append(edges, [2]string{nodes[0], prep(i)})
		}
	case "fanin":
		for i := 1; i < n-1; i++ {
			nodes = append(nodes, prep(i))
			edges = append(edges, [2]string{nodes[0], prep(i)}, [2]string{prep(i), "XGBoostTraining"})
		}
		nodes = append(nodes, "XGBoostTraining")
	}
	return dag.New(nodes, edges)
}

// BenchmarkResolvePlanCatalog measures the engine work of dag.resolve_plan
// (integrity check with step lookup, resolution, Mermaid) against the real
// step catalog, reporting ns per node.
func BenchmarkResolvePlanCatalog(b *testing.B) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []string{"chain", "fanout", "fanin"} {
		for _, n := range []int{100, 1000, 5000} {
			b.Run(fmt.Sprintf("%s/%d", shape, n), func(b *testing.B) {
				d := catalogDAG(shape, n)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if r, err := d.CheckWith(context.Background(), NodeLookup(cat)); err != nil || !r.Valid {
						b.Fatalf("invalid: %v", r.Issues[0])
					}
					plan, err := Resolve(context.Background(), d, cat)
					if err != nil {
						b.Fatal(err)
					}
					if len(plan.Unresolved) > 0 && shape != "fanin" {
						b.Fatalf("unresolved: %+v", plan.Unresolved[0])
					}
					if _, err := d.Mermaid(context.Background(), dag.MermaidOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}
