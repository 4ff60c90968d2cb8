package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/cursus-dev/cursus/registry"
)

// sessions is the stateful-mode session table, kept in front of mcp-go.
//
// mcp-go's own stateful mode keeps one session object per id, and every
// POST of that session and its GET stream take notifications from the one
// queue in it: a call's progress is split between its POST stream, the GET
// stream and concurrent calls, and the session serves anyone who knows the
// id. So mcp-go runs stateless for every request (each POST then has a
// session, and a queue, of its own), and this table adds what stateful mode
// promises: an id issued on initialize and bound to the caller who opened
// it; 404 for an unknown, ended or another caller's id; DELETE; an idle
// TTL; caps on how many are open; and GET streams that end with their
// session.
//
// With the shared store (shared, limits.shared_store: redis) the table is
// kept there instead, for every replica (see sharedSessions), and the
// open-sessions gauge counts none of it: each replica would count the
// sessions it opened, not those still open.
type sessions struct {
	shared *sharedSessions

	idleTTL time.Duration
	// unusedTTL ends sooner a session that has seen no request since its
	// initialize (a client that went away, or whose next request went to
	// another replica), so such leaks do not hold the caps for idleTTL.
	unusedTTL time.Duration
	open      *quota
	now       func() time.Time
	// changed reports sessions opened (+1) and ended (-1), for the gauge.
	changed func(delta float64)

	mu        sync.Mutex
	live      map[string]*session
	lastSweep time.Time
}

type session struct {
	owner    string
	lastUsed time.Time
	// used is set by the first request after initialize.
	used bool
	// streams is the number of open GET streams; a session with one is in
	// use however long it has been since a request.
	streams int
	// ctx ends when the session does, and its GET streams with it.
	ctx context.Context
	end context.CancelFunc
}

const sessionIDPrefix = "mcp-session-"

func newSessions(idleTTL, unusedTTL time.Duration, limits LimitsConfig, changed func(float64)) *sessions {
	if idleTTL <= 0 {
		idleTTL = 10 * time.Minute
	}
	if unusedTTL <= 0 || unusedTTL > idleTTL {
		unusedTTL = idleTTL
	}
	return &sessions{idleTTL: idleTTL, unusedTTL: unusedTTL, now: time.Now, changed: changed, live: map[string]*session{},
		open: newQuota("open MCP sessions", limits.MaxSessions, "limits.max_sessions",
			limits.MaxSessionsPerPrincipal, "limits.max_sessions_per_principal")}
}

// start opens a session owned by owner and returns its new,
// cryptographically random id, or the refusal when owner or the server
// has as many open as the caps allow.
func (t *sessions) start(owner string) (id string, refusal *registry.Result) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	id = sessionIDPrefix + hex.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.sweep(now)
	if refusal := t.open.take(owner); refusal != nil {
		return "", refusal
	}
	ctx, end := context.WithCancel(context.Background())
	t.live[id] = &session{owner: owner, lastUsed: now, ctx: ctx, end: end}
	t.changed(1)
	return id, nil
}

// lookup is owner's live session id, touched; nil when there is none (or
// it is another caller's: the answer does not tell which). Holds mu.
func (t *sessions) lookup(id, owner string) *session {
	now := t.now()
	t.sweep(now)
	s := t.live[id]
	if s == nil || s.owner != owner {
		return nil
	}
	s.lastUsed = now
	s.used = true
	return s
}

// use touches owner's session id and reports whether it is live.
func (t *sessions) use(id, owner string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lookup(id, owner) != nil
}

// attach opens a GET stream on owner's session id: ctx ends when parent
// does or the session ends, and release must be called when the stream
// closes.
func (t *sessions) attach(parent context.Context, id, owner string) (ctx context.Context, release func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.lookup(id, owner)
	if s == nil {
		return nil, nil, false
	}
	s.streams++
	ctx, end := until(parent, s.ctx)
	return ctx, func() {
		end()
		t.mu.Lock()
		s.streams--
		s.lastUsed = t.now()
		t.mu.Unlock()
	}, true
}

// close ends owner's session id and reports whether there was one.
func (t *sessions) close(id, owner string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lookup(id, owner) == nil {
		return false
	}
	t.remove(id)
	return true
}

// remove ends a session. Holds mu.
func (t *sessions) remove(id string) {
	s := t.live[id]
	s.end()
	delete(t.live, id)
	t.open.give(s.owner)
	t.changed(-1)
}

// sweep ends sessions idle for idleTTL, or unusedTTL when they have seen
// no request since initialize, at most every unusedTTL/2, so the cost is
// spread over requests and no goroutine is needed. Holds mu.
func (t *sessions) sweep(now time.Time) {
	if now.Sub(t.lastSweep) < t.unusedTTL/2 {
		return
	}
	t.lastSweep = now
	for id, s := range t.live {
		ttl := t.idleTTL
		if !s.used {
			ttl = t.unusedTTL
		}
		if s.streams == 0 && now.Sub(s.lastUsed) >= ttl {
			t.remove(id)
		}
	}
}

// admit applies the session rules to a stateful-mode /mcp request before
// mcp-go sees it. It returns the request to hand on, and release to call
// when it is done; ok is false when admit has answered itself.
func (t *sessions) admit(w http.ResponseWriter, r *http.Request, st *requestState) (next *http.Request, release func(), ok bool) {
	release = func() {}
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		// Revision 2026-07-28 has no sessions; mcp-go serves each such
		// request on its own.
		return r, release, true
	}
	owner := rateKey(r)
	id := r.Header.Get(mcpserver.HeaderKeySessionID)
	// mcp-go sees no id, so it gives each POST a session (and so a
	// notification queue) of its own; a GET gets the id back below.
	r.Header.Del(mcpserver.HeaderKeySessionID)
	table := t.table()
	if method, _ := jsonrpcMethod(st.body); r.Method == http.MethodPost && method == string(mcp.MethodInitialize) {
		id, refusal, err := table.start(r.Context(), owner)
		switch {
		case err != nil:
			writeStoreDown(w)
			return nil, nil, false
		case refusal != nil:
			writeOverQuota(w, refusal)
			return nil, nil, false
		}
		w.Header().Set(mcpserver.HeaderKeySessionID, id)
		return r, release, true
	}
	if id == "" {
		writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput,
			"this server keeps sessions (mcp.stateful): send the Mcp-Session-Id header that initialize returned").Encode())
		return nil, nil, false
	}
	notFound := func(err error) {
		if err != nil {
			writeStoreDown(w)
			return
		}
		writeJSON(w, http.StatusNotFound, registry.Fail(registry.CodeNotFound,
			"session not found: it ended, expired or was never opened by this caller; initialize again").Encode())
	}
	switch r.Method {
	case http.MethodDelete:
		if ok, err := table.end(r.Context(), id, owner); !ok {
			notFound(err)
			return nil, nil, false
		}
		w.WriteHeader(http.StatusOK)
		return nil, nil, false
	case http.MethodGet:
		ctx, release, ok, err := table.attach(r.Context(), id, owner)
		if !ok {
			notFound(err)
			return nil, nil, false
		}
		// The stream is the session's: mcp-go keys it by the id.
		r.Header.Set(mcpserver.HeaderKeySessionID, id)
		return r.WithContext(ctx), release, true
	default:
		if ok, err := table.use(r.Context(), id, owner); !ok {
			notFound(err)
			return nil, nil, false
		}
		return r, release, true
	}
}

// sessionTable is where admit keeps sessions: this replica's table, or
// the shared store's. err is the store's failure to answer.
type sessionTable interface {
	start(ctx context.Context, owner string) (id string, refusal *registry.Result, err error)
	use(ctx context.Context, id, owner string) (bool, error)
	attach(parent context.Context, id, owner string) (ctx context.Context, release func(), ok bool, err error)
	end(ctx context.Context, id, owner string) (bool, error)
}

func (t *sessions) table() sessionTable {
	if t.shared != nil {
		return t.shared
	}
	return localTable{t}
}

// localTable is this replica's table as a sessionTable.
type localTable struct{ t *sessions }

func (l localTable) start(_ context.Context, owner string) (string, *registry.Result, error) {
	id, refusal := l.t.start(owner)
	return id, refusal, nil
}

func (l localTable) use(_ context.Context, id, owner string) (bool, error) {
	return l.t.use(id, owner), nil
}

func (l localTable) attach(parent context.Context, id, owner string) (context.Context, func(), bool, error) {
	ctx, release, ok := l.t.attach(parent, id, owner)
	return ctx, release, ok, nil
}

func (l localTable) end(_ context.Context, id, owner string) (bool, error) {
	return l.t.close(id, owner), nil
}

// jsonrpcMethod is the method of a JSON-RPC message ("" for a response);
// ok is false when body is not one JSON object.
func jsonrpcMethod(body []byte) (method string, ok bool) {
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return "", false
	}
	return msg.Method, true
}
