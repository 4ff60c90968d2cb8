package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// execTokens writes a tokens file with two callers who may run code.
func execTokens(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("carol-token-0123456789 carol read,exec\ndave-token-0123456789 dave read,exec\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// refusedNaming checks a 429 rate_limited answer with Retry-After whose
// message and details name setting.
func refusedNaming(t *testing.T, what string, resp *http.Response, env map[string]any, setting string) {
	t.Helper()
	details, _ := env["meta"].(map[string]any)["details"].(map[string]any)
	if resp.StatusCode != http.StatusTooManyRequests || env["code"] != "rate_limited" || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(env["error"].(string), setting) || details["limit"] != setting {
		t.Fatalf("%s: %d %v (Retry-After %q); want 429 rate_limited naming %s", what, resp.StatusCode, env, resp.Header.Get("Retry-After"), setting)
	}
}

// TestFairShareQueuesAndRefuses: past limits.max_calls_per_caller a
// caller's calls wait in its queue, past limits.max_queued_per_caller
// they are refused naming it; another caller is not held up; a queued
// call runs when a slot frees.
func TestFairShareQueuesAndRefuses(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE":            writeTokens(t),
		"CURSUS_LIMITS_MAX_CALLS_PER_CALLER": "1", "CURSUS_LIMITS_MAX_QUEUED_PER_CALLER": "1",
		"CURSUS_LIMITS_QUEUE_WAIT": "1m",
	})
	var wg sync.WaitGroup
	statuses := make(chan int, 2)
	hold := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := o.call(t, "opstest.hold", `{}`, bearer(readToken))
			statuses <- resp.StatusCode
		}()
	}
	hold()
	<-o.holdStarted
	hold()
	for deadline := time.Now().Add(10 * time.Second); o.srv.share.queued("principal:alice") != 1; {
		if time.Now().After(deadline) {
			t.Fatal("alice's second call never queued")
		}
		time.Sleep(time.Millisecond)
	}
	resp, env := o.call(t, "opstest.hold", `{}`, bearer(readToken))
	refusedNaming(t, "alice's third call", resp, env, "limits.max_queued_per_caller")
	select {
	case <-o.holdStarted:
		t.Fatal("alice's queued call ran beside her running one (limits.max_calls_per_caller = 1)")
	default:
	}
	// Bob is another caller: his call runs at once.
	if resp, env := o.call(t, "opstest.echo", `{}`, bearer(writeToken)); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's call while alice is at her caps: %d %v", resp.StatusCode, env)
	}
	close(o.holdRelease)
	wg.Wait()
	for range 2 {
		if s := <-statuses; s != http.StatusOK {
			t.Errorf("alice's held or queued call: %d, want 200", s)
		}
	}
}

// TestFairShareBytes: a caller's running and queued calls carry at most
// limits.max_bytes_per_caller bytes of arguments; a call alone may be
// larger (limits.max_arg_bytes bounds it).
func TestFairShareBytes(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_MAX_BYTES_PER_CALLER": "4096"})
	big := `{"payload": {"text": "` + strings.Repeat("x", 3000) + `"}}`
	if resp, env := o.call(t, "opstest.echo", `{"payload": {"text": "`+strings.Repeat("x", 6000)+`"}}`, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("a call alone over the cap: %d %v", resp.StatusCode, env)
	}
	done := make(chan int, 1)
	go func() {
		resp, _ := o.call(t, "opstest.hold", big, nil)
		done <- resp.StatusCode
	}()
	<-o.holdStarted
	resp, env := o.call(t, "opstest.echo", big, nil)
	refusedNaming(t, "a second large call", resp, env, "limits.max_bytes_per_caller")
	if resp, env := o.call(t, "opstest.echo", `{}`, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a small call beside the large one: %d %v", resp.StatusCode, env)
	}
	close(o.holdRelease)
	if s := <-done; s != http.StatusOK {
		t.Fatalf("held call: %d", s)
	}
}

// TestFairShareExecPerCaller: one caller holds at most
// limits.exec_per_caller of the server's script-running slots.
func TestFairShareExecPerCaller(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": execTokens(t), "CURSUS_MCP_ALLOW_SCRIPT_EXEC": "1",
		"CURSUS_LIMITS_EXEC_CONCURRENCY": "2", "CURSUS_LIMITS_EXEC_WAIT": "0s",
	})
	carol, dave := bearer("carol-token-0123456789"), bearer("dave-token-0123456789")
	done := make(chan int, 2)
	go func() { resp, _ := o.call(t, "opstest.exec", `{}`, carol); done <- resp.StatusCode }()
	<-o.execStarted
	resp, env := o.call(t, "opstest.exec", `{}`, carol)
	refusedNaming(t, "carol's second exec call", resp, env, "limits.exec_per_caller")
	go func() { resp, _ := o.call(t, "opstest.exec", `{}`, dave); done <- resp.StatusCode }()
	<-o.execStarted // dave's runs beside carol's
	close(o.execRelease)
	for range 2 {
		if s := <-done; s != http.StatusOK {
			t.Errorf("exec call: %d", s)
		}
	}
}

// metricValue reads one unlabelled sample from /metrics.
func metricValue(t *testing.T, o *opsEnv, name string) string {
	t.Helper()
	_, body := o.do(t, http.MethodGet, "/metrics", "", nil)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return ""
}

// TestAbandonedWorkHoldsItsShare: a call whose work ignores its deadline
// answers timeout on time, is counted by cursus_tool_calls_abandoned, and
// keeps its caller's slot until the work really ends, so abandoned work
// cannot pile up beyond limits.max_calls_per_caller.
func TestAbandonedWorkHoldsItsShare(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_LIMITS_TOOL_TIMEOUTS":        "opstest.stubborn=100ms",
		"CURSUS_LIMITS_MAX_CALLS_PER_CALLER": "1", "CURSUS_LIMITS_MAX_QUEUED_PER_CALLER": "0",
	})
	resp, env := o.call(t, "opstest.stubborn", `{}`, nil)
	if resp.StatusCode != http.StatusGatewayTimeout || env["code"] != "timeout" {
		t.Fatalf("stubborn call: %d %v, want 504 timeout", resp.StatusCode, env)
	}
	if v := metricValue(t, o, "cursus_tool_calls_abandoned"); v != "1" {
		t.Errorf("cursus_tool_calls_abandoned = %s while the work runs, want 1", v)
	}
	resp, env = o.call(t, "opstest.echo", `{}`, nil)
	refusedNaming(t, "a call while abandoned work holds the slot", resp, env, "limits.max_queued_per_caller")
	close(o.holdRelease)
	for deadline := time.Now().Add(10 * time.Second); metricValue(t, o, "cursus_tool_calls_abandoned") != "0"; {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned work ended but is still counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if resp, env := o.call(t, "opstest.echo", `{}`, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("a call after the work ended: %d %v", resp.StatusCode, env)
	}
	if v := metricValue(t, o, "cursus_tool_calls_abandoned_total"); v != "1" {
		t.Errorf("cursus_tool_calls_abandoned_total = %s, want 1", v)
	}
}

// TestTimeoutAnswersOnTimeOverHTTPUnderLoad: the README's promise. With
// two CPU burners in the server's process, calls whose work ignores its
// deadline answer 504 timeout within half a second of their limit, over
// real HTTP.
func TestTimeoutAnswersOnTimeOverHTTPUnderLoad(t *testing.T) {
	const limit, margin = 200 * time.Millisecond, 500 * time.Millisecond
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_TOOL_TIMEOUTS": "opstest.stubborn=200ms"})
	stop := make(chan struct{})
	defer close(stop)
	for range 2 {
		go burn(stop)
	}
	const calls = 4 // limits.max_calls_per_caller
	took := make(chan time.Duration, calls)
	codes := make(chan any, calls)
	for range calls {
		go func() {
			start := time.Now()
			resp, env := o.call(t, "opstest.stubborn", `{}`, nil)
			took <- time.Since(start)
			codes <- []any{resp.StatusCode, env["code"]}
		}()
	}
	for range calls {
		d, c := <-took, <-codes
		if c.([]any)[0] != http.StatusGatewayTimeout || d > limit+margin {
			t.Errorf("call answered %v after %v; want 504 timeout within %v", c, d, limit+margin)
		}
	}
	close(o.holdRelease)
}

// burn spins a CPU until stop is closed.
func burn(stop <-chan struct{}) {
	for x := 0; ; x++ {
		select {
		case <-stop:
			return
		default:
		}
		for i := 0; i < 1000; i++ {
			x ^= i * x
		}
	}
}

// TestFairShareQueueWait: a queued call that gets no slot within
// limits.queue_wait is refused naming limits.max_calls_per_caller and
// holds nothing afterwards; one that gets a slot runs, in arrival order.
func TestFairShareQueueWait(t *testing.T) {
	f := newFairShare(LimitsConfig{MaxCallsPerCaller: 1, MaxQueuedPerCaller: 2, QueueWait: 20 * time.Millisecond, MaxBytesPerCaller: 100})
	ctx := t.Context()
	first, r, _ := f.acquire(ctx, "a", 10, false)
	if r != nil {
		t.Fatal(r.Error)
	}
	if _, r, retry := f.acquire(ctx, "a", 10, false); r == nil || retry <= 0 || !strings.Contains(string(r.Encode()), `"limit":"limits.max_calls_per_caller"`) {
		t.Fatalf("a queued call past limits.queue_wait: %v", r)
	}
	if f.queued("a") != 0 {
		t.Fatal("the refused call is still queued")
	}
	got := make(chan func(), 1)
	f.wait = time.Minute
	go func() {
		release, r, _ := f.acquire(ctx, "a", 80, false)
		if r != nil {
			t.Error(r.Error)
		}
		got <- release
	}()
	for f.queued("a") != 1 {
		time.Sleep(time.Millisecond)
	}
	// 10 running + 80 waiting: a third call's 20 bytes are over 100.
	if _, r, _ := f.acquire(ctx, "a", 20, false); r == nil || !strings.Contains(string(r.Encode()), `"limit":"limits.max_bytes_per_caller"`) {
		t.Fatalf("bytes of running and waiting calls: %v", r)
	}
	first()
	first() // a release runs once
	second := <-got
	second()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.callers) != 0 {
		t.Fatalf("a caller that holds nothing is still kept: %+v", f.callers["a"])
	}
}

// TestFairShareSpansTransports: a caller's share is one across REST and
// MCP: with its one slot held by a REST call, its MCP tools/call is
// refused naming the limit.
func TestFairShareSpansTransports(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_MAX_CALLS_PER_CALLER": "1", "CURSUS_LIMITS_MAX_QUEUED_PER_CALLER": "0"})
	done := make(chan int, 1)
	go func() { resp, _ := o.call(t, "opstest.hold", `{}`, nil); done <- resp.StatusCode }()
	<-o.holdStarted
	_, msg := o.rpc(t, 1, "tools/call", map[string]any{"name": "opstest__echo", "arguments": map[string]any{}}, nil)
	if env := mcpEnvelope(t, msg); env["code"] != "rate_limited" || !strings.Contains(env["error"].(string), "limits.max_queued_per_caller") {
		t.Errorf("MCP call while the caller's REST call holds its slot: %v", env)
	}
	close(o.holdRelease)
	if s := <-done; s != http.StatusOK {
		t.Fatalf("held call: %d", s)
	}
	_, msg = o.rpc(t, 2, "tools/call", map[string]any{"name": "opstest__echo", "arguments": map[string]any{}}, nil)
	if env := mcpEnvelope(t, msg); env["ok"] != true {
		t.Errorf("MCP call after the slot freed: %v", env)
	}
}
