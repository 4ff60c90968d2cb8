package registry

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	segjson "github.com/segmentio/encoding/json"
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
)

// Codes lists every error code, for documentation and tests.
var Codes = []string{
	CodeUnknownTool, CodeInvalidInput, CodeNotFound, CodeToolDisabled, CodeForbidden,
	CodeInternal, CodeToolError, CodeTimeout, CodeValidationFailed, CodeNotConstructible,
	CodeConfigInvalid, CodeScriptAnalysisError, CodeScriptCheckFailed, CodeAlreadyExists,
	CodeUnsupported, CodeUpsertFailed, CodeRuntimeUnavailable, CodeUnauthenticated, CodeRateLimited,
	CodeStorageError,
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

// MarshalJSON writes the wire form, in the field order of SPEC §2:
// success {ok,data,next_steps,warnings,meta}; failure {ok,error,code,
// remedy,warnings,meta}. Empty optional fields are dropped; data is always
// present on success, even when null.
//
// The envelope's own fields are written here and each value by
// marshalNoEscape, so meta can merge the registry's stamp with the tool's
// keys without a map of its own: every call encodes an envelope.
func (r *Result) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 256)
	var err error
	field := func(name string, v any) {
		if err == nil {
			b = append(b, name...)
			b, err = appendNoEscape(b, v)
		}
	}
	if r.OK {
		b = append(b, `{"ok":true`...)
		field(`,"data":`, r.Data)
		if len(r.NextSteps) > 0 {
			field(`,"next_steps":`, r.NextSteps)
		}
	} else {
		code := r.Code
		if code == "" {
			code = CodeToolError
		}
		b = append(b, `{"ok":false`...)
		field(`,"error":`, r.Error)
		field(`,"code":`, code)
		if r.Remedy != nil {
			field(`,"remedy":`, r.Remedy)
		}
	}
	if len(r.Warnings) > 0 {
		field(`,"warnings":`, r.Warnings)
	}
	if err == nil {
		b, err = r.appendMeta(b)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendMeta writes `,"meta":{...}` with keys sorted (as encoding/json
// sorts a map's), or nothing when meta is empty.
func (r *Result) appendMeta(b []byte) ([]byte, error) {
	var stack [8]string
	keys := stack[:0]
	for k := range r.Meta {
		if r.stamped(k) {
			continue
		}
		keys = append(keys, k)
	}
	if r.tool != "" {
		keys = append(keys, "tool")
	}
	if r.timed {
		keys = append(keys, "duration_ms")
	}
	if len(keys) == 0 {
		return b, nil
	}
	slices.Sort(keys)
	b = append(b, `,"meta":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		switch {
		case k == "tool" && r.tool != "":
			b = appendString(b, r.tool)
		case k == "duration_ms" && r.timed:
			// Milliseconds with microsecond resolution: 0 or at least 0.001,
			// which encoding/json writes in this plain form too.
			ms, _ := r.DurationMS()
			b = strconv.AppendFloat(b, ms, 'f', -1, 64)
		default:
			var err error
			if b, err = appendNoEscape(b, r.Meta[k]); err != nil {
				return nil, err
			}
		}
	}
	return append(b, '}'), nil
}

// appendString writes s as a JSON string. Printable ASCII without quotes
// or backslashes (tool names, meta keys) is written as it is; anything
// else goes through the encoder, which escapes as encoding/json does.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b, _ = appendNoEscape(b, s) // a string always encodes
			return b
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// stamped reports whether the registry's stamp supersedes Meta's key.
func (r *Result) stamped(key string) bool {
	return key == "tool" && r.tool != "" || key == "duration_ms" && r.timed
}

// marshalNoEscape encodes like json.Marshal but leaves <, > and & alone:
// envelopes carry scripts and S3 paths, and agents read them verbatim.
// Every call encodes an envelope, some of them large (compiled pipeline
// definitions), so it uses segmentio's encoder: encoding/json's output
// (map keys sorted), in about half the time and without its per-map
// reflection allocations.
func marshalNoEscape(v any) ([]byte, error) { return appendNoEscape(nil, v) }

func appendNoEscape(b []byte, v any) ([]byte, error) {
	return segjson.Append(b, v, segjson.SortMapKeys)
}

// Encode returns the envelope's wire bytes.
func (r *Result) Encode() []byte {
	b, err := r.MarshalJSON()
	if err != nil {
		// Data that cannot be encoded is a handler bug; report it as such
		// rather than sending half an envelope.
		b, _ = Fail(CodeInternal, "tool result could not be encoded").ForTool(r.Tool()).MarshalJSON()
	}
	return b
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
