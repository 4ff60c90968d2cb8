package compiler

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/pipelines"
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

// BenchmarkCompileShared compiles the 25 built-in shared DAGs (sample
// configs) and, in alternating rounds of the same run, encodes each
// compiled definition with json.Marshal: ns/op is one pass over all 25,
// floor-ns/op the marshalling, x-floor their ratio.
func BenchmarkCompileShared(b *testing.B) {
	cat, _, err := pipelines.Load()
	if err != nil {
		b.Fatal(err)
	}
	var inputs []Input
	var defs []any
	for _, e := range cat.List() {
		in := sampleInput(b, e.DAG())
		res, err := Compile(context.Background(), in)
		if err != nil {
			b.Fatalf("%s: %v", e.ID, err)
		}
		inputs = append(inputs, in)
		defs = append(defs, res.Definition)
	}
	b.ReportAllocs()
	var tOurs, tFloor time.Duration
	for b.Loop() {
		start := time.Now()
		for _, in := range inputs {
			if _, err := Compile(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
		tOurs += time.Since(start)
		start = time.Now()
		for _, d := range defs {
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
		tFloor += time.Since(start)
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(tFloor.Nanoseconds())/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(tOurs)/float64(tFloor), "x-floor")
}
