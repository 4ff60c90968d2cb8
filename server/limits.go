package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/cursus-dev/cursus/registry"
)

// guards are the per-server limits applied before a call reaches the
// registry: rate, argument size and depth, and the exec_code concurrency
// cap. Timeouts are the registry's (Options.Timeout, PerToolTimeout).
type guards struct {
	reg    *registry.Registry
	limits LimitsConfig
	argCap int
	rate   *rateLimiter
	// shared, when limits.shared_store is set, keeps the rate budget in
	// the store for every replica; rate is then its fallback.
	shared  *sharedRate
	exec    *execLimiter
	share   *fairShare
	auth    *authenticator
	metrics *metrics
}

func newGuards(reg *registry.Registry, cfg Config, auth *authenticator, m *metrics, log zerolog.Logger) *guards {
	g := &guards{reg: reg, limits: cfg.Limits, argCap: cfg.Telemetry.LogArgBytes, auth: auth, metrics: m}
	if cfg.Limits.RatePerMinute > 0 {
		g.rate = newRateLimiter(cfg.Limits.RatePerMinute, time.Now)
		if cfg.Limits.SharedStore == sharedStoreRedis {
			g.shared = newSharedRate(cfg, g.rate, m.rateStoreErrors.Inc, log)
		}
	}
	g.exec = &execLimiter{slots: make(chan struct{}, cfg.Limits.ExecConcurrency), wait: cfg.Limits.ExecWait}
	g.share = newFairShare(cfg.Limits)
	return g
}

// readBody reads a POST body once and keeps it for the layers that look
// inside (rate limit, argument checks). The server's ReadTimeout
// (limits.read_timeout) bounds the read; a stalled body gets 400.
func (g *guards) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		if r.Method != http.MethodPost || st == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := readAll(r)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeJSON(w, http.StatusRequestEntityTooLarge, registry.Fail(registry.CodeInvalidInput,
					fmt.Sprintf("request body too large (limit %d bytes, limits.max_body_bytes)", tooBig.Limit)).Encode())
				return
			}
			writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, "could not read request body").Encode())
			return
		}
		st.body = body
		st.bodyReader.Reset(body)
		r.Body = &st.bodyReader
		next.ServeHTTP(w, r)
	})
}

// readAll reads a body with a Content-Length in one allocation of that
// size (io.ReadAll starts at 512 bytes, the largest allocation of a small
// call). net/http ends such a body at its length and, on reading its last
// byte, starts watching the connection, so a client that goes away
// cancels the call.
func readAll(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		return io.ReadAll(r.Body)
	}
	body := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, body)
	return body, err
}

// bodyReader is a request body read into memory.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

// rateKey is whom a request is charged to: the authenticated principal, or
// the client address when authentication is off (the caller behind a
// trusted proxy, listen.trusted_proxies, not the proxy).
func rateKey(r *http.Request) string {
	st := stateFrom(r.Context())
	if p := st.getIdentity().principal; p != "" {
		return "principal:" + p
	}
	return "address:" + st.client
}

// rateLimit charges tool calls to their principal's bucket. On MCP only
// tools/call and initialize messages count (an initialize opens a session;
// tools/list and notifications are free); an over-budget call gets HTTP
// 429 with Retry-After on every transport, before the MCP server sees it.
func (g *guards) rateLimit(transport string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if g.rate == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if transport != "rest" && !isCharged(stateFrom(r.Context())) {
				next.ServeHTTP(w, r)
				return
			}
			var ok bool
			var wait time.Duration
			if g.shared != nil {
				ok, wait = g.shared.allow(r.Context(), rateKey(r))
			} else {
				ok, wait = g.rate.allow(rateKey(r))
			}
			if ok {
				next.ServeHTTP(w, r)
				return
			}
			g.metrics.rateLimited.WithLabelValues(transport).Inc()
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeJSON(w, http.StatusTooManyRequests, registry.Fail(registry.CodeRateLimited,
				fmt.Sprintf("rate limit exceeded: %d tool calls per minute per caller (limits.rate_per_minute)", g.limits.RatePerMinute)).
				Suggest(fmt.Sprintf("Wait %d s (the Retry-After header), then retry.", secs)).Encode())
		})
	}
}

// isCharged reports whether a JSON-RPC POST body is charged: a
// tools/call or an initialize request, and any body that is not one
// well-formed message (trailing bytes, a batch, not JSON), which
// oneJSONValue then refuses. A malformed body thus costs its sender as
// much as a call, on every transport.
func isCharged(st *requestState) bool {
	if st == nil || len(st.body) == 0 {
		return false
	}
	method, ok := jsonrpcMethod(st.body)
	return !ok || method == string(mcp.MethodToolsCall) || method == string(mcp.MethodInitialize)
}

// oneJSONValue refuses an MCP POST (streamable HTTP or legacy SSE
// /message) whose body is not exactly one JSON value, with the JSON-RPC
// parse error, before the MCP server sees it: mcp-go's legacy handler
// would read the first value and ignore what follows. REST bodies are
// held to the same rule by registry.DecodeArgs. rateLimit, before this,
// has charged the body.
func oneJSONValue(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		if r.Method != http.MethodPost || st == nil || st.body == nil || jsontext.Value(st.body).IsValid() {
			next.ServeHTTP(w, r)
			return
		}
		writeJSON(w, http.StatusBadRequest, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body must be one JSON-RPC message, valid JSON with nothing after it"}}`))
	})
}

// restCallGuard applies the argument and exec limits to POST /call/{tool},
// and adds the RFC 6750 insufficient_scope challenge when the caller's
// token lacks the tool's scope (the registry answers 403 forbidden).
func (g *guards) restCallGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		name := chi.URLParam(r, "tool")
		st := stateFrom(ctx)
		st.call = &callInfo{st: st, argCap: g.argCap}
		caller := st.caller()
		// The caller's share is taken on the body's size before the body
		// is decoded: a call over it costs the server no decoding.
		share, res, retry := g.takeShare(ctx, st.callerKey, int64(len(st.body)), caller, name, nil)
		release := share
		if res == nil {
			// A bad body is the handler's to report; it reuses this decode.
			st.args, st.argsBad = registry.DecodeArgs(st.body)
			st.call.argv = st.args
			if def, ok := g.reg.Lookup(name); ok && g.auth != nil {
				if a := g.reg.AdmitCall(caller, def, st.args); a.Gate == registry.GateScope {
					w.Header().Set("WWW-Authenticate", g.auth.challenge(r, `error="insufficient_scope"`, fmt.Sprintf("scope=%q", a.Scope)))
				}
			}
			release, res, retry = g.preCall(ctx, share, caller, name, st.args)
		}
		if res != nil {
			status := statusFor(res)
			if retry > 0 {
				status = http.StatusTooManyRequests
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
			}
			writeJSON(w, status, res.Encode())
			return
		}
		// handleCall hands the release to the registry, which runs it
		// when the call's work ends; any other way out releases here.
		st.call.release = release
		defer func() {
			if st.call.release != nil {
				st.call.release()
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// admitMCPCall is the MCP twin of restCallGuard: toolHandler runs it for
// every tools/call that came through this server's HTTP front end
// (remoteCaller puts the guards into the request state). It also takes
// trace context from params._meta (traceparent, tracestate, baggage),
// which wins over the HTTP header: the client attached it to this very
// call. A refusal is the envelope to answer with.
func (g *guards) admitMCPCall(ctx context.Context, info *callInfo, caller registry.Caller, name string, req mcp.CallToolRequest) (context.Context, func(), *registry.Result) {
	if m := req.Params.Meta; m != nil && len(m.AdditionalFields) > 0 {
		carrier := propagation.MapCarrier{}
		for _, k := range []string{"traceparent", "tracestate", "baggage"} {
			if v, ok := m.AdditionalFields[k].(string); ok {
				carrier[k] = v
			}
		}
		if len(carrier) > 0 {
			httpSpan := trace.SpanFromContext(ctx)
			ctx = propagator.Extract(ctx, carrier)
			info.traced = true
			// The tool span joins the caller's trace; the request's span
			// stays in its own and links to it, so each trace leads to
			// the other.
			if meta := trace.SpanContextFromContext(ctx); meta.IsValid() && meta.TraceID() != httpSpan.SpanContext().TraceID() {
				httpSpan.AddLink(trace.Link{SpanContext: meta})
			}
		}
	}
	info.argCap = g.argCap
	// The body may be a session's message of any kind: the call's size
	// is measured from its arguments.
	release, res, _ := g.preCall(ctx, nil, caller, name, req.Params.Arguments)
	return ctx, release, res
}

// takeShare takes the caller's fair share for a call of name carrying
// size bytes (key is the caller, rateKey). args may be nil (REST takes
// the share before decoding). A refusal is reported to metrics and logs
// like any call and comes with the time to wait before retrying.
func (g *guards) takeShare(ctx context.Context, key string, size int64, caller registry.Caller, name string, args map[string]any) (func(), *registry.Result, time.Duration) {
	def, known := g.reg.Lookup(name)
	exec := known && def.ExecCode && g.reg.AdmitCall(caller, def, args).Allowed
	release, refusal, retry := g.share.acquire(ctx, key, size, exec)
	if refusal != nil {
		g.metrics.rateLimited.WithLabelValues(transportOf(caller)).Inc()
		g.report(ctx, caller, def, known, args, refusal)
	}
	return release, refusal, retry
}

// report tells metrics and logs of a call refused before the registry.
func (g *guards) report(ctx context.Context, caller registry.Caller, def *registry.ToolDef, known bool, args map[string]any, refusal *registry.Result) {
	rec := registry.CallRecord{Caller: caller, Code: refusal.Code}
	if known {
		rec.Tool, rec.Gated = def.Name, registry.Gated(def, args)
	}
	reportCall(ctx, rec, false)
}

// preCall checks a call's arguments, takes the caller's fair share
// (unless share is what it took already) and an exec slot for exec_code
// tools the caller may run. A refusal comes back as the envelope to send
// (reported to metrics and logs like any call), with retry > 0 when
// trying again later can succeed; the share is then returned. release
// returns what the call holds, once.
func (g *guards) preCall(ctx context.Context, share func(), caller registry.Caller, name string, args any) (release func(), res *registry.Result, retry time.Duration) {
	def, known := g.reg.Lookup(name)
	argMap, _ := args.(map[string]any) // anything else the registry refuses as invalid_input
	refuse := func(r *registry.Result, retry time.Duration) (func(), *registry.Result, time.Duration) {
		if share != nil {
			share()
		}
		g.report(ctx, caller, def, known, argMap, r)
		return func() {}, r, retry
	}
	size, r := g.argsRefusal(args)
	if r != nil {
		return refuse(r, 0)
	}
	if share == nil {
		var retry time.Duration
		if share, r, retry = g.takeShare(ctx, stateFrom(ctx).callerKey, size, caller, name, argMap); r != nil {
			return func() {}, r, retry
		}
	}
	if !known || !def.ExecCode || !g.reg.AdmitCall(caller, def, argMap).Allowed {
		return share, nil, 0
	}
	if slot, ok := g.exec.acquire(ctx); ok {
		return func() { slot(); share() }, nil, 0
	}
	return refuse(registry.Fail(registry.CodeRateLimited,
		fmt.Sprintf("tool '%s' runs code and %d such calls are already running (limits.exec_concurrency); retry shortly", def.Name, cap(g.exec.slots))).
		WithDetails(map[string]any{"limit": "limits.exec_concurrency"}).
		Suggest("Retry in a few seconds."), time.Second)
}

// argsRefusal is the invalid_input answer to arguments over
// limits.max_arg_depth or limits.max_arg_bytes, nil for others; size is
// their measured size.
func (g *guards) argsRefusal(args any) (size int64, refusal *registry.Result) {
	size, depth := measureArgs(args, g.limits.MaxArgDepth)
	switch {
	case depth > g.limits.MaxArgDepth:
		return size, registry.Fail(registry.CodeInvalidInput,
			fmt.Sprintf("arguments are nested deeper than %d levels (limits.max_arg_depth)", g.limits.MaxArgDepth))
	case size > g.limits.MaxArgBytes:
		return size, registry.Fail(registry.CodeInvalidInput,
			fmt.Sprintf("arguments are about %d bytes, over the %d-byte limit (limits.max_arg_bytes)", size, g.limits.MaxArgBytes)).
			Suggest("Pass large content as a file in the workspace and name its path instead.")
	}
	return size, nil
}

// measureArgs estimates the encoded size of decoded JSON arguments and
// their nesting depth (an object is depth 1). It stops descending past
// maxDepth, so a hostile document costs no more than the limit.
func measureArgs(v any, maxDepth int) (size int64, depth int) {
	switch x := v.(type) {
	case map[string]any:
		if maxDepth <= 0 {
			return 2, 1
		}
		size = 2
		for k, c := range x {
			s, d := measureArgs(c, maxDepth-1)
			size += int64(len(k)) + 4 + s
			depth = max(depth, d)
		}
		return size, depth + 1
	case []any:
		if maxDepth <= 0 {
			return 2, 1
		}
		size = 2
		for _, c := range x {
			s, d := measureArgs(c, maxDepth-1)
			size += s + 1
			depth = max(depth, d)
		}
		return size, depth + 1
	case string:
		return int64(len(x)) + 2, 0
	case float64:
		return int64(len(strconv.FormatFloat(x, 'g', -1, 64))), 0
	case json.Number:
		return int64(len(x)), 0
	case json.RawMessage:
		return int64(len(x)), 0
	case bool:
		return 5, 0
	case nil:
		return 4, 0
	default:
		b, _ := json.Marshal(x)
		return int64(len(b)), 0
	}
}

// execLimiter caps concurrently running exec_code tools.
type execLimiter struct {
	slots chan struct{}
	wait  time.Duration
}

// acquire takes a slot, waiting up to e.wait (or until ctx ends).
func (e *execLimiter) acquire(ctx context.Context) (release func(), ok bool) {
	release = func() { <-e.slots }
	select {
	case e.slots <- struct{}{}:
		return release, true
	default:
	}
	if e.wait <= 0 {
		return nil, false
	}
	timer := time.NewTimer(e.wait)
	defer timer.Stop()
	select {
	case e.slots <- struct{}{}:
		return release, true
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, false
}

// rateLimiter keeps a token bucket (an x/time/rate Limiter) per key:
// capacity perMinute, refilled continuously at perMinute per minute.
type rateLimiter struct {
	perSec   rate.Limit
	capacity int
	now      func() time.Time

	mu        sync.Mutex
	limiters  map[string]*rate.Limiter
	lastSweep time.Time
}

func newRateLimiter(perMinute int, now func() time.Time) *rateLimiter {
	return &rateLimiter{perSec: rate.Limit(float64(perMinute) / 60), capacity: perMinute, now: now, limiters: map[string]*rate.Limiter{}}
}

// allow takes one token from key's bucket; when empty it says how long
// until the next token.
func (l *rateLimiter) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweep(now)
	lim := l.limiters[key]
	if lim == nil {
		lim = rate.NewLimiter(l.perSec, l.capacity)
		l.limiters[key] = lim
	}
	if lim.AllowN(now, 1) {
		return true, 0
	}
	return false, time.Duration((1 - lim.TokensAt(now)) / float64(l.perSec) * float64(time.Second))
}

// exhausted reports, without taking a token, whether key's bucket is
// empty, and how long until it holds one again.
func (l *rateLimiter) exhausted(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.limiters[key]
	if lim == nil {
		return false, 0
	}
	now := l.now()
	if tokens := lim.TokensAt(now); tokens < 1 {
		return true, time.Duration((1 - tokens) / float64(l.perSec) * float64(time.Second))
	}
	return false, 0
}

// sweep drops buckets that have refilled completely (idle at least a
// minute), so memory follows active callers only. Holds mu.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	for k, lim := range l.limiters {
		if lim.TokensAt(now) >= float64(l.capacity) {
			delete(l.limiters, k)
		}
	}
}
