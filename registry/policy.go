package registry

import (
	"context"
	"slices"
)

// Settings that open the gates, named in tool_disabled errors and in help.
const (
	SettingDestructive = "CURSUS_MCP_ENABLE_DESTRUCTIVE=1 (config: gates.enable_destructive)"
	SettingScriptExec  = "CURSUS_MCP_ALLOW_SCRIPT_EXEC=1 (config: gates.allow_script_exec)"
)

// Policy decides which tools remote callers may see and call. The zero
// value is the safe default: read-only tools on, everything else off.
type Policy struct {
	EnableDestructive bool     // opens destructive and writes tools
	AllowScriptExec   bool     // opens exec_code tools
	Allow             []string // tool names or namespaces; empty = no narrowing
	Deny              []string // tool names or namespaces; wins over Allow
}

// Gate reports whether remote callers may use t, and if not, the setting
// that would enable it.
func (p Policy) Gate(t *ToolDef) (enabled bool, setting string) {
	if matches(p.Deny, t) {
		return false, "remove it from gates.deny (CURSUS_GATES_DENY)"
	}
	if len(p.Allow) > 0 && !matches(p.Allow, t) {
		return false, "add it to gates.allow (CURSUS_GATES_ALLOW)"
	}
	if t.ExecCode && !p.AllowScriptExec {
		return false, SettingScriptExec
	}
	if (t.Destructive || t.Writes) && !p.EnableDestructive {
		return false, SettingDestructive
	}
	return true, ""
}

func matches(list []string, t *ToolDef) bool {
	if len(list) == 0 {
		return false
	}
	return slices.Contains(list, t.Name) || slices.Contains(list, t.WireName()) || slices.Contains(list, t.Namespace())
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
