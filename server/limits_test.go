package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestRateLimitPerPrincipal(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_LIMITS_RATE_PER_MINUTE": "3"})
	for i := 1; i <= 3; i++ {
		if resp, env := o.call(t, "tools.help", `{}`, bearer(readToken)); resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %v", i, resp.StatusCode, env)
		}
	}
	resp, env := o.call(t, "tools.help", `{}`, bearer(readToken))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th call: %d %v", resp.StatusCode, env)
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 20 {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if env["ok"] != false || !strings.Contains(env["error"].(string), "rate limit") {
		t.Errorf("429 body %v", env)
	}
	// Another principal is unaffected.
	if resp, _ := o.call(t, "tools.help", `{}`, bearer(writeToken)); resp.StatusCode != 200 {
		t.Fatalf("other principal: %d", resp.StatusCode)
	}
	// On MCP, listing is free but a tool call is charged and refused at the HTTP layer.
	if resp, _ := o.rpc(t, 1, "tools/list", map[string]any{}, bearer(readToken)); resp.StatusCode != 200 {
		t.Fatalf("tools/list over budget: %d", resp.StatusCode)
	}
	resp, _ = o.rpc(t, 2, "tools/call", map[string]any{"name": "tools__help", "arguments": map[string]any{}}, bearer(readToken))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("MCP tools/call over budget: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	_, body := o.do(t, http.MethodGet, "/metrics", "", nil)
	for _, want := range []string{`cursus_rate_limited_total{transport="rest"} 1`, `cursus_rate_limited_total{transport="mcp"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestRateLimiterRefills(t *testing.T) {
	now := time.Now()
	l := newRateLimiter(60, func() time.Time { return now })
	for i := 0; i < 60; i++ {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("call %d refused", i)
		}
	}
	ok, wait := l.allow("a")
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("61st: ok=%v wait=%v, want refused with wait in (0, 1s]", ok, wait)
	}
	now = now.Add(time.Second)
	if ok, _ := l.allow("a"); !ok {
		t.Fatal("no token after a second at 60/min")
	}
	now = now.Add(2 * time.Minute)
	l.allow("b")
	if _, kept := l.limiters["a"]; kept {
		t.Error("an idle, full bucket was not swept")
	}
}

func TestArgumentDepthAndSize(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_MAX_ARG_DEPTH": "8", "CURSUS_LIMITS_MAX_ARG_BYTES": "2000"})
	deep := strings.Repeat(`{"a":`, 12) + `1` + strings.Repeat(`}`, 12)
	resp, env := o.call(t, "opstest.echo", `{"payload":`+deep+`}`, nil)
	if resp.StatusCode != 400 || env["code"] != "invalid_input" || !strings.Contains(env["error"].(string), "limits.max_arg_depth") {
		t.Fatalf("deep args: %d %v", resp.StatusCode, env)
	}
	shallow := strings.Repeat(`{"a":`, 6) + `1` + strings.Repeat(`}`, 6)
	if resp, env := o.call(t, "opstest.echo", `{"payload":`+shallow+`}`, nil); resp.StatusCode != 200 {
		t.Fatalf("depth within limit: %d %v", resp.StatusCode, env)
	}
	big := `{"payload":{"text":"` + strings.Repeat("x", 3000) + `"}}`
	resp, env = o.call(t, "opstest.echo", big, nil)
	if resp.StatusCode != 400 || !strings.Contains(env["error"].(string), "limits.max_arg_bytes") {
		t.Fatalf("big args: %d %v", resp.StatusCode, env)
	}
	// The same limits on MCP, as a tool result.
	var nested any = 1.0
	for i := 0; i < 12; i++ {
		nested = map[string]any{"a": nested}
	}
	_, msg := o.rpc(t, 1, "tools/call", map[string]any{"name": "opstest__echo", "arguments": map[string]any{"payload": nested}}, nil)
	if env := mcpEnvelope(t, msg); env["code"] != "invalid_input" || !strings.Contains(env["error"].(string), "max_arg_depth") {
		t.Fatalf("MCP deep args: %v", env)
	}
	if _, body := o.do(t, http.MethodGet, "/metrics", "", nil); !strings.Contains(string(body), `cursus_tool_calls_total{code="invalid_input",tool="opstest.echo",transport="mcp"} 1`) {
		t.Error("a refused MCP call is not counted")
	}
}

func TestMeasureArgs(t *testing.T) {
	for _, c := range []struct {
		v     any
		depth int
	}{
		{map[string]any{}, 1},
		{map[string]any{"a": []any{map[string]any{}}}, 3},
		{"x", 0},
		{[]any{1.0, "a", nil, true}, 1},
	} {
		if _, d := measureArgs(c.v, 10); d != c.depth {
			t.Errorf("%v: depth %d, want %d", c.v, d, c.depth)
		}
	}
	// The estimate tracks the encoded size closely for plain values.
	v := map[string]any{"key": "value", "n": 12.5, "list": []any{true, nil}}
	if size, _ := measureArgs(v, 10); size < 30 || size > 50 {
		t.Errorf("size estimate %d for a 42-byte document", size)
	}
}

// TestExecConcurrencyCap: the server-wide cap (one caller here, so its
// own share, limits.exec_per_caller, is off).
func TestExecConcurrencyCap(t *testing.T) {
	o := newOpsEnv(t, map[string]string{
		"CURSUS_MCP_ALLOW_SCRIPT_EXEC": "1", "CURSUS_LIMITS_EXEC_CONCURRENCY": "1", "CURSUS_LIMITS_EXEC_WAIT": "0s",
		"CURSUS_LIMITS_EXEC_PER_CALLER": "0",
	})
	first := make(chan int, 1)
	go func() {
		resp, _ := o.call(t, "opstest.exec", `{}`, nil)
		first <- resp.StatusCode
	}()
	<-o.execStarted
	resp, env := o.call(t, "opstest.exec", `{}`, nil)
	if resp.StatusCode != http.StatusTooManyRequests || env["code"] != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second exec call: %d %q %v", resp.StatusCode, resp.Header.Get("Retry-After"), env)
	}
	if !strings.Contains(env["error"].(string), "limits.exec_concurrency") {
		t.Errorf("message %q does not name the setting", env["error"])
	}
	// Read-only tools are not capped.
	if resp, _ := o.call(t, "tools.help", `{}`, nil); resp.StatusCode != 200 {
		t.Fatalf("read tool while exec is busy: %d", resp.StatusCode)
	}
	close(o.execRelease)
	if status := <-first; status != 200 {
		t.Fatalf("first exec call: %d", status)
	}
	// The slot is free again.
	if resp, env := o.call(t, "opstest.exec", `{}`, nil); resp.StatusCode != 200 {
		t.Fatalf("exec after release: %d %v", resp.StatusCode, env)
	}
}

// TestReadTimeoutDoesNotCutLongCalls: the body read deadline is cleared
// once the body is in, so a call running longer than limits.read_timeout
// still completes on a real connection.
func TestReadTimeoutDoesNotCutLongCalls(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_READ_TIMEOUT": "50ms"})
	resp, env := o.call(t, "opstest.sleep", `{"ms": 300}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("long call after a short read timeout: %d %v", resp.StatusCode, env)
	}
}

// TestReadTimeoutDoesNotCutStreams: a request without a body (the SSE
// stream's GET) has no read deadline once its headers are in, so the
// stream outlives limits.read_timeout and still carries calls.
func TestReadTimeoutDoesNotCutStreams(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_READ_TIMEOUT": "50ms"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcpGoClient(t, ctx, o.ts.URL+"/sse", "2024-11-05")
	time.Sleep(300 * time.Millisecond)
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "tools__help"}})
	if err != nil || res.IsError {
		t.Fatalf("call on an SSE stream older than the read timeout: %v %v", err, res)
	}
}

func TestPerToolTimeout(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_TOOL_TIMEOUTS": "opstest.sleep=20ms"})
	resp, env := o.call(t, "opstest.sleep", `{"ms": 5000}`, nil)
	if resp.StatusCode != http.StatusGatewayTimeout || env["code"] != "timeout" {
		t.Fatalf("per-tool timeout: %d %v", resp.StatusCode, env)
	}
}

// TestSlowBodyHitsReadTimeout: a client that stops sending its body gets
// a 400 once limits.read_timeout passes, instead of holding the handler.
func TestSlowBodyHitsReadTimeout(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_LIMITS_READ_TIMEOUT": "50ms"})
	conn, err := net.Dial("tcp", strings.TrimPrefix(o.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Only a guard against hanging when the timeout is broken.
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	_, err = fmt.Fprintf(conn, "POST /call/tools.help HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("stalled body: status %d, want 400", resp.StatusCode)
	}
}
