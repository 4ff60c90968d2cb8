package server

import (
	"context"
	"net/http"
)

// streams keeps the long-lived SSE streams (legacy GET /sse, streamable
// GET /mcp) and ends them all when the server shuts down. net/http's
// Shutdown waits for every handler to return, and a stream's handler
// returns only when its client leaves; mcp-go's SSEServer.Shutdown closes
// sessions only of an HTTP server it started itself. Without this, one
// connected client holds shutdown for all of listen.shutdown_timeout.
type streams struct {
	closing context.Context
	close   context.CancelFunc
}

func newStreams() *streams {
	ctx, cancel := context.WithCancel(context.Background())
	return &streams{closing: ctx, close: cancel}
}

// track runs a GET (a stream) under a context that ends at shutdown (at
// once, for one that arrives while the server is shutting down). Other
// methods pass.
func (s *streams) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		stop := context.AfterFunc(s.closing, cancel)
		defer func() {
			stop()
			cancel()
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
