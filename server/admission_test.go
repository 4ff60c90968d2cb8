package server

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// surfaceEnv serves the real tools (no test namespaces) with the given
// environment.
func surfaceEnv(t *testing.T, env map[string]string) (*httptest.Server, *registry.Registry, Deps) {
	t.Helper()
	cfg, deps := testConfig(t, env)
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout},
		handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: zerolog.New(io.Discard)}
	srv := NewServer(d)
	t.Cleanup(func() { _ = srv.stream.Shutdown(context.Background()) })
	return startHTTP(t, srv), reg, d
}

// closedNames matches the dotted and wire names of every tool that needs
// more than the read scope.
func closedNames(reg *registry.Registry) *regexp.Regexp {
	var alts []string
	for _, tool := range reg.Tools("") {
		if registry.RequiredScope(tool) != registry.ScopeRead {
			alts = append(alts, regexp.QuoteMeta(tool.Name), regexp.QuoteMeta(tool.WireName()))
		}
	}
	return regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`)
}

// sdkSession connects the official go-sdk client to the streamable HTTP
// endpoint url (with hc, or the default client when nil) and lists the
// tools. The session is closed when the test ends.
func sdkSession(t *testing.T, ctx context.Context, url string, hc *http.Client) (*sdk.ClientSession, *sdk.ListToolsResult) {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, list
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestReadCallerIsToldOnlyOfReadTools: on a deployment that enables
// writing and script execution, a caller whose token carries only the
// read scope finds no write or exec tool named on any surface: the tool
// lists of REST, MCP over streamable HTTP and legacy SSE, tools.help,
// every <ns>.help, tools.by_phase, the unknown_tool details, and the
// next steps and remedies of every read tool's golden-path calls.
func TestReadCallerIsToldOnlyOfReadTools(t *testing.T) {
	ts, reg, _ := surfaceEnv(t, map[string]string{
		"CURSUS_AUTH_TOKENS_FILE": writeTokens(t), "CURSUS_MCP_ENABLE_DESTRUCTIVE": "1", "CURSUS_MCP_ALLOW_SCRIPT_EXEC": "1",
		"CURSUS_LIMITS_RATE_PER_MINUTE": "0",
	})
	closed := closedNames(reg)
	client := &http.Client{Transport: bearerTransport{readToken}, Timeout: 30 * time.Second}
	seen := 0
	check := func(surface string, body []byte) {
		t.Helper()
		seen++
		if m := closed.Find(body); m != nil {
			t.Errorf("%s names %q to a read-scope caller", surface, m)
		}
	}
	get := func(path string) []byte {
		t.Helper()
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d: %.300s", path, resp.StatusCode, b)
		}
		return b
	}
	post := func(tool, args string) map[string]any {
		t.Helper()
		resp, err := client.Post(ts.URL+"/call/"+tool, "application/json", strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var env map[string]any
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("POST /call/%s: %v: %.300s", tool, err, b)
		}
		return env
	}
	whole := func(surface string, env map[string]any) {
		t.Helper()
		b, _ := json.Marshal(env)
		check(surface, b)
	}
	guidance := func(surface string, env map[string]any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"next_steps": env["next_steps"], "remedy": env["remedy"]})
		check(surface+" guidance", b)
	}

	check("GET /tools", get("/tools"))
	check("GET /tools?format=mcp", get("/tools?format=mcp"))
	whole("tools.help", post("tools.help", `{"include_schema": true}`))
	whole("unknown_tool", post("no.such_tool", `{}`))
	for _, phase := range []string{registry.PhasePlanner, registry.PhaseValidator, registry.PhaseProgrammer} {
		whole("tools.by_phase "+phase, post("tools.by_phase", `{"phase":"`+phase+`"}`))
	}
	for ns := range reg.Namespaces() {
		if ns != "tools" {
			whole(ns+".help", post(ns+".help", `{"include_schema": true}`))
		}
	}
	for _, tool := range reg.Tools("") {
		if registry.RequiredScope(tool) != registry.ScopeRead {
			continue
		}
		for _, ex := range tool.Examples {
			_, rest, _ := strings.Cut(ex, " ")
			args, _, _ := strings.Cut(rest, "  #")
			guidance(tool.Name+" "+strings.TrimSpace(args), post(tool.Name, strings.TrimSpace(args)))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, list := sdkSession(t, ctx, ts.URL+"/mcp", client)
	b, _ := json.Marshal(list)
	check("MCP tools/list", b)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools__help", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(res)
	check("MCP tools__help", b)

	sse, err := mcpclient.NewSSEMCPClient(ts.URL+"/sse", transport.WithHeaders(map[string]string{"Authorization": "Bearer " + readToken}))
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Close()
	if err := sse.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sse.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: "2025-03-26"}}); err != nil {
		t.Fatal(err)
	}
	sseList, err := sse.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(sseList)
	check("legacy SSE tools/list", b)
	if len(sseList.Tools) == 0 || len(list.Tools) != len(sseList.Tools) {
		t.Errorf("tools/list: %d over streamable HTTP, %d over SSE", len(list.Tools), len(sseList.Tools))
	}
	if seen < 20 {
		t.Fatalf("only %d surfaces checked", seen)
	}
}

// TestStdioCallerIsToldOnlyOfOpenTools: stdio has no credentials, so the
// deployment's gates are what close tools; on the default (read-only)
// deployment no gated tool is named in its tool list or tools.help.
func TestStdioCallerIsToldOnlyOfOpenTools(t *testing.T) {
	_, reg, deps := surfaceEnv(t, nil)
	closed := closedNames(reg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := stdioSession(t, ctx, deps)
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools__help", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("tools__help: %v %v", err, res)
	}
	for surface, v := range map[string]any{"stdio tools/list": list, "stdio tools__help": res} {
		b, _ := json.Marshal(v)
		if m := closed.Find(b); m != nil {
			t.Errorf("%s names %q on a read-only deployment", surface, m)
		}
	}
	if len(list.Tools) == 0 {
		t.Fatal("no tools listed")
	}
}

// stdioSession connects a go-sdk client to ServeStdio over pipes; the
// session closes with the test.
func stdioSession(t *testing.T, ctx context.Context, deps Deps) *sdk.ClientSession {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	go func() {
		_ = ServeStdio(ctx, deps, serverIn, serverOut, log.New(io.Discard, "", 0))
		serverOut.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio", Version: "1"}, nil).Connect(ctx,
		&sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
