// Package registry is the one tool registry every front end calls through:
// tool definitions, the envelope, argument validation, gates and exporters.
package registry

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Namespace is one group of tools with a one-line description.
type Namespace struct {
	Name        string
	Description string
	Tools       []ToolDef
}

// NamespaceFunc builds a namespace. A failing namespace is skipped and
// reported; the others still serve.
type NamespaceFunc func() (Namespace, error)

// CallRecord describes one finished call, for metrics, logs and audit.
type CallRecord struct {
	Tool     string // dotted name ("" for unknown_tool)
	Caller   Caller
	Code     string // "" when ok
	Duration time.Duration
	Gated    bool   // the call is behind a gate (destructive, writes, exec_code)
	Panic    any    // recovered panic value, if any
	Stack    []byte // stack of the panic
	Err      error  // internal error hidden from the client
}

// Observer is told about every call (metrics, logs, audit).
type Observer interface {
	CallStarted(ctx context.Context, tool string, caller Caller) context.Context
	CallFinished(ctx context.Context, rec CallRecord)
}

// Options configure a registry.
type Options struct {
	Policy Policy
	// Timeout bounds every call (0 = no limit); PerToolTimeout overrides it
	// by dotted name.
	Timeout        time.Duration
	PerToolTimeout map[string]time.Duration
	Observer       Observer
	// GateHints says, per gate, how the deployment opens it (the setting
	// to change); the registry knows no configuration names itself.
	GateHints map[Gate]string
}

// Registry holds the tools. It is immutable after New and safe for
// concurrent use.
type Registry struct {
	opts       Options
	tools      map[string]*entry
	byWireName map[string]*entry
	sorted     []*ToolDef
	namespaces map[string]string
	skipped    []error

	// abandoned counts calls answered at their deadline (or when their
	// caller went away) whose work had not ended: running now, and ever.
	abandoned      atomic.Int64
	abandonedTotal atomic.Uint64
}

type entry struct {
	def ToolDef
	// The argument validator is compiled at the tool's first call:
	// compiling every tool's schema (the JSON Schema library checks each
	// against the draft's meta-schema) was a fifth of start-up.
	// CompileSchemas compiles them all at once.
	compile   sync.Once
	validator *validator
	schemaErr error
}

// checker is the tool's compiled argument validator.
func (e *entry) checker() (*validator, error) {
	e.compile.Do(func() {
		schema, err := e.def.inputSchema()
		if err != nil {
			e.schemaErr = fmt.Errorf("tool %q: %w", e.def.Name, err)
			return
		}
		e.validator, e.schemaErr = compileSchema(e.def.Name, schema)
	})
	return e.validator, e.schemaErr
}

// validate checks args against the tool's schema; a schema that does not
// compile refuses every call.
func (e *entry) validate(args map[string]any) []ArgError {
	v, err := e.checker()
	if err != nil {
		return []ArgError{{Message: err.Error()}}
	}
	return v.validate(args)
}

// CompileSchemas derives every tool's schemas and compiles its argument
// schema now instead of at its first listing or call, and reports the
// first that cannot be derived or does not compile.
func (r *Registry) CompileSchemas() error {
	for _, t := range r.sorted {
		if err := t.SchemaError(); err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		if _, err := r.tools[t.Name].checker(); err != nil {
			return err
		}
	}
	return nil
}

// New assembles a registry from namespaces in the given order.
func New(opts Options, namespaces ...NamespaceFunc) (*Registry, error) {
	r := &Registry{opts: opts, tools: map[string]*entry{}, byWireName: map[string]*entry{}, namespaces: map[string]string{}}
	// Building a namespace derives no schema (they are derived at first
	// use), so one core builds them all in the order given.
	for _, build := range namespaces {
		ns, err := safeBuild(build)
		if err == nil {
			err = r.addNamespace(ns)
		}
		if err != nil {
			r.skipped = append(r.skipped, err)
		}
	}
	for _, e := range r.tools {
		r.sorted = append(r.sorted, &e.def)
	}
	sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].Name < r.sorted[j].Name })
	if len(r.sorted) == 0 {
		return nil, errors.New("registry: no tools registered")
	}
	return r, nil
}

func safeBuild(build NamespaceFunc) (ns Namespace, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("namespace panicked during set-up: %v", v)
		}
	}()
	ns, err = build()
	if err != nil {
		name := ns.Name
		if name == "" {
			name = "?"
		}
		return ns, fmt.Errorf("skipping tool namespace %q: %w", name, err)
	}
	return ns, nil
}

func (r *Registry) addNamespace(ns Namespace) error {
	if ns.Name == "" || len(ns.Tools) == 0 {
		return fmt.Errorf("skipping tool namespace %q: no tools", ns.Name)
	}
	for _, t := range ns.Tools {
		if t.Namespace() != ns.Name {
			return fmt.Errorf("skipping tool namespace %q: tool %q belongs elsewhere", ns.Name, t.Name)
		}
	}
	// Validate every tool before adding any, so a namespace is all or nothing.
	for i := range ns.Tools {
		if err := ns.Tools[i].check(); err != nil {
			return fmt.Errorf("skipping tool namespace %q: %w", ns.Name, err)
		}
		if _, dup := r.tools[ns.Tools[i].Name]; dup {
			return fmt.Errorf("skipping tool namespace %q: duplicate tool %q", ns.Name, ns.Tools[i].Name)
		}
	}
	for _, t := range ns.Tools {
		if err := r.add(t); err != nil {
			return fmt.Errorf("skipping tool namespace %q: %w", ns.Name, err)
		}
	}
	r.namespaces[ns.Name] = ns.Description
	return nil
}

func (r *Registry) add(t ToolDef) error {
	if err := t.check(); err != nil {
		return err
	}
	e := &entry{def: t}
	r.tools[t.Name] = e
	r.byWireName[t.WireName()] = e
	return nil
}

// Skipped lists the namespaces that failed to initialise.
func (r *Registry) Skipped() []error { return slices.Clone(r.skipped) }

// Policy is the gate policy for remote callers.
func (r *Registry) Policy() Policy { return r.opts.Policy }

// Tools returns every tool sorted by dotted name (optionally one namespace).
func (r *Registry) Tools(namespace string) []*ToolDef {
	if namespace == "" {
		return slices.Clone(r.sorted)
	}
	var out []*ToolDef
	for _, t := range r.sorted {
		if t.Namespace() == namespace {
			out = append(out, t)
		}
	}
	return out
}

// Namespaces maps namespace → description.
func (r *Registry) Namespaces() map[string]string {
	out := make(map[string]string, len(r.namespaces))
	for k, v := range r.namespaces {
		out[k] = v
	}
	return out
}

// Lookup finds a tool by dotted or wire name.
func (r *Registry) Lookup(name string) (*ToolDef, bool) {
	if e, ok := r.tools[name]; ok {
		return &e.def, true
	}
	if e, ok := r.byWireName[name]; ok {
		return &e.def, true
	}
	return nil, false
}

// Visible lists the tools caller may call, sorted, optionally one namespace.
func (r *Registry) Visible(caller Caller, namespace string) []*ToolDef {
	var out []*ToolDef
	for _, t := range r.Tools(namespace) {
		if r.Admit(caller, t).Allowed {
			out = append(out, t)
		}
	}
	return out
}

// MayCall reports whether caller may call the tool named name (dotted or
// wire) without its WritesWith arguments; false for a name that is no tool.
func (r *Registry) MayCall(caller Caller, name string) bool {
	t, ok := r.Lookup(name)
	return ok && r.Admit(caller, t).Allowed
}

// Gated reports whether a call of t with args sits behind a gate (nil
// args: the call without t's WritesWith arguments).
func Gated(t *ToolDef, args map[string]any) bool { return t.capabilitiesFor(args).gated() }

// Call runs a tool for the caller attached to ctx, in the order of SPEC §2:
// look up, gate, scope, validate arguments, run under the deadline.
func (r *Registry) Call(ctx context.Context, name string, args map[string]any) *Result {
	return r.CallJSON(ctx, name, args, nil)
}

// CallJSON is Call for a front end that holds the arguments as the caller
// sent them (a REST body): args must be what DecodeArgs made of text, and
// the tool binds its input from text instead of from args encoded again.
func (r *Registry) CallJSON(ctx context.Context, name string, args map[string]any, text []byte) *Result {
	caller := CallerFrom(ctx)
	start := time.Now()
	t, ok := r.Lookup(name)
	if !ok {
		workEnded(ctx)
		res := Fail(CodeUnknownTool, fmt.Sprintf("unknown tool: '%s'", name)).
			WithDetails(map[string]any{"available": r.visibleNames(caller)}).
			Suggest("Call tools.help to list the available tools.", "tools.help")
		r.keepAdmitted(caller, res)
		r.finish(ctx, CallRecord{Caller: caller, Code: res.Code, Duration: time.Since(start)})
		return res
	}
	if r.opts.Observer != nil {
		ctx = r.opts.Observer.CallStarted(ctx, t.Name, caller)
	}
	rec := CallRecord{Tool: t.Name, Caller: caller, Gated: Gated(t, args)}
	res := r.race(ctx, start, t, caller, args, text, &rec)
	r.keepAdmitted(caller, res)
	rec.Code = ""
	if !res.OK {
		rec.Code = res.Code
	}
	rec.Duration = time.Since(start)
	res.Stamp(t.Name, rec.Duration)
	r.finish(ctx, rec)
	return res
}

func (r *Registry) finish(ctx context.Context, rec CallRecord) {
	if r.opts.Observer != nil {
		r.opts.Observer.CallFinished(ctx, rec)
	}
}

// Abandoned is how many calls were answered at their deadline, or when
// their caller went away, while their work still runs (a handler that
// ignores its context); AbandonedTotal counts every such call so far.
func (r *Registry) Abandoned() int64 { return r.abandoned.Load() }

// AbandonedTotal counts the calls ever abandoned (see Abandoned).
func (r *Registry) AbandonedTotal() uint64 { return r.abandonedTotal.Load() }

type workEndKey struct{}

// WithWorkEnd attaches fn to ctx: the Call made with ctx runs it once,
// when the call's work has really ended. That is when the call answers,
// except for a call answered at its deadline while its handler still
// runs: fn runs when the handler returns. A front end releases there
// what the call holds (a concurrency slot), so work that ignores its
// deadline keeps holding it and cannot pile up beyond the caps.
func WithWorkEnd(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, workEndKey{}, fn)
}

func workEnded(ctx context.Context) {
	if fn, ok := ctx.Value(workEndKey{}).(func()); ok && fn != nil {
		fn()
	}
}

// Call states between race and its worker goroutine.
const (
	working int32 = iota
	answered
	abandoned
)

// race runs the call (admission, validation, handler) on a goroutine of
// its own and answers with its result, or with timeout at the tool's
// deadline (or tool_error when the caller cancels), whichever comes
// first: the answer is sent on time whatever the work does. Every engine
// loop that can run long honours its context, so work normally ends at
// the deadline too; work that does not is abandoned, counted by
// Abandoned until it returns, and keeps what it holds (WithWorkEnd).
func (r *Registry) race(ctx context.Context, start time.Time, t *ToolDef, caller Caller, args map[string]any, text []byte, rec *CallRecord) *Result {
	timeout := r.opts.Timeout
	if d, ok := r.opts.PerToolTimeout[t.Name]; ok {
		timeout = d
	}
	if timeout <= 0 && ctx.Done() == nil {
		// Nothing can end the call early: no goroutine is needed.
		defer workEnded(ctx)
		return r.run(ctx, t, caller, args, text, rec)
	}
	var callCtx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		callCtx, cancel = context.WithDeadline(ctx, start.Add(timeout))
	} else {
		callCtx, cancel = context.WithCancel(ctx)
	}
	type outcome struct {
		res *Result
		rec CallRecord
	}
	done := make(chan outcome, 1)
	var state atomic.Int32
	go func() {
		var o outcome
		func() {
			// invoke contains the handler's panics; this, the rest's.
			defer func() {
				if v := recover(); v != nil {
					o.rec.Panic, o.rec.Stack = v, debug.Stack()
					o.res = internalError(t.Name)
				}
			}()
			o.res = r.run(callCtx, t, caller, args, text, &o.rec)
		}()
		done <- o
		// Cancelled only now: the caller must not take the end of
		// callCtx for its deadline while the answer is on its way.
		cancel()
		if !state.CompareAndSwap(working, answered) {
			// Answered without this work: it ends now.
			r.abandoned.Add(-1)
			workEnded(ctx)
		}
	}()
	answer := func(o outcome) *Result {
		rec.Panic, rec.Stack, rec.Err = o.rec.Panic, o.rec.Stack, o.rec.Err
		workEnded(ctx)
		return o.res
	}
	select {
	case o := <-done:
		return answer(o)
	case <-callCtx.Done():
	}
	select {
	case o := <-done: // it ended as the deadline passed
		return answer(o)
	default:
	}
	r.abandoned.Add(1)
	if !state.CompareAndSwap(working, abandoned) {
		// The work ended as the deadline passed: its answer stands.
		r.abandoned.Add(-1)
		return answer(<-done)
	}
	r.abandonedTotal.Add(1)
	return endedResult(t.Name, callCtx.Err())
}

// run admits, validates and invokes t under ctx, which ends at the
// tool's deadline: counted from the call's start, so the caller waits
// for validation too.
func (r *Registry) run(ctx context.Context, t *ToolDef, caller Caller, args map[string]any, text []byte, rec *CallRecord) *Result {
	if a := r.AdmitCall(caller, t, args); !a.Allowed {
		return a.Err(t).result()
	}
	if args == nil {
		args = map[string]any{}
	}
	v, err := r.tools[t.Name].checker()
	if err != nil {
		return Fail(CodeInternal, err.Error())
	}
	if errs := v.validate(args); len(errs) > 0 {
		msgs := make([]string, len(errs))
		list := make([]any, len(errs))
		for i, e := range errs {
			msgs[i] = e.Message
			list[i] = map[string]any{"pointer": e.Pointer, "message": e.Message}
		}
		return Fail(CodeInvalidInput, fmt.Sprintf("invalid arguments for '%s': %s", t.Name, strings.Join(msgs, "; "))).
			WithDetails(map[string]any{"errors": list}).
			Suggest("Fix the arguments; tools.describe_tool shows the full input schema.", "tools.describe_tool")
	}
	return r.invoke(ctx, t, args, text, rec)
}

// invoke runs the handler under ctx, which ends at the tool's deadline
// and when the caller cancels; a panic is contained as internal_error.
func (r *Registry) invoke(ctx context.Context, t *ToolDef, args map[string]any, text []byte, rec *CallRecord) (res *Result) {
	defer func() {
		if v := recover(); v != nil {
			rec.Panic, rec.Stack = v, debug.Stack()
			res = internalError(t.Name)
		}
	}()
	// Validating large arguments may have used up the time: then they are
	// not decoded and the handler does not start.
	if why := ctx.Err(); why != nil {
		return endedResult(t.Name, why)
	}
	out, err := t.call(context.WithValue(ctx, callScopeKey{}, &callScope{registry: r}), args, text)
	if why := ctx.Err(); why != nil {
		// The call ended while the handler ran: whatever it returned is
		// not the answer the caller waited for.
		return endedResult(t.Name, why)
	}
	switch {
	case err != nil:
		var te *ToolError
		if errors.As(err, &te) {
			return te.result()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return timeoutError(t.Name)
		}
		rec.Err = err
		return internalError(t.Name)
	case out == nil:
		return OK(nil)
	default:
		return out
	}
}

// endedResult answers a call whose context ended: its deadline passed
// (why is context.DeadlineExceeded) or the caller cancelled.
func endedResult(tool string, why error) *Result {
	if errors.Is(why, context.DeadlineExceeded) {
		return timeoutError(tool)
	}
	return Fail(CodeToolError, fmt.Sprintf("tool '%s' was cancelled by the caller", tool))
}

func internalError(tool string) *Result {
	return Fail(CodeInternal, fmt.Sprintf("tool '%s' failed unexpectedly; the server log has the details", tool))
}

func timeoutError(tool string) *Result {
	return Fail(CodeTimeout, fmt.Sprintf("tool '%s' did not finish before its deadline", tool)).
		Suggest("Retry with a smaller input, or ask the operator to raise limits.tool_timeout.")
}

func (r *Registry) visibleNames(caller Caller) []string {
	out := []string{}
	for _, t := range r.Visible(caller, "") {
		out = append(out, t.Name)
	}
	return out
}

// keepAdmitted drops the next steps and suggested tools that name a tool
// (or, for a next step, a call) caller may not make: guidance never
// points at a closed door. A name that
// is no tool (a placeholder such as "<namespace>.help", a prompt) stays.
func (r *Registry) keepAdmitted(caller Caller, res *Result) {
	closedWith := func(name string, args map[string]any) bool {
		t, ok := r.Lookup(name)
		return ok && !r.AdmitCall(caller, t, args).Allowed
	}
	closed := func(name string) bool { return closedWith(name, nil) }
	// Filtered into new slices: a handler may hand the same guidance to
	// every call, and another caller may be admitted to more. A next step
	// is closed too when its args hint makes the call one this caller may
	// not make (a WritesWith argument).
	res.NextSteps = slices.DeleteFunc(slices.Clone(res.NextSteps), func(n NextStep) bool { return closedWith(n.Tool, n.ArgsHint) })
	if res.Remedy != nil {
		remedy := *res.Remedy
		remedy.SuggestedTools = slices.DeleteFunc(slices.Clone(remedy.SuggestedTools), closed)
		res.Remedy = &remedy
	}
}

// ValidateArgs checks arguments against a tool's schema without running
// it (examples, dry runs).
func (r *Registry) ValidateArgs(name string, args map[string]any) ([]ArgError, bool) {
	t, ok := r.Lookup(name)
	if !ok {
		return nil, false
	}
	return r.tools[t.Name].validate(args), true
}
