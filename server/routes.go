package server

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// routes is the whole HTTP surface in one place.
func (s *Server) routes() http.Handler {
	cfg := s.deps.Config
	r := chi.NewRouter()
	r.Use(middleware.RequestID, recoverer(s.deps.Logger), checkOrigin(cfg.MCP.AllowedOrigins))

	r.Get("/healthz", s.handleHealthz())
	r.Get("/readyz", s.handleReadyz())
	r.Get("/openapi.yaml", handleOpenAPI())

	r.Group(func(r chi.Router) {
		r.Use(limitBody(cfg.Limits.MaxBodyBytes))
		r.With(remoteCaller("mcp")).Handle("/mcp", s.stream)
		if s.sse != nil {
			r.With(remoteCaller("sse")).Handle("/sse", s.sse.SSEHandler())
			r.With(remoteCaller("sse")).Handle("/message", s.sse.MessageHandler())
		}
		r.With(remoteCaller("rest")).Get("/tools", s.handleListTools())
		r.With(remoteCaller("rest")).Post("/call/{tool}", s.handleCall())
	})
	return r
}
