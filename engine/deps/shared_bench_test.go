package deps

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/engine/steps"
)

// BenchmarkWireShared wires the 25 built-in shared DAGs (or those under
// $BENCH_WIRE_DAGS) over the built-in catalog. "remembered" is wiring as it runs (the scorer's answers kept);
// "fresh" forgets them before each pass, as a first wiring does (ns/op is
// the pass alone), and reports what share of that pass the scorer takes
// (scorer-share: the distinct name pairs of the pass scored once more by
// explain, timed in alternation with the pass). Keep difflib while
// scorer-share stays well under half.
func BenchmarkWireShared(b *testing.B) {
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		b.Fatal(err)
	}
	dags, _, err := pipelines.Load()
	if err != nil {
		b.Fatal(err)
	}
	entries := dags.List()
	if dir := os.Getenv("BENCH_WIRE_DAGS"); dir != "" {
		// Another set of Cursus-format DAG files (scripts/python-compare.sh).
		var problems []finding.Finding
		entries, problems = pipelines.LoadFS(os.DirFS(dir), dir)
		if len(entries) == 0 {
			b.Fatalf("no DAGs in %s: %v", dir, problems)
		}
	}
	wire := func(b *testing.B) {
		for _, e := range entries {
			if _, err := Resolve(context.Background(), e.DAG(), cat); err != nil {
				b.Fatal(err)
			}
		}
	}
	forget := func() {
		explained.Lock()
		explained.m = nil
		explained.Unlock()
	}
	b.Run("remembered", func(b *testing.B) {
		wire(b)
		b.ReportAllocs()
		for b.Loop() {
			wire(b)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		forget()
		wire(b)
		explained.Lock()
		var pairs [][2]string
		for k := range explained.m {
			pairs = append(pairs, k)
		}
		explained.Unlock()
		var tWire, tScore time.Duration
		for b.Loop() {
			forget()
			start := time.Now()
			wire(b)
			tWire += time.Since(start)
			start = time.Now()
			for _, p := range pairs {
				explain(p[0], p[1])
			}
			tScore += time.Since(start)
		}
		b.ReportMetric(float64(tWire.Nanoseconds())/float64(b.N), "ns/op")
		b.ReportMetric(float64(len(pairs)), "pairs")
		b.ReportMetric(float64(tScore)/float64(tWire), "scorer-share")
	})
}
