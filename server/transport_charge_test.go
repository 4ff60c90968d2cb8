package server

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
)

// openLegacySSE opens a legacy SSE stream on ts and returns its message
// endpoint (path and query). The stream closes when the test ends.
func openLegacySSE(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/sse", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); stream.Body.Close() })
	lines := bufio.NewScanner(stream.Body)
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok && strings.Contains(data, "sessionId=") {
			return data
		}
	}
	t.Fatalf("no endpoint event on /sse: %v", lines.Err())
	return ""
}

// TestTrailingBytesAreRefusedAndCharged: a tools/call body with bytes
// after its JSON is refused with the JSON-RPC parse error on legacy SSE
// /message and on streamable HTTP /mcp, and charged to the caller's rate
// limit like any call: past limits.rate_per_minute the caller gets 429,
// a clean call too. (Legacy /message used to answer such a body and
// never charge it: 100 of 100 through a limit of 30.)
func TestTrailingBytesAreRefusedAndCharged(t *testing.T) {
	const limit = 10
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"catalog__search","arguments":{"query":"xgboost"}}}`
	for _, trailing := range []string{` {"jsonrpc":"2.0"}`, `garbage`, `]`} {
		for _, transport := range []string{"sse", "mcp"} {
			env := newTestEnv(t, map[string]string{"CURSUS_LIMITS_RATE_PER_MINUTE": "10"})
			path := "/mcp"
			if transport == "sse" {
				path = openLegacySSE(t, env.ts.URL)
			}
			post := func(body string) int {
				t.Helper()
				req, _ := http.NewRequest(http.MethodPost, env.ts.URL+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2025-06-18")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for i := 0; i < limit; i++ {
				if status := post(call + trailing); status != http.StatusBadRequest {
					t.Fatalf("%s, trailing %q, body %d: %d, want 400 (parse error)", transport, trailing, i+1, status)
				}
			}
			if status := post(call + trailing); status != http.StatusTooManyRequests {
				t.Errorf("%s, trailing %q: body %d past a limit of %d: %d, want 429", transport, trailing, limit+1, limit, status)
			}
			if status := post(call); status != http.StatusTooManyRequests {
				t.Errorf("%s, trailing %q: clean call after %d charged bodies: %d, want 429", transport, trailing, limit+1, status)
			}
		}
	}
}
