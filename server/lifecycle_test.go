package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestLegacySSETransport(t *testing.T) {
	env := newTestEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcpGoClient(t, ctx, env.ts.URL+"/sse", "2024-11-05")
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(toolNames(list.Tools), "testonly__write") || !slices.Contains(toolNames(list.Tools), "tools__help") {
		t.Fatalf("sse tools/list: %v", toolNames(list.Tools))
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "testonly__write"}})
	if err != nil {
		t.Fatal(err)
	}
	if e := envelopeOf(t, res.Content[0].(mcp.TextContent).Text, res.StructuredContent); e["code"] != "tool_disabled" {
		t.Fatalf("gated over SSE: %v", e)
	}
}

func TestStatefulModeKeepsSessions(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_MCP_STATEFUL": "true"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcpGoClient(t, ctx, env.ts.URL+"/mcp", "2025-11-25")
	if c.GetSessionId() == "" {
		t.Fatal("stateful mode issued no session id")
	}
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	// A request with an unknown session is refused.
	req, _ := http.NewRequest(http.MethodPost, env.ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", "mcp-session-unknown")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: %d, want 404", resp.StatusCode)
	}
}

// TestGracefulShutdownDrainsInFlight cancels the serve context while a call
// is running: the call completes, then the listener closes.
func TestGracefulShutdownDrainsInFlight(t *testing.T) {
	env := newTestEnv(t, nil)
	env.srv.deps.Config.Listen.Addr = "127.0.0.1:0"
	env.srv.deps.Config.Listen.DrainDelay = 0
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- env.srv.ListenAndServe(ctx, ready) }()
	addr := (<-ready).String()

	type result struct {
		status int
		body   string
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/call/testonly__sleep", "application/json", strings.NewReader(`{"ms": 300}`))
		if err != nil {
			inflight <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode, body: string(b)}
	}()
	// Wait until the call is in the handler, then ask the server to stop.
	for i := 0; i < 200; i++ {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		time.Sleep(5 * time.Millisecond)
		if i == 10 {
			break
		}
	}
	cancel()
	r := <-inflight
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, `"slept_ms":300`) {
		t.Fatalf("in-flight call: %+v", r)
	}
	if err := <-served; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("server still accepting after shutdown")
	}
}

// TestDrainDelayKeepsServing: once shutdown starts /readyz fails at once,
// yet a call that arrives during listen.drain_delay is served; one still
// running when the delay ends finishes before ListenAndServe returns.
func TestDrainDelayKeepsServing(t *testing.T) {
	const drainDelay = 3 * time.Second
	env := newTestEnv(t, nil)
	env.srv.deps.Config.Listen.Addr = "127.0.0.1:0"
	env.srv.deps.Config.Listen.DrainDelay = drainDelay
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- env.srv.ListenAndServe(ctx, ready) }()
	base := "http://" + (<-ready).String()
	readyz := func() int {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz during the drain delay: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := readyz(); s != http.StatusOK {
		t.Fatalf("/readyz before shutdown: %d", s)
	}
	start := time.Now()
	cancel()
	for readyz() != http.StatusServiceUnavailable {
		if time.Since(start) > drainDelay/2 {
			t.Fatal("/readyz did not fail at the start of shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A new call, on a new connection, that runs past the delay's end.
	sleepMS := (drainDelay + time.Second).Milliseconds()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post(base+"/call/testonly__sleep", "application/json", strings.NewReader(fmt.Sprintf(`{"ms": %d}`, sleepMS)))
	if err != nil {
		t.Fatalf("a call made during the drain delay: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), fmt.Sprintf(`"slept_ms":%d`, sleepMS)) {
		t.Fatalf("a call made during the drain delay: %d %s", resp.StatusCode, body)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ListenAndServe did not return")
	}
	if took := time.Since(start); took < drainDelay {
		t.Errorf("shutdown took %s, less than listen.drain_delay %s", took, drainDelay)
	}
	if _, err := client.Get(base + "/healthz"); err == nil {
		t.Error("server still accepting after shutdown")
	}
}
