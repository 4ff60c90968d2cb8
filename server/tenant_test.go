package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/registry"
)

// progressSteps is how many notifications each call in the isolation tests
// sends: enough that a shared queue would split them.
const progressSteps = 40

type progressIn struct {
	Steps int `json:"steps" jsonschema:"How many progress notifications to send."`
}

type progressOut struct {
	Steps int `json:"steps"`
}

// tenancyNamespace has a read-only tool that sends many progress
// notifications, so any caller may run it.
func tenancyNamespace() (registry.Namespace, error) {
	return registry.Namespace{
		Name: "tenancy", Description: "Tools for the tenant isolation tests.",
		Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name: "tenancy.progress", Description: "Reports progress the given number of times.",
				When: "In tenant isolation tests.", Examples: []string{`tenancy.progress {"steps": 3}  # three notifications`},
			}, registry.Plain(func(ctx context.Context, in progressIn) (progressOut, error) {
				for i := 1; i <= in.Steps; i++ {
					registry.Progress(ctx, float64(i), float64(in.Steps), fmt.Sprintf("step %d", i))
				}
				return progressOut(in), nil
			})),
		},
	}, nil
}

// mcpHeaders are the headers of an MCP request by the holder of token on
// session (either may be empty).
func mcpHeaders(token, session string) map[string]string {
	h := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	if session != "" {
		h["Mcp-Session-Id"] = session
	}
	return h
}

// progressEvent is a notifications/progress a stream carried.
type progressEvent struct {
	Token    string
	Progress float64
}

// readMessages calls fn for each JSON-RPC message of an SSE body (or the
// one message of a JSON body) until fn returns false or the body ends.
func readMessages(resp *http.Response, fn func(map[string]any) bool) error {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var msg map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
			return err
		}
		fn(msg)
		return nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			return fmt.Errorf("SSE data is not JSON: %s", data)
		}
		if !fn(msg) {
			return nil
		}
	}
	return sc.Err()
}

// asProgress is msg as a progress notification.
func asProgress(msg map[string]any) (progressEvent, bool) {
	if msg["method"] != "notifications/progress" {
		return progressEvent{}, false
	}
	params, _ := msg["params"].(map[string]any)
	token, _ := params["progressToken"].(string)
	done, _ := params["progress"].(float64)
	return progressEvent{Token: token, Progress: done}, true
}

// mcpPost sends one JSON-RPC message to /mcp.
func mcpPost(ctx context.Context, url string, header map[string]string, msg any) (*http.Response, error) {
	body, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// callWithProgress calls tenancy.progress with progress token token and
// returns the notifications its response stream carried before the result.
func callWithProgress(ctx context.Context, url string, header map[string]string, token string) ([]progressEvent, error) {
	resp, err := mcpPost(ctx, url, header, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": "tenancy__progress", "arguments": map[string]any{"steps": progressSteps},
		"_meta": map[string]any{"progressToken": token},
	}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("tools/call: %d %s", resp.StatusCode, b)
	}
	var got []progressEvent
	var result map[string]any
	err = readMessages(resp, func(msg map[string]any) bool {
		if p, ok := asProgress(msg); ok {
			got = append(got, p)
			return true
		}
		result = msg
		return false
	})
	if err != nil {
		return got, err
	}
	if res, _ := result["result"].(map[string]any); res == nil || res["isError"] == true {
		return got, fmt.Errorf("tools/call answered %v", result)
	}
	return got, nil
}

// checkOwnProgress asserts a call's stream carried all its notifications,
// in order, and only its own.
func checkOwnProgress(t *testing.T, who, token string, got []progressEvent) {
	t.Helper()
	for i, p := range got {
		if p.Token != token {
			t.Errorf("%s's stream carried another caller's notification: %+v", who, p)
		}
		if p.Progress != float64(i+1) {
			t.Errorf("%s's notification %d has progress %v, want %d (all, in order)", who, i, p.Progress, i+1)
			break
		}
	}
	if len(got) != progressSteps {
		t.Errorf("%s's stream carried %d of %d notifications", who, len(got), progressSteps)
	}
}

// listener is an open GET /mcp stream and the notifications it carried.
type listener struct {
	status int
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	got    []progressEvent
}

// listen opens GET /mcp; a stream that opens is read until stop.
func listen(t *testing.T, url string, header map[string]string) *listener {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	l := &listener{cancel: cancel, done: make(chan struct{})}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/mcp", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	l.status = resp.StatusCode
	go func() {
		defer close(l.done)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return
		}
		_ = readMessages(resp, func(msg map[string]any) bool {
			if p, ok := asProgress(msg); ok {
				l.mu.Lock()
				l.got = append(l.got, p)
				l.mu.Unlock()
			}
			return true
		})
	}()
	t.Cleanup(l.stop)
	return l
}

// stop closes the stream and returns what it carried.
func (l *listener) stop() {
	l.cancel()
	<-l.done
}

func (l *listener) notifications() []progressEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]progressEvent(nil), l.got...)
}

// callBoth runs alice's and bob's calls at once and checks each stream.
func callBoth(t *testing.T, url string, alice, bob map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	got := map[string][]progressEvent{}
	errs := map[string]error{}
	var mu sync.Mutex
	for who, header := range map[string]map[string]string{"alice": alice, "bob": bob} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events, err := callWithProgress(ctx, url, header, who+"-token")
			mu.Lock()
			got[who], errs[who] = events, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, who := range []string{"alice", "bob"} {
		if errs[who] != nil {
			t.Errorf("%s: %v", who, errs[who])
		}
		checkOwnProgress(t, who, who+"-token", got[who])
	}
}

// TestProgressStaysOnCallersStreamStateless: in stateless mode (the
// default) Bob's GET /mcp is refused with 405 and so can hear nothing;
// Alice's and Bob's concurrent calls each get all of their own progress,
// in order, on their own POST streams, and nothing of the other's.
func TestProgressStaysOnCallersStreamStateless(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t)}, tenancyNamespace)
	alice, bob := mcpHeaders(readToken, ""), mcpHeaders(writeToken, "")

	bobListens := listen(t, env.ts.URL, bob)
	if bobListens.status != http.StatusMethodNotAllowed {
		t.Errorf("standalone GET /mcp in stateless mode: %d, want 405", bobListens.status)
	}
	bobListens.stop()
	callBoth(t, env.ts.URL, alice, bob)
}

// TestProgressStaysOnCallersStreamStateful: in stateful mode a session is
// its opener's (another principal's GET, POST or DELETE with its id gets
// 404), a GET without a session id is refused, and each call's progress
// goes, all of it and in order, on the call's own POST stream, never on
// the session's GET stream or another caller's.
func TestProgressStaysOnCallersStreamStateful(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_STATEFUL": "1"}, tenancyNamespace)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	initialize := func(token string) string {
		t.Helper()
		resp, err := mcpPost(ctx, env.ts.URL, mcpHeaders(token, ""), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d, session %q", resp.StatusCode, id)
		}
		resp, err = mcpPost(ctx, env.ts.URL, mcpHeaders(token, id), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return id
	}
	aliceSession, bobSession := initialize(readToken), initialize(writeToken)
	alice, bob := mcpHeaders(readToken, aliceSession), mcpHeaders(writeToken, bobSession)

	if l := listen(t, env.ts.URL, mcpHeaders(readToken, "")); l.status == http.StatusOK {
		t.Errorf("GET without a session id opened a stream")
	}
	// Bob holding Alice's session id gets nothing of hers.
	bobWithAlices := mcpHeaders(writeToken, aliceSession)
	if l := listen(t, env.ts.URL, bobWithAlices); l.status != http.StatusNotFound && l.status != http.StatusForbidden {
		t.Errorf("Bob's GET on Alice's session: %d, want 404 or 403", l.status)
	}
	resp, err := mcpPost(ctx, env.ts.URL, bobWithAlices, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusForbidden {
		t.Errorf("Bob's POST on Alice's session: %d, want 404 or 403", resp.StatusCode)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, env.ts.URL+"/mcp", nil)
	for k, v := range bobWithAlices {
		req.Header.Set(k, v)
	}
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusForbidden {
		t.Errorf("Bob's DELETE of Alice's session: %d, want 404 or 403", resp.StatusCode)
	}

	aliceListens, bobListens := listen(t, env.ts.URL, alice), listen(t, env.ts.URL, bob)
	if aliceListens.status != http.StatusOK || bobListens.status != http.StatusOK {
		t.Fatalf("GET on one's own session: alice %d, bob %d, want 200", aliceListens.status, bobListens.status)
	}
	callBoth(t, env.ts.URL, alice, bob)
	aliceListens.stop()
	bobListens.stop()
	for who, l := range map[string]*listener{"alice": aliceListens, "bob": bobListens} {
		if heard := l.notifications(); len(heard) > 0 {
			t.Errorf("%s's GET stream carried %d progress notifications of POST calls: %v", who, len(heard), heard)
		}
	}
}

// TestLegacySSESessionBelongsToItsOpener: on the legacy transport Bob
// posting to Alice's session id is refused with 404, and Alice's stream
// carries her call's result and nothing of Bob's. (mcp-go handles each
// legacy message on its own goroutine, so whether notifications/initialized
// is in before her call, and her progress is sent, is up to the scheduler.)
func TestLegacySSESessionBelongsToItsOpener(t *testing.T) {
	env := newTestEnv(t, map[string]string{"CURSUS_AUTH_TOKENS_FILE": writeTokens(t)}, tenancyNamespace)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.ts.URL+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+readToken)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)
	lines.Buffer(make([]byte, 64<<10), 4<<20)
	endpoint := ""
	for endpoint == "" && lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			endpoint = data
		}
	}
	if !strings.Contains(endpoint, "sessionId=") {
		t.Fatalf("no endpoint event: %q", endpoint)
	}
	post := func(token string, msg any) int {
		t.Helper()
		body, _ := json.Marshal(msg)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.ts.URL+endpoint, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	call := func(id int, token string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
			"name": "tenancy__progress", "arguments": map[string]any{"steps": progressSteps},
			"_meta": map[string]any{"progressToken": token},
		}}
	}
	if status := post(writeToken, call(99, "bob-token")); status != http.StatusNotFound {
		t.Errorf("Bob's POST on Alice's SSE session: %d, want 404", status)
	}
	post(readToken, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"},
	}})
	post(readToken, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	post(readToken, call(7, "alice-token"))

	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			t.Fatalf("SSE data is not JSON: %s", data)
		}
		if p, ok := asProgress(msg); ok && p.Token != "alice-token" {
			t.Errorf("Alice's stream carried another caller's notification: %+v", p)
		}
		if msg["id"] == float64(99) {
			t.Errorf("Alice's stream carried the response to Bob's call")
		}
		if msg["id"] == float64(7) {
			return
		}
	}
	t.Fatalf("Alice's stream ended before her call's result: %v", lines.Err())
}
