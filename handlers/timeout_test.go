package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cursus-dev/cursus/registry"
)

// The per-tool limit of the timeout tests and how late past it an answer
// may come (the hardening issue's figure).
const (
	testToolLimit  = 300 * time.Millisecond
	testLateMargin = 200 * time.Millisecond
)

// toolLimit is the limit to test tool with: testToolLimit, or a quarter of
// the call's unlimited run when that is shorter, so that the call times
// out on a fast machine too. The race detector only slows the work, so
// under it the unlimited run is skipped.
//
// Under the race detector the answer's lateness is not checked either:
// decoding and validating a large argument, which cannot stop at the
// deadline, takes seconds there. The goroutine and CPU checks still run.
func toolLimit(t *testing.T, unlimited *registry.Registry, tool string, args map[string]any) time.Duration {
	t.Helper()
	if raceDetector {
		return testToolLimit
	}
	start := time.Now()
	if res := unlimited.Call(context.Background(), tool, args); !res.OK {
		t.Fatalf("unlimited run: %s (%s)", res.Error, res.Code)
	}
	took := time.Since(start)
	t.Logf("unlimited run: %v", took)
	return min(testToolLimit, took/4)
}

// bigDAG is a DAG of n built-in steps (TabularPreprocessing_j<i>) in which
// every node but the first feeds from up to fanIn nodes before it.
func bigDAG(n, fanIn int) (nodes []string, edges [][2]string) {
	nodes = make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("TabularPreprocessing_j%d", i)
		for k := 1; k <= fanIn && k <= i; k++ {
			edges = append(edges, [2]string{nodes[i-k], nodes[i]})
		}
	}
	return nodes, edges
}

// wireArgs decodes v the way a transport does, so the registry validates
// and binds exactly what a client would send.
func wireArgs(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	args, bad := registry.DecodeArgs(b)
	if bad != nil {
		t.Fatal(bad.Error)
	}
	return args
}

// cpuTime is the CPU time this process has used so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestTimeoutStopsWork: a tool given a DAG too large for its limit
// (toolLimit) answers `timeout` within the limit plus testLateMargin, and its
// work stops — once the step it was in ends (argument validation and
// encoding a document do not look at the context), no goroutine of it is
// left and the process burns no more CPU. Each of these tools used to run
// to its end (seconds on these DAGs) and only then answer.
//
// Under load a call can be descheduled past the margin, so each tool gets
// up to three tries and the best counts.
func TestTimeoutStopsWork(t *testing.T) {
	d, err := NewDeps(Options{WorkspaceRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	unlimited, err := registry.New(registry.Options{}, Namespaces(d)...)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"validate.deps_resolve", bigDAGArgs(t, 6001, 3, false)},
		{"config.requirements", bigDAGArgs(t, 20000, 1, true)},
		{"dag.resolve_plan", bigDAGArgs(t, 6000, 4, false)},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			limit := toolLimit(t, unlimited, c.tool, c.args)
			reg, err := registry.New(registry.Options{PerToolTimeout: map[string]time.Duration{c.tool: limit}}, Namespaces(d)...)
			if err != nil {
				t.Fatal(err)
			}
			ignore := goleak.IgnoreCurrent()
			best, timedOut := time.Duration(0), false
			for try := 1; try <= 3; try++ {
				start := time.Now()
				res := reg.Call(context.Background(), c.tool, c.args)
				took := time.Since(start)
				t.Logf("try %d (limit %v): ok=%v code=%q after %v", try, limit, res.OK, res.Code, took)
				if res.Code != registry.CodeTimeout {
					continue
				}
				if !timedOut || took < best {
					best, timedOut = took, true
				}
				if raceDetector || best <= limit+testLateMargin {
					break
				}
			}
			switch {
			case !timedOut:
				t.Errorf("no try answered timeout")
			case !raceDetector && best > limit+testLateMargin:
				t.Errorf("the best of three timeouts came after %v; the limit is %v, so at most %v", best, limit, limit+testLateMargin)
			}
			// The answer races the work: what is still running ends at its
			// next look at the context.
			for deadline := time.Now().Add(30 * time.Second); reg.Abandoned() > 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the work of a timed-out call still runs 30 s later")
				}
			}
			goleak.VerifyNone(t, ignore)
			// A runaway handler would burn a whole core for the window.
			const window = 500 * time.Millisecond
			before := cpuTime(t)
			time.Sleep(window)
			used := cpuTime(t) - before
			t.Logf("CPU used in the %v after the answer: %v", window, used)
			if used > window/2 {
				t.Errorf("the process used %v of CPU in the %v after the answer: the work goes on", used, window)
			}
		})
	}
}

// bigDAGArgs is the arguments of a DAG tool over bigDAG(n, fanIn),
// under "dag" when nested (config.requirements) or at the top level.
func bigDAGArgs(t *testing.T, n, fanIn int, nested bool) map[string]any {
	t.Helper()
	nodes, edges := bigDAG(n, fanIn)
	g := map[string]any{"nodes": nodes, "edges": edges}
	if nested {
		return wireArgs(t, map[string]any{"dag": g})
	}
	return wireArgs(t, g)
}
