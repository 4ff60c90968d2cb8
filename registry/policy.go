package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Policy is the deployment's gate policy for remote callers. The zero
// value is the safe default: read-only tools on, everything else off.
type Policy struct {
	EnableDestructive bool     // opens destructive and writes tools
	AllowScriptExec   bool     // opens exec_code tools
	Allow             []string // tool names or namespaces; empty = no narrowing
	Deny              []string // tool names or namespaces; wins over Allow
}

// Gate names what keeps a tool closed to a caller.
type Gate string

// The gates, in the order Admit checks them.
const (
	GateDeny  Gate = "deny"   // the tool is on the deployment's deny list
	GateAllow Gate = "allow"  // the deployment allows a list of tools and this is not on it
	GateExec  Gate = "exec"   // the tool runs code and script execution is off
	GateWrite Gate = "writes" // the tool writes files or changes AWS and writing is off
	GateScope Gate = "scope"  // the caller's credential lacks the tool's scope
)

// Admission is the one answer to "may this caller see and call this
// tool" (Admit), or "make this call" (AdmitCall). A tool is listed exactly
// when it may be called without its WritesWith arguments.
type Admission struct {
	Allowed bool
	Gate    Gate   // what closed it ("" when allowed)
	Scope   string // the scope the call needs (GateScope)
	Hint    string // how to open it, in the deployment's words (Options.GateHints)
	// WriteArgs are the arguments that made a WritesWith tool's call a
	// write, when that is what closed it.
	WriteArgs []string
	// Alternative is the tool's declared alternative when the call is
	// refused and this caller may call the alternative.
	Alternative *Alternative
}

// Code is the envelope code of a call the admission refuses.
func (a Admission) Code() string {
	if a.Gate == GateScope {
		return CodeForbidden
	}
	return CodeToolDisabled
}

// Admit decides whether caller may see t and call it without its
// WritesWith arguments: what every listing asks.
func (r *Registry) Admit(caller Caller, t *ToolDef) Admission {
	return r.AdmitCall(caller, t, nil)
}

// AdmitCall decides whether caller may call t with args. Trusted
// (non-remote) callers may make every call; for remote ones the
// deployment's gates apply, then the scopes of the caller's credential
// (nil when the server has no authentication). A refusal names the
// tool's alternative when this caller may call that.
func (r *Registry) AdmitCall(caller Caller, t *ToolDef, args map[string]any) Admission {
	a := r.decide(caller, t, args)
	if !a.Allowed && t.Alternative != nil {
		if alt, ok := r.Lookup(t.Alternative.Tool); ok && r.decide(caller, alt, nil).Allowed {
			a.Alternative = t.Alternative
		}
	}
	return a
}

func (r *Registry) decide(caller Caller, t *ToolDef, args map[string]any) Admission {
	if !caller.Remote {
		return Admission{Allowed: true}
	}
	caps := t.capabilitiesFor(args)
	// The WritesWith arguments are named when they alone make the call a write.
	var writeArgs []string
	if !t.Writes && !t.Destructive {
		writeArgs = t.WriteArgs(args)
	}
	if gate := r.opts.Policy.closedBy(t, caps); gate != "" {
		a := Admission{Gate: gate, Hint: r.opts.GateHints[gate]}
		if gate == GateWrite {
			a.WriteArgs = writeArgs
		}
		return a
	}
	if need := caps.scope(); caller.Scopes != nil && !slices.Contains(caller.Scopes, need) {
		a := Admission{Gate: GateScope, Scope: need, Hint: r.opts.GateHints[GateScope]}
		if need == ScopeWrite {
			a.WriteArgs = writeArgs
		}
		return a
	}
	return Admission{Allowed: true}
}

func (p Policy) closedBy(t *ToolDef, caps capabilities) Gate {
	switch {
	case matches(p.Deny, t):
		return GateDeny
	case len(p.Allow) > 0 && !matches(p.Allow, t):
		return GateAllow
	case caps.exec && !p.AllowScriptExec:
		return GateExec
	case (caps.destructive || caps.writes) && !p.EnableDestructive:
		return GateWrite
	}
	return ""
}

func matches(list []string, t *ToolDef) bool {
	return slices.ContainsFunc(list, func(name string) bool {
		return strings.EqualFold(name, t.Name) || strings.EqualFold(name, t.WireName()) || strings.EqualFold(name, t.Namespace())
	})
}

// Err is the error of a call to t that the admission refuses. It says
// who can open the gate and how, and names the alternative when the
// caller has one.
func (a Admission) Err(t *ToolDef) *ToolError {
	var msg, fix string
	switch {
	case a.Gate == GateScope && len(a.WriteArgs) > 0:
		msg = fmt.Sprintf("tool '%s' with %s writes the server's workspace, which needs the '%s' scope this credential lacks",
			t.Name, strings.Join(a.WriteArgs, ", "), a.Scope)
		fix = fmt.Sprintf("Use a credential with the '%s' scope", a.Scope)
	case a.Gate == GateScope:
		msg = fmt.Sprintf("tool '%s' needs the '%s' scope, which this credential lacks", t.Name, a.Scope)
		fix = fmt.Sprintf("Use a credential with the '%s' scope", a.Scope)
	case len(a.WriteArgs) > 0:
		msg = fmt.Sprintf("tool '%s' with %s writes the server's workspace, which this server does not allow; only the operator can enable writing",
			t.Name, strings.Join(a.WriteArgs, ", "))
		fix = "Only the server's operator can enable writing"
	default:
		msg = fmt.Sprintf("tool '%s' is disabled on this server; only the operator can enable it", t.Name)
		fix = "Only the server's operator can enable it"
	}
	details := map[string]any{"gate": string(a.Gate)}
	if a.Scope != "" {
		details["required_scope"] = a.Scope
	}
	if len(a.WriteArgs) > 0 {
		details["write_arguments"] = a.WriteArgs
	}
	if a.Hint != "" {
		msg += " (" + a.Hint + ")"
		fix += " (" + a.Hint + ")"
		details["setting"] = a.Hint
	}
	fix += "."
	var tools []string
	if alt := a.Alternative; alt != nil {
		details["alternative"] = *alt
		fix += " Instead, call " + alt.Tool + ": " + alt.How
		tools = append(tools, alt.Tool)
	}
	return Errorf(a.Code(), "%s", msg).WithDetails(details).Suggest(fix, tools...)
}

// Scopes a bearer token may carry.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
	ScopeExec  = "exec"
)

// RequiredScope is the scope a caller needs to see t and call it without
// its WritesWith arguments.
func RequiredScope(t *ToolDef) string { return t.capabilitiesFor(nil).scope() }

func (c capabilities) scope() string {
	switch {
	case c.exec:
		return ScopeExec
	case c.destructive || c.writes:
		return ScopeWrite
	default:
		return ScopeRead
	}
}

// Caller describes who is calling. The zero value is a trusted in-process
// caller (the CLI), to which gates do not apply.
type Caller struct {
	Remote    bool     // gates apply
	Transport string   // "mcp", "rest", "stdio", "cli"
	Principal string   // authenticated identity, "" when auth is off
	Scopes    []string // nil when auth is off (no scope check)
	RequestID string
}

type callerKey struct{}

// WithCaller attaches the caller to ctx.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller attached to ctx (zero value if none).
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

type progressKey struct{}

// ProgressFunc receives progress of a long tool call.
type ProgressFunc func(done, total float64, message string)

// WithProgress attaches a progress sink to ctx (the MCP front end sends
// notifications/progress; the CLI prints a line on stderr).
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// Progress reports progress to whatever sink ctx carries; a no-op otherwise.
func Progress(ctx context.Context, done, total float64, message string) {
	if ctx.Err() != nil {
		// The call has answered (its deadline passed, or its caller
		// left): nothing may follow its answer.
		return
	}
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		fn(done, total, message)
	}
}

// UnknownPolicyNames lists the entries of the policy's allow and deny
// lists that name no tool (dotted or wire name) and no namespace of r,
// compared as Admit compares them (case-insensitively). Such an entry
// narrows nothing, so a misspelt deny would silently leave a tool open.
func (r *Registry) UnknownPolicyNames() []string {
	var unknown []string
	for _, name := range slices.Concat(r.opts.Policy.Allow, r.opts.Policy.Deny) {
		if !r.knowsPolicyName(name) && !slices.Contains(unknown, name) {
			unknown = append(unknown, name)
		}
	}
	return unknown
}

func (r *Registry) knowsPolicyName(name string) bool {
	return slices.ContainsFunc(r.sorted, func(t *ToolDef) bool { return matches([]string{name}, t) })
}
