package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"
)

// sessionIDs is the stateful-mode session id manager. mcp-go's own
// (InsecureStatefulSessionIdManager) remembers every terminated id forever,
// so a server under session churn grows without bound (about 370 bytes a
// session, measured). This one forgets a terminated id after retention: a
// client still sending it then gets "session not found", which is the same
// 404 as "session terminated".
type sessionIDs struct {
	retention time.Duration
	now       func() time.Time

	mu         sync.Mutex
	live       map[string]struct{}
	terminated map[string]time.Time
	lastSweep  time.Time
}

const sessionIDPrefix = "mcp-session-"

var errUnknownSession = errors.New("session not found")

func newSessionIDs(retention time.Duration) *sessionIDs {
	if retention <= 0 {
		retention = 10 * time.Minute
	}
	return &sessionIDs{retention: retention, now: time.Now,
		live: map[string]struct{}{}, terminated: map[string]time.Time{}}
}

// Generate returns a new cryptographically random session id.
func (m *sessionIDs) Generate() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	id := sessionIDPrefix + hex.EncodeToString(b[:])
	m.mu.Lock()
	m.live[id] = struct{}{}
	m.mu.Unlock()
	return id
}

// Validate reports whether id is live, terminated (recently) or unknown.
func (m *sessionIDs) Validate(id string) (isTerminated bool, err error) {
	if !strings.HasPrefix(id, sessionIDPrefix) {
		return false, errUnknownSession
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.terminated[id]; ok {
		return true, nil
	}
	if _, ok := m.live[id]; !ok {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate ends a session (client DELETE or the idle sweeper).
func (m *sessionIDs) Terminate(id string) (isNotAllowed bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.live[id]; ok {
		delete(m.live, id)
		m.terminated[id] = now
	}
	if now.Sub(m.lastSweep) >= m.retention/2 {
		m.lastSweep = now
		for tid, at := range m.terminated {
			if now.Sub(at) >= m.retention {
				delete(m.terminated, tid)
			}
		}
	}
	return false, nil
}
