package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/handlers"
	"github.com/cursus-dev/cursus/registry"
)

// TestMetricsAfterScriptedCalls runs a fixed mix of calls over REST and
// MCP and checks the exact per-tool counts by code and transport.
func TestMetricsAfterScriptedCalls(t *testing.T) {
	o := newOpsEnv(t, nil)
	for _, c := range []struct {
		tool, body string
		status     int
	}{
		{"tools__help", `{}`, 200},
		{"tools.help", `{}`, 200},
		{"no__such", `{}`, 404},
		{"testonly__write", `{}`, 403},
		{"tools.by_phase", `{"phase":"bad"}`, 400},
	} {
		if resp, env := o.call(t, c.tool, c.body, nil); resp.StatusCode != c.status {
			t.Fatalf("%s: status %d, want %d: %v", c.tool, resp.StatusCode, c.status, env)
		}
	}
	ctx := context.Background()
	c := mcpGoClient(t, ctx, o.ts.URL+"/mcp", "2025-06-18")
	for _, name := range []string{"tools__help", "testonly__write", "testonly__write"} {
		if _, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: map[string]any{}}}); err != nil {
			t.Fatal(err)
		}
	}

	want := `
# HELP cursus_tool_calls_total Tool calls by dotted tool name, transport and outcome code (ok or the envelope error code).
# TYPE cursus_tool_calls_total counter
cursus_tool_calls_total{code="invalid_input",tool="tools.by_phase",transport="rest"} 1
cursus_tool_calls_total{code="ok",tool="tools.help",transport="mcp"} 1
cursus_tool_calls_total{code="ok",tool="tools.help",transport="rest"} 2
cursus_tool_calls_total{code="tool_disabled",tool="testonly.write",transport="mcp"} 2
cursus_tool_calls_total{code="tool_disabled",tool="testonly.write",transport="rest"} 1
cursus_tool_calls_total{code="unknown_tool",tool="unknown",transport="rest"} 1
# HELP cursus_tool_gate_rejections_total Tool calls refused by a gate (tool_disabled) or for a missing scope (forbidden).
# TYPE cursus_tool_gate_rejections_total counter
cursus_tool_gate_rejections_total{reason="tool_disabled",tool="testonly.write",transport="mcp"} 2
cursus_tool_gate_rejections_total{reason="tool_disabled",tool="testonly.write",transport="rest"} 1
# HELP cursus_tool_calls_in_flight Tool calls currently running, by tool and transport.
# TYPE cursus_tool_calls_in_flight gauge
cursus_tool_calls_in_flight{tool="testonly.write",transport="mcp"} 0
cursus_tool_calls_in_flight{tool="testonly.write",transport="rest"} 0
cursus_tool_calls_in_flight{tool="tools.by_phase",transport="rest"} 0
cursus_tool_calls_in_flight{tool="tools.help",transport="mcp"} 0
cursus_tool_calls_in_flight{tool="tools.help",transport="rest"} 0
`
	if err := testutil.ScrapeAndCompare(o.ts.URL+"/metrics", strings.NewReader(want),
		"cursus_tool_calls_total", "cursus_tool_gate_rejections_total", "cursus_tool_calls_in_flight"); err != nil {
		t.Fatal(err)
	}

	resp, body := o.do(t, http.MethodGet, "/metrics", "", nil)
	text := string(body)
	for _, line := range []string{
		`cursus_http_requests_total{method="POST",route="/call/{tool}",status="200"} 2`,
		`cursus_http_requests_total{method="POST",route="/call/{tool}",status="403"} 1`,
		`cursus_tool_call_duration_seconds_count{tool="tools.help",transport="rest"} 2`,
		`cursus_build_info{catalog_digest=`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
	if !strings.Contains(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("content type %q", resp.Header.Get("Content-Type"))
	}
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestMetricsLint lints every collector, populated, with CollectAndLint.
func TestMetricsLint(t *testing.T) {
	m := newMetrics(nil)
	m.callStarted("tools.help", "rest")
	m.callFinished("tools.help", "rest", "", 3*time.Millisecond, true)
	m.callFinished("x.y", "mcp", "forbidden", time.Millisecond, false)
	m.httpRequest("/call/{tool}", "POST", 200, time.Millisecond)
	m.mcpSessions.Inc()
	m.rateLimited.WithLabelValues("rest").Inc()
	m.authFailures.WithLabelValues("missing").Inc()
	collectors := map[string]prometheus.Collector{
		"tool_calls": m.toolCalls, "tool_duration": m.toolDuration, "in_flight": m.toolInFlight,
		"gate": m.gateRejections, "http": m.httpRequests, "http_duration": m.httpDuration,
		"sessions": m.mcpSessions, "rate": m.rateLimited, "auth": m.authFailures,
	}
	for name, c := range collectors {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Metric, p.Text)
		}
	}
	problems, err := testutil.GatherAndLint(m.registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("registry: %s: %s", p.Metric, p.Text)
	}
}

// TestMCPSessionGauge counts stateful sessions up and down.
func TestMCPSessionGauge(t *testing.T) {
	o := newOpsEnv(t, map[string]string{"CURSUS_MCP_STATEFUL": "1"})
	ctx := context.Background()
	tr, err := transport.NewStreamableHTTP(o.ts.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: "2025-06-18", ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if got := scrapeValue(t, o, "cursus_mcp_sessions_active"); got != "1" {
		t.Fatalf("sessions with one client = %s, want 1", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := scrapeValue(t, o, "cursus_mcp_sessions_active"); got != "0" {
		t.Fatalf("sessions after close = %s, want 0", got)
	}
}

// scrapeValue is the value of an unlabelled series on /metrics.
func scrapeValue(t *testing.T, o *opsEnv, name string) string {
	t.Helper()
	_, body := o.do(t, http.MethodGet, "/metrics", "", nil)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("%s not on /metrics", name)
	return ""
}

// TestBuildInfoCarriesPodState: cursus_build_info carries the catalog
// digest and workflow key id the server reports, read at each scrape, and
// passes the linter.
func TestBuildInfoCarriesPodState(t *testing.T) {
	cfg, deps := testConfig(t, nil)
	reg, err := registry.New(registry.Options{Policy: cfg.Policy()}, handlers.Namespaces(deps)...)
	if err != nil {
		t.Fatal(err)
	}
	var digest atomic.Value
	digest.Store("digest-one")
	srv := NewServer(Deps{Config: cfg, Registry: reg, Logger: zerolog.New(io.Discard), PodState: func() PodState {
		return PodState{CatalogDigest: digest.Load().(string), WorkflowKeyID: "key-7"}
	}})
	ts := startHTTP(t, srv)
	scrape := func() string {
		resp, err := http.Get(ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	text := scrape()
	if !strings.Contains(text, `catalog_digest="digest-one"`) || !strings.Contains(text, `workflow_key_id="key-7"`) {
		t.Fatalf("cursus_build_info lacks the pod state:\n%s", grepLines(text, "cursus_build_info"))
	}
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	digest.Store("digest-two")
	if text := scrape(); !strings.Contains(text, `catalog_digest="digest-two"`) || strings.Contains(text, "digest-one") {
		t.Errorf("a changed catalog is not in the next scrape:\n%s", grepLines(text, "cursus_build_info"))
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
