package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/cursus-dev/cursus/registry"
)

// telemetry is one server's metrics, tracer and logger. HTTP middleware
// puts it into each request's context; the registry observer finds it
// there, so a registry shared by several servers reports each call to the
// server that received it.
type telemetry struct {
	metrics *metrics
	tracer  trace.Tracer
	log     zerolog.Logger
	// ownTracer is set when Deps.Tracing gave the tracer; otherwise it is
	// the global provider's, which records nothing until a program
	// installs one.
	ownTracer bool
	// proxies are listen.trusted_proxies: who may name the client.
	proxies trustedProxies
}

// defaultTracerProvider is the global provider before anyone installs one:
// its spans record nothing and only carry the parent's span context.
var defaultTracerProvider = otel.GetTracerProvider()

// tracing reports whether spans can record anything. When they cannot,
// the middleware skips starting them (and building their attributes); the
// incoming trace context still reaches the context, so log lines keep the
// caller's trace_id exactly as a non-recording span would give it.
func (t *telemetry) tracing() bool {
	return t.ownTracer || otel.GetTracerProvider() != defaultTracerProvider
}

// propagator reads W3C trace context (and baggage) from headers and from
// MCP params._meta.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// hasTraceContext reports whether h carries anything propagator reads, so
// requests without it skip the extraction (which looks each header up by
// a name it has to canonicalize first).
func hasTraceContext(h http.Header) bool {
	return len(h["Traceparent"]) > 0 || len(h["Baggage"]) > 0
}

func newTelemetry(deps Deps) *telemetry {
	tp := deps.Tracing
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	proxies, _ := parseTrustedProxies(deps.Config.Listen.TrustedProxies) // Validate has checked them
	return &telemetry{
		proxies:   proxies,
		metrics:   newMetrics(deps.PodState),
		tracer:    tp.Tracer("github.com/cursus-dev/cursus/server"),
		log:       deps.Logger,
		ownTracer: deps.Tracing != nil,
	}
}

// requestState is what the middleware layers learn about one HTTP request
// and share with each other and with the tool-call observer.
type requestState struct {
	tel       *telemetry
	requestID string
	// transport and guards are set by remoteCaller on the routes that run
	// tools (transport "mcp", "sse", "rest"; "stdio" for the stdio
	// session, which has no guards).
	transport string
	guards    *guards
	// callerKey is whom the request's tool calls are charged to
	// (rateKey), set by remoteCaller.
	callerKey string
	// client is the caller's address (listen.trusted_proxies).
	client string
	// traced is set when the request carried trace context: with tracing
	// off, a tool call's log line has a trace id only then.
	traced bool
	// toolsets is the request's toolset selection (selectToolsets; the
	// deployment's for stdio).
	toolsets toolsets

	mu       sync.Mutex
	identity identity // from authentication; zero when auth is off
	// call is the tool call of a REST request, set by its guard (an MCP
	// request may carry several calls; each has its callInfo in ctx).
	call *callInfo
	// MCP facts from headers, when present.
	protocolVersion string
	sessionID       string
	// The JSON-RPC method(s) of an MCP request and the first error.
	mcpMethods string
	mcpError   string
	// body is the request body, read once by readBody (POST only), and
	// bodyReader gives it to the handler again.
	body       []byte
	bodyReader bodyReader
	response   responseWriter
	// args is body decoded as tool arguments by the REST guard (or the
	// failure to decode it), so the handler does not decode it again.
	args    map[string]any
	argsBad *registry.Result
}

// setIdentity records who authenticated the request; remoteCaller makes
// it the caller of the request's tool calls.
func (s *requestState) setIdentity(id identity) {
	s.mu.Lock()
	s.identity = id
	s.mu.Unlock()
}

func (s *requestState) getIdentity() identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.identity
}

// caller is the remote caller of the request's tool calls.
func (s *requestState) caller() registry.Caller {
	id := s.getIdentity()
	return registry.Caller{Remote: true, Transport: s.transport, Principal: id.principal, Scopes: id.scopes, RequestID: s.requestID}
}

// noteMCP records a JSON-RPC method the request carried (a batch carries
// several) and the first error one of them ended with.
func (s *requestState) noteMCP(method string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.mcpError == "" {
			s.mcpError = err.Error()
		}
		return
	}
	if s.mcpMethods != "" {
		method = s.mcpMethods + "," + method
	}
	s.mcpMethods = method
}

type requestStateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	s, _ := ctx.Value(requestStateKey{}).(*requestState)
	return s
}

// requestIDFrom is the id observeHTTP gave the request in ctx ("" outside
// an HTTP request).
func requestIDFrom(ctx context.Context) string {
	if s := stateFrom(ctx); s != nil {
		return s.requestID
	}
	return ""
}

const requestIDHeader = "X-Request-Id"

// requestID is the caller's X-Request-Id when it is a short token (so a
// proxy's id ties our log lines to its own), otherwise a new random one:
// 128 bits from crypto/rand per request, naming no host and drawn from no
// shared counter, so an id tells a caller nothing of the server or of
// anyone else's traffic.
func requestID(r *http.Request) string {
	if id := r.Header.Get(requestIDHeader); id != "" && len(id) <= 128 && !strings.ContainsFunc(id, notIDChar) {
		return id
	}
	return rand.Text()
}

func notIDChar(c rune) bool {
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:/+=", c))
}

// callInfo is what a front end knows about a call before the registry
// runs it: its request, MCP facts and the redacted argument summary for
// the logs. It sits near the top of the call's context, so the observer
// finds the request state through it without walking down past the MCP
// server's context values.
type callInfo struct {
	st        *requestState
	traced    bool   // params._meta carried trace context
	mcpMethod string // "tools/call" on MCP transports, "" on REST
	argv      any    // the call's arguments, summarized only if a log line is written
	argCap    int
	summary   []byte
	whole     bool
	done      bool
	// release, on REST, returns what the call holds (see
	// restCallGuard).
	release func()
}

// args is the redacted summary of the arguments (see summarizeArgs),
// computed on first use: calls whose log lines are filtered out never pay
// for it.
func (c *callInfo) args() (summary []byte, whole bool) {
	if !c.done {
		c.summary, c.whole = summarizeArgs(c.argv, c.argCap)
		c.done = true
	}
	return c.summary, c.whole
}

type callInfoKey struct{}

func withCallInfo(ctx context.Context, c *callInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, c)
}

// callInfoFrom is the call's info; outside a guarded call, an empty one
// for the request state in ctx (which may be nil).
func callInfoFrom(ctx context.Context) *callInfo {
	if c, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		return c
	}
	st := stateFrom(ctx)
	if st != nil && st.call != nil {
		return st.call
	}
	return &callInfo{st: st}
}

// CallObserver is the registry observer that reports tool calls to the
// metrics, traces and logs of the server whose request made the call.
// Build the registry with registry.Options{Observer: server.CallObserver()}.
// Calls made outside an HTTP request (the CLI, stdio) are not observed.
func CallObserver() registry.Observer { return callObserver{} }

type callObserver struct{}

func transportOf(c registry.Caller) string {
	if c.Transport == "" {
		return "in_process"
	}
	return c.Transport
}

// CallStarted counts the call in flight and starts its span; the registry
// calls it for every tool it found, so CallFinished knows a call with a
// tool name was started.
func (callObserver) CallStarted(ctx context.Context, tool string, caller registry.Caller) context.Context {
	st := callInfoFrom(ctx).st
	if st == nil {
		return ctx
	}
	st.tel.metrics.callStarted(tool, transportOf(caller))
	if st.tel.tracing() {
		ctx, _ = st.tel.startToolSpan(ctx, tool, caller, time.Now())
	}
	return ctx
}

func (callObserver) CallFinished(ctx context.Context, rec registry.CallRecord) {
	reportCall(ctx, rec, rec.Tool != "")
}

// reportCall ends a call's span and writes its metrics and log lines.
// started says whether CallStarted ran for it: calls refused before the
// registry (by a guard) and unknown tools were never started.
func reportCall(ctx context.Context, rec registry.CallRecord, started bool) {
	info := callInfoFrom(ctx)
	st := info.st
	if st == nil {
		return
	}
	t := st.tel
	t.metrics.callFinished(rec.Tool, transportOf(rec.Caller), rec.Code, rec.Duration, started)
	if t.tracing() {
		span := trace.SpanFromContext(ctx)
		if !started {
			// Unknown tools and calls refused before the registry get a span
			// of their own, so every call shows up in a trace.
			ctx, span = t.startToolSpan(ctx, rec.Tool, rec.Caller, time.Now().Add(-rec.Duration))
		}
		if rec.Code != "" {
			span.SetAttributes(attribute.String("error.type", rec.Code))
			span.SetStatus(codes.Error, rec.Code)
		}
		span.End()
	}
	t.logCall(ctx, info, rec)
}

// startToolSpan starts the span of one tool call with the MCP and GenAI
// semantic-convention attributes.
func (t *telemetry) startToolSpan(ctx context.Context, tool string, caller registry.Caller, start time.Time) (context.Context, trace.Span) {
	info := callInfoFrom(ctx)
	name := toolLabel(tool)
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", name),
		attribute.String("cursus.transport", transportOf(caller)),
	}
	spanName := "execute_tool " + name
	if info.mcpMethod != "" {
		spanName = info.mcpMethod + " " + name
		attrs = append(attrs, attribute.String("mcp.method.name", info.mcpMethod))
		if st := info.st; st != nil {
			st.mu.Lock()
			if st.protocolVersion != "" {
				attrs = append(attrs, attribute.String("mcp.protocol.version", st.protocolVersion))
			}
			if st.sessionID != "" {
				attrs = append(attrs, attribute.String("mcp.session.id", st.sessionID))
			}
			st.mu.Unlock()
		}
	}
	return t.tracer.Start(ctx, spanName, trace.WithTimestamp(start), trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
}

// logCall writes the tool-call line, and for a gated tool the audit line.
func (t *telemetry) logCall(ctx context.Context, info *callInfo, rec registry.CallRecord) {
	code := rec.Code
	if code == "" {
		code = codeOK
	}
	level := zerolog.InfoLevel
	if rec.Code == registry.CodeInternal {
		level = zerolog.ErrorLevel
	}
	ev := t.log.WithLevel(level)
	t.callFields(ctx, info, ev, rec, code)
	if rec.Err != nil {
		ev = ev.AnErr("internal_error", rec.Err)
	}
	if rec.Panic != nil {
		ev = ev.Interface("panic", rec.Panic).Bytes("stack", rec.Stack)
	}
	ev.Msg("tool call")
	if rec.Gated {
		decision := "allowed"
		if rec.Code == registry.CodeToolDisabled || rec.Code == registry.CodeForbidden {
			decision = "refused"
		}
		ev := t.log.WithLevel(zerolog.InfoLevel).Bool("audit", true).Str("decision", decision)
		t.callFields(ctx, info, ev, rec, code)
		ev.Msg("gated tool call")
	}
}

func (t *telemetry) callFields(ctx context.Context, info *callInfo, ev *zerolog.Event, rec registry.CallRecord, code string) {
	if ev == nil {
		return
	}
	ev.Str("request_id", rec.Caller.RequestID).
		Str("principal", principalOf(rec.Caller)).
		Str("transport", transportOf(rec.Caller)).
		Str("tool", toolLabel(rec.Tool)).
		Str("code", code).
		Float64("duration_ms", float64(rec.Duration.Microseconds())/1000)
	// Without tracing and without trace context from the caller there is
	// no trace id, and looking for one walks the whole context.
	if t.tracing() || info.traced || info.st.traced {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			ev.Str("trace_id", sc.TraceID().String())
		}
	}
	// A whole summary is logged as a JSON object; a cut one as text.
	switch args, whole := info.args(); {
	case len(args) == 0:
	case whole:
		ev.RawJSON("args", args)
	default:
		ev.Bytes("args_truncated", args)
	}
}

func principalOf(c registry.Caller) string {
	if c.Principal == "" {
		return "anonymous"
	}
	return c.Principal
}

// observeHTTP is the outermost middleware: it gives the request its id
// (echoed in X-Request-Id), starts the request span (trace context from
// the traceparent header), counts the request by route pattern and
// status, and logs one line when the request ends. Its response writer
// keeps http.Flusher, which SSE needs.
func (t *telemetry) observeHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &requestState{tel: t, requestID: requestID(r), client: t.proxies.clientAddr(r)}
		// Header names in canonical form: Get would otherwise allocate
		// the canonical form on every request.
		switch r.URL.Path {
		case "/mcp":
			st.protocolVersion = r.Header.Get("Mcp-Protocol-Version")
			st.sessionID = r.Header.Get("Mcp-Session-Id")
		case "/message":
			st.protocolVersion = r.Header.Get("Mcp-Protocol-Version")
			st.sessionID = r.URL.Query().Get("sessionId")
		}
		ctx := r.Context()
		if hasTraceContext(r.Header) {
			ctx = propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
			st.traced = true
		}
		var span trace.Span
		if t.tracing() {
			ctx, span = t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
				attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path),
			))
		} else {
			span = trace.SpanFromContext(ctx)
		}
		ctx = context.WithValue(ctx, requestStateKey{}, st)
		w.Header().Set(requestIDHeader, st.requestID)
		st.response.ResponseWriter = w
		ww := &st.response
		defer func() {
			status := ww.status
			if status == 0 {
				status = http.StatusOK
			}
			route := "unmatched"
			if pattern := chi.RouteContext(r.Context()).RoutePattern(); pattern != "" {
				route = pattern // RoutePattern joins the pattern afresh on every call
			}
			d := time.Since(start)
			if span.IsRecording() {
				method := r.Method
				if !standardMethod(method) {
					method = otherMethod // span names stay as bounded as the metric labels
				}
				span.SetName(method + " " + route)
				span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
				if status >= 500 {
					span.SetStatus(codes.Error, http.StatusText(status))
				}
				span.End()
			}
			t.metrics.httpRequest(route, r.Method, status, d)
			ev := t.log.Info()
			if ev == nil {
				return
			}
			ev.Str("request_id", st.requestID).
				Str("method", r.Method).Str("route", route).Int("status", status).
				Int("bytes", ww.bytes).
				Float64("duration_ms", float64(d.Microseconds())/1000).
				Str("principal", principalOrAnonymous(st.getIdentity().principal))
			st.mu.Lock()
			if st.mcpMethods != "" {
				ev.Str("mcp_method", st.mcpMethods)
			}
			if st.mcpError != "" {
				ev.Str("mcp_error", st.mcpError)
			}
			st.mu.Unlock()
			if sc := span.SpanContext(); sc.IsValid() {
				ev.Str("trace_id", sc.TraceID().String())
			}
			ev.Msg("http request")
		}()
		next.ServeHTTP(ww, r.WithContext(ctx))
	})
}

// responseWriter notes the status and size of a response for observeHTTP.
// It lives in the request state (no allocation of its own), keeps
// http.Flusher, which streaming MCP responses need, unwraps for
// http.ResponseController and is an mcp-go HTTPResponseWriter.
type responseWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	// flushes counts Flush calls: mcp-go flushes once per message it
	// writes on a stream, which is how a tool call knows its progress
	// notifications are out (awaitFlushes).
	flushes atomic.Int64
}

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	w.flushes.Add(1)
}

// awaitFlushes waits until the response has been flushed n times, ctx
// ends or limit has passed.
func (w *responseWriter) awaitFlushes(ctx context.Context, n int64, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for pause := 20 * time.Microsecond; w.flushes.Load() < n && ctx.Err() == nil && time.Now().Before(deadline); pause = min(2*pause, time.Millisecond) {
		time.Sleep(pause)
	}
}

// CanStream completes mcp-go's HTTPResponseWriter, so handleMCP can pass
// the writer to the transport as it is.
func (w *responseWriter) CanStream() bool {
	_, ok := w.ResponseWriter.(http.Flusher)
	return ok
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func principalOrAnonymous(p string) string {
	if p == "" {
		return "anonymous"
	}
	return p
}
