package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// syncBuffer collects log lines written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines parses the JSON log lines.
func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// opsEnv is a server built the way production builds it (observer on the
// registry, a tracer provider, a captured JSON logger), with extra test
// tools for the limits.
type opsEnv struct {
	srv   *Server
	ts    *httptest.Server
	cfg   Config
	logs  *syncBuffer
	spans *tracetest.InMemoryExporter

	execStarted chan struct{}
	execRelease chan struct{}
	// opstest.hold and opstest.stubborn signal holdStarted and run until
	// holdRelease is closed; hold ends at its deadline too, stubborn
	// ignores it.
	holdStarted chan struct{}
	holdRelease chan struct{}
}

func newOpsEnv(t *testing.T, env map[string]string) *opsEnv {
	t.Helper()
	cfg, deps := testConfig(t, env)
	o := &opsEnv{cfg: cfg, logs: &syncBuffer{}, spans: tracetest.NewInMemoryExporter(),
		execStarted: make(chan struct{}, 8), execRelease: make(chan struct{}),
		holdStarted: make(chan struct{}, 64), holdRelease: make(chan struct{})}
	nss := append(handlers.Namespaces(deps), gatedTestNamespace, o.namespace)
	reg, err := registry.New(registry.Options{
		Policy: cfg.Policy(), Timeout: cfg.Limits.ToolTimeout, PerToolTimeout: cfg.Limits.ToolTimeouts,
		Observer: CallObserver(),
	}, nss...)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(o.spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	o.srv = NewServer(Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: zerolog.New(o.logs), Tracing: tp})
	o.ts = startHTTP(t, o.srv)
	// Stops the stateful session sweeper (ListenAndServe does this in
	// production).
	t.Cleanup(func() { _ = o.srv.stream.Shutdown(context.Background()) })
	t.Cleanup(o.srv.auth.close) // the JWKS refresh, likewise
	t.Cleanup(func() {
		for _, c := range []chan struct{}{o.execRelease, o.holdRelease} {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	})
	return o
}

type echoArgs struct {
	Payload  map[string]any `json:"payload,omitempty" jsonschema:"Anything."`
	Password string         `json:"password,omitempty" jsonschema:"A secret that must never be logged."`
}

func (o *opsEnv) namespace() (registry.Namespace, error) {
	return registry.Namespace{
		Name: "opstest", Description: "Tools for the operations tests.",
		Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name: "opstest.exec", Description: "Runs until the test releases it.", When: "In exec-cap tests.",
				Examples: []string{`opstest.exec {}  # blocks`}, ExecCode: true,
			}, registry.Plain(func(ctx context.Context, _ noArgs) (map[string]any, error) {
				o.execStarted <- struct{}{}
				select {
				case <-o.execRelease:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return map[string]any{"ran": true}, nil
			})),
			registry.Define(registry.ToolDef{
				Name: "opstest.hold", Description: "Runs until the test releases it or its deadline.", When: "In fair-share tests.",
				Examples: []string{`opstest.hold {}  # blocks`},
			}, registry.Plain(func(ctx context.Context, _ echoArgs) (map[string]any, error) {
				o.holdStarted <- struct{}{}
				select {
				case <-o.holdRelease:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return map[string]any{"held": true}, nil
			})),
			registry.Define(registry.ToolDef{
				Name: "opstest.stubborn", Description: "Runs until the test releases it, ignoring its deadline.", When: "In deadline tests.",
				Examples: []string{`opstest.stubborn {}  # blocks`},
			}, registry.Plain(func(context.Context, noArgs) (map[string]any, error) {
				o.holdStarted <- struct{}{}
				<-o.holdRelease
				return map[string]any{"held": true}, nil
			})),
			registry.Define(registry.ToolDef{
				Name: "opstest.sleep", Description: "Sleeps for ms milliseconds.", When: "In timeout tests.",
				Examples: []string{`opstest.sleep {"ms": 10}  # sleeps`},
			}, registry.Plain(func(ctx context.Context, in sleepArgs) (map[string]any, error) {
				select {
				case <-time.After(time.Duration(in.MS) * time.Millisecond):
					return map[string]any{"slept_ms": in.MS}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})),
			registry.Define(registry.ToolDef{
				Name: "opstest.echo", Description: "Returns the payload.", When: "In logging tests.",
				Examples: []string{`opstest.echo {"payload": {}}  # echoes`},
			}, registry.Plain(func(_ context.Context, in echoArgs) (map[string]any, error) {
				keys := 0
				if in.Payload != nil {
					keys++
				}
				if in.Password != "" {
					keys++
				}
				return map[string]any{"keys": keys}, nil
			})),
		},
	}, nil
}

// do sends one request and returns the response with its body read.
func (o *opsEnv) do(t *testing.T, method, path, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, o.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host := header["Host"]; host != "" {
		req.Host = host // net/http sends req.Host, not the header
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// call posts to /call/{tool} and decodes the envelope.
func (o *opsEnv) call(t *testing.T, tool, body string, header map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	resp, b := o.do(t, http.MethodPost, "/call/"+tool, body, header)
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("POST /call/%s: response is not JSON (%d): %s", tool, resp.StatusCode, b)
	}
	return resp, env
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// rpc posts one JSON-RPC message to /mcp (stateless mode needs no
// session) and returns the status and the decoded body, which may be an
// SSE frame.
func (o *opsEnv) rpc(t *testing.T, id int, method string, params any, header map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h := map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
	for k, v := range header {
		h[k] = v
	}
	resp, b := o.do(t, http.MethodPost, "/mcp", string(msg), h)
	if resp.StatusCode != http.StatusOK {
		var env map[string]any
		_ = json.Unmarshal(b, &env)
		return resp, env
	}
	if i := bytes.Index(b, []byte("data: ")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = bytes.TrimSpace(b[i+len("data: "):])
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: response is not JSON: %s", method, b)
	}
	return resp, out
}

// mcpEnvelope is the envelope inside a tools/call JSON-RPC response.
func mcpEnvelope(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", msg)
	}
	env, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent in %v", res)
	}
	return env
}
