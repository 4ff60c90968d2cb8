package server

import (
	"context"
	"net/http"

	"github.com/cursus-dev/cursus/registry"
	"github.com/go-chi/chi/v5"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes is the whole HTTP surface in one place.
func (s *Server) routes() http.Handler {
	cfg := s.deps.Config
	tel := newTelemetry(s.deps)
	tel.metrics.watchAbandoned(s.deps.Registry)
	auth := newAuthenticator(cfg, s.deps.Logger)
	s.auth = auth
	g := newGuards(s.deps.Registry, cfg, auth, tel.metrics, s.deps.Logger)
	s.rateStore = g.shared
	s.share = g.share

	if cfg.MCP.Stateful {
		s.sessions = newSessions(cfg.MCP.SessionIdleTTL, cfg.MCP.SessionUnusedTTL, cfg.Limits, tel.metrics.mcpSessions.Add)
		s.sessions.shared = s.shared
	}
	if s.shared != nil && s.sse != nil {
		// A message another replica forwards here passed that replica's
		// authentication, ownership check, rate limit and oneJSONValue.
		forwarded := g.remoteCaller("sse")(s.selectToolsets(true)(s.sse.MessageHandler()))
		s.shared.deliver = func(msg forwardedMessage) { runForwarded(tel, forwarded, msg) }
	}
	// NewMCPServer always installs hooks; these count legacy SSE sessions
	// (streamable HTTP ones are counted by s.sessions) and give the HTTP
	// request line the JSON-RPC method and error.
	if hooks := s.mcp.GetHooks(); hooks != nil {
		hooks.AddOnRegisterSession(func(ctx context.Context, cs mcpserver.ClientSession) {
			if !isStreamableSession(cs) {
				tel.metrics.mcpSessions.Inc()
				if st := stateFrom(ctx); s.shared != nil && st != nil && st.transport == "sse" {
					s.shared.sseOpened(ctx, cs.SessionID(), st.callerKey)
				}
			}
		})
		hooks.AddOnUnregisterSession(func(_ context.Context, cs mcpserver.ClientSession) {
			if !isStreamableSession(cs) {
				tel.metrics.mcpSessions.Dec()
				if s.shared != nil {
					s.shared.sseClosed(cs.SessionID())
				}
			}
		})
		hooks.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any) {
			if st := stateFrom(ctx); st != nil {
				st.noteMCP(string(method), nil)
			}
		})
		hooks.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, err error) {
			if st := stateFrom(ctx); st != nil {
				st.noteMCP(string(method), err)
			}
		})
	}

	r := chi.NewRouter()
	r.Use(tel.observeHTTP, recoverer(s.deps.Logger), checkOrigin(cfg.MCP.AllowedOrigins))
	// Unknown routes and methods answer with an envelope too, so a client
	// that reads JSON (e.g. POST /call/ without a tool) gets a clear error.
	r.NotFound(handleNoRoute(http.StatusNotFound, registry.CodeNotFound, "no such route"))
	r.MethodNotAllowed(handleNoRoute(http.StatusMethodNotAllowed, registry.CodeInvalidInput, "method not allowed"))

	// Probes and metrics stay unauthenticated.
	r.Get("/healthz", s.handleHealthz())
	r.Get("/readyz", s.handleReadyz())
	r.Get("/openapi.yaml", handleOpenAPI())
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(tel.metrics.registry, promhttp.HandlerOpts{Registry: tel.metrics.registry}))
	if auth != nil && auth.usesOAuth() {
		// RFC 9728: the root form and the form with the MCP path inserted.
		r.Get(protectedResourcePath, auth.handleProtectedResource())
		r.Get(protectedResourcePath+"/mcp", auth.handleProtectedResource())
	} else if auth != nil {
		r.Post(registrationPath, auth.handleNoRegistration())
	}

	r.Group(func(r chi.Router) {
		r.Use(limitBody(cfg.Limits.MaxBodyBytes), auth.middleware(tel.metrics), g.readBody)
		mcpRoute := r.With(g.remoteCaller("mcp"), g.rateLimit("mcp"), oneJSONValue, s.selectToolsets(true), s.streams.track)
		mcpRoute.Handle("/mcp", s.handleMCP())
		// The remote GitHub MCP server's form of a toolset selection.
		mcpRoute.Handle("/mcp/x/{toolsets}", s.handleMCP())
		if s.sse != nil {
			r.With(g.remoteCaller("sse"), s.selectToolsets(true), s.streams.track).Handle("/sse", s.sse.SSEHandler())
			r.With(g.remoteCaller("sse"), s.sseOwners.check, g.rateLimit("sse"), oneJSONValue, s.selectToolsets(true)).Handle("/message", s.handleMessage())
		}
		r.With(g.remoteCaller("rest"), s.selectToolsets(false)).Get("/tools", s.handleListTools())
		r.With(g.remoteCaller("rest"), g.rateLimit("rest"), s.selectToolsets(false), g.restCallGuard).Post("/call/{tool}", s.handleCall())
	})
	return r
}

// isStreamableSession tells mcp-go's streamable HTTP sessions (a GET
// stream's) from the legacy SSE ones.
func isStreamableSession(cs mcpserver.ClientSession) bool {
	_, ok := cs.(mcpserver.SessionWithStreamableHTTPConfig)
	return ok
}
