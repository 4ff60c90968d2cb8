package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus/registry"
)

// sharedSessions keeps stateful MCP sessions and the routing of legacy SSE
// streams in the shared store (limits.shared_store: redis), so that a
// round-robin load balancer may send any request to any replica.
//
// Stateful streamable HTTP sessions are restored on the replica a request
// lands on, not forwarded to the one that opened them. mcp-go serves every
// request statelessly in both modes (see sessions), so a session's whole
// state is our record of it: its owner, whether it has seen a request
// since initialize, and when it expires. With that record in Redis every
// replica checks and touches it as its own table would; there is no
// per-session protocol state (client info, log level, a notification
// queue) held between requests, so forwarding would add a hop and a
// replica a session dies with, and buy nothing. Only a GET stream lives on
// one replica: it ends when its session does, told by a broadcast that
// DELETE (on any replica) publishes, or by this replica's periodic touch
// of the sessions it streams finding the record gone. The caps
// (limits.max_sessions, limits.max_sessions_per_principal) are counted in
// Redis across every replica.
//
// A legacy SSE stream is one HTTP response held by one replica, so there a
// POST /message must reach the holder: forwarding is the only design. The
// holder records each stream it opens (owner and replica) in Redis while
// it is open, and subscribes to a channel of its own. A replica that gets
// a POST for a stream it does not hold checks the caller against the
// record (the owner binding sseOwners gives local streams), publishes the
// message with the caller's identity on the holder's channel and answers
// 202 as mcp-go does; the holder runs it through its own /message handler,
// and the reply goes out on the stream. Redis pub/sub delivers at most
// once: a message published while the holder's subscription is
// reconnecting is lost, as one sent to a replica that dies is.
//
// The store is trusted as the rate limit's is: a message on a replica's
// channel runs as the identity it names, and whoever can write to Redis
// can open or end sessions.
type sharedSessions struct {
	client             *redis.Client
	prefix             string
	replica            string // this replica's random id, naming its channel
	timeout            time.Duration
	idleTTL, unusedTTL time.Duration
	maxTotal           int
	maxPerCaller       int
	log                zerolog.Logger
	// deliver runs a message forwarded to this replica through its own
	// /message handler (set by routes).
	deliver func(forwardedMessage)

	mu      sync.Mutex
	streams map[string]*localStreams // stateful session id: its GET streams here
	sse     map[string]string        // SSE stream id held here: its owner

	stop      context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// localStreams are one session's GET streams on this replica: ctx ends
// when the session does.
type localStreams struct {
	owner string
	n     int
	ctx   context.Context
	end   context.CancelFunc
}

// forwardedMessage is a POST /message sent on to the replica holding its
// stream, with what the receiving replica learnt of the caller.
type forwardedMessage struct {
	Session   string              `json:"session"`
	RequestID string              `json:"request_id"`
	Principal string              `json:"principal,omitempty"`
	Scopes    []string            `json:"scopes,omitempty"`
	Client    string              `json:"client"`
	Query     string              `json:"query"`
	Header    map[string][]string `json:"header,omitempty"`
	Body      []byte              `json:"body"`
}

// forwardedHeaders are the request headers a forwarded message keeps:
// what the handler reads (protocol version, toolsets) and the trace
// context; never the credentials.
var forwardedHeaders = []string{"Mcp-Protocol-Version", toolsetsHeaderKey, "Traceparent", "Tracestate"}

// sseRecordTTL is how long an SSE stream's record outlives its holder's
// last refresh (every sharedRefresh at most).
const sseRecordTTL = time.Minute

// errStoreDown is a session operation the shared store did not answer.
var errStoreDown = errors.New("session store unreachable")

func newSharedSessions(cfg Config, log zerolog.Logger) *sharedSessions {
	idle, unused := cfg.MCP.SessionIdleTTL, cfg.MCP.SessionUnusedTTL
	if idle <= 0 {
		idle = 10 * time.Minute
	}
	if unused <= 0 || unused > idle {
		unused = idle
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	s := &sharedSessions{
		client: newRedisClient(cfg.Redis, log), prefix: cfg.Redis.KeyPrefix, replica: hex.EncodeToString(b[:]),
		timeout: cfg.Redis.DialTimeout + cfg.Redis.Timeout, idleTTL: idle, unusedTTL: unused,
		maxTotal: cfg.Limits.MaxSessions, maxPerCaller: cfg.Limits.MaxSessionsPerPrincipal, log: log,
		streams: map[string]*localStreams{}, sse: map[string]string{},
	}
	return s
}

// run subscribes to this replica's channel and the session-ended
// broadcast, and refreshes what this replica holds, until close. The
// subscription is confirmed (or has failed, and go-redis retries it)
// before run returns, so streams opened afterwards are reachable.
func (s *sharedSessions) run() {
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	ps := s.client.Subscribe(ctx, s.endedChannel(), s.replicaChannel())
	confirm, cancel := context.WithTimeout(ctx, 5*s.timeout)
	if _, err := ps.Receive(confirm); err != nil {
		s.log.Warn().Err(err).Msg("session store: subscribing failed; retrying in the background")
	}
	cancel()
	msgs := ps.Channel(redis.WithChannelSize(1024))
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				s.receive(m)
			}
		}
	}()
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.refreshEvery())
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				s.refresh(ctx)
			}
		}
	}()
}

// refreshEvery is how often the records of what this replica holds are
// touched: often enough that a session streaming here never reaches its
// unused TTL, and an SSE record never its sseRecordTTL.
func (s *sharedSessions) refreshEvery() time.Duration {
	return max(10*time.Millisecond, min(s.unusedTTL/3, sseRecordTTL/3))
}

// close stops run and closes the client; later calls do nothing.
func (s *sharedSessions) close() {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			s.stop()
		}
		s.wg.Wait()
		_ = s.client.Close()
	})
}

func (s *sharedSessions) sessionKey(id string) string { return s.prefix + "session:" + id }
func (s *sharedSessions) allKey() string              { return s.prefix + "sessions" }
func (s *sharedSessions) ownerKey(owner string) string {
	return s.prefix + "sessions:" + owner
}
func (s *sharedSessions) sseKey(id string) string { return s.prefix + "sse:" + id }
func (s *sharedSessions) endedChannel() string    { return s.prefix + "sessions:ended" }
func (s *sharedSessions) replicaChannel() string  { return s.channelOf(s.replica) }
func (s *sharedSessions) channelOf(replica string) string {
	return s.prefix + "replica:" + replica
}

func (s *sharedSessions) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(parent), s.timeout)
}

// keepLua defines keep, the tail startScript and touchScript share: the
// session record (KEYS[1]) expires ttl ms from now (ARGV[1]), its member
// id in the all and owner's sets (KEYS[2], KEYS[3]) is scored with that
// expiry, and the owner's set itself lives ownerTTL ms.
const keepLua = `
local function keep(ttl, id, ownerTTL)
  redis.call('PEXPIRE', KEYS[1], ttl)
  local exp = tonumber(ARGV[1]) + tonumber(ttl)
  redis.call('ZADD', KEYS[2], exp, id)
  redis.call('ZADD', KEYS[3], exp, id)
  redis.call('PEXPIRE', KEYS[3], ownerTTL)
end
`

// startScript opens a session: it drops expired members from the session
// sets, checks the caps, and writes the record with the unused TTL. Each
// set member's score is the session's expiry (unix ms).
// KEYS: session, all, owner's. ARGV: now, ttl, idle, total cap,
// per-caller cap, owner, id. 1/2: over the per-caller/total cap.
var startScript = redis.NewScript(keepLua + `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
if tonumber(ARGV[5]) > 0 and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return 1 end
if tonumber(ARGV[4]) > 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
redis.call('HSET', KEYS[1], 'owner', ARGV[6], 'used', '0')
keep(ARGV[2], ARGV[7], ARGV[3])
return 0
`)

// touchScript is the owner's use of a session: it now expires idle after
// its last use. 0: no such session of this owner.
// KEYS: session, all, owner's. ARGV: now, idle, owner, id.
var touchScript = redis.NewScript(keepLua + `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'used', '1')
keep(ARGV[2], ARGV[4], ARGV[2])
return 1
`)

// endScript ends the owner's session everywhere. 0: no such session of
// this owner. KEYS: session, all, owner's, ended channel. ARGV: owner, id.
var endScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('PUBLISH', KEYS[4], ARGV[2])
return 1
`)

func ms(d time.Duration) int64 { return d.Milliseconds() }

// start opens a session owned by owner, or says which cap refuses it.
func (s *sharedSessions) start(parent context.Context, owner string) (string, *registry.Result, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := sessionIDPrefix + hex.EncodeToString(b[:])
	ctx, cancel := s.ctx(parent)
	defer cancel()
	n, err := startScript.Run(ctx, s.client, []string{s.sessionKey(id), s.allKey(), s.ownerKey(owner)},
		time.Now().UnixMilli(), ms(s.unusedTTL), ms(s.idleTTL), s.maxTotal, s.maxPerCaller, owner, id).Int()
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", errStoreDown, err)
	}
	switch n {
	case 1:
		return "", sessionCapRefusal(fmt.Sprintf("%d per caller across the replicas (limits.max_sessions_per_principal)", s.maxPerCaller)), nil
	case 2:
		return "", sessionCapRefusal(fmt.Sprintf("%d across the replicas (limits.max_sessions)", s.maxTotal)), nil
	}
	return id, nil, nil
}

func sessionCapRefusal(limit string) *registry.Result {
	return (&quota{what: "open MCP sessions"}).refusal(limit)
}

// use touches owner's session id and reports whether it is live.
func (s *sharedSessions) use(parent context.Context, id, owner string) (bool, error) {
	ctx, cancel := s.ctx(parent)
	defer cancel()
	n, err := touchScript.Run(ctx, s.client, []string{s.sessionKey(id), s.allKey(), s.ownerKey(owner)},
		time.Now().UnixMilli(), ms(s.idleTTL), owner, id).Int()
	if err != nil {
		return false, fmt.Errorf("%w: %w", errStoreDown, err)
	}
	return n == 1, nil
}

// attach opens a GET stream here on owner's session id: ctx ends when
// parent does or the session ends on any replica.
func (s *sharedSessions) attach(parent context.Context, id, owner string) (context.Context, func(), bool, error) {
	if ok, err := s.use(parent, id, owner); !ok || err != nil {
		return nil, nil, false, err
	}
	s.mu.Lock()
	l := s.streams[id]
	if l == nil {
		ctx, end := context.WithCancel(context.Background())
		l = &localStreams{owner: owner, ctx: ctx, end: end}
		s.streams[id] = l
	}
	l.n++
	s.mu.Unlock()
	ctx, end := until(parent, l.ctx)
	return ctx, func() {
		end()
		s.mu.Lock()
		if l.n--; l.n == 0 && s.streams[id] == l {
			delete(s.streams, id)
			l.end()
		}
		s.mu.Unlock()
		// The stream's end is the session's last use.
		_, _ = s.use(context.Background(), id, owner)
	}, true, nil
}

// end ends owner's session id on every replica and reports whether
// there was one.
func (s *sharedSessions) end(parent context.Context, id, owner string) (bool, error) {
	ctx, cancel := s.ctx(parent)
	defer cancel()
	n, err := endScript.Run(ctx, s.client, []string{s.sessionKey(id), s.allKey(), s.ownerKey(owner), s.endedChannel()}, owner, id).Int()
	if err != nil {
		return false, fmt.Errorf("%w: %w", errStoreDown, err)
	}
	if n == 1 {
		s.ended(id) // without waiting for the broadcast to come back
	}
	return n == 1, nil
}

// ended ends the GET streams this replica holds on session id.
func (s *sharedSessions) ended(id string) {
	s.mu.Lock()
	l := s.streams[id]
	delete(s.streams, id)
	s.mu.Unlock()
	if l != nil {
		l.end()
	}
}

// sseRecord is a legacy SSE stream's entry in the store.
type sseRecord struct {
	Owner   string `json:"owner"`
	Replica string `json:"replica"`
}

// sseOpened records a stream this replica holds, before its client is
// told where to post, so that a POST on any replica finds it.
func (s *sharedSessions) sseOpened(parent context.Context, id, owner string) {
	s.mu.Lock()
	s.sse[id] = owner
	s.mu.Unlock()
	if err := s.putSSE(parent, id, owner); err != nil {
		// The refresh writes it when the store is back; until then posts
		// through other replicas get 503.
		s.log.Warn().Err(err).Msg("session store: could not record an SSE stream")
	}
}

func (s *sharedSessions) putSSE(parent context.Context, id, owner string) error {
	rec, _ := json.Marshal(sseRecord{Owner: owner, Replica: s.replica})
	ctx, cancel := s.ctx(parent)
	defer cancel()
	return s.client.Set(ctx, s.sseKey(id), rec, sseRecordTTL).Err()
}

// sseClosed forgets a stream this replica held.
func (s *sharedSessions) sseClosed(id string) {
	s.mu.Lock()
	delete(s.sse, id)
	s.mu.Unlock()
	ctx, cancel := s.ctx(context.Background())
	defer cancel()
	_ = s.client.Del(ctx, s.sseKey(id)).Err()
}

// sseHolder is the replica holding SSE stream id when owner opened it;
// "" when there is no such stream of owner's.
func (s *sharedSessions) sseHolder(parent context.Context, id, owner string) (string, error) {
	ctx, cancel := s.ctx(parent)
	defer cancel()
	raw, err := s.client.Get(ctx, s.sseKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", errStoreDown, err)
	}
	var rec sseRecord
	if json.Unmarshal(raw, &rec) != nil || subtle.ConstantTimeCompare([]byte(rec.Owner), []byte(owner)) != 1 {
		return "", nil
	}
	return rec.Replica, nil
}

// forward publishes msg on replica's channel; false when no replica
// listens there (it has gone, and its streams with it).
func (s *sharedSessions) forward(parent context.Context, replica string, msg forwardedMessage) (bool, error) {
	payload, _ := json.Marshal(msg)
	ctx, cancel := s.ctx(parent)
	defer cancel()
	n, err := s.client.Publish(ctx, s.channelOf(replica), payload).Result()
	if err != nil {
		return false, fmt.Errorf("%w: %w", errStoreDown, err)
	}
	return n > 0, nil
}

// receive handles one message of this replica's subscription.
func (s *sharedSessions) receive(m *redis.Message) {
	if m.Channel == s.endedChannel() {
		s.ended(m.Payload)
		return
	}
	var msg forwardedMessage
	if err := json.Unmarshal([]byte(m.Payload), &msg); err != nil {
		s.log.Warn().Err(err).Msg("session store: unreadable forwarded message")
		return
	}
	s.deliver(msg)
}

// refresh touches the sessions streaming here (ending the streams of any
// that ended unseen) and the records of the SSE streams held here.
func (s *sharedSessions) refresh(ctx context.Context) {
	s.mu.Lock()
	owners := make(map[string]string, len(s.streams))
	for id, l := range s.streams {
		owners[id] = l.owner
	}
	sse := make(map[string]string, len(s.sse))
	for id, owner := range s.sse {
		sse[id] = owner
	}
	s.mu.Unlock()
	for id, owner := range owners {
		if ok, err := s.use(ctx, id, owner); err == nil && !ok {
			s.ended(id)
		}
	}
	for id, owner := range sse {
		c, cancel := s.ctx(ctx)
		ok, err := s.client.Expire(c, s.sseKey(id), sseRecordTTL).Result()
		cancel()
		if err == nil && !ok {
			_ = s.putSSE(ctx, id, owner)
		}
	}
}

// forwardMessage is the message of POST /message request r as the holder
// of its stream is to run it.
func forwardMessage(r *http.Request) forwardedMessage {
	st := stateFrom(r.Context())
	id := st.getIdentity()
	msg := forwardedMessage{
		Session: r.URL.Query().Get("sessionId"), RequestID: st.requestID,
		Principal: id.principal, Scopes: id.scopes, Client: st.client,
		Query: r.URL.RawQuery, Body: st.body, Header: map[string][]string{},
	}
	for _, h := range forwardedHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			msg.Header[h] = v
		}
	}
	return msg
}

// runForwarded runs msg, forwarded from another replica, through h (this
// replica's /message handler after the checks the receiving replica made:
// authentication, ownership, rate limit, one JSON value) as the caller
// that replica found.
func runForwarded(tel *telemetry, h http.Handler, msg forwardedMessage) {
	st := &requestState{tel: tel, requestID: msg.RequestID, client: msg.Client, sessionID: msg.Session, body: msg.Body}
	if msg.Principal != "" {
		st.setIdentity(identity{principal: msg.Principal, scopes: msg.Scopes})
	}
	w := &discardResponse{header: http.Header{}}
	st.response.ResponseWriter = w
	r, _ := http.NewRequestWithContext(context.WithValue(context.Background(), requestStateKey{}, st),
		http.MethodPost, "/message?"+msg.Query, bytes.NewReader(msg.Body))
	for h, v := range msg.Header {
		r.Header[h] = v
	}
	st.protocolVersion = r.Header.Get("Mcp-Protocol-Version")
	r.Header.Set(requestIDHeader, msg.RequestID)
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(&st.response, r)
	if w.status != http.StatusAccepted {
		tel.log.Warn().Str("request_id", msg.RequestID).Int("status", w.status).
			Msg("a message forwarded to this replica's SSE stream was not accepted (the stream has ended?)")
	}
}

// discardResponse is the response of a forwarded message, which nobody
// reads: the caller has had its 202, and the reply goes on the stream.
type discardResponse struct {
	header http.Header
	status int
}

func (d *discardResponse) Header() http.Header         { return d.header }
func (d *discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardResponse) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

// writeStoreDown answers a request the session store could not serve.
func writeStoreDown(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(1))
	writeJSON(w, http.StatusServiceUnavailable, registry.Fail(registry.CodeInternal,
		"the session store (limits.shared_store) is unreachable; retry shortly").Encode())
}
