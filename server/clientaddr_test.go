package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestClientAddr(t *testing.T) {
	proxies, err := parseTrustedProxies([]string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer string
		header     http.Header
		want       string
	}{
		{"untrusted peer's header is ignored", "198.51.100.9:1234", http.Header{"X-Forwarded-For": {"203.0.113.1"}}, "198.51.100.9"},
		{"trusted peer names the client", "10.1.2.3:1234", http.Header{"X-Forwarded-For": {"203.0.113.1"}}, "203.0.113.1"},
		{"rightmost untrusted hop wins over a forged left part", "10.1.2.3:1234", http.Header{"X-Forwarded-For": {"6.6.6.6, 203.0.113.1, 10.9.9.9"}}, "203.0.113.1"},
		{"several header lines are one list", "10.1.2.3:1234", http.Header{"X-Forwarded-For": {"6.6.6.6", "203.0.113.1"}}, "203.0.113.1"},
		{"single trusted address", "192.0.2.7:80", http.Header{"X-Forwarded-For": {"203.0.113.5"}}, "203.0.113.5"},
		{"trusted peer without a header is itself", "10.1.2.3:1234", http.Header{}, "10.1.2.3"},
		{"all hops trusted: the leftmost", "10.1.2.3:1234", http.Header{"X-Forwarded-For": {"10.0.0.9, 10.0.0.8"}}, "10.0.0.9"},
		{"Forwarded when there is no X-Forwarded-For", "10.1.2.3:1234", http.Header{"Forwarded": {`for=6.6.6.6, for="[2001:db9::1]:443";proto=https`}}, "2001:db9::1"},
		{"X-Forwarded-For wins over Forwarded", "10.1.2.3:1234", http.Header{"Forwarded": {"for=6.6.6.6"}, "X-Forwarded-For": {"203.0.113.1"}}, "203.0.113.1"},
		{"IPv6 proxy", "[2001:db8::1]:443", http.Header{"X-Forwarded-For": {"203.0.113.1"}}, "203.0.113.1"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:443", http.Header{"X-Forwarded-For": {"203.0.113.1"}}, "203.0.113.1"},
		{"a hop with a port", "10.1.2.3:1234", http.Header{"X-Forwarded-For": {"203.0.113.1:5555"}}, "203.0.113.1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		r.Header = c.header
		if got := proxies.clientAddr(r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.1.2.3:1234"
	r.Header.Set("X-Forwarded-For", "203.0.113.1")
	if got := trustedProxies(nil).clientAddr(r); got != "10.1.2.3" {
		t.Errorf("no trusted proxies: %q, want the peer", got)
	}
	if _, err := parseTrustedProxies([]string{"10.0.0.0/33"}); err == nil || !strings.Contains(err.Error(), "listen.trusted_proxies") {
		t.Errorf("bad CIDR: %v", err)
	}
	lookup := func(k string) (string, bool) {
		return map[string]string{"CURSUS_LISTEN_TRUSTED_PROXIES": "10.0.0.0/8, nonsense"}[k], k == "CURSUS_LISTEN_TRUSTED_PROXIES"
	}
	if _, err := LoadConfig("", lookup); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("config with a bad trusted proxy: %v", err)
	}
}

// proxied is a server behind a real reverse proxy (httputil.ReverseProxy
// on 127.0.0.1, which appends the client to X-Forwarded-For) with
// listen.trusted_proxies 127.0.0.1/32, and clients that connect from
// their own loopback addresses, as callers behind an Ingress.
type proxied struct {
	env   *testEnv
	proxy string
}

func newProxied(t *testing.T, env map[string]string) *proxied {
	t.Helper()
	env["CURSUS_LISTEN_TRUSTED_PROXIES"] = "127.0.0.1/32"
	e := newTestEnv(t, env)
	target, _ := url.Parse(e.ts.URL)
	p := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(p.Close)
	return &proxied{env: e, proxy: p.URL}
}

// from is an HTTP client whose connections come from address ip.
func from(t *testing.T, ip string) *http.Client {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot use loopback address %s: %v", ip, err)
	}
	ln.Close()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func send(t *testing.T, c *http.Client, method, url, body string, header map[string]string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestCallersBehindTrustedProxyHaveTheirOwnBudgets: two anonymous callers
// reaching the server through the same proxy get a rate bucket and a
// stream cap each; a header a caller forges does not buy a new one,
// through the proxy or around it.
func TestCallersBehindTrustedProxyHaveTheirOwnBudgets(t *testing.T) {
	p := newProxied(t, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "2", "CURSUS_LIMITS_MAX_STREAMS_PER_PRINCIPAL": "1"})
	a, b := from(t, "127.0.0.2"), from(t, "127.0.0.3")
	call := func(c *http.Client, base string, header map[string]string) int {
		return send(t, c, http.MethodPost, base+"/call/tools.help", "{}", header).StatusCode
	}
	for i := range 2 {
		if s := call(a, p.proxy, nil); s != http.StatusOK {
			t.Fatalf("A's call %d: %d", i, s)
		}
	}
	if s := call(a, p.proxy, nil); s != http.StatusTooManyRequests {
		t.Fatalf("A's third call: %d, want 429", s)
	}
	if s := call(b, p.proxy, nil); s != http.StatusOK {
		t.Fatalf("B's first call, through the same proxy: %d, want its own bucket", s)
	}
	if s := call(a, p.proxy, map[string]string{"X-Forwarded-For": "203.0.113.99"}); s != http.StatusTooManyRequests {
		t.Errorf("A with a forged X-Forwarded-For through the proxy: %d, want 429", s)
	}
	if s := call(a, p.env.ts.URL, map[string]string{"X-Forwarded-For": "203.0.113.98"}); s != http.StatusTooManyRequests {
		t.Errorf("A with a forged X-Forwarded-For straight to the server: %d, want 429", s)
	}

	sse := func(c *http.Client) *http.Response {
		return send(t, c, http.MethodGet, p.proxy+"/sse", "", map[string]string{"Accept": "text/event-stream"})
	}
	if resp := sse(a); resp.StatusCode != http.StatusOK {
		t.Fatalf("A's stream: %d", resp.StatusCode)
	}
	checkOverQuota(t, "A's second stream", sse(a), "limits.max_streams_per_principal")
	if resp := sse(b); resp.StatusCode != http.StatusOK {
		t.Fatalf("B's stream, through the same proxy: %d, want its own cap", resp.StatusCode)
	}
}

// TestSessionsBehindTrustedProxyStayTheirOwners: through the same proxy,
// caller B cannot use, stream from or delete caller A's stateful session,
// nor post into A's legacy SSE stream, even knowing the id; A can.
func TestSessionsBehindTrustedProxyStayTheirOwners(t *testing.T) {
	p := newProxied(t, map[string]string{"CURSUS_MCP_STATEFUL": "1"})
	a, b := from(t, "127.0.0.2"), from(t, "127.0.0.3")
	initialize := send(t, a, http.MethodPost, p.proxy+"/mcp", initializeBody, mcpHeaders("", ""))
	id := initialize.Header.Get("Mcp-Session-Id")
	if initialize.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("A's initialize: %d, session %q", initialize.StatusCode, id)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if s := send(t, b, http.MethodPost, p.proxy+"/mcp", list, mcpHeaders("", id)).StatusCode; s != http.StatusNotFound {
		t.Errorf("B's POST on A's session: %d, want 404", s)
	}
	if s := send(t, b, http.MethodGet, p.proxy+"/mcp", "", mcpHeaders("", id)).StatusCode; s != http.StatusNotFound {
		t.Errorf("B's GET stream on A's session: %d, want 404", s)
	}
	if s := send(t, b, http.MethodDelete, p.proxy+"/mcp", "", mcpHeaders("", id)).StatusCode; s != http.StatusNotFound {
		t.Errorf("B's DELETE of A's session: %d, want 404", s)
	}
	if s := send(t, a, http.MethodPost, p.proxy+"/mcp", list, mcpHeaders("", id)).StatusCode; s != http.StatusOK {
		t.Errorf("A's own session after B's tries: %d, want 200", s)
	}

	stream := send(t, a, http.MethodGet, p.proxy+"/sse", "", map[string]string{"Accept": "text/event-stream"})
	lines := bufio.NewScanner(stream.Body)
	endpoint := ""
	for endpoint == "" && lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			endpoint = data
		}
	}
	if !strings.Contains(endpoint, "sessionId=") {
		t.Fatalf("no endpoint event on A's SSE stream: %q", endpoint)
	}
	target := p.proxy + endpoint
	if strings.HasPrefix(endpoint, "http") {
		target = endpoint
	}
	post := func(c *http.Client) int {
		return send(t, c, http.MethodPost, target, initializeBody, nil).StatusCode
	}
	if s := post(b); s != http.StatusNotFound {
		t.Errorf("B's POST into A's SSE stream: %d, want 404", s)
	}
	if s := post(a); s != http.StatusAccepted {
		t.Errorf("A's POST into its own SSE stream: %d, want 202", s)
	}
}

// TestTokenCallersBehindTrustedProxy: two principals reaching the server
// from one address through the proxy keep their own rate budgets and
// sessions: Bob cannot use, delete or post into Alice's.
func TestTokenCallersBehindTrustedProxy(t *testing.T) {
	p := newProxied(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_STATEFUL": "1", "CURSUS_LIMITS_RATE_PER_MINUTE": "3"})
	c := from(t, "127.0.0.2")
	alice, bob := bearer(readToken), bearer(writeToken)
	initialize := send(t, c, http.MethodPost, p.proxy+"/mcp", initializeBody, mcpHeaders(readToken, ""))
	id := initialize.Header.Get("Mcp-Session-Id")
	if initialize.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("Alice's initialize: %d", initialize.StatusCode)
	}
	for i := range 2 {
		if s := send(t, c, http.MethodPost, p.proxy+"/call/tools.help", "{}", alice).StatusCode; s != http.StatusOK {
			t.Fatalf("Alice's call %d: %d", i, s)
		}
	}
	if s := send(t, c, http.MethodPost, p.proxy+"/call/tools.help", "{}", alice).StatusCode; s != http.StatusTooManyRequests {
		t.Fatalf("Alice's fourth charged request: %d, want 429", s)
	}
	if s := send(t, c, http.MethodPost, p.proxy+"/call/tools.help", "{}", bob).StatusCode; s != http.StatusOK {
		t.Fatalf("Bob, same address: %d, want his own budget", s)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if s := send(t, c, http.MethodPost, p.proxy+"/mcp", list, mcpHeaders(writeToken, id)).StatusCode; s != http.StatusNotFound {
		t.Errorf("Bob's POST on Alice's session: %d, want 404", s)
	}
	if s := send(t, c, http.MethodDelete, p.proxy+"/mcp", "", mcpHeaders(writeToken, id)).StatusCode; s != http.StatusNotFound {
		t.Errorf("Bob's DELETE of Alice's session: %d, want 404", s)
	}
	if s := send(t, c, http.MethodPost, p.proxy+"/mcp", list, mcpHeaders(readToken, id)).StatusCode; s != http.StatusOK {
		t.Errorf("Alice's session after Bob's tries: %d, want 200", s)
	}
	stream := send(t, c, http.MethodGet, p.proxy+"/sse", "", map[string]string{"Accept": "text/event-stream", "Authorization": "Bearer " + readToken})
	lines := bufio.NewScanner(stream.Body)
	endpoint := ""
	for endpoint == "" && lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			endpoint = data
		}
	}
	if !strings.Contains(endpoint, "sessionId=") {
		t.Fatalf("no endpoint event on Alice's SSE stream: %q", endpoint)
	}
	if !strings.HasPrefix(endpoint, "http") {
		endpoint = p.proxy + endpoint
	}
	if s := send(t, c, http.MethodPost, endpoint, list, bob).StatusCode; s != http.StatusNotFound {
		t.Errorf("Bob's POST into Alice's SSE stream: %d, want 404", s)
	}
}
