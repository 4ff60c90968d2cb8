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
// tool". A tool is listed exactly when it may be called.
type Admission struct {
	Allowed bool
	Gate    Gate   // what closed it ("" when allowed)
	Scope   string // the scope the tool needs (GateScope)
	Hint    string // how to open it, in the deployment's words (Options.GateHints)
}

// Code is the envelope code of a call the admission refuses.
func (a Admission) Code() string {
	if a.Gate == GateScope {
		return CodeForbidden
	}
	return CodeToolDisabled
}

// Admit decides whether caller may see and call t. Trusted (non-remote)
// callers may use every tool; for remote ones the deployment's gates
// apply, then the scopes of the caller's credential (nil when the server
// has no authentication).
func (r *Registry) Admit(caller Caller, t *ToolDef) Admission {
	if !caller.Remote {
		return Admission{Allowed: true}
	}
	if gate := r.opts.Policy.closedBy(t); gate != "" {
		return Admission{Gate: gate, Hint: r.opts.GateHints[gate]}
	}
	if need := RequiredScope(t); caller.Scopes != nil && !slices.Contains(caller.Scopes, need) {
		return Admission{Gate: GateScope, Scope: need, Hint: r.opts.GateHints[GateScope]}
	}
	return Admission{Allowed: true}
}

func (p Policy) closedBy(t *ToolDef) Gate {
	switch {
	case matches(p.Deny, t):
		return GateDeny
	case len(p.Allow) > 0 && !matches(p.Allow, t):
		return GateAllow
	case t.ExecCode && !p.AllowScriptExec:
		return GateExec
	case (t.Destructive || t.Writes) && !p.EnableDestructive:
		return GateWrite
	}
	return ""
}

func matches(list []string, t *ToolDef) bool {
	return slices.ContainsFunc(list, func(name string) bool {
		return strings.EqualFold(name, t.Name) || strings.EqualFold(name, t.WireName()) || strings.EqualFold(name, t.Namespace())
	})
}

// Err is the error of a call to t that the admission refuses.
func (a Admission) Err(t *ToolDef) *ToolError {
	var msg string
	if a.Gate == GateScope {
		msg = fmt.Sprintf("tool '%s' needs the '%s' scope, which this credential lacks", t.Name, a.Scope)
	} else {
		msg = fmt.Sprintf("tool '%s' is disabled on this server; only the operator can enable it", t.Name)
	}
	details := map[string]any{"gate": string(a.Gate)}
	if a.Scope != "" {
		details["required_scope"] = a.Scope
	}
	if a.Hint != "" {
		msg += " (" + a.Hint + ")"
		details["setting"] = a.Hint
	}
	return Errorf(a.Code(), "%s", msg).WithDetails(details)
}

// Scopes a bearer token may carry.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
	ScopeExec  = "exec"
)

// RequiredScope is the scope a caller needs for t.
func RequiredScope(t *ToolDef) string {
	switch {
	case t.ExecCode:
		return ScopeExec
	case t.Destructive || t.Writes:
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
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		fn(done, total, message)
	}
}
