// Package server is the HTTP front end: chi router, middleware, the MCP
// mount (streamable HTTP and legacy SSE), REST handlers, health and the
// OpenAPI document. Tools run only through registry.Call.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/cursus-dev/cursus/registry"
)

// Deps is what the HTTP server needs.
type Deps struct {
	Config   Config
	Registry *registry.Registry
	Prompts  []registry.Prompt
	// Resources are served as MCP resources (read-only, per caller).
	Resources []registry.Resource
	Logger    zerolog.Logger
	// Tracing provides the spans of HTTP requests and tool calls; nil
	// means the global OpenTelemetry provider (a no-op unless set).
	Tracing trace.TracerProvider
	// PodState labels cursus_build_info (nil: empty labels).
	PodState func() PodState
}

// Server is the HTTP handler plus the pieces that need shutting down.
type Server struct {
	deps    Deps
	handler http.Handler
	mcp     *mcpserver.MCPServer
	stream  *mcpserver.StreamableHTTPServer
	sse     *mcpserver.SSEServer
	auth    *authenticator // its JWKS refresh stops at shutdown
	// share is the per-caller fair share of tool calls (see fairShare).
	share *fairShare
	// rateStore is the shared rate limit's store client (nil without
	// limits.shared_store); closed at shutdown.
	rateStore *sharedRate
	// sessions is the stateful-mode session table (nil when stateless).
	sessions *sessions
	streams  *streams
	// sseOwners binds legacy SSE sessions to their callers.
	sseOwners *sseOwners
	// shared keeps stateful sessions and SSE stream routing in the shared
	// store (nil without limits.shared_store, or with neither in use).
	shared *sharedSessions
	// toolsets are the namespaces the deployment offers (nil: all).
	toolsets toolsets
	ready    atomic.Bool
}

// NewServer builds the HTTP handler for the given dependencies.
func NewServer(deps Deps) *Server {
	s := &Server{deps: deps, streams: newStreams(deps.Config.Limits), toolsets: deploymentToolsets(deps.Registry, deps.Config.MCP)}
	logger := slog.New(zerolog.NewSlogHandler(deps.Logger))
	s.mcp = NewMCPServer(deps)
	if cfg := deps.Config; cfg.Limits.SharedStore == sharedStoreRedis && (cfg.MCP.Stateful || cfg.MCP.LegacySSE) {
		s.shared = newSharedSessions(cfg, deps.Logger)
	}
	streamOpts := []mcpserver.StreamableHTTPOption{
		mcpserver.WithStreamableHTTPLogger(logger),
		mcpserver.WithHeartbeatInterval(deps.Config.MCP.HeartbeatPeriod),
		// Our own Origin/Host middleware guards /mcp; mcp-go's loopback
		// Host check would also refuse a same-pod proxy forwarding the
		// original Host.
		mcpserver.WithDisableLocalhostProtection(true),
		// Stateless in both modes, so that every POST has a notification
		// queue of its own; stateful mode's sessions are ours (sessions.go).
		mcpserver.WithStateLess(true),
	}
	if !deps.Config.MCP.Stateful {
		// A standalone GET stream would be one session (id "") shared by
		// every caller, and nothing is sent there: GET answers 405, which
		// the spec allows.
		streamOpts = append(streamOpts, mcpserver.WithDisableStreaming(true))
	}
	s.stream = mcpserver.NewStreamableHTTPServer(s.mcp, streamOpts...)
	if deps.Config.MCP.LegacySSE {
		s.sseOwners = newSSEOwners()
		s.sseOwners.shared = s.shared
		sseOpts := []mcpserver.SSEOption{
			mcpserver.WithKeepAlive(true),
			mcpserver.WithSessionIDGenerator(s.sseOwners.generate),
		}
		if deps.Config.MCP.BaseURL != "" {
			sseOpts = append(sseOpts, mcpserver.WithBaseURL(deps.Config.MCP.BaseURL))
		}
		s.sse = mcpserver.NewSSEServer(s.mcp, sseOpts...)
	}
	s.handler = s.routes()
	if s.shared != nil {
		s.shared.run()
	}
	s.ready.Store(true)
	return s
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handleMCP hands a request to mcp-go's streamable HTTP transport through
// its Handle entry point, with the body readBody already holds (ServeHTTP
// would read it a second time). Handle leaves out mcp-go's CORS,
// DNS-rebinding and protected-resource handling, none of which we turn on:
// checkOrigin and our own routes do those jobs.
func (s *Server) handleMCP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		rw, ok := w.(mcpserver.HTTPResponseWriter)
		if st == nil || !ok {
			// Not behind observeHTTP and readBody: mcp-go reads the body.
			s.stream.ServeHTTP(w, r)
			return
		}
		if s.sessions != nil {
			var release func()
			if r, release, ok = s.sessions.admit(w, r, st); !ok {
				return
			}
			defer release()
		}
		s.stream.Handle(rw, &mcpserver.HTTPRequest{
			Method: r.Method, URL: r.URL, Header: r.Header, Body: st.body, Context: r.Context(),
		})
	})
}

// MCP is the underlying MCP server (for the stdio transport).
func (s *Server) MCP() *mcpserver.MCPServer { return s.mcp }

// httpServer is the http.Server that ListenAndServe runs s on. No
// WriteTimeout: it would cut SSE streams and long calls. ReadTimeout bounds
// reading a whole request (headers and body) and ends with it: net/http
// clears the connection's read deadline once a body has been read to its
// end (or at once when there is none), so a stream or a long call runs on.
func (s *Server) httpServer() *http.Server {
	limits := s.deps.Config.Limits
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: limits.ReadHeaderTimout,
		ReadTimeout:       limits.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
	}
}

// ListenAndServe serves on cfg.Listen.Addr until ctx is cancelled, then
// fails /readyz, goes on serving for listen.drain_delay, and drains
// in-flight requests for up to the shutdown timeout. ready, if not
// nil, receives the bound address once the listener is open.
func (s *Server) ListenAndServe(ctx context.Context, ready chan<- net.Addr) error {
	cfg := s.deps.Config
	ln, err := net.Listen("tcp", cfg.Listen.Addr)
	if err != nil {
		return err
	}
	srv := s.httpServer()
	if ready != nil {
		ready <- ln.Addr()
	}
	s.deps.Logger.Info().Str("addr", ln.Addr().String()).Msg("listening")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// /readyz fails from now on; until the endpoint is gone from every
	// load balancer, requests keep arriving and are served as usual.
	s.ready.Store(false)
	if d := cfg.Listen.DrainDelay; d > 0 {
		s.deps.Logger.Info().Dur("drain_delay", d).Msg("shutting down: not ready; still serving for listen.drain_delay")
		delay := time.NewTimer(d)
		select {
		case <-delay.C:
		case err := <-errc:
			delay.Stop()
			return err
		}
	}
	s.deps.Logger.Info().Msg("shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Listen.ShutdownTimeout)
	defer cancel()
	// SSE streams last until their client leaves: end them, or Shutdown
	// would wait for them until the timeout.
	s.streams.close()
	_ = s.stream.Shutdown(shutdownCtx)
	// After the drain: requests still in flight may need the JWKS.
	defer s.auth.close()
	if s.rateStore != nil {
		defer s.rateStore.close()
	}
	if s.shared != nil {
		defer s.shared.close()
	}
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
