package registry

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// slowName is a string whose pattern is not one-pass: matching it costs
// far more per byte than decoding it.
type slowName string

func (slowName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^(?:[a-z]|[a-z][0-9])*$"}
}

// slowArgs is a tool input that takes milliseconds to validate.
type slowArgs struct {
	Names []slowName `json:"names" jsonschema:"names"`
}

func slowNames() []any {
	names := make([]any, 2000)
	for i := range names {
		names[i] = strings.Repeat("a1b", 300)
	}
	return names
}

// TestDeadlineCountsFromCallStart: a tool's limit bounds the whole call,
// argument validation included, so a call whose arguments take long to
// validate does not get its full limit again for the handler. The
// handler here is trivial and the arguments are large, so validation is
// most of the call: the deadline must sit nearer the call's start plus
// the limit than its end plus the limit.
func TestDeadlineCountsFromCallStart(t *testing.T) {
	const limit = time.Hour
	type out struct {
		Seen bool `json:"seen"`
	}
	var deadline time.Time
	def := Define(ToolDef{Name: "t.deadline", Description: "records its deadline", When: "in tests",
		Examples: []string{`t.deadline {"names": ["x"]}`}, Tags: []string{PhasePlanner}},
		Plain(func(ctx context.Context, _ slowArgs) (out, error) {
			deadline, _ = ctx.Deadline()
			return out{Seen: true}, nil
		}))
	r := newReg(t, Options{PerToolTimeout: map[string]time.Duration{"t.deadline": limit}}, def)
	before := time.Now()
	res := r.Call(context.Background(), "t.deadline", map[string]any{"names": slowNames()})
	took := time.Since(before)
	if !res.OK {
		t.Fatalf("call: %s", res.Error)
	}
	late := deadline.Sub(before) - limit
	t.Logf("call %v, deadline at the limit plus %v", took, late)
	if late > took/2 {
		t.Fatalf("the deadline is the limit plus %v after the call began (the call took %v): it was set after validation", late, took)
	}
}

// TestValidationPastTheDeadlineSkipsTheHandler: when validating the
// arguments takes longer than the tool's limit, the call answers timeout
// without decoding them or starting the handler.
func TestValidationPastTheDeadlineSkipsTheHandler(t *testing.T) {
	ran := false
	def := Define(ToolDef{Name: "t.late", Description: "notes that it ran", When: "in tests",
		Examples: []string{`t.late {"names": ["x"]}`}, Tags: []string{PhasePlanner}},
		Plain(func(context.Context, slowArgs) (struct{}, error) {
			ran = true
			return struct{}{}, nil
		}))
	r := newReg(t, Options{PerToolTimeout: map[string]time.Duration{"t.late": time.Nanosecond}}, def)
	res := r.Call(context.Background(), "t.late", map[string]any{"names": slowNames()})
	if res.Code != CodeTimeout || ran {
		t.Fatalf("code %q, handler ran: %v", res.Code, ran)
	}
}

// spin burns CPU until stop is closed, checking no context.
func spin(stop <-chan struct{}) {
	for x := 0; ; x++ {
		select {
		case <-stop:
			return
		default:
		}
		for i := 0; i < 1000; i++ {
			x ^= i * x
		}
		_ = x
	}
}

// TestDeadlineHoldsWhenWorkIgnoresIt: with two CPU burners beside it and
// eight concurrent calls whose handlers burn CPU without ever looking at
// their context, every call answers timeout within deadlineMargin of its
// limit (the README's promise): the answer races the work on a goroutine
// of the call's own. The work is abandoned, counted by Abandoned until it
// ends, and the call's WithWorkEnd function runs only then. It used to
// answer when the handler returned, seconds late.
func TestDeadlineHoldsWhenWorkIgnoresIt(t *testing.T) {
	const limit, deadlineMargin = 200 * time.Millisecond, 500 * time.Millisecond
	stop, release := make(chan struct{}), make(chan struct{})
	defer close(stop)
	var handlers atomic.Int64 // handlers that started: their work runs until release
	for range 2 {
		go spin(stop)
	}
	def := Define(ToolDef{Name: "t.stubborn", Description: "burns CPU until released, ignoring its context", When: "in tests",
		Examples: []string{`t.stubborn {}`}, Tags: []string{PhasePlanner}},
		Plain(func(context.Context, struct{}) (struct{}, error) {
			handlers.Add(1)
			spin(release)
			return struct{}{}, nil
		}))
	r := newReg(t, Options{Timeout: limit}, def)
	const calls = 8
	type answer struct {
		code  string
		took  time.Duration
		ended chan struct{}
	}
	answers := make(chan answer, calls)
	for range calls {
		go func() {
			ended := make(chan struct{})
			start := time.Now()
			res := r.Call(WithWorkEnd(context.Background(), func() { close(ended) }), "t.stubborn", map[string]any{})
			answers <- answer{res.Code, time.Since(start), ended}
		}()
	}
	var got []answer
	for range calls {
		a := <-answers
		got = append(got, a)
		if a.code != CodeTimeout || a.took > limit+deadlineMargin {
			t.Errorf("call answered %q after %v; want timeout within %v", a.code, a.took, limit+deadlineMargin)
		}
	}
	// A call whose goroutine reached the handler only after the deadline
	// never starts it, and its work ends on its own, possibly after its
	// answer; a started handler runs until release. Wait until every call
	// is one or the other, so the count below races nothing.
	ended := func() int {
		n := 0
		for _, a := range got {
			select {
			case <-a.ended:
				n++
			default:
			}
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); ended()+int(handlers.Load()) != calls; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls' work ended and %d handlers started, of %d calls", ended(), handlers.Load(), calls)
		}
	}
	running := int(handlers.Load())
	if n := r.Abandoned(); n != int64(running) || running == 0 {
		t.Errorf("Abandoned() = %d with %d calls' work still running (of %d); want them equal, and some", n, running, calls)
	}
	close(release)
	for _, a := range got {
		<-a.ended // the work ended: each call's function runs, once
	}
	if n, total := r.Abandoned(), r.AbandonedTotal(); n != 0 || total != uint64(running) {
		t.Errorf("after the work ended: Abandoned() = %d, AbandonedTotal() = %d; want 0 and %d", n, total, running)
	}
}

// TestQuickCallsAreAnsweredWithTheirResult: a call that ends well before
// its deadline answers with its result, never as cancelled or timed out
// (the worker ends its context as it hands the answer over).
func TestQuickCallsAreAnsweredWithTheirResult(t *testing.T) {
	r := newReg(t, Options{Timeout: time.Minute}, tool("t.quick", okHandler))
	for i := range 50000 {
		if res := r.Call(context.Background(), "t.quick", map[string]any{"name": "x"}); !res.OK {
			t.Fatalf("call %d: %s %s", i, res.Code, res.Error)
		}
	}
}
