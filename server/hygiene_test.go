package server

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFailedLoginsAreRateLimited: an address that sends more invalid
// bearer tokens than limits.auth_failures_per_minute gets 429 with
// Retry-After, before its token is checked (a right token from it too,
// so a guess that succeeds is not told apart); requests without a token
// do not count.
func TestFailedLoginsAreRateLimited(t *testing.T) {
	const limit = 5
	o := newOpsEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE":                writeTokens(t),
		"CURSUS_LIMITS_AUTH_FAILURES_PER_MINUTE": strconv.Itoa(limit),
	})
	for i := 0; i < 2*limit; i++ {
		if resp, _ := o.call(t, "tools.help", `{}`, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no token, request %d: %d", i+1, resp.StatusCode)
		}
	}
	for i := 0; i < limit; i++ {
		if resp, _ := o.call(t, "tools.help", `{}`, bearer("guess-"+strconv.Itoa(i))); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	resp, env := o.call(t, "tools.help", `{}`, bearer("guess-last"))
	if resp.StatusCode != http.StatusTooManyRequests || env["code"] != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("bad token past the limit: %d %v (Retry-After %q), want 429 rate_limited", resp.StatusCode, env, resp.Header.Get("Retry-After"))
	}
	if msg, _ := env["error"].(string); !strings.Contains(msg, "limits.auth_failures_per_minute") {
		t.Errorf("refusal does not name the limit: %q", msg)
	}
	if resp, _ := o.call(t, "tools.help", `{}`, bearer(readToken)); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("right token from the blocked address: %d, want 429", resp.StatusCode)
	}
}

// TestOriginPortsMatchWhenConfigured: an allow-list entry with a port
// admits that port only; one without a port admits the host on any port.
func TestOriginPortsMatchWhenConfigured(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_MCP_ALLOWED_ORIGINS": "http://localhost:3000,https://tools.example"})
	for origin, want := range map[string]int{
		"http://localhost:3000":        http.StatusOK,
		"http://localhost:3001":        http.StatusForbidden,
		"http://localhost":             http.StatusForbidden,
		"https://localhost:3000":       http.StatusForbidden,
		"https://tools.example":        http.StatusOK,
		"https://tools.example:8443":   http.StatusOK,
		"http://tools.example":         http.StatusForbidden,
		"http://localhost:3000.evil.x": http.StatusForbidden,
	} {
		if resp, _ := o.call(t, "tools.help", `{}`, map[string]string{"Origin": origin}); resp.StatusCode != want {
			t.Errorf("Origin %s: %d, want %d", origin, resp.StatusCode, want)
		}
	}
}

// TestRequestIDsAreRandom: a request id the server makes names no host
// and comes from no counter (two ids share no prefix a caller could read
// traffic from), also on a 401 to an anonymous caller.
func TestRequestIDsAreRandom(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t)})
	host, _ := os.Hostname()
	var ids []string
	for i := 0; i < 32; i++ {
		resp, _ := o.call(t, "tools.help", `{}`, nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("anonymous call: %d", resp.StatusCode)
		}
		id := resp.Header.Get("X-Request-Id")
		if len(id) < 16 || (host != "" && strings.Contains(id, host)) {
			t.Fatalf("request id %q is short or names the host %q", id, host)
		}
		ids = append(ids, id)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id[:8]] {
			t.Fatalf("two request ids share the prefix %q: %v", id[:8], ids)
		}
		seen[id[:8]] = true
	}
}
