package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testIn is the arguments of every test tool.
type testIn struct {
	Name  string `json:"name" jsonschema:"a name"`
	Count int    `json:"count,omitempty" schema:"minimum=1"`
	Mode  string `json:"mode,omitempty" jsonschema:"a mode" schema:"enum=fast|slow"`
}

type testHandler func(ctx context.Context, in testIn) (any, error)

func tool(name string, h testHandler) ToolDef {
	return Define(ToolDef{
		Name: name, Description: "test tool", When: "in tests", Examples: []string{name + " {}"},
		Tags: []string{PhasePlanner},
	}, Plain(h))
}

func okHandler(_ context.Context, in testIn) (any, error) {
	return map[string]any{"echo": in.Name}, nil
}

func newReg(t *testing.T, opts Options, tools ...ToolDef) *Registry {
	t.Helper()
	r, err := New(opts, func() (Namespace, error) {
		return Namespace{Name: "t", Description: "test namespace", Tools: tools}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEnvelopeWireForm(t *testing.T) {
	for _, tc := range []struct {
		res  *Result
		want string
	}{
		{OK(nil), `{"ok":true,"data":null}`},
		{OK(map[string]any{"a": 1}).Next(NextStep{Tool: "x.y", When: "w", Why: "y"}).Warn("careful").WithMeta("tool", "t.x"),
			`{"ok":true,"data":{"a":1},"next_steps":[{"tool":"x.y","when":"w","why":"y"}],"warnings":["careful"],"meta":{"tool":"t.x"}}`},
		{Fail(CodeNotFound, "gone").Suggest("look", "a.b").WithDetails(map[string]any{"k": "<v>"}),
			`{"ok":false,"error":"gone","code":"not_found","remedy":{"suggested_tools":["a.b"],"fix_action":"look"},"meta":{"details":{"k":"<v>"}}}`},
		{Fail("", "x").Next(NextStep{Tool: "ignored"}), `{"ok":false,"error":"x","code":"tool_error"}`},
	} {
		if got := string(tc.res.Encode()); got != tc.want {
			t.Errorf("wire form\n got %s\nwant %s", got, tc.want)
		}
	}
}

// TestEnvelopeMatchesWireStructs: an envelope's bytes are what
// encoding/json (HTML escaping off) writes for the SPEC §2 structs with
// meta as one map: the registry's stamp merged in, keys sorted.
func TestEnvelopeMatchesWireStructs(t *testing.T) {
	type success struct {
		OK        bool           `json:"ok"`
		Data      any            `json:"data"`
		NextSteps []NextStep     `json:"next_steps,omitempty"`
		Warnings  []string       `json:"warnings,omitempty"`
		Meta      map[string]any `json:"meta,omitempty"`
	}
	type failure struct {
		OK       bool           `json:"ok"`
		Error    string         `json:"error"`
		Code     string         `json:"code"`
		Remedy   *Remedy        `json:"remedy,omitempty"`
		Warnings []string       `json:"warnings,omitempty"`
		Meta     map[string]any `json:"meta,omitempty"`
	}
	many := OK([]any{"a", 1.5}).Stamp("t.many", 1234567*time.Nanosecond)
	for _, k := range []string{"z", "a", "tool", "m", "b", "q", "c", "d", "e", "duration_ms"} {
		many.WithMeta(k, k+"<&>")
	}
	for _, tc := range []struct {
		res  *Result
		want any
	}{
		{OK(nil), success{OK: true}},
		{OK(map[string]any{"b": "\u2028 \xff", "a": nil}).Stamp("t.x", 7*time.Microsecond),
			success{OK: true, Data: map[string]any{"b": "\u2028 \xff", "a": nil}, Meta: map[string]any{"tool": "t.x", "duration_ms": 0.007}}},
		{many, success{OK: true, Data: []any{"a", 1.5}, Meta: map[string]any{
			"z": "z<&>", "a": "a<&>", "m": "m<&>", "b": "b<&>", "q": "q<&>", "c": "c<&>", "d": "d<&>", "e": "e<&>",
			"tool": "t.many", "duration_ms": 1.234}}},
		{OK("x").Next(NextStep{Tool: "a.b", When: "w", Why: "y", ArgsHint: map[string]any{"k": 1}}).Warn("w1", "w2").WithMeta("count", 3),
			success{OK: true, Data: "x", NextSteps: []NextStep{{Tool: "a.b", When: "w", Why: "y", ArgsHint: map[string]any{"k": 1}}},
				Warnings: []string{"w1", "w2"}, Meta: map[string]any{"count": 3}}},
		{Fail(CodeInvalidInput, "bad \"x\"\n").Suggest("fix", "t.y").Warn("w").WithDetails(map[string]any{"k": []int{1}}).ForTool("t.y"),
			failure{Error: "bad \"x\"\n", Code: CodeInvalidInput, Remedy: &Remedy{SuggestedTools: []string{"t.y"}, FixAction: "fix"},
				Warnings: []string{"w"}, Meta: map[string]any{"details": map[string]any{"k": []int{1}}, "tool": "t.y"}}},
		{Fail("", "x").Stamp("t.z", 0), failure{Error: "x", Code: CodeToolError, Meta: map[string]any{"tool": "t.z", "duration_ms": 0.0}}},
		{OK(1.0).ForTool("odd \"tool\" \\ \u2028 é \x01 \xff").WithMeta("k\ney", true),
			success{OK: true, Data: 1.0, Meta: map[string]any{"tool": "odd \"tool\" \\ \u2028 é \x01 \xff", "k\ney": true}}},
		{OK(nil).ForTool(`back\slash`).WithMeta("tab\there", 1), success{OK: true, Meta: map[string]any{"tool": `back\slash`, "tab\there": 1}}},
		{OK(nil).ForTool("é").WithMeta(`q"uote`, 1), success{OK: true, Meta: map[string]any{"tool": "é", `q"uote`: 1}}},
		{OK(nil).Stamp("t.slow", 90*time.Minute+time.Microsecond),
			success{OK: true, Meta: map[string]any{"tool": "t.slow", "duration_ms": 5400000.001}}},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tc.want); err != nil {
			t.Fatal(err)
		}
		if got := string(tc.res.Encode()); got != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("envelope\n got %s\nwant %s", got, want.String())
		}
	}
	if got := string(OK(make(chan int)).ForTool("t.c").Encode()); !strings.Contains(got, `"code":"internal_error"`) || !strings.Contains(got, `"tool":"t.c"`) {
		t.Errorf("unencodable data: %s", got)
	}
}

func TestCallStampsMetaAndValidates(t *testing.T) {
	r := newReg(t, Options{}, tool("t.echo", okHandler))
	res := r.Call(context.Background(), "t__echo", map[string]any{"name": "x"})
	if _, timed := res.DurationMS(); !res.OK || res.Tool() != "t.echo" || !timed {
		t.Fatalf("res = %s", res.Encode())
	}
	var wire struct {
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(res.Encode(), &wire); err != nil || wire.Meta["tool"] != "t.echo" || wire.Meta["duration_ms"] == nil {
		t.Fatalf("meta on the wire = %v (%v)", wire.Meta, err)
	}
	res = r.Call(context.Background(), "t.echo", map[string]any{"count": "three", "extra": true, "mode": "medium"})
	if res.Code != CodeInvalidInput {
		t.Fatalf("code = %s", res.Code)
	}
	var details struct {
		Errors []ArgError `json:"errors"`
	}
	b, _ := json.Marshal(res.Meta["details"])
	_ = json.Unmarshal(b, &details)
	var got []string
	for _, e := range details.Errors {
		got = append(got, e.Pointer)
	}
	if want := "/count /extra /mode /name"; strings.Join(got, " ") != want {
		t.Fatalf("pointers = %v, want %s (errors: %s)", got, want, res.Error)
	}
	if !strings.Contains(res.Error, "missing required argument 'name'") || !strings.Contains(res.Error, "unknown argument 'extra'") {
		t.Fatalf("message = %s", res.Error)
	}
}

func TestCallUnknownTool(t *testing.T) {
	w := tool("t.write", okHandler)
	w.Writes = true
	r := newReg(t, Options{}, tool("t.echo", okHandler), w)
	res := r.Call(context.Background(), "t.nope", nil)
	if res.Code != CodeUnknownTool {
		t.Fatalf("code = %s", res.Code)
	}
	if avail := res.Meta["details"].(map[string]any)["available"].([]string); !slices.Equal(avail, []string{"t.echo", "t.write"}) {
		t.Fatalf("available to a trusted caller = %v", avail)
	}
	// A remote caller is told only of the tools it may call.
	res = r.Call(WithCaller(context.Background(), Caller{Remote: true}), "t.nope", nil)
	if avail := res.Meta["details"].(map[string]any)["available"].([]string); !slices.Equal(avail, []string{"t.echo"}) {
		t.Fatalf("available to a remote caller = %v", avail)
	}
}

func TestCallContainsPanicsAndErrors(t *testing.T) {
	var rec CallRecord
	obs := observerFunc(func(r CallRecord) { rec = r })
	r := newReg(t, Options{Observer: obs},
		tool("t.panics", func(context.Context, testIn) (any, error) { panic("boom: secret detail") }),
		tool("t.fails", func(context.Context, testIn) (any, error) { return nil, errors.New("db password wrong") }),
		tool("t.domain", func(context.Context, testIn) (any, error) {
			return nil, Errorf(CodeValidationFailed, "bad").WithDetails(map[string]any{"n": 1}).Suggest("fix", "t.echo")
		}),
	)
	res := r.Call(context.Background(), "t.panics", map[string]any{"name": "x"})
	if res.Code != CodeInternal || strings.Contains(res.Error, "secret") {
		t.Fatalf("panic → %s", res.Encode())
	}
	if rec.Panic == nil || len(rec.Stack) == 0 {
		t.Fatal("observer did not get the panic and stack")
	}
	res = r.Call(context.Background(), "t.fails", map[string]any{"name": "x"})
	if res.Code != CodeInternal || strings.Contains(res.Error, "password") || rec.Err == nil {
		t.Fatalf("error → %s (rec.Err=%v)", res.Encode(), rec.Err)
	}
	res = r.Call(context.Background(), "t.domain", map[string]any{"name": "x"})
	if res.Code != CodeValidationFailed || res.Remedy == nil || res.Meta["details"] == nil {
		t.Fatalf("tool error → %s", res.Encode())
	}
}

// TestCallTimeout: a handler that ignores its context runs to its end,
// and the call still answers timeout, not the result that came too late.
// The handler is held until the call has answered, so no scheduling delay
// on a loaded machine lets it finish first.
func TestCallTimeout(t *testing.T) {
	release := make(chan struct{})
	r := newReg(t, Options{PerToolTimeout: map[string]time.Duration{"t.slow": 10 * time.Millisecond}},
		tool("t.slow", func(context.Context, testIn) (any, error) {
			<-release
			return map[string]any{"late": true}, nil
		}))
	res := r.Call(context.Background(), "t.slow", map[string]any{"name": "x"})
	close(release)
	if res.Code != CodeTimeout {
		t.Fatalf("code = %s", res.Code)
	}
}

func TestGatesAndScopes(t *testing.T) {
	w := tool("t.write", okHandler)
	w.Writes = true
	x := tool("t.exec", okHandler)
	x.ExecCode = true
	d := tool("t.destroy", okHandler)
	d.Destructive = true
	args := map[string]any{"name": "x"}
	remote := WithCaller(context.Background(), Caller{Remote: true})

	r := newReg(t, Options{}, tool("t.read", okHandler), w, x, d)
	for _, name := range []string{"t.write", "t.exec", "t.destroy"} {
		if res := r.Call(remote, name, args); res.Code != CodeToolDisabled {
			t.Errorf("%s remote default = %s", name, res.Code)
		}
		if res := r.Call(context.Background(), name, args); !res.OK {
			t.Errorf("%s trusted = %s", name, res.Code)
		}
	}
	if got := len(r.Visible(Caller{Remote: true}, "t")); got != 1 { // t.read
		t.Errorf("visible = %d", got)
	}
	// Gate closed wins over bad arguments: nothing about the tool leaks.
	if res := r.Call(remote, "t.write", map[string]any{"bogus": 1}); res.Code != CodeToolDisabled {
		t.Errorf("gate before validation: %s", res.Code)
	}

	r = newReg(t, Options{Policy: Policy{EnableDestructive: true, Deny: []string{"t.destroy"}}}, tool("t.read", okHandler), w, x, d)
	if res := r.Call(remote, "t.write", args); !res.OK {
		t.Errorf("enabled write = %s", res.Code)
	}
	if res := r.Call(remote, "t.exec", args); res.Code != CodeToolDisabled {
		t.Errorf("exec needs its own gate: %s", res.Code)
	}
	if res := r.Call(remote, "t.destroy", args); res.Code != CodeToolDisabled {
		t.Errorf("deny list: %s", res.Code)
	}
	readOnly := WithCaller(context.Background(), Caller{Remote: true, Scopes: []string{ScopeRead}})
	if res := r.Call(readOnly, "t.write", args); res.Code != CodeForbidden {
		t.Errorf("read scope on write tool = %s", res.Code)
	}
	if res := r.Call(readOnly, "t.read", args); !res.OK {
		t.Errorf("read scope on read tool = %s", res.Code)
	}
}

func TestFailingNamespaceIsSkipped(t *testing.T) {
	r, err := New(Options{},
		func() (Namespace, error) { return Namespace{Name: "bad"}, errors.New("catalog missing") },
		func() (Namespace, error) { panic("bad init") },
		func() (Namespace, error) {
			return Namespace{Name: "t", Tools: []ToolDef{tool("t.echo", okHandler)}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Skipped()) != 2 {
		t.Fatalf("skipped = %v", r.Skipped())
	}
	if _, ok := r.Lookup("t.echo"); !ok {
		t.Fatal("healthy namespace missing")
	}
}

func TestToolChecks(t *testing.T) {
	bad := []ToolDef{
		{Name: "nodot"},
		{Name: "a.b__c"},
		{Name: "a.b", Description: "d", When: "w", Examples: []string{"x"}}, // not declared with Define
		Define(ToolDef{Name: "a." + strings.Repeat("x", 70), Description: "d", When: "w", Examples: []string{"x"}}, Plain(okHandler)),
		Define(ToolDef{Name: "a.b", Description: "d", When: "w"}, Plain(okHandler)), // no examples
	}
	for _, td := range bad {
		if err := td.check(); err == nil {
			t.Errorf("%q passed checks", td.Name)
		}
	}
}

func TestRenderDescriptionAndAnnotations(t *testing.T) {
	td := tool("t.echo", okHandler)
	if got, want := td.RenderDescription(), "test tool\n\nWhen: in tests\n\nExamples:\n  - t.echo {}"; got != want {
		t.Fatalf("render = %q", got)
	}
	td.Destructive, td.Network = true, true
	a := td.Annotations()
	if a.ReadOnlyHint || !a.DestructiveHint || a.IdempotentHint || !a.OpenWorldHint || a.Title != "t.echo" {
		t.Fatalf("annotations = %+v", a)
	}
	mcp := ExportMCP([]*ToolDef{&td})
	oa := ExportOpenAI([]*ToolDef{&td}, false)
	if mcp[0].Name != "t__echo" || oa[0].Function.Name != "t__echo" || oa[0].Function.Metadata.Tags[0] != PhasePlanner {
		t.Fatalf("exports = %+v %+v", mcp, oa)
	}
}

func TestDecodeArgs(t *testing.T) {
	for body, ok := range map[string]bool{"": true, "  ": true, "{}": true, `{"a":1}`: true, "[]": false, "3": false, "null": false, "{": false, "{} {}": false, `{"a":1}x`: false, ` {"a":[1,{"b":null}]} `: true} {
		_, bad := DecodeArgs([]byte(body))
		if (bad == nil) != ok {
			t.Errorf("DecodeArgs(%q) ok=%v", body, bad == nil)
		}
	}
}

type observerFunc func(CallRecord)

func (f observerFunc) CallStarted(ctx context.Context, _ string, _ Caller) context.Context {
	return ctx
}
func (f observerFunc) CallFinished(_ context.Context, r CallRecord) { f(r) }

// TestValidateAcceptsGoTypes: in-process callers may pass Go values that
// encoding/json would never produce (int, []string); they validate the same.
func TestValidateAcceptsGoTypes(t *testing.T) {
	r := newReg(t, Options{}, tool("t.echo", okHandler))
	if res := r.Call(context.Background(), "t.echo", map[string]any{"name": "x", "count": 3}); !res.OK {
		t.Fatalf("int count: %s", res.Encode())
	}
	if res := r.Call(context.Background(), "t.echo", map[string]any{"name": []string{"x"}}); res.Code != CodeInvalidInput {
		t.Fatalf("[]string name: %s", res.Encode())
	}
	if res := r.Call(context.Background(), "t.echo", map[string]any{"name": "x", "count": 0.5}); res.Code != CodeInvalidInput {
		t.Fatalf("fractional count: %s", res.Encode())
	}
}

// TestHandlerContext pins what a handler's context reports: the earlier of
// the tool's and the caller's deadline, the caller's values, the reason it
// ended (timeout or caller cancel), and that contexts derived from it end
// with it.
func TestHandlerContext(t *testing.T) {
	type seen struct {
		deadline time.Time
		hasDL    bool
		value    any
		err      error
		cause    error
		childErr error
	}
	type key struct{}
	got := make(chan seen, 1)
	started := make(chan struct{}, 1)
	block := func(ctx context.Context, _ testIn) (any, error) {
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		s := seen{value: ctx.Value(key{})}
		s.deadline, s.hasDL = ctx.Deadline()
		started <- struct{}{}
		<-ctx.Done()
		<-child.Done()
		s.err, s.cause, s.childErr = ctx.Err(), context.Cause(ctx), child.Err()
		got <- s
		return nil, nil
	}
	// t.block's own deadline ends it; t.wait's is far beyond anything the
	// caller does, so only the caller's deadline or cancel can end it.
	const toolTimeout = 500 * time.Millisecond
	r := newReg(t, Options{PerToolTimeout: map[string]time.Duration{"t.block": toolTimeout, "t.wait": time.Hour}},
		tool("t.block", block), tool("t.wait", block))
	args := map[string]any{"name": "x"}

	// The tool's deadline ends the handler's context with DeadlineExceeded.
	ctx := context.WithValue(context.Background(), key{}, "v")
	start := time.Now()
	if res := r.Call(ctx, "t.block", args); res.Code != CodeTimeout {
		t.Fatalf("timeout call: %s", res.Encode())
	}
	<-started
	s := <-got
	if !s.hasDL || s.deadline.Before(start.Add(toolTimeout)) || s.deadline.After(time.Now()) {
		t.Errorf("deadline = %v (set %v), want start+%v (%v) at the earliest, and passed", s.deadline, s.hasDL, toolTimeout, start)
	}
	if s.value != "v" || !errors.Is(s.err, context.DeadlineExceeded) || !errors.Is(s.cause, context.DeadlineExceeded) || s.childErr == nil {
		t.Errorf("after timeout: value=%v err=%v cause=%v child=%v", s.value, s.err, s.cause, s.childErr)
	}

	// A caller's deadline earlier than the tool's is the one reported, and
	// it ends the call.
	early, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	want, _ := early.Deadline()
	if res := r.Call(early, "t.wait", args); res.Code != CodeTimeout {
		t.Fatalf("caller deadline: %s", res.Encode())
	}
	<-started
	s = <-got
	if !s.deadline.Equal(want) || !errors.Is(s.err, context.DeadlineExceeded) {
		t.Errorf("caller deadline: got %v (%v), want %v", s.deadline, s.err, want)
	}

	// The caller cancelling ends the handler's context with Canceled; it
	// cancels once the handler runs.
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { <-started; ccancel() }()
	if res := r.Call(cctx, "t.wait", args); res.OK || res.Code == CodeTimeout {
		t.Fatalf("cancelled call: %s", res.Encode())
	}
	s = <-got
	if !errors.Is(s.err, context.Canceled) || s.childErr == nil {
		t.Errorf("after caller cancel: err=%v child=%v", s.err, s.childErr)
	}
}

// TestHandlerContextOutlivesCall: what a handler leaves running sees its
// context end with the call, even when it first asks after the call, and
// several goroutines may ask at once.
func TestHandlerContextOutlivesCall(t *testing.T) {
	type key struct{}
	kept := make(chan context.Context, 2)
	r := newReg(t, Options{Timeout: time.Minute},
		tool("t.keeps", func(ctx context.Context, _ testIn) (any, error) {
			kept <- ctx
			return nil, nil
		}),
		tool("t.asks", func(ctx context.Context, _ testIn) (any, error) {
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() { defer wg.Done(); _ = ctx.Err(); <-time.After(time.Millisecond); _ = ctx.Done() }()
			}
			wg.Wait()
			kept <- ctx
			return nil, nil
		}))
	parent := context.WithValue(context.Background(), key{}, "v")
	for _, name := range []string{"t.keeps", "t.asks"} {
		if res := r.Call(parent, name, map[string]any{"name": "x"}); !res.OK {
			t.Fatalf("%s: %s", name, res.Encode())
		}
		ctx := <-kept
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			t.Fatalf("%s: context still open after the call", name)
		}
		if !errors.Is(ctx.Err(), context.Canceled) || ctx.Value(key{}) != "v" {
			t.Errorf("%s: after the call err=%v value=%v", name, ctx.Err(), ctx.Value(key{}))
		}
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > time.Minute {
			t.Errorf("%s: deadline %v %v", name, d, ok)
		}
	}
}

// TestGuidanceNamesOnlyAdmittedTools: next steps and suggested tools that
// name a tool the caller may not call are dropped, and so is a next step
// whose args hint makes the call a write; open tools, the same tool
// without its write argument, and names that are no tool (placeholders)
// stay.
func TestGuidanceNamesOnlyAdmittedTools(t *testing.T) {
	w := tool("t.write", okHandler)
	w.Writes = true
	saver := tool("t.save", okHandler)
	saver.WritesWith = []string{"mode"}
	guide := Define(ToolDef{Name: "t.guide", Description: "test tool", When: "in tests", Examples: []string{"t.guide {}"}, Tags: []string{PhasePlanner}},
		func(ctx context.Context, in testIn) (Reply[any], error) {
			if in.Mode == "fast" {
				return Reply[any]{}, Errorf(CodeNotFound, "no").Suggest("try", "t.write", "t.read", "<placeholder>")
			}
			return Reply[any]{NextSteps: []NextStep{{Tool: "t.write"}, {Tool: "t__read"}, {Tool: "<namespace>.help"},
				{Tool: "t.save", Why: "write", ArgsHint: map[string]any{"mode": "slow"}}, {Tool: "t.save", Why: "produce"}}}, nil
		})
	r := newReg(t, Options{}, tool("t.read", okHandler), w, saver, guide)
	remote := WithCaller(context.Background(), Caller{Remote: true})
	var next []string
	for _, n := range r.Call(remote, "t.guide", map[string]any{"name": "x"}).NextSteps {
		next = append(next, n.Tool+" "+n.Why)
	}
	if !slices.Equal(next, []string{"t__read ", "<namespace>.help ", "t.save produce"}) {
		t.Errorf("remote next steps = %q", next)
	}
	if got := r.Call(remote, "t.guide", map[string]any{"name": "x", "mode": "fast"}).Remedy.SuggestedTools; !slices.Equal(got, []string{"t.read", "<placeholder>"}) {
		t.Errorf("remote remedy = %v", got)
	}
	if got := r.Call(context.Background(), "t.guide", map[string]any{"name": "x"}).NextSteps; len(got) != 5 {
		t.Errorf("trusted next steps = %v", got)
	}
}

// EncodeTo writes exactly Encode's bytes and a newline, for a success, a
// failure, verbatim characters and data that cannot be encoded.
func TestEncodeToWritesEncodeBytes(t *testing.T) {
	timed := OK(map[string]any{"path": "s3://b/a<b>&c"}).Next(NextStep{Tool: "dag.validate_integrity", Why: "check it"})
	timed.Stamp("b.tool", 1500*time.Microsecond)
	for name, res := range map[string]*Result{
		"success":     timed,
		"failure":     Fail(CodeInvalidInput, "bad <input>").Suggest("Fix it.", "tools.help").ForTool("b.tool"),
		"unencodable": OK(map[string]any{"c": make(chan int)}).ForTool("b.tool"),
	} {
		var buf bytes.Buffer
		if err := res.EncodeTo(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := string(res.Encode()) + "\n"; buf.String() != want {
			t.Errorf("%s: EncodeTo wrote\n%s\nwant\n%s", name, buf.String(), want)
		}
	}
	var buf bytes.Buffer
	_ = OK(map[string]any{"c": make(chan int)}).EncodeTo(&buf)
	if !strings.Contains(buf.String(), `"code":"internal_error"`) {
		t.Errorf("unencodable data: %s, want an internal_error envelope", buf.String())
	}
}
