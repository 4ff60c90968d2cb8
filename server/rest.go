package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/cursus-dev/cursus"
	"github.com/cursus-dev/cursus/registry"
)

// statusFor maps an envelope to its HTTP status (SPEC §5).
func statusFor(res *registry.Result) int {
	if res.OK {
		return http.StatusOK
	}
	switch res.Code {
	case registry.CodeInvalidInput:
		return http.StatusBadRequest
	case registry.CodeUnknownTool, registry.CodeNotFound:
		return http.StatusNotFound
	case registry.CodeToolDisabled, registry.CodeForbidden:
		return http.StatusForbidden
	case registry.CodeUnauthenticated:
		return http.StatusUnauthorized
	case registry.CodeRateLimited:
		return http.StatusTooManyRequests
	case registry.CodeTimeout:
		return http.StatusGatewayTimeout
	case registry.CodeInternal:
		return http.StatusInternalServerError
	case registry.CodeStorageError:
		return http.StatusInsufficientStorage
	case registry.CodeRunTokenSpent:
		return http.StatusConflict
	case registry.CodeRunStoreUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusUnprocessableEntity
	}
}

// handleCall runs POST /call/{tool}: body = arguments, response = envelope.
// restCallGuard, on this route, has decoded the body into the request state.
func (s *Server) handleCall() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		name := chi.URLParam(r, "tool")
		res := st.argsBad
		def, known := s.deps.Registry.Lookup(name)
		if known && !st.toolsets.has(def) {
			res = outsideToolsets(s.deps.Registry, st.caller(), st.toolsets, def).ForTool(name)
		}
		args, text := st.args, st.body
		if res == nil && known {
			var converted bool
			args, converted, res = variantArgs(r, def, args)
			if converted {
				text = nil // the body is in the variant's shape, args in the tool's
				// A variant sends free-form objects as strings of JSON:
				// decoded, they face the depth and size limits again.
				if st.guards != nil {
					if _, refusal := st.guards.argsRefusal(args); refusal != nil {
						res = refusal.ForTool(name)
						reportCall(r.Context(), registry.CallRecord{Caller: st.caller(), Tool: def.Name, Code: res.Code, Gated: registry.Gated(def, args)}, false)
					}
				}
			}
		}
		if res == nil {
			ctx := registry.WithCaller(r.Context(), st.caller())
			if st.call != nil && st.call.release != nil {
				// Released when the call's work ends (restCallGuard
				// releases it on every other way out).
				ctx = registry.WithWorkEnd(ctx, st.call.release)
				st.call.release = nil
			}
			res = s.deps.Registry.CallJSON(ctx, name, args, text)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusFor(res))
		_ = res.EncodeTo(w)
	}
}

// handleListTools serves GET /tools: the tools this caller may call, in
// the OpenAI function shape, or the MCP shape with ?format=mcp. Each is
// lean, as the default MCP tools/list, unless ?detail=full.
func (s *Server) handleListTools() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		st := stateFrom(r.Context())
		tools := slices.DeleteFunc(s.deps.Registry.Visible(st.caller(), q.Get("namespace")), func(t *registry.ToolDef) bool { return !st.toolsets.has(t) })
		strict, err := strictParam(q)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, err.Error()).Encode())
			return
		}
		full := false
		switch q.Get("detail") {
		case "", toolListLean:
		case toolListFull:
			full = true
		default:
			writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, "detail must be lean (the default) or full").Encode())
			return
		}
		var out any
		switch format := q.Get("format"); {
		case (format == "" || format == "openai") && full:
			out = registry.ExportOpenAI(tools, strict)
		case format == "" || format == "openai":
			out = registry.ExportOpenAILean(tools, strict)
		case strict:
			writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, "strict=true applies to the openai format only (gemini has its own rules; the MCP inputSchema stays full JSON Schema)").Encode())
			return
		case format == "mcp" && full:
			out = registry.ExportMCP(tools)
		case format == "mcp":
			out = registry.ExportMCPLean(tools)
		case format == "gemini" && full:
			out = registry.ExportGemini(tools)
		case format == "gemini":
			out = registry.ExportGeminiLean(tools)
		default:
			writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, "format must be openai, mcp or gemini").Encode())
			return
		}
		body, err := json.Marshal(out)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, registry.Fail(registry.CodeInternal, "could not encode tools").Encode())
			return
		}
		writeJSON(w, http.StatusOK, body)
	}
}

func (s *Server) handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	}
}

// handleReadyz is ready once the registry is built and until shutdown
// starts, so a draining replica leaves the load balancer first.
func (s *Server) handleReadyz() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"shutting down"}`))
			return
		}
		body, _ := json.Marshal(map[string]any{"status": "ready", "tools": len(s.deps.Registry.Tools(""))})
		writeJSON(w, http.StatusOK, body)
	}
}

func handleOpenAPI() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(cursus.OpenAPI)
	}
}

// handleNoRoute answers a request no route serves. The path is echoed
// truncated; openapi.yaml lists the routes.
func handleNoRoute(status int, code, what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if len(path) > 200 {
			path = path[:200] + "…"
		}
		writeJSON(w, status, registry.Fail(code, fmt.Sprintf("%s: %s %s (see /openapi.yaml; tools are called with POST /call/<tool>)", what, r.Method, path)).Encode())
	}
}

// strictParam reads ?strict= (absent is false).
func strictParam(q url.Values) (bool, error) {
	v := q.Get("strict")
	if v == "" {
		return false, nil
	}
	strict, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("strict must be true or false, got %q", v)
	}
	return strict, nil
}

// variantArgs converts the arguments of a call that says it was written
// against a schema variant of GET /tools (?strict=true or ?format=gemini)
// back to the tool's own schema, which then validates them as any call's.
// converted says whether they were.
func variantArgs(r *http.Request, t *registry.ToolDef, args map[string]any) (_ map[string]any, converted bool, _ *registry.Result) {
	if r.URL.RawQuery == "" {
		return args, false, nil
	}
	q := r.URL.Query()
	strict, err := strictParam(q)
	if err != nil {
		return nil, false, registry.Fail(registry.CodeInvalidInput, err.Error()).ForTool(t.Name)
	}
	switch format := q.Get("format"); {
	case format == "gemini" || (strict && (format == "" || format == "openai")):
	case format == "" || format == "openai":
		return args, false, nil
	default:
		return nil, false, registry.Fail(registry.CodeInvalidInput, "format on /call must be openai (with strict=true) or gemini: the schema variant the arguments were written against").ForTool(t.Name)
	}
	out, err := registry.FromVariantArgs(t.Schema(), args)
	if err != nil {
		return nil, false, registry.Fail(registry.CodeInvalidInput, fmt.Sprintf("invalid arguments for '%s': %v", t.Name, err)).ForTool(t.Name)
	}
	return out, true, nil
}
