package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/cursus-dev/cursus/registry"
)

// streams keeps the long-lived SSE streams (legacy GET /sse, streamable
// GET /mcp): it caps how many are open, and ends them all when the server
// shuts down. net/http's Shutdown waits for every handler to return, and a
// stream's handler returns only when its client leaves; mcp-go's
// SSEServer.Shutdown closes sessions only of an HTTP server it started
// itself. Without this, one connected client holds shutdown for all of
// listen.shutdown_timeout.
type streams struct {
	open    *quota
	closing context.Context
	close   context.CancelFunc
}

func newStreams(limits LimitsConfig) *streams {
	ctx, cancel := context.WithCancel(context.Background())
	return &streams{
		open: newQuota("open SSE streams", limits.MaxStreams, "limits.max_streams",
			limits.MaxStreamsPerPrincipal, "limits.max_streams_per_principal"),
		closing: ctx, close: cancel,
	}
}

// track runs a GET (a stream) within the caps, under a context that ends
// at shutdown (at once, for one that arrives while the server is shutting
// down). Other methods pass.
func (s *streams) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		key := rateKey(r)
		if refusal := s.open.take(key); refusal != nil {
			writeOverQuota(w, refusal)
			return
		}
		defer s.open.give(key)
		ctx, release := until(r.Context(), s.closing)
		defer release()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// until is a context that ends when parent or done does; release frees
// what ties it to done.
func until(parent, done context.Context) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(done, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// quota counts what callers hold (open streams, sessions) against a cap
// in total and one per caller; a cap of 0 is none.
type quota struct {
	what             string
	total, perCaller int
	// The settings that set the caps, named in refusals.
	totalKey, perCallerKey string

	mu    sync.Mutex
	held  int
	byKey map[string]int
}

func newQuota(what string, total int, totalKey string, perCaller int, perCallerKey string) *quota {
	return &quota{what: what, total: total, totalKey: totalKey, perCaller: perCaller, perCallerKey: perCallerKey, byKey: map[string]int{}}
}

// take counts one more for caller key; over a cap it counts nothing and
// returns the refusal to answer with.
func (q *quota) take(key string) *registry.Result {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.perCaller > 0 && q.byKey[key] >= q.perCaller:
		return q.refusal(fmt.Sprintf("%d per caller (%s)", q.perCaller, q.perCallerKey))
	case q.total > 0 && q.held >= q.total:
		return q.refusal(fmt.Sprintf("%d on this server (%s)", q.total, q.totalKey))
	}
	q.held++
	q.byKey[key]++
	return nil
}

// give returns what key took.
func (q *quota) give(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.held--
	if q.byKey[key]--; q.byKey[key] <= 0 {
		delete(q.byKey, key)
	}
}

func (q *quota) refusal(limit string) *registry.Result {
	return registry.Fail(registry.CodeRateLimited, "too many "+q.what+": the limit is "+limit).
		Suggest("Close " + q.what + " you no longer use, or retry after the Retry-After header's seconds.")
}

// quotaRetryAfter is the Retry-After of a refusal over a quota: streams and
// sessions free up when their holders leave, which no clock predicts.
const quotaRetryAfter = 10

func writeOverQuota(w http.ResponseWriter, refusal *registry.Result) {
	w.Header().Set("Retry-After", strconv.Itoa(quotaRetryAfter))
	writeJSON(w, http.StatusTooManyRequests, refusal.Encode())
}
