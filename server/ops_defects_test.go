package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHTTPMethodLabelIsBounded: requests with made-up methods share the
// OTHER label value (and span name) instead of adding series; standard
// methods keep theirs.
func TestHTTPMethodLabelIsBounded(t *testing.T) {
	o := newOpsEnv(t, nil)
	const made = 20
	for i := range made {
		o.do(t, fmt.Sprintf("RANDOM%d", i), "/healthz", "", nil)
	}
	o.do(t, http.MethodGet, "/healthz", "", nil)
	_, body := o.do(t, http.MethodGet, "/metrics", "", nil)
	var methods []string
	others := ""
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "cursus_http_requests_total{") {
			continue
		}
		if strings.Contains(line, "RANDOM") {
			t.Errorf("a client-chosen method is a label value: %s", line)
		}
		_, rest, _ := strings.Cut(line, `method="`)
		method, _, _ := strings.Cut(rest, `"`)
		methods = append(methods, method)
		if method == otherMethod && strings.Contains(line, `status="405"`) {
			others = line[strings.LastIndex(line, " ")+1:]
		}
	}
	if others != fmt.Sprint(made) {
		t.Errorf("OTHER requests = %q, want %d (series: %v)", others, made, methods)
	}
	if !strings.Contains(string(body), `cursus_http_requests_total{method="GET",route="/healthz",status="200"} 1`) {
		t.Errorf("the GET request is not counted under its method: %v", methods)
	}
	for _, s := range o.spans.GetSpans() {
		if strings.Contains(s.Name, "RANDOM") {
			t.Errorf("a client-chosen method names a span: %s", s.Name)
		}
	}
	if spanNamed(o.spans.GetSpans(), "OTHER unmatched") == nil {
		t.Errorf("no OTHER span in %v", spanNames(o.spans.GetSpans()))
	}
}

// TestHTTPSpanLinksToMetaTrace: when trace context arrives only in
// params._meta, the tool span joins that trace and the HTTP span, in a
// trace of its own, links to it.
func TestHTTPSpanLinksToMetaTrace(t *testing.T) {
	o := newOpsEnv(t, nil)
	params := map[string]any{
		"name": "tools__help", "arguments": map[string]any{},
		"_meta": map[string]any{"traceparent": "00-" + testMetaTrace + "-" + testMetaSpan + "-01"},
	}
	if resp, msg := o.rpc(t, 1, "tools/call", params, nil); resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, msg)
	}
	spans := o.spans.GetSpans()
	httpSpan, tool := spanNamed(spans, "POST /mcp"), spanNamed(spans, "tools/call tools.help")
	if httpSpan == nil || tool == nil {
		t.Fatalf("want an HTTP span and a tool span, got %v", spanNames(spans))
	}
	if tool.SpanContext.TraceID().String() != testMetaTrace {
		t.Fatalf("tool span trace %s, want the _meta trace", tool.SpanContext.TraceID())
	}
	if httpSpan.SpanContext.TraceID().String() == testMetaTrace {
		t.Fatal("the HTTP span is in the _meta trace; this test needs it in its own")
	}
	if len(httpSpan.Links) != 1 {
		t.Fatalf("HTTP span links %v, want one to the _meta trace", httpSpan.Links)
	}
	link := httpSpan.Links[0].SpanContext
	if link.TraceID().String() != testMetaTrace || link.SpanID().String() != testMetaSpan {
		t.Errorf("link to %s/%s, want %s/%s", link.TraceID(), link.SpanID(), testMetaTrace, testMetaSpan)
	}

	// Without _meta the tool span is the HTTP span's child: no link.
	o.spans.Reset()
	if resp, msg := o.rpc(t, 2, "tools/call", map[string]any{"name": "tools__help", "arguments": map[string]any{}}, nil); resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, msg)
	}
	if httpSpan := spanNamed(o.spans.GetSpans(), "POST /mcp"); httpSpan == nil || len(httpSpan.Links) != 0 {
		t.Errorf("HTTP span without _meta: %+v", httpSpan)
	}
}
