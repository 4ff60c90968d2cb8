package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cursus-dev/cursus/registry"
)

// fairShare keeps one caller from starving the others within the rate
// limit: per caller (rateKey) it caps the tool calls running at once
// (limits.max_calls_per_caller), the calls waiting for one of those
// slots (limits.max_queued_per_caller, each for up to limits.queue_wait),
// the argument bytes of its running and waiting calls together
// (limits.max_bytes_per_caller: inline DAGs, configs and files are what
// make a call costly) and the exec_code slots it holds
// (limits.exec_per_caller). A call over a cap is refused with
// rate_limited naming it; a cap of 0 is none, except that
// max_queued_per_caller 0 lets no call wait. A call's share is held until
// its work really ends (registry.WithWorkEnd), so work that ignores its
// deadline keeps counting against its caller.
type fairShare struct {
	maxCalls, maxQueued, maxExec int
	maxBytes                     int64
	wait                         time.Duration

	mu      sync.Mutex
	callers map[string]*callerShare
}

// callerShare is what one caller holds: running calls, waiting calls
// (oldest first), their argument bytes and its exec slots.
type callerShare struct {
	running, exec int
	bytes         int64
	queue         []*waiter
}

// waiter is a queued call; ready is closed when it is given a slot.
type waiter struct {
	ready   chan struct{}
	granted bool
}

func newFairShare(l LimitsConfig) *fairShare {
	return &fairShare{maxCalls: l.MaxCallsPerCaller, maxQueued: l.MaxQueuedPerCaller, maxExec: l.ExecPerCaller,
		maxBytes: l.MaxBytesPerCaller, wait: l.QueueWait, callers: map[string]*callerShare{}}
}

// acquire admits a call of caller key with size argument bytes (exec: it
// runs code): at once, after waiting in the caller's queue, or not (the
// refusal to answer with, and how long to wait before retrying).
func (f *fairShare) acquire(ctx context.Context, key string, size int64, exec bool) (release func(), refusal *registry.Result, retry time.Duration) {
	f.mu.Lock()
	c := f.callers[key]
	if c == nil {
		c = &callerShare{}
		f.callers[key] = c
	}
	busy := c.running > 0 || len(c.queue) > 0
	switch {
	case exec && f.maxExec > 0 && c.exec >= f.maxExec:
		f.mu.Unlock()
		return nil, f.refuse("limits.exec_per_caller", fmt.Sprintf("this caller already has %d script-running call(s), its share of the server's", c.exec)), time.Second
	case busy && f.maxBytes > 0 && c.bytes+size > f.maxBytes:
		held := c.bytes
		f.mu.Unlock()
		return nil, f.refuse("limits.max_bytes_per_caller", fmt.Sprintf("this caller's running and queued calls already carry %d bytes of arguments; with this call's %d that is over %d", held, size, f.maxBytes)), time.Second
	case f.maxCalls <= 0 || c.running < f.maxCalls:
		f.take(c, size, exec)
		f.mu.Unlock()
		return f.releaser(key, size, exec), nil, 0
	case len(c.queue) >= f.maxQueued:
		f.mu.Unlock()
		return nil, f.refuse("limits.max_queued_per_caller", fmt.Sprintf("this caller has %d calls running (limits.max_calls_per_caller) and %d waiting", f.maxCalls, f.maxQueued)), time.Second
	}
	w := &waiter{ready: make(chan struct{})}
	c.queue = append(c.queue, w)
	// A waiting call holds its bytes and exec slot already.
	c.bytes += size
	if exec {
		c.exec++
	}
	f.mu.Unlock()

	timer := time.NewTimer(f.wait)
	defer timer.Stop()
	select {
	case <-w.ready:
	case <-timer.C:
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.granted {
		return f.releaser(key, size, exec), nil, 0
	}
	c.queue = deleteWaiter(c.queue, w)
	c.bytes -= size
	if exec {
		c.exec--
	}
	f.forget(key, c)
	return nil, f.refuse("limits.max_calls_per_caller", fmt.Sprintf("none of this caller's %d running calls ended within %s (limits.queue_wait)", f.maxCalls, f.wait)), time.Second
}

// queued is how many calls of caller key wait for a slot.
func (f *fairShare) queued(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.callers[key]; c != nil {
		return len(c.queue)
	}
	return 0
}

// take counts a call that runs now. Holds mu.
func (f *fairShare) take(c *callerShare, size int64, exec bool) {
	c.running++
	c.bytes += size
	if exec {
		c.exec++
	}
}

// releaser returns what a call took, once, and hands its slot to the
// caller's oldest waiting call.
func (f *fairShare) releaser(key string, size int64, exec bool) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			c := f.callers[key]
			c.running--
			c.bytes -= size
			if exec {
				c.exec--
			}
			if len(c.queue) > 0 && (f.maxCalls <= 0 || c.running < f.maxCalls) {
				w := c.queue[0]
				c.queue = c.queue[1:]
				c.running++ // its bytes are counted already
				w.granted = true
				close(w.ready)
			}
			f.forget(key, c)
		})
	}
}

// forget drops a caller that holds nothing. Holds mu.
func (f *fairShare) forget(key string, c *callerShare) {
	if c.running == 0 && len(c.queue) == 0 {
		delete(f.callers, key)
	}
}

func deleteWaiter(q []*waiter, w *waiter) []*waiter {
	for i, x := range q {
		if x == w {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}

// refuse is the rate_limited answer over the cap set by setting.
func (f *fairShare) refuse(setting, why string) *registry.Result {
	return registry.Fail(registry.CodeRateLimited, fmt.Sprintf("too much work from this caller at once (%s): %s", setting, why)).
		WithDetails(map[string]any{"limit": setting}).
		Suggest("Wait for your running calls to finish (or the Retry-After header's seconds), then retry; send large content in fewer calls at a time.")
}
