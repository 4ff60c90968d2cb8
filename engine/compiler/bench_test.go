package compiler

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cursus-dev/cursus/engine/dag"
)

// syntheticDAG has n nodes in chains of DummyDataLoading →
// TabularPreprocessing → StratifiedSampling, each chain with its own job
// type (so every step name is unique).
func syntheticDAG(n int) *dag.DAG {
	var nodes []string
	var edges [][2]string
	kinds := []string{"DummyDataLoading", "TabularPreprocessing", "StratifiedSampling"}
	for i := 0; len(nodes) < n; i++ {
		job := fmt.Sprintf("g%d", i)
		var prev string
		for _, k := range kinds {
			if len(nodes) == n {
				break
			}
			name := k + "_" + job
			nodes = append(nodes, name)
			if prev != "" {
				edges = append(edges, [2]string{prev, name})
			}
			prev = name
		}
	}
	return dag.New(nodes, edges)
}

func benchCompile(b *testing.B, n int) {
	in := sampleInput(b, syntheticDAG(n))
	res, err := Compile(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("compile", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Compile(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
	})
	// The floor: encoding the finished definition with encoding/json.
	b.Run("json.Marshal-floor", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(res.Definition); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
	})
}

func BenchmarkCompile50(b *testing.B)   { benchCompile(b, 50) }
func BenchmarkCompile500(b *testing.B)  { benchCompile(b, 500) }
func BenchmarkCompile5000(b *testing.B) { benchCompile(b, 5000) }

func TestSyntheticDAGCompiles(t *testing.T) {
	in := sampleInput(t, syntheticDAG(30))
	res, err := Compile(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 30 {
		t.Fatalf("%d steps", len(res.Steps))
	}
}
