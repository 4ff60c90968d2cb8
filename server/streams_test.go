package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openStream sends GET url with header under ctx and returns the response
// once its headers are in; the body stays open.
func openStream(t *testing.T, ctx context.Context, url string, header map[string]string) *http.Response {
	t.Helper()
	resp := getStream(t, ctx, url, header)
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
	env.srv.deps.Config.Listen.DrainDelay = 0
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

// checkOverQuota asserts resp is a 429 with Retry-After whose envelope
// names setting.
func checkOverQuota(t *testing.T, what string, resp *http.Response, setting string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	var env map[string]any
	_ = json.Unmarshal(body, &env)
	msg, _ := env["error"].(string)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || env["code"] != "rate_limited" || !strings.Contains(msg, setting) {
		t.Errorf("%s: %d Retry-After=%q %s, want 429 with Retry-After naming %s", what, resp.StatusCode, resp.Header.Get("Retry-After"), body, setting)
	}
}

// tryStream sends GET url and returns the response; an opened stream is
// closed when the test ends or by its cancel.
func tryStream(t *testing.T, url string, header map[string]string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	resp := getStream(t, ctx, url, header)
	t.Cleanup(func() { resp.Body.Close() })
	return resp, cancel
}

// getStream sends GET url asking for an event stream.
func getStream(t *testing.T, ctx context.Context, url string, header map[string]string) *http.Response {
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
	return resp
}

// initializeAs posts initialize with token and returns the response.
func initializeAs(t *testing.T, url, token string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := mcpPost(ctx, url, mcpHeaders(token, ""), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

// TestStreamCaps: SSE streams (legacy /sse and GET /mcp together) are
// capped per principal and in total, 429 naming the setting; a closed
// stream frees its place.
func TestStreamCaps(t *testing.T) {
	env := newTestEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_STATEFUL": "1",
		"CURSUS_LIMITS_MAX_STREAMS_PER_PRINCIPAL": "2", "CURSUS_LIMITS_MAX_STREAMS": "3",
	})
	alice, bob := bearer(readToken), bearer(writeToken)
	aliceSession := initializeAs(t, env.ts.URL, readToken).Header.Get("Mcp-Session-Id")

	first, closeFirst := tryStream(t, env.ts.URL+"/sse", alice)
	second, _ := tryStream(t, env.ts.URL+"/mcp", mcpHeaders(readToken, aliceSession))
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusOK {
		t.Fatalf("alice's first two streams: %d, %d", first.StatusCode, second.StatusCode)
	}
	third, _ := tryStream(t, env.ts.URL+"/sse", alice)
	checkOverQuota(t, "alice's third stream", third, "limits.max_streams_per_principal")
	if resp, _ := tryStream(t, env.ts.URL+"/sse", bob); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's first stream: %d", resp.StatusCode)
	}
	over, _ := tryStream(t, env.ts.URL+"/sse", bob)
	checkOverQuota(t, "a fourth stream on the server", over, "limits.max_streams")

	closeFirst()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, _ := tryStream(t, env.ts.URL+"/sse", alice)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place was not freed: %d", resp.StatusCode)
		}
	}
}

// TestSessionCaps: stateful sessions are capped per principal and in
// total, 429 naming the setting; DELETE frees a place.
func TestSessionCaps(t *testing.T) {
	env := newTestEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_STATEFUL": "1",
		"CURSUS_LIMITS_MAX_SESSIONS_PER_PRINCIPAL": "2", "CURSUS_LIMITS_MAX_SESSIONS": "3",
	})
	var aliceSessions []string
	for range 2 {
		resp := initializeAs(t, env.ts.URL, readToken)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("alice's initialize: %d", resp.StatusCode)
		}
		aliceSessions = append(aliceSessions, resp.Header.Get("Mcp-Session-Id"))
	}
	checkOverQuota(t, "alice's third session", initializeAs(t, env.ts.URL, readToken), "limits.max_sessions_per_principal")
	if resp := initializeAs(t, env.ts.URL, writeToken); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's initialize: %d", resp.StatusCode)
	}
	checkOverQuota(t, "a fourth session on the server", initializeAs(t, env.ts.URL, writeToken), "limits.max_sessions")

	req, _ := http.NewRequest(http.MethodDelete, env.ts.URL+"/mcp", nil)
	for k, v := range mcpHeaders(readToken, aliceSessions[0]) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp := initializeAs(t, env.ts.URL, readToken); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize after DELETE: %d", resp.StatusCode)
	}
}

// TestInitializeIsRateLimited: initialize draws on the caller's rate
// budget like a tool call.
func TestInitializeIsRateLimited(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "2"})
	for i := range 2 {
		if resp := initializeAs(t, env.ts.URL, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d: %d", i, resp.StatusCode)
		}
	}
	checkOverQuota(t, "a third initialize", initializeAs(t, env.ts.URL, ""), "limits.rate_per_minute")
}
