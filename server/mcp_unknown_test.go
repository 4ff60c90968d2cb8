package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMCPUnknownToolIsAnEnvelope: over MCP, as over REST, an unknown tool
// gets the unknown_tool envelope with the names this caller may call, is
// counted and has a tool span; dotted names reach their tool.
func TestMCPUnknownToolIsAnEnvelope(t *testing.T) {
	o := newOpsEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, list := sdkSession(t, ctx, o.ts.URL+"/mcp", nil)
	for _, tool := range list.Tools {
		if tool.Name == unknownToolRoute {
			t.Fatalf("tools/list shows the internal route %s", unknownToolRoute)
		}
	}

	for _, name := range []string{"no__such", "no.such", unknownToolRoute} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: a JSON-RPC error instead of a tool result: %v", name, err)
		}
		if !res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: isError %v, content %v", name, res.IsError, res.Content)
		}
		text, ok := res.Content[0].(*sdk.TextContent)
		if !ok {
			t.Fatalf("%s: content %T", name, res.Content[0])
		}
		env := envelopeOf(t, text.Text, res.StructuredContent)
		if env["ok"] != false || env["code"] != "unknown_tool" {
			t.Fatalf("%s: envelope %v", name, env)
		}
		details, _ := env["meta"].(map[string]any)["details"].(map[string]any)
		var available []string
		for _, n := range details["available"].([]any) {
			available = append(available, n.(string))
		}
		// The gated test tool is registered but closed to this caller.
		if !slices.Contains(available, "tools.help") || slices.Contains(available, "testonly.write") {
			t.Fatalf("%s: available = %v", name, available)
		}
		if !strings.Contains(env["error"].(string), name) {
			t.Errorf("%s: the error does not name the tool: %v", name, env["error"])
		}
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tools.help", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("dotted tools.help: %v %+v", err, res)
	}
	var env map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &env); err != nil || env["ok"] != true || env["meta"].(map[string]any)["tool"] != "tools.help" {
		t.Fatalf("dotted tools.help: %s", b)
	}

	want := `
# HELP cursus_tool_calls_total Tool calls by dotted tool name, transport and outcome code (ok or the envelope error code).
# TYPE cursus_tool_calls_total counter
cursus_tool_calls_total{code="ok",tool="tools.help",transport="mcp"} 1
cursus_tool_calls_total{code="unknown_tool",tool="unknown",transport="mcp"} 3
`
	if err := testutil.ScrapeAndCompare(o.ts.URL+"/metrics", strings.NewReader(want), "cursus_tool_calls_total"); err != nil {
		t.Fatal(err)
	}
	spans := o.spans.GetSpans()
	span := spanNamed(spans, "tools/call unknown")
	if span == nil {
		t.Fatalf("no tool span for the unknown tool in %v", spanNames(spans))
	}
	if attr(span, "error.type") != "unknown_tool" || attr(span, "cursus.transport") != "mcp" {
		t.Errorf("unknown-tool span attributes %v", span.Attributes)
	}
}

// TestUnknownToolOnEveryMCPTransport: legacy SSE and stdio route unknown
// and dotted names as streamable HTTP does.
func TestUnknownToolOnEveryMCPTransport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(transport string, call func(name string) (isError bool, env map[string]any)) {
		t.Helper()
		if isError, env := call("no.such"); !isError || env["code"] != "unknown_tool" {
			t.Errorf("%s: no.such: isError %v, envelope %v", transport, isError, env)
		}
		if isError, env := call("tools.by_phase"); isError || env["ok"] != true {
			t.Errorf("%s: dotted tools.by_phase did not reach its tool: %v", transport, env)
		}
	}

	env := newTestEnv(t, nil)
	sse := mcpGoClient(t, ctx, env.ts.URL+"/sse", "")
	check("legacy SSE", func(name string) (bool, map[string]any) {
		res, err := sse.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: map[string]any{"phase": "planner"}}})
		if err != nil {
			t.Fatalf("legacy SSE %s: %v", name, err)
		}
		return res.IsError, envelopeOf(t, res.Content[0].(mcp.TextContent).Text, res.StructuredContent)
	})

	_, _, deps := surfaceEnv(t, nil)
	cs := stdioSession(t, ctx, deps)
	check("stdio", func(name string) (bool, map[string]any) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"phase": "planner"}})
		if err != nil {
			t.Fatalf("stdio %s: %v", name, err)
		}
		return res.IsError, envelopeOf(t, res.Content[0].(*sdk.TextContent).Text, res.StructuredContent)
	})
}
