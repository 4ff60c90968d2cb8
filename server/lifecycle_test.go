package server

import (
	"context"
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
