package server

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

type noArgs struct{}

type sleepArgs struct {
	MS int `json:"ms" jsonschema:"milliseconds"`
}

// gatedTestNamespace holds test-only tools: one behind the write gate, one
// that panics, one that sleeps and one that reports progress.
func gatedTestNamespace() (registry.Namespace, error) {
	return registry.Namespace{
		Name: "testonly", Description: "Tools that exist only in tests.",
		Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name: "testonly.write", Description: "Pretends to write a file.", When: "In gate tests.",
				Examples: []string{`testonly.write {}  # does nothing`}, Writes: true,
			}, registry.Plain(func(context.Context, noArgs) (map[string]any, error) { return map[string]any{"wrote": true}, nil })),
			registry.Define(registry.ToolDef{
				Name: "testonly.panic", Description: "Panics.", When: "In recovery tests.",
				Examples: []string{`testonly.panic {}  # panics`},
			}, registry.Plain(func(context.Context, noArgs) (any, error) { panic("test panic") })),
			registry.Define(registry.ToolDef{
				Name: "testonly.sleep", Description: "Sleeps for ms milliseconds.", When: "In shutdown tests.",
				Examples: []string{`testonly.sleep {"ms": 10}  # sleeps`},
			}, registry.Plain(func(ctx context.Context, in sleepArgs) (map[string]any, error) {
				d := time.Duration(in.MS) * time.Millisecond
				select {
				case <-time.After(d):
					return map[string]any{"slept_ms": d.Milliseconds()}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})),
			registry.Define(registry.ToolDef{
				Name: "testonly.progress", Description: "Reports progress three times.", When: "In progress tests.",
				Examples: []string{`testonly.progress {}  # three notifications`},
			}, registry.Plain(func(ctx context.Context, _ noArgs) (map[string]any, error) {
				for i := 1; i <= 3; i++ {
					registry.Progress(ctx, float64(i), 3, "step")
				}
				return map[string]any{"steps": 3}, nil
			})),
		},
	}, nil
}

// testConfig loads the config the way the server does, from the given
// environment only, with a fresh workspace, and the handler dependencies.
func testConfig(t *testing.T, env map[string]string) (Config, *handlers.Deps) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := LoadConfig("", lookup)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace.Root = t.TempDir()
	deps, err := handlers.NewDeps(handlers.Options{WorkspaceRoot: cfg.Workspace.Root})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, deps
}

// testEnv starts the real router on a loopback httptest server.
type testEnv struct {
	srv *Server
	ts  *httptest.Server
	cfg Config
}

// newTestEnv serves the handler namespaces, the test-only tools and any
// extra namespaces.
func newTestEnv(t *testing.T, env map[string]string, extra ...registry.NamespaceFunc) *testEnv {
	t.Helper()
	cfg, deps := testConfig(t, env)
	nss := append(append(handlers.Namespaces(deps), gatedTestNamespace), extra...)
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout, Observer: CallObserver()}, nss...)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: zerolog.New(io.Discard)})
	ts := startHTTP(t, srv)
	// Stops the stateful session sweeper (ListenAndServe does this in
	// production).
	t.Cleanup(func() { _ = srv.stream.Shutdown(context.Background()) })
	return &testEnv{srv: srv, ts: ts, cfg: cfg}
}

// startHTTP serves srv on a loopback test listener with the http.Server
// settings of `cursus serve` (its read timeouts).
func startHTTP(t testing.TB, srv *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(srv)
	ts.Config = srv.httpServer()
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// mcpGoClient connects the mcp-go client to url (an /mcp or /sse endpoint)
// and initializes it with protocol version (empty = the client's default).
// The client is closed when the test ends.
func mcpGoClient(t *testing.T, ctx context.Context, url, version string) *mcpclient.Client {
	t.Helper()
	var c *mcpclient.Client
	var err error
	if strings.HasSuffix(url, "/sse") {
		c, err = mcpclient.NewSSEMCPClient(url)
	} else {
		c, err = mcpclient.NewStreamableHttpClient(url)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: version, ClientInfo: mcp.Implementation{Name: "test", Version: "1"},
	}}); err != nil {
		t.Fatal(err)
	}
	return c
}
