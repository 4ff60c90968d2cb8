package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// Benchmarks compare our stack with a floor doing the least work that gives
// the same answer, with the same client in the same run, and report
//
//	ns/op           our wall time per operation (all clients together)
//	floor-ns/op     the floor's
//	ratio           floor-ns/op ÷ ns/op: our throughput as a fraction of
//	                the floor's (1 = no overhead)
//
// Run: go test -run=^$ -bench=. -count=6 ./server | tee new.txt; benchstat new.txt

// benchNamespace holds the trivial tool the benchmarks call: the cost
// measured is the stack's, not a tool's.
func benchNamespace() (registry.Namespace, error) {
	type noopIn struct {
		Name string `json:"name,omitempty" jsonschema:"Echoed back."`
	}
	type noopOut struct {
		Name string `json:"name"`
	}
	return registry.Namespace{Name: "bench", Description: "Benchmark tools.", Tools: []registry.ToolDef{
		registry.Define(registry.ToolDef{
			Name: "bench.noop", Description: "Does nothing.", When: "In benchmarks.",
			Examples: []string{`bench.noop {"name": "x"}  # echoes x`},
		}, registry.Plain(func(_ context.Context, in noopIn) (noopOut, error) { return noopOut(in), nil })),
	}}, nil
}

// benchServer is the production router as `cursus serve` builds it
// (default config, real tools plus bench.noop, the call observer for
// per-call metrics, spans and log lines) with the per-caller rate limit
// and fair share off: every benchmark client calls from one address, and
// 64 of them at once are more than one caller's share (4 running, 16
// queued), so the load would be turned into 429s. The fair share's
// bookkeeping still runs on every call.
func benchServer(b *testing.B) *httptest.Server {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Workspace.Root = b.TempDir()
	cfg.Limits.RatePerMinute = 0
	cfg.Limits.MaxCallsPerCaller = 0
	deps, err := handlers.NewDeps(handlers.Options{WorkspaceRoot: cfg.Workspace.Root})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout, Observer: CallObserver()},
		append(handlers.Namespaces(deps), benchNamespace)...)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(NewServer(Deps{Config: cfg, Registry: reg, Logger: zerolog.New(io.Discard)}))
	b.Cleanup(ts.Close)
	// A serving server has listed its tools (deriving their schemas) and
	// loaded its built-in catalogs (at the first call that reads one).
	// Without them its live heap is a third as large, so the collector
	// runs about three times as often under the benchmark's load and the
	// ratios measure that rather than the call path.
	for _, warm := range []func() (*http.Response, error){
		func() (*http.Response, error) { return http.Get(ts.URL + "/tools?detail=full") },
		func() (*http.Response, error) {
			return http.Post(ts.URL+"/call/catalog.list_steps", "application/json", strings.NewReader(`{}`))
		},
	} {
		resp, err := warm()
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("warming the server: %s %s", resp.Request.URL, resp.Status)
		}
	}
	return ts
}

func benchClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2}, Timeout: time.Minute}
}

// runConcurrent performs n operations spread over clients goroutines and
// returns the wall time.
func runConcurrent(b *testing.B, n, clients int, op func(worker int) error) time.Duration {
	var wg sync.WaitGroup
	var next sync.Mutex
	left := n
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if left == 0 {
					next.Unlock()
					return
				}
				left--
				next.Unlock()
				if err := op(w); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// benchPairConcurrent alternates rounds of the floor and of ours so both
// see the same machine state, and reports as described above.
func benchPairConcurrent(b *testing.B, clients int, ours, floor func(worker int) error) {
	b.Helper()
	// The timer keeps running over both halves so the framework sizes b.N
	// on the real elapsed time; ns/op is then overridden with ours alone.
	var tOurs, tFloor time.Duration
	round := max(clients*8, 64)
	for done := 0; done < b.N; {
		n := min(round, b.N-done)
		tFloor += runConcurrent(b, n, clients, floor)
		tOurs += runConcurrent(b, n, clients, ours)
		done += n
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(perOp(tOurs), "ns/op")
	b.ReportMetric(perOp(tFloor), "floor-ns/op")
	b.ReportMetric(float64(tFloor)/float64(tOurs), "ratio")
}

func post(hc *http.Client, url string, body []byte) ([]byte, error) {
	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %s", resp.StatusCode, out)
	}
	return out, err
}

// BenchmarkRESTCall is POST /call/bench__noop through the whole router
// (request id, metrics, origin, body limit, auth, rate-limit and gate
// middleware, registry.Call, envelope) against a bare chi route that
// answers with the same body and headers (one request's X-Request-Id
// included), so that, as in BenchmarkMCPCall, the client does the same
// work for both and the ratio measures the server stack alone.
func BenchmarkRESTCall(b *testing.B) {
	ours := benchServer(b)
	body := []byte(`{"name":"x"}`)
	hc := benchClient(64)
	want, header := answer(b, hc, ours.URL+"/call/bench__noop", body)
	requestID := header.Get(requestIDHeader)
	r := chi.NewRouter()
	r.Post("/call/{tool}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(requestIDHeader, requestID)
		_, _ = w.Write(want)
	})
	floor := httptest.NewServer(r)
	defer floor.Close()
	if _, floorHeader := answer(b, hc, floor.URL+"/call/bench__noop", body); headerNames(floorHeader) != headerNames(header) {
		b.Fatalf("the floor answers with headers %s, ours with %s", headerNames(floorHeader), headerNames(header))
	}
	for _, clients := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			call := func(base string) func(int) error {
				return func(int) error { _, err := post(hc, base+"/call/bench__noop", body); return err }
			}
			benchPairConcurrent(b, clients, call(ours.URL), call(floor.URL))
		})
	}
}

// answer is the body and headers of a 200 answer to a POST.
func answer(b *testing.B, hc *http.Client, url string, body []byte) ([]byte, http.Header) {
	b.Helper()
	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d: %v %s", resp.StatusCode, err, out)
	}
	return out, resp.Header
}

func headerNames(h http.Header) string { return strings.Join(slices.Sorted(maps.Keys(h)), ",") }

// BenchmarkMCPCall is tools/call bench__noop over streamable HTTP through
// our server against a minimal stateless mcp-go server with one no-op tool,
// using the same mcp-go client (one initialized client per worker). Like
// the REST floor, the floor's tool answers with the result ours gives (the
// envelope as text and as structuredContent), so the client does the same
// work for both and the ratio measures the server stack alone.
func BenchmarkMCPCall(b *testing.B) {
	ours := benchServer(b)
	hc := benchClient(64)
	envelope := benchEnvelope(b, ours.URL+"/mcp", hc)
	s := mcpserver.NewMCPServer("floor", "1", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("bench__noop", mcp.WithString("name")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(envelope)}, StructuredContent: json.RawMessage(envelope)}, nil
	})
	floor := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s, mcpserver.WithStateLess(true)))
	defer floor.Close()
	connect := func(url string) *mcpclient.Client {
		tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
		if err != nil {
			b.Fatal(err)
		}
		c := mcpclient.NewClient(tr, mcpclient.WithProtocolVersion(mcp.ProtocolVersion20251125))
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "bench", Version: "1"},
		}}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "bench__noop", Arguments: map[string]any{"name": "x"}}}
	for _, clients := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			call := func(url string) func(int) error {
				cs := make([]*mcpclient.Client, clients)
				for i := range cs {
					cs[i] = connect(url)
				}
				return func(w int) error {
					res, err := cs[w].CallTool(context.Background(), req)
					if err == nil && res.IsError {
						err = fmt.Errorf("tool error: %v", res.Content)
					}
					return err
				}
			}
			benchPairConcurrent(b, clients, call(ours.URL+"/mcp"), call(floor.URL))
		})
	}
}

// benchEnvelope is the envelope text our server returns for the
// benchmark's call, read over raw HTTP.
func benchEnvelope(b *testing.B, url string, hc *http.Client) string {
	b.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench__noop","arguments":{"name":"x"}}}`))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || len(msg.Result.Content) != 1 {
		b.Fatalf("tools/call answered %d: %v %+v", resp.StatusCode, err, msg)
	}
	return msg.Result.Content[0].Text
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// cursusBinary builds cmd/cursus once per benchmark run, as it ships.
func cursusBinary(b *testing.B) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cursus-bench-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cursus")
		out, err := exec.Command("../scripts/build.sh", binPath).CombinedOutput() // the binary that ships
		if err != nil {
			buildErr = fmt.Errorf("scripts/build.sh: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return binPath
}

var listeningAddr = regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"[^\n]*"message":"listening"`)

// BenchmarkColdStart is the time from starting `cursus serve` to its first
// 200 from /readyz (build the registry and router, bind; the built-in
// catalogs and the tool schemas wait for their first use).
// The floor is starting the same binary for `cursus version`: the process
// start-up no server can avoid.
func BenchmarkColdStart(b *testing.B) {
	bin := cursusBinary(b)
	workspace := b.TempDir()
	hc := &http.Client{Timeout: 2 * time.Second}
	serve := func() error {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--workspace-root", workspace)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			m := listeningAddr.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
				resp, err := hc.Get("http://" + m[1] + "/readyz")
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						return nil
					}
				}
				time.Sleep(200 * time.Microsecond)
			}
			return fmt.Errorf("server at %s never became ready", m[1])
		}
		return fmt.Errorf("server exited before listening: %v", sc.Err())
	}
	version := func() error { return exec.Command(bin, "version").Run() }
	var tOurs, tFloor time.Duration
	for range b.N {
		start := time.Now()
		if err := version(); err != nil {
			b.Fatal(err)
		}
		tFloor += time.Since(start)
		start = time.Now()
		if err := serve(); err != nil {
			b.Fatal(err)
		}
		tOurs += time.Since(start)
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(perOp(tOurs), "ns/op")
	b.ReportMetric(perOp(tFloor), "floor-ns/op")
	b.ReportMetric(float64(tFloor)/float64(tOurs), "ratio")
}
