package deps

import (
	"context"
	"fmt"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
)

// synthetic builds a DAG of n nodes in one of three shapes, with a lookup
// that gives every node a fixture spec (job type "training", so pair scores
// are shared as they are for real pipelines).
func synthetic(b *testing.B, shape string, n int) (*dag.DAG, SpecLookup) {
	specs := loadFixtures(b)
	nodes := make([]string, n)
	stepOf := make(map[string]string, n)
	var edges [][2]string
	for i := range nodes {
		nodes[i] = fmt.Sprintf("N%d", i)
	}
	switch shape {
	case "chain": // loader → prep → prep → … (each prep feeds the next)
		stepOf[nodes[0]] = "CradleDataLoading"
		for i := 1; i < n; i++ {
			stepOf[nodes[i]] = "TabularPreprocessing"
			edges = append(edges, [2]string{nodes[i-1], nodes[i]})
		}
	case "fanout": // one loader feeding n-1 preps
		stepOf[nodes[0]] = "CradleDataLoading"
		for i := 1; i < n; i++ {
			stepOf[nodes[i]] = "TabularPreprocessing"
			edges = append(edges, [2]string{nodes[0], nodes[i]})
		}
	case "fanin": // n-2 preps fed by one loader, all feeding one trainer
		stepOf[nodes[0]] = "CradleDataLoading"
		stepOf[nodes[n-1]] = "XGBoostTraining"
		for i := 1; i < n-1; i++ {
			stepOf[nodes[i]] = "TabularPreprocessing"
			edges = append(edges, [2]string{nodes[0], nodes[i]}, [2]string{nodes[i], nodes[n-1]})
		}
	}
	lookup := func(node string) (NodeSpec, error) {
		st := stepOf[node]
		return NodeSpec{StepType: st, JobType: "training", PipelineStepName: st + "-Training", Spec: specs[st]}, nil
	}
	return dag.New(nodes, edges), lookup
}

// BenchmarkResolve reports ns per node; near-constant ns/node across sizes
// means resolution is near-linear in the graph size.
func BenchmarkResolve(b *testing.B) {
	for _, shape := range []string{"chain", "fanout", "fanin"} {
		for _, n := range []int{100, 1000, 5000} {
			b.Run(fmt.Sprintf("%s/%d", shape, n), func(b *testing.B) {
				d, lookup := synthetic(b, shape, n)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := ResolveWith(context.Background(), d, lookup); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}
