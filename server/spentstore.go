package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// errSpentStore is what a caller's submission learns of a store that did
// not answer; the cause (with the store's address) goes to the log.
var errSpentStore = errors.New("the shared store of spent run tokens did not answer")

// SpentStore keeps the spent workflow run tokens of every replica in the
// shared store (limits.shared_store: redis): one key per token id, set if
// absent with the token's remaining lifetime as its expiry, so a token
// spent on one replica is refused on all of them, and Redis forgets it
// when the token would be refused as expired anyway. It answers the
// engine's workflows.SpentStore.
//
// When the store does not answer, Spend and Was fail and the submission
// is refused with a retryable code (run_store_unavailable): replay
// protection fails closed, unlike the rate limit. Admitting a submission
// unchecked would let the same token move its run twice on two replicas,
// which is the promise this store keeps; refusing costs the caller a
// retry with the same token, as nothing was spent.
type SpentStore struct {
	client  *redis.Client
	prefix  string
	timeout time.Duration
	log     zerolog.Logger
	down    atomic.Bool
}

// NewSpentStore is the shared spent-token store limits.shared_store
// configures, or nil when there is none (each replica then remembers its
// own). Close it when the server stops.
func NewSpentStore(cfg Config, log zerolog.Logger) *SpentStore {
	if cfg.Limits.SharedStore != sharedStoreRedis {
		return nil
	}
	rc := cfg.Redis
	// One attempt per command: Spend retries itself, knowing whether a
	// lost answer was its own write.
	client := newRedisClient(rc, log)
	return &SpentStore{client: client, prefix: rc.KeyPrefix + "spent:", timeout: rc.DialTimeout + rc.Timeout, log: log}
}

// spendAttempts is how many times Spend asks the store before it gives
// up: a second try rides out one dropped connection.
const spendAttempts = 2

// Spend marks id spent until until; false when it already was (on any
// replica). Each attempt writes a value of its own, so when an answer is
// lost and the next attempt finds the key set, Spend tells its own
// earlier write (spent now, by this call) from another's.
func (s *SpentStore) Spend(ctx context.Context, id string, until time.Time) (bool, error) {
	key := s.prefix + id
	ttl := max(time.Until(until), time.Second)
	var mark [16]byte
	_, _ = rand.Read(mark[:]) // never fails
	value := hex.EncodeToString(mark[:])
	var err error
	for range spendAttempts {
		var set bool
		set, err = storeCall(s, ctx, func(ctx context.Context) (bool, error) { return s.client.SetNX(ctx, key, value, ttl).Result() })
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if set {
			return true, nil
		}
		var holder string
		holder, err = storeCall(s, ctx, func(ctx context.Context) (string, error) { return s.client.Get(ctx, key).Result() })
		if errors.Is(err, redis.Nil) {
			continue // expired between the two commands: try again
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return holder == value, nil
	}
	return false, s.failed(err)
}

// Was reports whether id was spent on any replica.
func (s *SpentStore) Was(ctx context.Context, id string) (bool, error) {
	n, err := storeCall(s, ctx, func(ctx context.Context) (int64, error) { return s.client.Exists(ctx, s.prefix+id).Result() })
	if err != nil {
		return false, s.failed(err)
	}
	return n > 0, nil
}

// Close releases the store's connections.
func (s *SpentStore) Close() error { return s.client.Close() }

// storeCall runs one command of s within the store's timeouts (and the
// call's context). redis.Nil (no such key) is an answer, not an outage.
func storeCall[T any](s *SpentStore, ctx context.Context, do func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v, err := do(ctx)
	if err == nil || errors.Is(err, redis.Nil) {
		if s.down.Swap(false) {
			s.log.Info().Str("address", s.client.Options().Addr).Msg("spent run token store reachable again")
		}
	}
	return v, err
}

// failed logs an outage once, and is the error a submission sees.
func (s *SpentStore) failed(err error) error {
	if !s.down.Swap(true) {
		s.log.Warn().Err(err).Str("address", s.client.Options().Addr).
			Msg("spent run token store unreachable: workflow submissions are refused (run_store_unavailable) until it is back")
	}
	return errSpentStore
}
