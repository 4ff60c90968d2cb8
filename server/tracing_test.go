package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

const (
	testTraceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
	testParentSpan = "00f067aa0ba902b7"
	testMetaTrace  = "0af7651916cd43dd8448eb211c80319c"
	testMetaSpan   = "b7ad6b7169203331"
)

func spanNamed(spans tracetest.SpanStubs, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

func attr(s *tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

func TestToolSpanIsChildOfTraceparent(t *testing.T) {
	o := newOpsEnv(t, nil)
	resp, env := o.call(t, "tools.help", `{}`, map[string]string{"traceparent": "00-" + testTraceID + "-" + testParentSpan + "-01"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, env)
	}
	spans := o.spans.GetSpans()
	httpSpan := spanNamed(spans, "POST /call/{tool}")
	tool := spanNamed(spans, "execute_tool tools.help")
	if httpSpan == nil || tool == nil {
		t.Fatalf("want an HTTP span and a tool span, got %v", spanNames(spans))
	}
	if got := httpSpan.SpanContext.TraceID().String(); got != testTraceID {
		t.Errorf("HTTP span trace %s, want %s", got, testTraceID)
	}
	if got := httpSpan.Parent.SpanID().String(); got != testParentSpan || !httpSpan.Parent.IsRemote() {
		t.Errorf("HTTP span parent %s (remote %v), want remote %s", got, httpSpan.Parent.IsRemote(), testParentSpan)
	}
	if tool.SpanContext.TraceID() != httpSpan.SpanContext.TraceID() || tool.Parent.SpanID() != httpSpan.SpanContext.SpanID() {
		t.Errorf("tool span is not a child of the HTTP span: parent %s, HTTP span %s", tool.Parent.SpanID(), httpSpan.SpanContext.SpanID())
	}
	for k, want := range map[string]string{
		"gen_ai.tool.name": "tools.help", "gen_ai.operation.name": "execute_tool", "cursus.transport": "rest",
	} {
		if got := attr(tool, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if attr(tool, "mcp.method.name") != "" || attr(tool, "error.type") != "" {
		t.Errorf("a successful REST call carries MCP or error attributes: %v", tool.Attributes)
	}
	if got := attr(httpSpan, "http.route"); got != "/call/{tool}" {
		t.Errorf("http.route = %q", got)
	}
	// The log lines carry the same trace id.
	var seen bool
	for _, l := range o.logs.lines(t) {
		if l["message"] == "tool call" {
			seen = true
			if l["trace_id"] != testTraceID {
				t.Errorf("tool-call log trace_id = %v, want %s", l["trace_id"], testTraceID)
			}
		}
	}
	if !seen {
		t.Error("no tool call log line")
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestMCPToolSpanFromMeta: trace context in params._meta wins over the
// header, and the span carries the MCP attributes and error.type.
func TestMCPToolSpanFromMeta(t *testing.T) {
	o := newOpsEnv(t, nil)
	params := map[string]any{
		"name": "testonly__write", "arguments": map[string]any{},
		"_meta": map[string]any{"traceparent": "00-" + testMetaTrace + "-" + testMetaSpan + "-01"},
	}
	resp, msg := o.rpc(t, 1, "tools/call", params, map[string]string{
		"traceparent": "00-" + testTraceID + "-" + testParentSpan + "-01", "Mcp-Session-Id": "sess-123",
	})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, msg)
	}
	if env := mcpEnvelope(t, msg); env["code"] != "tool_disabled" {
		t.Fatalf("envelope %v", env)
	}
	spans := o.spans.GetSpans()
	tool := spanNamed(spans, "tools/call testonly.write")
	if tool == nil {
		t.Fatalf("no tool span in %v", spanNames(spans))
	}
	if got := tool.SpanContext.TraceID().String(); got != testMetaTrace {
		t.Errorf("tool span trace %s, want the _meta trace %s", got, testMetaTrace)
	}
	if got := tool.Parent.SpanID().String(); got != testMetaSpan {
		t.Errorf("tool span parent %s, want %s", got, testMetaSpan)
	}
	for k, want := range map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "testonly.write", "gen_ai.operation.name": "execute_tool",
		"error.type": "tool_disabled", "mcp.protocol.version": "2025-06-18", "mcp.session.id": "sess-123",
	} {
		if got := attr(tool, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if tool.Status.Code.String() != "Error" {
		t.Errorf("status %v, want Error", tool.Status)
	}
	if spanNamed(spans, "POST /mcp") == nil {
		t.Errorf("no HTTP span for /mcp in %v", spanNames(spans))
	}
}

func TestTracingDisabledWithoutOTELVariables(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	tp, shutdown, err := SetupTracing(context.Background(), DefaultConfig().Telemetry, none)
	if err != nil || tp != nil {
		t.Fatalf("tracing on without configuration: %v %v", tp, err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}
	if TracingEnabled(DefaultConfig().Telemetry, func(k string) (string, bool) { v, ok := env[k]; return v, ok }) {
		t.Error("OTEL_TRACES_EXPORTER=none did not turn tracing off")
	}
}

// TestOTLPReceiverGetsSpans exports through a loopback OTLP/HTTP receiver.
func TestOTLPReceiverGetsSpans(t *testing.T) {
	var mu sync.Mutex
	var names []string
	var auth string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		auth = r.Header.Get("X-Api-Key")
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer recv.Close()

	cfg := DefaultConfig().Telemetry
	cfg.OTLPEndpoint = recv.URL
	cfg.OTLPHeaders = map[string]string{"X-Api-Key": "k1"}
	tp, shutdown, err := SetupTracing(context.Background(), cfg, func(string) (string, bool) { return "", false })
	exportProbeSpan(t, tp, shutdown, err)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(names, ",") != "probe" {
		t.Fatalf("receiver got spans %v, want [probe]", names)
	}
	if auth != "k1" {
		t.Errorf("telemetry.otlp_headers not sent: %q", auth)
	}
}

// exportProbeSpan ends one span named "probe" on what SetupTracing
// returned and shuts the provider down, which flushes it to the receiver.
func exportProbeSpan(t *testing.T, tp *sdktrace.TracerProvider, shutdown func(context.Context) error, setupErr error) {
	t.Helper()
	if setupErr != nil || tp == nil {
		t.Fatalf("SetupTracing: %v", setupErr)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "probe")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestOTLPFromStandardVariable uses OTEL_EXPORTER_OTLP_ENDPOINT alone.
func TestOTLPFromStandardVariable(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" && r.Method == http.MethodPost {
			mu.Lock()
			posts++
			mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	tp, shutdown, err := SetupTracing(context.Background(), DefaultConfig().Telemetry, func(k string) (string, bool) {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return recv.URL, true
		}
		return "", false
	})
	exportProbeSpan(t, tp, shutdown, err)
	mu.Lock()
	defer mu.Unlock()
	if posts == 0 {
		t.Fatal("no POST reached /v1/traces")
	}
}

// TestTraceIDsInLogsWithoutTracing: with no tracer installed, a tool-call
// line still carries the trace id its caller sent (the traceparent header,
// or params._meta over MCP), and none when the caller sent none.
func TestTraceIDsInLogsWithoutTracing(t *testing.T) {
	o := newOpsEnv(t, nil)
	logs := &syncBuffer{}
	srv := NewServer(Deps{Config: o.cfg, Registry: o.srv.deps.Registry, Logger: zerolog.New(logs)})
	t.Cleanup(func() { _ = srv.stream.Shutdown(context.Background()) })
	o.ts = startHTTP(t, srv) // the helpers below now talk to the untraced server

	o.call(t, "tools.help", `{}`, map[string]string{"traceparent": "00-" + testTraceID + "-" + testParentSpan + "-01"})
	o.rpc(t, 1, "tools/call", map[string]any{"name": "tools__help", "arguments": map[string]any{},
		"_meta": map[string]any{"traceparent": "00-" + testMetaTrace + "-" + testMetaSpan + "-01"}}, nil)
	o.call(t, "tools.help", `{}`, nil)
	var got []any
	for _, l := range logs.lines(t) {
		if l["message"] == "tool call" {
			got = append(got, l["trace_id"])
		}
	}
	if want := []any{testTraceID, testMetaTrace, nil}; !reflect.DeepEqual(got, want) {
		t.Fatalf("trace ids of the tool-call lines = %v, want %v", got, want)
	}
}
