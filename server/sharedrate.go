package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/rs/zerolog"
)

// storeRetry is how long the shared limiter leaves an unreachable store
// alone after a failed call before trying it again, so an outage costs at
// most one timeout a second per replica, not one per call.
const storeRetry = time.Second

// sharedRate is limits.rate_per_minute as one budget per caller across
// every replica: a GCRA bucket per caller key in Redis (redis_rate; one
// Lua script per call, timed by the Redis server's clock), of the same
// size and refill as the per-replica token bucket.
//
// When the store cannot be reached the limit fails open onto this
// replica's own bucket (rateLimiter, at the full rate_per_minute): calls
// go on, each caller still bounded per replica, with a warning logged
// once per outage and cursus_rate_store_errors_total counting. A caller
// may then get up to rate_per_minute on each replica. Failing closed
// would make a store outage a refusal of every call on every replica,
// which is worse than a limit briefly looser.
type sharedRate struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
	timeout time.Duration
	local   *rateLimiter
	errors  func()
	log     zerolog.Logger

	down      atomic.Bool
	downUntil atomic.Int64 // unix nanoseconds before which the store is not tried
}

// redisLogger sends go-redis's own messages (its pool's dial failures)
// to the server's log at debug level, rather than as plain text to
// stderr; sharedRate logs the outage itself. go-redis's logger is
// process-wide: the first server to use the store sets it.
type redisLogger struct{ log zerolog.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug().Str("component", "redis").Msgf(format, v...)
}

var setRedisLogger sync.Once

func newSharedRate(cfg Config, local *rateLimiter, errors func(), log zerolog.Logger) *sharedRate {
	rc := cfg.Redis
	client := newRedisClient(rc, log)
	return &sharedRate{
		client: client, limiter: redis_rate.NewLimiter(client),
		limit:  redis_rate.PerMinute(cfg.Limits.RatePerMinute),
		prefix: rc.KeyPrefix, timeout: rc.DialTimeout + rc.Timeout,
		local: local, errors: errors, log: log,
	}
}

// newRedisClient is a client of the shared store's server. Each call is
// one attempt bounded by the redis section's timeouts.
func newRedisClient(rc RedisConfig, log zerolog.Logger) *redis.Client {
	setRedisLogger.Do(func() { redis.SetLogger(redisLogger{log}) })
	return redis.NewClient(&redis.Options{
		Addr:                rc.Address,
		DB:                  rc.DB,
		CredentialsProvider: func() (string, string) { return "", rc.password() },
		DialTimeout:         rc.DialTimeout,
		ReadTimeout:         rc.Timeout,
		WriteTimeout:        rc.Timeout,
		PoolTimeout:         rc.Timeout,
		// One attempt per call: the per-call deadline bounds it, and
		// storeRetry spaces the next.
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		// Maintenance notifications are a managed-Redis handshake a plain
		// server does not speak; off, no background workers are started
		// for them (they would outlive the client after a store outage).
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// allow takes one token from key's shared bucket; when empty it says how
// long until the next. Without the store it asks the local bucket.
func (s *sharedRate) allow(ctx context.Context, key string) (bool, time.Duration) {
	if time.Now().UnixNano() < s.downUntil.Load() {
		return s.local.allow(key)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	res, err := s.limiter.Allow(ctx, s.prefix+key, s.limit)
	if err != nil {
		s.errors()
		s.downUntil.Store(time.Now().Add(storeRetry).UnixNano())
		if !s.down.Swap(true) {
			s.log.Warn().Err(err).Str("address", s.client.Options().Addr).
				Msg("rate limit store unreachable: each replica limits callers on its own until it is back")
		}
		return s.local.allow(key)
	}
	if s.down.Swap(false) {
		s.log.Info().Str("address", s.client.Options().Addr).Msg("rate limit store reachable again: limits are shared")
	}
	if res.Allowed > 0 {
		return true, 0
	}
	return false, res.RetryAfter
}

func (s *sharedRate) close() { _ = s.client.Close() }
