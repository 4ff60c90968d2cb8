package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestRESTTimeoutAnswersOnTime: POST /call/validate.deps_resolve with a
// 6,001-node DAG and a 100 ms limit in CURSUS_LIMITS_TOOL_TIMEOUTS is a
// 504 within the limit plus 200 ms (the resolver needs about 300 ms for
// it on a quiet machine, so the limit is well inside its work). It used to answer only when the
// resolver was done, seconds later. Under load a request can be
// descheduled past the margin, so the best of three counts. Under the
// race detector only the 504 is checked: decoding and validating the
// body, which cannot stop at the deadline, takes seconds there.
func TestRESTTimeoutAnswersOnTime(t *testing.T) {
	const limit, margin = 100 * time.Millisecond, 200 * time.Millisecond
	o := newOpsEnv(t, map[string]string{
		"CURSUS_LIMITS_TOOL_TIMEOUTS": "validate.deps_resolve=100ms",
		// The DAG is 1.3 MB of JSON.
		"CURSUS_LIMITS_MAX_BODY_BYTES": "8388608", "CURSUS_LIMITS_MAX_ARG_BYTES": "8388608",
	})
	nodes := make([]string, 6001)
	var edges [][2]string
	for i := range nodes {
		nodes[i] = fmt.Sprintf("TabularPreprocessing_j%d", i)
		for k := 1; k <= 3 && k <= i; k++ {
			edges = append(edges, [2]string{nodes[i-k], nodes[i]})
		}
	}
	body, err := json.Marshal(map[string]any{"nodes": nodes, "edges": edges})
	if err != nil {
		t.Fatal(err)
	}
	tries := 3
	if raceDetector {
		tries = 1
	}
	best := time.Duration(1<<63 - 1)
	for try := 1; try <= tries && best > limit+margin; try++ {
		start := time.Now()
		resp, env := o.call(t, "validate.deps_resolve", string(body), nil)
		took := time.Since(start)
		t.Logf("try %d: %d %v after %v", try, resp.StatusCode, env["code"], took)
		if resp.StatusCode != http.StatusGatewayTimeout || env["code"] != "timeout" {
			t.Fatalf("want 504 timeout, got %d %v (meta %v)", resp.StatusCode, env["code"], env["meta"])
		}
		best = min(best, took)
	}
	if !raceDetector && best > limit+margin {
		t.Errorf("the best of three 504s came after %v; the limit is %v, so at most %v", best, limit, limit+margin)
	}
}
