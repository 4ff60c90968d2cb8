package registry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callContext is a handler's context: the caller's, with the tool's
// deadline added. It behaves as context.WithDeadline(parent, deadline)
// would, but builds that context (a timer and a registration with the
// caller's context) only when the handler first asks for Done or Err.
// Most calls are short and never ask, and then cost one allocation
// instead of three plus a timer.
//
// One difference: context.Cause on a callContext whose handler never
// called Done or Err reports the caller's cause, not the deadline.
type callContext struct {
	parent   context.Context
	deadline time.Time

	mu    sync.Mutex
	over  bool // end ran: a context built from now on starts cancelled
	built atomic.Pointer[builtContext]
}

type builtContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newCallContext(parent context.Context, deadline time.Time) *callContext {
	return &callContext{parent: parent, deadline: deadline}
}

func (c *callContext) build() context.Context {
	if b := c.built.Load(); b != nil {
		return b.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.built.Load(); b != nil {
		return b.ctx
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline)
	if c.over {
		// Asked for by something the handler left running.
		cancel()
	}
	c.built.Store(&builtContext{ctx: ctx, cancel: cancel})
	return ctx
}

func (c *callContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *callContext) Done() <-chan struct{} { return c.build().Done() }

func (c *callContext) Err() error { return c.build().Err() }

// Value reads the built context once there is one, so that what the
// context package finds through it (for Cause, and for children that
// follow their parent's cancellation) is the deadline-bearing context.
func (c *callContext) Value(key any) any {
	if b := c.built.Load(); b != nil {
		return b.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// end is called when the call is over: like the cancel of
// context.WithTimeout, whatever the handler started sees its context end.
func (c *callContext) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.over = true
	if b := c.built.Load(); b != nil {
		b.cancel()
	}
}

// ended reports why the call's context is over (nil if it is not),
// without building it: the caller's cancellation or deadline, else the
// tool's deadline.
func (c *callContext) ended() error {
	if b := c.built.Load(); b != nil {
		return b.ctx.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *callContext) String() string { return "registry.callContext" }
