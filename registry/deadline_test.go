package registry

import (
	"context"
	"strings"
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
		func(ctx context.Context, _ slowArgs) (out, error) {
			deadline, _ = ctx.Deadline()
			return out{Seen: true}, nil
		})
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
		func(context.Context, slowArgs) (struct{}, error) {
			ran = true
			return struct{}{}, nil
		})
	r := newReg(t, Options{PerToolTimeout: map[string]time.Duration{"t.late": time.Nanosecond}}, def)
	res := r.Call(context.Background(), "t.late", map[string]any{"names": slowNames()})
	if res.Code != CodeTimeout || ran {
		t.Fatalf("code %q, handler ran: %v", res.Code, ran)
	}
}
