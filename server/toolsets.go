package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cursus-dev/cursus/registry"
)

// A toolset is a namespace. The deployment offers some (mcp.toolsets,
// every namespace when empty) and a request may pick fewer: the header
// X-MCP-Toolsets: catalog,dag, the path /mcp/x/catalog,dag, or
// GET /tools?toolsets=catalog,dag. A selection narrows what a request
// lists and may call; registry.Admit still decides what the caller may
// call at all. tools.help is in every selection.
const (
	toolsetsHeader = "X-MCP-Toolsets"
	// toolsetsHeaderKey is its canonical form, the key net/http stores it
	// under: Header.Values would build that form anew on every request.
	toolsetsHeaderKey = "X-Mcp-Toolsets"
	allToolsets       = "all" // every toolset the deployment offers
)

// toolsets is a selection of namespaces; nil selects every one.
type toolsets map[string]bool

// has tells whether t is in the selection.
func (ts toolsets) has(t *registry.ToolDef) bool {
	return ts == nil || ts[t.Namespace()] || t.Name == "tools.help"
}

func (ts toolsets) names(reg *registry.Registry) []string {
	if ts == nil {
		return slices.Sorted(maps.Keys(reg.Namespaces()))
	}
	return slices.Sorted(maps.Keys(ts))
}

// parseToolsets reads a list of toolset names (each may itself be a comma
// list) as a selection within offered. No names select offered; "all"
// selects offered too. A name that is not offered is an error naming the
// ones that are.
func parseToolsets(reg *registry.Registry, offered toolsets, list []string) (toolsets, error) {
	if len(list) == 0 {
		return offered, nil
	}
	picked := toolsets{}
	var unknown []string
	for _, item := range list {
		for _, name := range strings.Split(item, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			switch {
			case name == "":
			case name == allToolsets:
				return offered, nil
			case isOffered(reg, offered, name):
				picked[name] = true
			default:
				unknown = append(unknown, name)
			}
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown toolset %s; the toolsets are %s (or %s)",
			strings.Join(unknown, ", "), strings.Join(offered.names(reg), ", "), allToolsets)
	}
	if len(picked) == 0 {
		return offered, nil
	}
	return picked, nil
}

func isOffered(reg *registry.Registry, offered toolsets, name string) bool {
	if offered != nil {
		return offered[name]
	}
	_, ok := reg.Namespaces()[name]
	return ok
}

// CheckToolsets refuses an mcp.toolsets setting that names no namespace of
// reg, so that a typo fails at startup instead of hiding tools.
func CheckToolsets(reg *registry.Registry, cfg MCPConfig) error {
	if _, err := parseToolsets(reg, nil, cfg.Toolsets); err != nil {
		return fmt.Errorf("mcp.toolsets (CURSUS_MCP_TOOLSETS): %w", err)
	}
	return nil
}

// deploymentToolsets is the selection mcp.toolsets makes (checked at
// startup by CheckToolsets; a name no namespace has selects nothing).
func deploymentToolsets(reg *registry.Registry, cfg MCPConfig) toolsets {
	ts, err := parseToolsets(reg, nil, cfg.Toolsets)
	if err != nil {
		ts = toolsets{}
		for _, name := range cfg.Toolsets {
			ts[strings.ToLower(strings.TrimSpace(name))] = true
		}
	}
	return ts
}

// selectToolsets records the request's toolset selection in its state. An
// unknown name is a 400: a JSON-RPC error on the MCP routes, an envelope
// elsewhere.
func (s *Server) selectToolsets(rpc bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			list := slices.Clip(r.Header[toolsetsHeaderKey]) // appending never writes into the header
			if p := chi.URLParam(r, "toolsets"); p != "" {
				list = append(list, p)
			}
			if r.URL.RawQuery != "" {
				list = append(list, r.URL.Query()["toolsets"]...)
			}
			ts, err := parseToolsets(s.deps.Registry, s.toolsets, list)
			if err != nil {
				if rpc {
					writeJSONRPCError(w, http.StatusBadRequest, r, err.Error())
				} else {
					writeJSON(w, http.StatusBadRequest, registry.Fail(registry.CodeInvalidInput, err.Error()).Encode())
				}
				return
			}
			if st := stateFrom(r.Context()); st != nil {
				st.toolsets = ts
			}
			next.ServeHTTP(w, r)
		})
	}
}

// writeJSONRPCError answers an MCP request with a JSON-RPC "invalid
// params" error, with the id of the request when its body has one.
func writeJSONRPCError(w http.ResponseWriter, status int, r *http.Request, message string) {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if st := stateFrom(r.Context()); st != nil {
		_ = json.Unmarshal(st.body, &msg)
	}
	if len(msg.ID) == 0 {
		msg.ID = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": msg.ID,
		"error": map[string]any{"code": mcp.INVALID_PARAMS, "message": message},
	})
	writeJSON(w, status, body)
}

// selectedToolsets is the request's selection (all outside an HTTP or
// stdio front end).
func (st *requestState) selectedToolsets() toolsets {
	if st == nil {
		return nil
	}
	return st.toolsets
}

// outsideToolsets answers a call to a tool the request's selection leaves
// out, as a call to a tool that is not there, naming the tools it may call.
func outsideToolsets(reg *registry.Registry, caller registry.Caller, ts toolsets, t *registry.ToolDef) *registry.Result {
	available := []string{}
	for _, v := range reg.Visible(caller, "") {
		if ts.has(v) {
			available = append(available, v.Name)
		}
	}
	return registry.Fail(registry.CodeUnknownTool, fmt.Sprintf("tool '%s' is not in this request's toolsets (%s)", t.Name, strings.Join(ts.names(reg), ", "))).
		WithDetails(map[string]any{"available": available}).
		Suggest(fmt.Sprintf("Add '%s' to the %s header (or the /mcp/x/<toolsets> path), or leave the selection out.", t.Namespace(), toolsetsHeader))
}
