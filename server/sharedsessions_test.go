package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
)

// sharedCluster is three replicas keeping stateful sessions and SSE
// stream routing in one Redis (limits.shared_store: redis), behind a
// round-robin nginx: stateful streamable HTTP and legacy SSE both on,
// no session affinity.
type sharedCluster struct {
	base     string
	replicas []string // each replica's own URL
	// Per replica: GET /sse streams opened, POST /mcp requests served.
	sseOpens, mcpPosts []*atomic.Int64
	store              *redis.Client
	prefix             string
}

// Session settings of the shared cluster.
const (
	clusterUnusedTTL = 20 * time.Second
	clusterIdleTTL   = 10 * time.Minute
	clusterCap       = 3 // limits.max_sessions_per_principal
)

func startSharedCluster(t *testing.T, tune ...func(*Config)) sharedCluster {
	t.Helper()
	rs := startRedis(t)
	const prefix = "cursus-cluster:"
	c := sharedCluster{prefix: prefix}
	for range 3 {
		srv := replicaServer(t, "shared-sessions-replicas", func(c *Config) {
			c.MCP.Stateful, c.MCP.LegacySSE = true, true
			c.MCP.SessionUnusedTTL, c.MCP.SessionIdleTTL = clusterUnusedTTL, clusterIdleTTL
			c.Limits.MaxSessionsPerPrincipal = clusterCap
			c.Limits.RatePerMinute = 0
			c.Limits.SharedStore = sharedStoreRedis
			c.Redis.Address, c.Redis.KeyPrefix = rs.addr, prefix
			// Ample on a loaded 2-core machine running the race detector.
			c.Redis.Timeout = 2 * time.Second
			for _, f := range tune {
				f(c)
			}
		})
		if srv.shared == nil {
			t.Fatal("limits.shared_store redis with stateful sessions made no shared session store")
		}
		copyExampleProject(t, srv.deps.Config.Workspace.Root)
		opens, posts := &atomic.Int64{}, &atomic.Int64{}
		inner := srv.handler
		srv.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodGet && r.URL.Path == "/sse":
				opens.Add(1)
			case r.Method == http.MethodPost && r.URL.Path == "/mcp":
				posts.Add(1)
			}
			inner.ServeHTTP(w, r)
		})
		c.sseOpens, c.mcpPosts = append(c.sseOpens, opens), append(c.mcpPosts, posts)
		c.replicas = append(c.replicas, startHTTP(t, srv).URL)
	}
	c.store = redis.NewClient(&redis.Options{Addr: rs.addr})
	t.Cleanup(func() { c.store.Close() })
	c.base = nginxInFront(t, c.replicas)
	return c
}

// asCaller is an HTTP client whose requests come, through the proxy, from
// the caller at address addr (the replicas trust 127.0.0.1).
func asCaller(addr string) *http.Client {
	return &http.Client{Transport: callerTransport{addr: addr, next: &http.Transport{MaxIdleConnsPerHost: 4}}}
}

type callerTransport struct {
	addr string
	next http.RoundTripper
}

func (c callerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", c.addr)
	return c.next.RoundTrip(r)
}

// sessionOverSurface is one go-sdk client session over url (/mcp,
// stateful with its standalone GET stream, or /sse) as caller: initialize,
// tools/list, a tools/call whose envelope is ok and, with progress, a
// compile that reports one notification per pipeline step; then close.
func sessionOverSurface(ctx context.Context, url, caller string, progress bool) error {
	var mu sync.Mutex
	notes := 0
	cl := sdk.NewClient(&sdk.Implementation{Name: "shared-sessions-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			notes++
			mu.Unlock()
		},
	})
	hc := asCaller(caller)
	defer hc.CloseIdleConnections()
	var transport sdk.Transport = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
	if strings.HasSuffix(url, "/sse") {
		transport = &sdk.SSEClientTransport{Endpoint: url, HTTPClient: hc}
	}
	cs, err := cl.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if _, err := okCall(ctx, cs, "tools__help", map[string]any{}, ""); err != nil {
		return err
	}
	if err := otherSurfaces(ctx, cs); err != nil {
		return err
	}
	if !progress {
		return cs.Close()
	}
	if _, err := okCall(ctx, cs, "compile__with_report", map[string]any{
		"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json",
	}, "compile"); err != nil {
		return err
	}
	// The notifications precede the result on the wire; the client may
	// hand them to the handler after CallTool returns.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := notes
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compile: %d progress notifications, want one per step", n)
		}
	}
	return cs.Close()
}

// okCall calls tool, with a progress token when token is set, and wants
// an ok envelope; it returns the envelope's data.
func okCall(ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any, token string) (map[string]any, error) {
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var env struct {
		OK   bool           `json:"ok"`
		Data map[string]any `json:"data"`
	}
	if res.IsError || json.Unmarshal(raw, &env) != nil || !env.OK {
		return nil, fmt.Errorf("%s envelope: %.500s", tool, raw)
	}
	return env.Data, nil
}

// TestSessionsAcrossReplicasWithRedis is issue 31's scale-out past
// session affinity: with the shared store, go-sdk client sessions over
// stateful streamable HTTP (with the standalone GET stream) and over
// legacy SSE all succeed through a round-robin proxy, progress
// notifications included, and a workflow moves between replicas and
// surfaces.
func TestSessionsAcrossReplicasWithRedis(t *testing.T) {
	c := startSharedCluster(t)
	sessions := 200
	if testing.Short() {
		sessions = 20
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, surface := range []string{"/mcp", "/sse"} {
		var failures atomic.Int64
		var firstErr sync.Once
		var wg sync.WaitGroup
		work := make(chan int)
		start := time.Now()
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A caller per client: each holds one session at a time,
				// well under the per-caller cap, if sessions end.
				caller := fmt.Sprintf("10.1.0.%d", w+1)
				for i := range work {
					if err := sessionOverSurface(ctx, c.base+surface, caller, i%10 == 0); err != nil {
						failures.Add(1)
						firstErr.Do(func() { t.Errorf("%s session %d: %v", surface, i, err) })
					}
				}
			}()
		}
		for i := range sessions {
			work <- i
		}
		close(work)
		wg.Wait()
		if n := failures.Load(); n != 0 {
			t.Fatalf("%d of %d %s sessions failed through the proxy", n, sessions, surface)
		}
		t.Logf("%s: %d sessions (%d with progress) through nginx to 3 replicas in %v", surface, sessions, (sessions+9)/10, time.Since(start).Round(time.Millisecond))
	}
	// Every session was closed: none is left in the store holding a cap.
	if n := c.store.ZCard(ctx, c.prefix+"sessions").Val(); n != 0 {
		t.Errorf("%d stateful sessions still open in the store after every client closed its own", n)
	}

	// A workflow started over legacy SSE (its tools run on the replica
	// holding the stream, wherever the posts land), finished over a
	// stateful session (each call runs where its POST lands).
	changed := func(counts []*atomic.Int64, step func()) int {
		t.Helper()
		before := make([]int64, len(counts))
		for i, n := range counts {
			before[i] = n.Load()
		}
		step()
		for i, n := range counts {
			if n.Load() != before[i] {
				return i
			}
		}
		t.Fatal("no replica saw the request")
		return -1
	}
	ranOn := map[int]bool{}
	step := func(cs *sdk.ClientSession, tool string, args map[string]any) map[string]any {
		t.Helper()
		data, err := okCall(ctx, cs, tool, args, "")
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	connect := func(transport sdk.Transport) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "shared-workflow", Version: "1"}, nil).Connect(ctx, transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var sse *sdk.ClientSession
	ranOn[changed(c.sseOpens, func() { sse = connect(&sdk.SSEClientTransport{Endpoint: c.base + "/sse"}) })] = true
	stateful := connect(&sdk.StreamableClientTransport{Endpoint: c.base + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true})
	dag, config := exampleDocument(t, "dag.json"), exampleDocument(t, "config.json")
	run := step(sse, "workflow__start", map[string]any{"workflow": "cursus-configure-pipeline"})
	run = step(sse, "workflow__submit", map[string]any{"run": run["run"], "stage": "Constrain", "content": map[string]any{"dag": dag}})
	for _, stage := range []string{"Validate", "DagCheck"} {
		ranOn[changed(c.mcpPosts, func() {
			run = step(stateful, "workflow__submit", map[string]any{"run": run["run"], "stage": stage, "content": map[string]any{"dag": dag, "config": config}})
		})] = true
	}
	if run["status"] != "green" {
		t.Fatalf("the workflow across replicas and surfaces ended %v", run["status"])
	}
	if len(ranOn) < 2 {
		t.Errorf("the workflow ran on replicas %v only: want it to move between them", ranOn)
	}
	t.Logf("workflow ran on replicas %v", ranOn)
}

// setCaller makes a request through the proxy come from caller: "addr",
// an anonymous caller at that address, or "addr token", one sending that
// bearer token.
func setCaller(h http.Header, caller string) {
	addr, token, _ := strings.Cut(caller, " ")
	h.Set("X-Forwarded-For", addr)
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
}

// ownershipModes are the pairs of callers the ownership tests run with:
// two anonymous callers at different addresses, and two token callers
// (principals alice and bob) at the same address.
func ownershipModes(t *testing.T) []struct {
	name       string
	tune       func(*Config)
	alice, bob string
} {
	tokens := writeTokens(t)
	return []struct {
		name       string
		tune       func(*Config)
		alice, bob string
	}{
		{"anonymous", func(*Config) {}, "10.9.0.1", "10.9.0.2"},
		{"tokens", func(c *Config) { c.Auth.TokensFile = tokens }, "10.9.0.3 " + readToken, "10.9.0.3 " + writeToken},
	}
}

// rawMCP is a streamable HTTP request as caller through the proxy.
func rawMCP(t *testing.T, base, caller, method, session, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	setCaller(req.Header, caller)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodGet && resp.StatusCode == http.StatusOK {
		return resp, "" // a stream: the caller reads and closes it
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

// TestStatefulSessionOwnershipAcrossReplicas: through the proxy, with the
// session in the shared store, caller B (another address, or another
// token from the same address) can neither use, stream, nor
// delete caller A's session on any replica, while A can on every one; A's
// DELETE ends the session (and its GET stream on another replica)
// everywhere; a session never used expires after the unused TTL in the
// store; and the per-caller cap counts sessions on every replica.
func TestStatefulSessionOwnershipAcrossReplicas(t *testing.T) {
	for _, m := range ownershipModes(t) {
		t.Run(m.name, func(t *testing.T) { statefulOwnership(t, startSharedCluster(t, m.tune), m.alice, m.bob) })
	}
}

func statefulOwnership(t *testing.T, c sharedCluster, alice, bob string) {
	open := func(caller string) string {
		t.Helper()
		resp, body := rawMCP(t, c.base, caller, http.MethodPost, "", initializeBody)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize as %s: %d %s", caller, resp.StatusCode, body)
		}
		return id
	}
	id := open(alice)
	ttl := func() time.Duration { return c.store.PTTL(context.Background(), c.prefix+"session:"+id).Val() }
	if d := ttl(); d <= 0 || d > clusterUnusedTTL {
		t.Fatalf("a session not used since initialize expires in %v in the store, want within the unused TTL %v", d, clusterUnusedTTL)
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	// Six tries each: two rounds of the three replicas.
	for i := range 6 {
		if resp, body := rawMCP(t, c.base, bob, http.MethodPost, id, list); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("try %d: caller B used A's session: %d %.200s", i, resp.StatusCode, body)
		}
		if resp, body := rawMCP(t, c.base, bob, http.MethodGet, id, ""); resp.StatusCode != http.StatusNotFound {
			if body == "" {
				resp.Body.Close()
			}
			t.Fatalf("try %d: caller B opened a stream on A's session: %d", i, resp.StatusCode)
		}
		if resp, body := rawMCP(t, c.base, bob, http.MethodDelete, id, ""); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("try %d: caller B deleted A's session: %d %.200s", i, resp.StatusCode, body)
		}
	}
	for i := range 3 {
		if resp, body := rawMCP(t, c.base, alice, http.MethodPost, id, list); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
			t.Fatalf("try %d: A's own session through the proxy: %d %.200s", i, resp.StatusCode, body)
		}
	}
	if d := ttl(); d <= clusterUnusedTTL {
		t.Errorf("a used session expires in %v in the store, want the idle TTL %v", d, clusterIdleTTL)
	}

	// A's GET stream on one replica ends when A's DELETE lands on another.
	stream, _ := rawMCP(t, c.base, alice, http.MethodGet, id, "")
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("A's GET stream: %d", stream.StatusCode)
	}
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stream.Body); close(ended) }()
	if resp, body := rawMCP(t, c.base, alice, http.MethodDelete, id, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("A's DELETE: %d %s", resp.StatusCode, body)
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("A's GET stream outlived the session A deleted through another replica")
	}
	stream.Body.Close()
	for i := range 3 {
		if resp, _ := rawMCP(t, c.base, alice, http.MethodPost, id, list); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("try %d: a deleted session still answers: %d", i, resp.StatusCode)
		}
	}

	// The per-caller cap holds across replicas: the caps' sessions land on
	// all three, the next is refused wherever it lands.
	var held []string
	for range clusterCap {
		held = append(held, open(bob))
	}
	for i := range 3 {
		resp, body := rawMCP(t, c.base, bob, http.MethodPost, "", initializeBody)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "limits.max_sessions_per_principal") {
			t.Fatalf("try %d: session %d of a caller capped at %d: %d %.300s", i, clusterCap+1, clusterCap, resp.StatusCode, body)
		}
	}
	if resp, _ := rawMCP(t, c.base, bob, http.MethodDelete, held[0], ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE of B's own session: %d", resp.StatusCode)
	}
	open(bob) // a place freed on one replica is free on all
}

// sseStream is a legacy SSE stream read event by event.
type sseStream struct {
	resp   *http.Response
	events chan [2]string // event, data
}

func openSSE(t *testing.T, base, caller string) (*sseStream, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/sse", nil)
	setCaller(req.Header, caller)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse as %s: %d", caller, resp.StatusCode)
	}
	s := &sseStream{resp: resp, events: make(chan [2]string, 64)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var event, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				data = strings.TrimSpace(line[len("data:"):])
			case line == "" && data != "":
				s.events <- [2]string{event, data}
				event, data = "", ""
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	ev := s.next(t)
	if ev[0] != "endpoint" {
		t.Fatalf("first SSE event %v, want the endpoint", ev)
	}
	return s, ev[1]
}

func (s *sseStream) next(t *testing.T) [2]string {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the SSE stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no SSE event in 30 s")
	}
	return [2]string{}
}

// postMessage posts a JSON-RPC message to an SSE endpoint as caller.
func postMessage(t *testing.T, base, endpoint, caller, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	setCaller(req.Header, caller)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestSSEOwnershipAcrossReplicas: through the proxy, A's messages reach
// A's legacy SSE stream from every replica, while B's (another address,
// or another token from the same address) posts into A's
// stream are refused on every replica (the holder's included) and nothing
// of B's appears on A's stream; once A's stream closes, its endpoint is
// gone on every replica.
func TestSSEOwnershipAcrossReplicas(t *testing.T) {
	for _, m := range ownershipModes(t) {
		t.Run(m.name, func(t *testing.T) { sseOwnership(t, startSharedCluster(t, m.tune), m.alice, m.bob) })
	}
}

func sseOwnership(t *testing.T, c sharedCluster, alice, bob string) {
	stream, endpoint := openSSE(t, c.base, alice)
	if code, body := postMessage(t, c.base, endpoint, alice, initializeBody); code != http.StatusAccepted {
		t.Fatalf("A's initialize: %d %s", code, body)
	}
	if ev := stream.next(t); !strings.Contains(ev[1], `"id":1`) || !strings.Contains(ev[1], `"serverInfo"`) {
		t.Fatalf("A's initialize answer: %v", ev)
	}
	for i := range 6 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"b-%d","method":"tools/call","params":{"name":"tools__help","arguments":{}}}`, i)
		if code, resp := postMessage(t, c.base, endpoint, bob, body); code != http.StatusNotFound {
			t.Fatalf("try %d: caller B posted into A's stream: %d %s", i, code, resp)
		}
	}
	for i := range 3 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"a-%d","method":"tools/list"}`, i)
		if code, resp := postMessage(t, c.base, endpoint, alice, body); code != http.StatusAccepted {
			t.Fatalf("try %d: A's own message: %d %s", i, code, resp)
		}
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		ev := stream.next(t)
		var msg struct {
			ID string `json:"id"`
		}
		if json.Unmarshal([]byte(ev[1]), &msg) != nil || msg.ID == "" {
			continue // a notification
		}
		if strings.HasPrefix(msg.ID, "b-") {
			t.Fatalf("B's message was answered on A's stream: %s", ev[1])
		}
		seen[msg.ID] = true
	}
	stream.resp.Body.Close()
	// The holder sees the stream go when nginx drops its upstream
	// connection; from then on no replica accepts a message for it (the
	// holder answers with mcp-go's 400, the others 404).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		gone := 0
		for range 3 {
			if code, _ := postMessage(t, c.base, endpoint, alice, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
				gone++
			}
		}
		if gone == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed SSE stream's endpoint still accepts messages on %d of 3 tries", 3-gone)
		}
	}
}

// TestSharedSessionsNeedTheStore: with the store unreachable, stateful
// requests get 503 with Retry-After rather than a session that no other
// replica would know, and legacy SSE posts for streams held elsewhere
// cannot be checked (503).
func TestSharedSessionsNeedTheStore(t *testing.T) {
	rs := startRedis(t)
	srv := replicaServer(t, "store-down-workflow-key", func(c *Config) {
		c.MCP.Stateful = true
		c.Limits.SharedStore = sharedStoreRedis
		c.Redis.Address = rs.addr
		c.Redis.DialTimeout, c.Redis.Timeout = 200*time.Millisecond, 200*time.Millisecond
	})
	base := startHTTP(t, srv).URL
	rs.kill()
	resp, body := rawMCP(t, base, "10.9.2.1", http.MethodPost, "", initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "session store") {
		t.Fatalf("initialize with the store down: %d %s", resp.StatusCode, body)
	}
	foreign := strings.Repeat("ab", 32)
	if code, body := postMessage(t, base, "/message?sessionId="+foreign, "10.9.2.1", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusServiceUnavailable {
		t.Fatalf("a post for another replica's stream with the store down: %d %s", code, body)
	}
}
