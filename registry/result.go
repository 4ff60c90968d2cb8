package registry

import (
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/cursus-dev/cursus/internal/verbatim"
)

// Error codes: machine-readable and stable. Add one only with a test.
const (
	CodeUnknownTool         = "unknown_tool"
	CodeInvalidInput        = "invalid_input"
	CodeNotFound            = "not_found"
	CodeToolDisabled        = "tool_disabled"
	CodeForbidden           = "forbidden"
	CodeInternal            = "internal_error"
	CodeToolError           = "tool_error"
	CodeTimeout             = "timeout"
	CodeValidationFailed    = "validation_failed"
	CodeNotConstructible    = "not_constructible"
	CodeConfigInvalid       = "config_invalid"
	CodeScriptAnalysisError = "script_analysis_error"
	CodeScriptCheckFailed   = "script_check_failed"
	CodeAlreadyExists       = "already_exists"
	CodeUnsupported         = "unsupported"
	CodeUpsertFailed        = "upsert_failed"
	CodeRuntimeUnavailable  = "runtime_unavailable"
	CodeUnauthenticated     = "unauthenticated" // missing or invalid credentials (HTTP 401)
	CodeRateLimited         = "rate_limited"    // over the caller's rate or concurrency budget (HTTP 429)
	CodeStorageError        = "storage_error"   // the workspace refused a write: full, read-only or not writable (HTTP 507)
	CodeUnknownRunKey       = "unknown_run_key" // a workflow run token signed with a key this server no longer holds: start a new run
	CodeRunTokenSpent       = "run_token_spent" // a workflow run token already used for a submission: send the one it returned (HTTP 409)
	// CodeRunStoreUnavailable: the shared store of spent run tokens did not
	// answer, so a submission cannot be told apart from a replay; nothing
	// was spent by this call, and sending the same token again later works
	// (HTTP 503).
	CodeRunStoreUnavailable = "run_store_unavailable"
)

// Codes lists every error code, for documentation and tests.
var Codes = []string{
	CodeUnknownTool, CodeInvalidInput, CodeNotFound, CodeToolDisabled, CodeForbidden,
	CodeInternal, CodeToolError, CodeTimeout, CodeValidationFailed, CodeNotConstructible,
	CodeConfigInvalid, CodeScriptAnalysisError, CodeScriptCheckFailed, CodeAlreadyExists,
	CodeUnsupported, CodeUpsertFailed, CodeRuntimeUnavailable, CodeUnauthenticated, CodeRateLimited,
	CodeStorageError, CodeUnknownRunKey, CodeRunTokenSpent, CodeRunStoreUnavailable,
}

// NextStep suggests the tool an agent should call after a success.
type NextStep struct {
	Tool     string         `json:"tool"`
	When     string         `json:"when"`
	Why      string         `json:"why"`
	ArgsHint map[string]any `json:"args_hint,omitempty"`
}

// Remedy tells an agent how to recover from a failure.
type Remedy struct {
	SuggestedTools []string `json:"suggested_tools"`
	FixAction      string   `json:"fix_action"`
}

// Result is the envelope every tool returns. Build one with OK or Fail.
type Result struct {
	OK        bool
	Data      any
	Error     string
	Code      string
	NextSteps []NextStep
	Remedy    *Remedy
	Warnings  []string
	// Meta holds the tool's own facts (counts, ids, details). The registry
	// adds meta.tool and meta.duration_ms with Stamp; those two keys in
	// Meta are ignored once stamped.
	Meta map[string]any

	tool     string
	duration time.Duration
	timed    bool
}

// OK is a successful result carrying data.
func OK(data any) *Result { return &Result{OK: true, Data: data} }

// Fail is a failed result with a code and a message.
func Fail(code, message string) *Result {
	return &Result{OK: false, Code: code, Error: message}
}

// Next appends next-step suggestions (successes only; ignored on failure).
func (r *Result) Next(steps ...NextStep) *Result {
	r.NextSteps = append(r.NextSteps, steps...)
	return r
}

// Warn appends warnings.
func (r *Result) Warn(msgs ...string) *Result {
	r.Warnings = append(r.Warnings, msgs...)
	return r
}

// WithMeta sets one meta key.
func (r *Result) WithMeta(key string, v any) *Result {
	if r.Meta == nil {
		r.Meta = map[string]any{}
	}
	r.Meta[key] = v
	return r
}

// ForTool names the tool in meta.tool (a call refused before it ran).
func (r *Result) ForTool(name string) *Result {
	r.tool = name
	return r
}

// Stamp records the tool that answered and how long it took, for
// meta.tool and meta.duration_ms.
func (r *Result) Stamp(tool string, d time.Duration) *Result {
	r.tool, r.duration, r.timed = tool, d, true
	return r
}

// Tool is meta.tool: the tool this envelope answers for ("" if unknown).
func (r *Result) Tool() string {
	if r.tool != "" {
		return r.tool
	}
	s, _ := r.Meta["tool"].(string)
	return s
}

// DurationMS is meta.duration_ms, in milliseconds with microsecond
// resolution, and whether the registry timed the call.
func (r *Result) DurationMS() (float64, bool) {
	return float64(r.duration.Microseconds()) / 1000, r.timed
}

// WithDetails puts a failure report into meta.details. An empty map is
// dropped so the wire form stays minimal.
func (r *Result) WithDetails(details map[string]any) *Result {
	if len(details) == 0 {
		return r
	}
	return r.WithMeta("details", details)
}

// Suggest attaches a remedy (failures only).
func (r *Result) Suggest(fixAction string, tools ...string) *Result {
	r.Remedy = &Remedy{SuggestedTools: nonNil(tools), FixAction: fixAction}
	return r
}

// The wire forms, in the field order of SPEC §2. Empty optional fields
// are dropped; data is always present on success, even when null.
type wireSuccess struct {
	OK        bool       `json:"ok"`
	Data      any        `json:"data"`
	NextSteps []NextStep `json:"next_steps,omitempty"`
	Warnings  []string   `json:"warnings,omitempty"`
	Meta      any        `json:"meta,omitempty"`
}

type wireFailure struct {
	OK       bool     `json:"ok"`
	Error    string   `json:"error"`
	Code     string   `json:"code"`
	Remedy   *Remedy  `json:"remedy,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Meta     any      `json:"meta,omitempty"`
}

// MarshalJSON writes the wire form: success {ok,data,next_steps,warnings,
// meta}; failure {ok,error,code,remedy,warnings,meta}.
func (r *Result) MarshalJSON() ([]byte, error) { return verbatim.Marshal(r.wire()) }

func (r *Result) wire() any {
	if r.OK {
		return wireSuccess{OK: true, Data: r.Data, NextSteps: r.NextSteps, Warnings: r.Warnings, Meta: r.wireMeta()}
	}
	code := r.Code
	if code == "" {
		code = CodeToolError
	}
	return wireFailure{Error: r.Error, Code: code, Remedy: r.Remedy, Warnings: r.Warnings, Meta: r.wireMeta()}
}

// wireMeta is meta on the wire: Meta with the registry's stamp
// (meta.tool, meta.duration_ms) in place of any such keys the tool set.
// Most tools set none; the stamp alone is then a struct, which encodes
// without building and sorting a map (a trivial envelope in 0.9 µs
// instead of 2.2).
func (r *Result) wireMeta() any {
	ms, timed := r.DurationMS()
	switch {
	case len(r.Meta) == 0 && r.tool == "" && !timed:
		return nil // omitted
	case len(r.Meta) == 0 && timed:
		return stamp{DurationMS: ms, Tool: r.tool}
	case r.tool == "" && !timed:
		return r.Meta
	}
	meta := make(map[string]any, len(r.Meta)+2)
	maps.Copy(meta, r.Meta)
	if r.tool != "" {
		meta["tool"] = r.tool
	}
	if timed {
		meta["duration_ms"] = ms
	}
	return meta
}

// stamp is the registry's meta keys, in the order encoding/json sorts them.
type stamp struct {
	DurationMS float64 `json:"duration_ms"`
	Tool       string  `json:"tool,omitempty"`
}

// Encode returns the envelope's wire bytes.
func (r *Result) Encode() []byte {
	b, err := r.MarshalJSON()
	if err != nil {
		b, _ = r.unencodable().MarshalJSON()
	}
	return b
}

// EncodeTo writes what Encode returns and a newline to w, without
// building the bytes first (a compile result can be large).
func (r *Result) EncodeTo(w io.Writer) error {
	if err := verbatim.Encode(w, r.wire()); err == nil {
		return nil
	}
	return verbatim.Encode(w, r.unencodable().wire())
}

// unencodable answers for a result whose data cannot be encoded: a
// handler bug, reported as such rather than as half an envelope.
func (r *Result) unencodable() *Result {
	return Fail(CodeInternal, "tool result could not be encoded").ForTool(r.Tool())
}

// ToolError is an error a handler returns to fail with a specific code,
// details and remedy.
type ToolError struct {
	Code    string
	Message string
	Details map[string]any
	Remedy  *Remedy
}

func (e *ToolError) Error() string { return e.Message }

// Errorf builds a ToolError with a formatted message.
func Errorf(code, format string, a ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, a...)}
}

// WithDetails attaches details (shown in meta.details).
func (e *ToolError) WithDetails(d map[string]any) *ToolError {
	e.Details = d
	return e
}

// Suggest attaches a remedy.
func (e *ToolError) Suggest(fixAction string, tools ...string) *ToolError {
	e.Remedy = &Remedy{SuggestedTools: nonNil(tools), FixAction: fixAction}
	return e
}

func (e *ToolError) result() *Result {
	r := Fail(e.Code, e.Message).WithDetails(e.Details)
	r.Remedy = e.Remedy
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
