package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
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

// productionEnv serves exactly the namespaces `cursus serve` serves (no
// test-only tools), with the given environment.
func productionEnv(t *testing.T, env map[string]string) (*testEnv, *registry.Registry) {
	t.Helper()
	cfg, deps := testConfig(t, env)
	reg, err := registry.New(registry.Options{Policy: cfg.Policy(), GateHints: GateHints(), Timeout: cfg.Limits.ToolTimeout}, handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckToolsets(reg, cfg.MCP); err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Deps{Config: cfg, Registry: reg, Prompts: handlers.Prompts(deps), Resources: handlers.Resources(deps), Logger: zerolog.New(io.Discard)})
	ts := startHTTP(t, srv)
	t.Cleanup(func() { _ = srv.stream.Shutdown(context.Background()) })
	return &testEnv{srv: srv, ts: ts, cfg: cfg}, reg
}

// rawToolsList posts tools/list to url with the given headers and returns
// the status and body.
func rawToolsList(t *testing.T, url string, header http.Header) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// leanListBudget is the most bytes a default tools/list response may take
// (issue 22): every agent session reads it before its first call.
const leanListBudget = 30 * 1024

// TestLeanToolListFitsBudget: the default tools/list of the production
// tools (the whole JSON-RPC response) stays within 30 KB, lists every
// tool, and loses nothing a client could reach before: for each listed
// tool, tools.describe_tool returns its whole input schema, examples and
// output schema, and its listed schema accepts what the full one accepts
// on the golden-path example (the listing is a relaxation of the real
// schema, never a different one).
func TestLeanToolListFitsBudget(t *testing.T) {
	env, reg := productionEnv(t, nil)
	status, body := rawToolsList(t, env.ts.URL+"/mcp", nil)
	if status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", status, body)
	}
	if len(body) > leanListBudget {
		t.Errorf("default tools/list is %d bytes, over the %d-byte budget: shorten a description or move detail to tools.describe_tool", len(body), leanListBudget)
	}
	var msg struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	visible := reg.Visible(registry.Caller{Remote: true, Transport: "mcp"}, "")
	if len(msg.Result.Tools) != len(visible) {
		t.Fatalf("tools/list has %d tools, the caller may call %d", len(msg.Result.Tools), len(visible))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _ := sdkSession(t, ctx, env.ts.URL+"/mcp", nil)
	for _, listed := range msg.Result.Tools {
		name := listed["name"].(string)
		def, _ := reg.Lookup(name)
		if _, ok := listed["outputSchema"]; ok {
			t.Errorf("%s: the lean list advertises an outputSchema", name)
		}
		if desc := listed["description"].(string); strings.Contains(desc, "Examples:") || !strings.Contains(desc, "When: "+def.When) {
			t.Errorf("%s: lean description %q", name, desc)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools__describe_tool", Arguments: map[string]any{"name": name}})
		if err != nil || res.IsError {
			t.Fatalf("describe %s: %v %v", name, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var described struct {
			Data struct {
				Examples     []string       `json:"examples"`
				Schema       map[string]any `json:"schema"`
				OutputSchema map[string]any `json:"output_schema"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &described); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(def.Schema())
		got, _ := json.Marshal(described.Data.Schema)
		if string(got) != string(want) || !slices.Equal(described.Data.Examples, def.Examples) || described.Data.OutputSchema == nil {
			t.Errorf("%s: tools.describe_tool lost detail the full listing had", name)
		}
	}
}

// TestToolListFullMode: mcp.tool_list=full lists each tool as before:
// the rendered description with its examples, the whole input schema and
// the outputSchema.
func TestToolListFullMode(t *testing.T) {
	env, reg := productionEnv(t, map[string]string{"CURSUS_MCP_TOOL_LIST": "full"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, list := sdkSession(t, ctx, env.ts.URL+"/mcp", nil)
	for _, tool := range list.Tools {
		def, _ := reg.Lookup(tool.Name)
		want, _ := json.Marshal(def.Schema())
		got, _ := json.Marshal(tool.InputSchema)
		if tool.Description != def.RenderDescription() || string(got) != string(want) || tool.OutputSchema == nil {
			t.Errorf("%s: full listing differs from the tool's full rendering", tool.Name)
		}
	}
	if _, err := LoadConfig("", func(k string) (string, bool) { return "short", k == "CURSUS_MCP_TOOL_LIST" }); err == nil {
		t.Error("mcp.tool_list=short was accepted")
	}
}

type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func namespacesOf(tools []*sdk.Tool) []string {
	var out []string
	for _, tool := range tools {
		ns, _, _ := strings.Cut(tool.Name, "__")
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// TestToolsetsNarrowMCP: the official go-sdk client, selecting toolsets by
// the X-MCP-Toolsets header, by the /mcp/x/<toolsets> path and by the
// deployment setting, sees only those namespaces plus tools.help, and a
// call outside them answers as an unknown tool, naming what it may call.
func TestToolsetsNarrowMCP(t *testing.T) {
	env, _ := productionEnv(t, nil)
	deployed, _ := productionEnv(t, map[string]string{"CURSUS_MCP_TOOLSETS": "catalog,dag"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []struct {
		name string
		url  string
		hc   *http.Client
	}{
		{"header", env.ts.URL + "/mcp", &http.Client{Transport: headerTransport{toolsetsHeader, "catalog, DAG"}}},
		{"path", env.ts.URL + "/mcp/x/catalog,dag", nil},
		{"config", deployed.ts.URL + "/mcp", nil},
		{"config and header all", deployed.ts.URL + "/mcp", &http.Client{Transport: headerTransport{toolsetsHeader, "all"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, list := sdkSession(t, ctx, c.url, c.hc)
			if got := namespacesOf(list.Tools); !slices.Equal(got, []string{"catalog", "dag", "tools"}) {
				t.Fatalf("namespaces listed: %v", got)
			}
			if !slices.ContainsFunc(list.Tools, func(tool *sdk.Tool) bool { return tool.Name == "tools__help" }) ||
				slices.ContainsFunc(list.Tools, func(tool *sdk.Tool) bool { return tool.Name == "tools__describe_tool" }) {
				t.Fatal("tools.help must stay, and only tools.help of the tools namespace")
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "catalog__list_steps", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("call inside the selection: %v %v", err, res)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "compile__name", Arguments: map[string]any{}})
			if err != nil || !res.IsError {
				t.Fatalf("call outside the selection: %v %v", err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var e struct {
				Code string `json:"code"`
				Meta struct {
					Details struct {
						Available []string `json:"available"`
					} `json:"details"`
				} `json:"meta"`
			}
			_ = json.Unmarshal(raw, &e)
			if e.Code != registry.CodeUnknownTool || !slices.Contains(e.Meta.Details.Available, "dag.construct") || slices.Contains(e.Meta.Details.Available, "compile.name") {
				t.Fatalf("outside the selection: %s", raw)
			}
		})
	}
	// Without a selection every namespace is listed.
	_, list := sdkSession(t, ctx, env.ts.URL+"/mcp", nil)
	if got := namespacesOf(list.Tools); len(got) < 10 {
		t.Fatalf("no selection lists %v", got)
	}
}

// TestUnknownToolsetsAreErrors: a request naming an unknown toolset gets a
// 400 with a JSON-RPC error over MCP (header and path) and an envelope from
// GET /tools; a request may not widen the deployment's selection; a
// deployment naming one fails its startup check.
func TestUnknownToolsetsAreErrors(t *testing.T) {
	env, _ := productionEnv(t, map[string]string{"CURSUS_MCP_TOOLSETS": "catalog,dag"})
	for _, c := range []struct {
		url    string
		header http.Header
	}{
		{env.ts.URL + "/mcp", http.Header{toolsetsHeader: {"catalog,nope"}}},
		{env.ts.URL + "/mcp/x/nope", nil},
		{env.ts.URL + "/mcp/x/compile", nil}, // a namespace the deployment does not offer
	} {
		status, body := rawToolsList(t, c.url, c.header)
		var msg struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &msg)
		if status != http.StatusBadRequest || msg.ID != 7 || msg.Error.Code != -32602 || !strings.Contains(msg.Error.Message, "catalog, dag") {
			t.Errorf("%s %v: %d %s", c.url, c.header, status, body)
		}
	}
	resp, err := http.Get(env.ts.URL + "/tools?toolsets=nope")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"code":"invalid_input"`) {
		t.Errorf("/tools?toolsets=nope: %d %s", resp.StatusCode, body)
	}

	cfg, deps := testConfig(t, map[string]string{"CURSUS_MCP_TOOLSETS": "catalog,nope"})
	reg, err := registry.New(registry.Options{}, handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckToolsets(reg, cfg.MCP); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("startup check: %v", err)
	}
}

// TestToolsetsNarrowREST: GET /tools?toolsets= (and the header) lists only
// the selection, and POST /call refuses a tool outside it.
func TestToolsetsNarrowREST(t *testing.T) {
	env, _ := productionEnv(t, nil)
	for _, req := range []*http.Request{
		mustRequest(t, http.MethodGet, env.ts.URL+"/tools?toolsets=dag", "", nil),
		mustRequest(t, http.MethodGet, env.ts.URL+"/tools?format=mcp", "", http.Header{toolsetsHeader: {"dag"}}),
	} {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&tools)
		resp.Body.Close()
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name+tool.Function.Name)
		}
		if len(names) < 3 || slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, "dag__") && n != "tools__help" }) {
			t.Errorf("%s: %v", req.URL, names)
		}
	}
	req := mustRequest(t, http.MethodPost, env.ts.URL+"/call/catalog.list_steps", "{}", http.Header{toolsetsHeader: {"dag"}})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "not in this request's toolsets") {
		t.Errorf("call outside the selection: %d %s", resp.StatusCode, body)
	}
}

func mustRequest(t *testing.T, method, url, body string, header http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return req
}

// TestToolsetsNarrowLegacySSE: over the legacy HTTP+SSE transport the
// header (which mcp-go's client sends on the stream and on every message)
// narrows tools/list and tools/call as on /mcp.
func TestToolsetsNarrowLegacySSE(t *testing.T) {
	env, _ := productionEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcpclient.NewSSEMCPClient(env.ts.URL+"/sse", transport.WithHeaders(map[string]string{toolsetsHeader: "dag"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(list.Tools)
	if !slices.Contains(names, "tools__help") || slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, "dag__") && n != "tools__help" }) {
		t.Fatalf("sse tools/list with toolsets dag: %v", names)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "catalog__list_steps"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "not in this request's toolsets") {
		t.Fatalf("sse call outside the selection: %v", res.Content)
	}
}

func TestToolsetsHeaderKeyIsCanonical(t *testing.T) {
	if got := http.CanonicalHeaderKey(toolsetsHeader); got != toolsetsHeaderKey {
		t.Fatalf("toolsetsHeaderKey = %q, the canonical form of %q is %q", toolsetsHeaderKey, toolsetsHeader, got)
	}
}
