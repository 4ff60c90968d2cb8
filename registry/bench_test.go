package registry

import (
	"context"
	"testing"
	"time"
)

// benchPair runs ours and floor b.N times each, interleaved in chunks so
// both see the same machine state, and reports ours as ns/op together with
// floor-ns/op, overhead-ns/op and ratio = floor/ours (our throughput as a
// fraction of the floor's; 1 means no overhead).
func benchPair(b *testing.B, ours, floor func()) {
	b.Helper()
	// The timer keeps running over both halves so the framework sizes b.N
	// on the real elapsed time; ns/op is then overridden with ours alone.
	var tOurs, tFloor time.Duration
	const chunk = 32
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		start := time.Now()
		for range n {
			floor()
		}
		tFloor += time.Since(start)
		start = time.Now()
		for range n {
			ours()
		}
		tOurs += time.Since(start)
		done += n
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(perOp(tOurs), "ns/op")
	b.ReportMetric(perOp(tFloor), "floor-ns/op")
	b.ReportMetric(perOp(tOurs)-perOp(tFloor), "overhead-ns/op")
	b.ReportMetric(float64(tFloor)/float64(tOurs), "ratio")
}

// BenchmarkCall is registry.Call on a trivial tool against calling the same
// handler directly: the cost of lookup, gates, schema validation, the
// call deadline and the envelope metadata.
//
//	go test -run=^$ -bench=BenchmarkCall -count=10 ./registry | tee new.txt; benchstat new.txt
func BenchmarkCall(b *testing.B) {
	handler := func(_ context.Context, in testIn) (any, error) {
		return map[string]any{"name": in.Name}, nil
	}
	r, err := New(Options{Timeout: time.Minute}, func() (Namespace, error) {
		return Namespace{Name: "b", Description: "bench", Tools: []ToolDef{tool("b.noop", handler)}}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"args=1", map[string]any{"name": "x"}},
		// Numbers as the front ends decode them.
		{"args=3", map[string]any{"name": "x", "count": 3.0, "mode": "fast"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchPair(b,
				func() {
					if res := r.Call(ctx, "b.noop", tc.args); !res.OK {
						b.Fatal(res.Error)
					}
				},
				func() {
					if _, err := handler(ctx, testIn{Name: "x"}); err != nil {
						b.Fatal(err)
					}
				})
		})
	}
}
