package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openStream sends GET url with header and returns the response once its
// headers are in; the body stays open.
func openStream(t *testing.T, ctx context.Context, url string, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return resp
}

// TestShutdownClosesStreams: with a legacy SSE client and a streamable
// GET stream connected, shutdown ends both streams and returns well
// before listen.shutdown_timeout.
func TestShutdownClosesStreams(t *testing.T) {
	const shutdownTimeout = 10 * time.Second
	env := newTestEnv(t, map[string]string{"CURSUS_MCP_STATEFUL": "1"})
	env.srv.deps.Config.Listen.Addr = "127.0.0.1:0"
	env.srv.deps.Config.Listen.ShutdownTimeout = shutdownTimeout
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- env.srv.ListenAndServe(ctx, ready) }()
	base := "http://" + (<-ready).String()

	clientCtx, cancelClients := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelClients()
	sse := openStream(t, clientCtx, base+"/sse", nil)
	line, err := bufio.NewReader(sse.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "event: endpoint") {
		t.Fatalf("SSE stream opened with %q, %v", line, err)
	}
	resp, err := mcpPost(clientCtx, base, mcpHeaders("", ""), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get := openStream(t, clientCtx, base+"/mcp", mcpHeaders("", resp.Header.Get("Mcp-Session-Id")))

	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(shutdownTimeout + 5*time.Second):
		t.Fatal("ListenAndServe did not return")
	}
	took := time.Since(start)
	if took > shutdownTimeout/4 {
		t.Fatalf("shutdown took %s with streams connected (shutdown_timeout %s)", took, shutdownTimeout)
	}
	t.Logf("shutdown with two streams connected took %s", took)
	for name, body := range map[string]io.Reader{"/sse": sse.Body, "GET /mcp": get.Body} {
		if _, err := io.Copy(io.Discard, body); err != nil {
			t.Errorf("%s did not end cleanly: %v", name, err)
		}
	}
}
