package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

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
		if def, ok := s.deps.Registry.Lookup(name); ok && !st.toolsets.has(def) {
			res = outsideToolsets(s.deps.Registry, st.caller(), st.toolsets, def).ForTool(name)
		}
		if res == nil {
			res = s.deps.Registry.Call(registry.WithCaller(r.Context(), st.caller()), name, st.args)
		}
		writeJSON(w, statusFor(res), res.Encode())
	}
}

// handleListTools serves GET /tools: the tools this caller may call, in
// the OpenAI function shape, or the MCP shape with ?format=mcp.
func (s *Server) handleListTools() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		st := stateFrom(r.Context())
		tools := slices.DeleteFunc(s.deps.Registry.Visible(st.caller(), q.Get("namespace")), func(t *registry.ToolDef) bool { return !st.toolsets.has(t) })
		var out any
		switch q.Get("format") {
		case "", "openai":
			out = registry.ExportOpenAI(tools)
		case "mcp":
			out = registry.ExportMCP(tools)
		default:
			writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, "format must be openai or mcp").Encode())
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
