package workflows

import (
	"crypto/sha256"
	"sync"
	"time"
)

// DefaultSpentCapacity bounds how many spent tokens a Spent remembers.
const DefaultSpentCapacity = 100_000

// Spent remembers the run tokens this process has spent, so each token
// moves its run once: a submission that ran a gate spends the token it
// came with, and the token it returns is the only one that goes on. A
// replayed earlier token (to retry a stage that passed, or to win back fix
// attempts) is refused. A token is remembered until it expires, when Open
// refuses it anyway; past capacity the entries that expire first are
// forgotten first. The memory is this process's: a replica that did not
// see the token spent does not know it was.
type Spent struct {
	mu    sync.Mutex
	seen  map[[32]byte]int64 // token digest → expiry (unix seconds)
	order [][32]byte         // in the order spent (expiries ascend with it)
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
	return &Spent{seen: map[[32]byte]int64{}, max: max, now: now}
}

// Spend marks token spent until expires; false when it already was.
func (s *Spent) Spend(token string, expires int64) bool {
	key := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget()
	if _, ok := s.seen[key]; ok {
		return false
	}
	s.seen[key] = expires
	s.order = append(s.order, key)
	return true
}

// Was reports whether token was spent.
func (s *Spent) Was(token string) bool {
	key := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[key]
	return ok
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
