package workflows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// SpentStore remembers spent run tokens by SpentID, so each token moves
// its run once: a submission that ran a gate spends the token it came
// with, and the token it returns is the only one that goes on. A replayed
// earlier token (to retry a stage that passed, or to win back fix
// attempts) is refused. Spent is the one in this process's memory; a store
// shared by every replica (the server's, on Redis) refuses a token spent
// on another replica too. An error means the store could not answer: the
// caller cannot tell whether the token was spent.
type SpentStore interface {
	// Spend marks id spent until until; false when it already was.
	Spend(ctx context.Context, id string, until time.Time) (bool, error)
	// Was reports whether id was spent.
	Was(ctx context.Context, id string) (bool, error)
}

// SpentID is the id a store remembers token by: its SHA-256, so a store
// never holds a token that could be used.
func SpentID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// DefaultSpentCapacity bounds how many spent tokens a Spent remembers.
const DefaultSpentCapacity = 100_000

// Spent is the SpentStore of one process. A token is remembered until it
// expires, when Open refuses it anyway; past capacity the entries that
// expire first are forgotten first. The memory is this process's: a
// replica that did not see the token spent does not know it was.
type Spent struct {
	mu    sync.Mutex
	seen  map[string]int64 // token id → expiry (unix seconds)
	order []string         // in the order spent (expiries ascend with it)
	max   int
	now   func() time.Time
}

// NewSpent remembers up to max tokens (max <= 0: DefaultSpentCapacity);
// now nil is the clock.
func NewSpent(max int, now func() time.Time) *Spent {
	if max <= 0 {
		max = DefaultSpentCapacity
	}
	if now == nil {
		now = time.Now
	}
	return &Spent{seen: map[string]int64{}, max: max, now: now}
}

// Spend marks id spent until until; false when it already was. It never
// fails.
func (s *Spent) Spend(_ context.Context, id string, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget()
	if _, ok := s.seen[id]; ok {
		return false, nil
	}
	s.seen[id] = until.Unix()
	s.order = append(s.order, id)
	return true, nil
}

// Was reports whether id was spent. It never fails.
func (s *Spent) Was(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[id]
	return ok, nil
}

// forget drops the tokens that have expired, and the oldest past
// capacity; s.mu is held.
func (s *Spent) forget() {
	now := s.now().Unix()
	i := 0
	for ; i < len(s.order); i++ {
		k := s.order[i]
		if s.seen[k] > now && len(s.order)-i < s.max {
			break
		}
		delete(s.seen, k)
	}
	s.order = s.order[i:] // append reallocates, dropping the prefix, in time
}
