package server

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/cursus-dev/cursus"
	"github.com/cursus-dev/cursus/registry"
)

const serverInstructions = "cursus builds Amazon SageMaker pipelines from a DAG of step types. " +
	"Call tools__help first; every tool returns an envelope {ok, data | error, code, remedy, next_steps}. " +
	"tools/list gives each tool's summary and the shape of its arguments; tools__describe_tool gives one tool's " +
	"full input schema, examples and output schema, and <namespace>__help a namespace's tools with their examples."

// NewMCPServer exposes the registry as MCP tools. Every tools/call goes
// through registry.Call, so gates, validation and envelopes are the same as
// over REST; a call that came through our HTTP front end passes that
// server's argument and exec limits first (admitMCPCall). Gated tools are left out of tools/list but still registered,
// so a call to one gets the tool_disabled envelope instead of a bare
// "tool not found". The request's toolsets narrow both further. mcp-go's
// own per-message log lines are left off: the HTTP request line names the
// JSON-RPC method and error (hooks added in routes) and the tool-call line
// covers the call. The MCP config's ToolList picks the lean or the full
// listing. Resources and completions are in mcp_resources.go.
func NewMCPServer(deps Deps) *mcpserver.MCPServer {
	reg, prompts, cfg := deps.Registry, deps.Prompts, deps.Config.MCP
	resources := &mcpResources{reg: reg, resources: deps.Resources, prompts: prompts}
	hooks := &mcpserver.Hooks{}
	resources.hooks(hooks)
	// listed builds each tool as tools/list shows it, at the first
	// listing: mcp-go holds only a name for each tool, so start-up derives
	// no schema (initialize needs none); the hook below swaps the listed
	// form in.
	listed := map[string]func() mcp.Tool{}
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, result *mcp.ListToolsResult) {
		st := stateFrom(ctx)
		caller, selected := callerOf(st), st.selectedToolsets()
		kept := result.Tools[:0]
		for _, t := range result.Tools {
			if def, ok := reg.Lookup(t.Name); ok {
				if selected.has(def) && reg.Admit(caller, def).Allowed {
					kept = append(kept, listed[t.Name]())
				}
			}
		}
		result.Tools = kept
	})
	hooks.AddBeforeCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest) {
		routeToolCall(reg, req)
	})
	opts := []mcpserver.ServerOption{
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithHooks(hooks),
		mcpserver.WithInstructions(serverInstructions),
	}
	if len(prompts) > 0 {
		opts = append(opts, mcpserver.WithPromptCapabilities(false))
	}
	if len(deps.Resources) > 0 {
		opts = append(opts, mcpserver.WithResourceCapabilities(false, false))
	}
	if len(prompts) > 0 || len(deps.Resources) > 0 {
		opts = append(opts, mcpserver.WithCompletions(),
			mcpserver.WithPromptCompletionProvider(resources), mcpserver.WithResourceCompletionProvider(resources))
	}
	s := mcpserver.NewMCPServer("cursus", cursus.Version, opts...)
	resources.register(s)
	build := leanMCPTool
	if cfg.ToolList == toolListFull {
		build = mcpTool
	}
	for _, t := range reg.Tools("") {
		listed[t.WireName()] = sync.OnceValue(func() mcp.Tool { return build(t) })
		s.AddTool(mcp.Tool{Name: t.WireName()}, toolHandler(reg, s, t.Name))
	}
	s.AddTool(mcp.NewTool(unknownToolRoute), toolHandler(reg, s, ""))
	for _, p := range prompts {
		s.AddPrompt(mcpPrompt(p), promptHandler(reg, p))
	}
	return s
}

// unknownToolRoute is the mcp-go tool that calls to names the registry
// does not know are routed to (routeToolCall): mcp-go would answer them
// with a bare JSON-RPC error before any handler runs. The registry then
// answers with the unknown_tool envelope, metric and span, as over REST.
// It is never listed: the tools/list hook keeps only registry tools.
const unknownToolRoute = "cursus__unknown_tool"

// requestedToolKey carries the name a routed call asked for in its _meta.
const requestedToolKey = "cursus/requested_tool"

// routeToolCall runs before mcp-go looks a tools/call name up: a name the
// registry knows in either form (dotted or wire) goes to its tool, any
// other name to unknownToolRoute with the requested name in _meta.
func routeToolCall(reg *registry.Registry, req *mcp.CallToolRequest) {
	if def, ok := reg.Lookup(req.Params.Name); ok {
		req.Params.Name = def.WireName()
		return
	}
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	req.Params.Meta.AdditionalFields[requestedToolKey] = req.Params.Name
	req.Params.Name = unknownToolRoute
}

// requestedTool is the name a routed call asked for.
func requestedTool(req mcp.CallToolRequest) string {
	if req.Params.Meta != nil {
		if name, ok := req.Params.Meta.AdditionalFields[requestedToolKey].(string); ok {
			return name
		}
	}
	return req.Params.Name
}

// leanMCPTool is t as the default tools/list shows it (registry.Summary,
// registry.LeanSchema, the hints that carry meaning) and without an
// outputSchema: the smallest one that structuredContent would still match
// is {"type": "object"}, which tells a client nothing, and the envelope's
// typed schema is served by tools.describe_tool.
func leanMCPTool(t *registry.ToolDef) mcp.Tool {
	schema, _ := json.Marshal(registry.LeanSchema(t.Schema()))
	h := t.LeanAnnotations()
	return mcp.Tool{
		Name:           t.WireName(),
		Description:    t.Summary(),
		RawInputSchema: schema,
		Annotations: mcp.ToolAnnotation{
			ReadOnlyHint: h.ReadOnlyHint, DestructiveHint: h.DestructiveHint,
			IdempotentHint: h.IdempotentHint, OpenWorldHint: h.OpenWorldHint,
		},
	}
}

// mcpTool is t with its whole description, input schema and outputSchema
// (mcp.tool_list: full).
func mcpTool(t *registry.ToolDef) mcp.Tool {
	schema, _ := json.Marshal(t.Schema())
	a := t.Annotations()
	tool := mcp.Tool{
		Name:           t.WireName(),
		Description:    t.RenderDescription(),
		RawInputSchema: schema,
		Annotations: mcp.ToolAnnotation{
			Title:           a.Title,
			ReadOnlyHint:    mcp.ToBoolPtr(a.ReadOnlyHint),
			DestructiveHint: mcp.ToBoolPtr(a.DestructiveHint),
			IdempotentHint:  mcp.ToBoolPtr(a.IdempotentHint),
			OpenWorldHint:   mcp.ToBoolPtr(a.OpenWorldHint),
		},
	}
	if out := t.OutputSchema(); out != nil {
		tool.RawOutputSchema, _ = json.Marshal(out)
	}
	return tool
}

// toolHandler serves the tool name, or with an empty name the unknown
// name a call was routed for.
func toolHandler(reg *registry.Registry, s *mcpserver.MCPServer, name string) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (result *mcp.CallToolResult, err error) {
		name := name
		if name == "" {
			name = requestedTool(req)
		}
		st := stateFrom(ctx)
		// The registry contains tool panics; this catches a bug in the code
		// around the call, which would otherwise end a stdio server. (It
		// replaces mcp-go's WithRecovery, which wraps a closure around
		// every call.)
		defer func() {
			if v := recover(); v != nil {
				log := zerolog.Nop()
				if st != nil {
					log = st.tel.log
				}
				log.Error().Interface("panic", v).Bytes("stack", debug.Stack()).Str("tool", name).Msg("MCP tool handler panicked")
				result, err = toolResult(registry.Fail(registry.CodeInternal, "internal error").ForTool(name)), nil
			}
		}()
		caller := callerOf(st)
		if def, ok := reg.Lookup(name); ok && !st.selectedToolsets().has(def) {
			return toolResult(outsideToolsets(reg, caller, st.selectedToolsets(), def).ForTool(name)), nil
		}
		// release returns what the call holds; the registry runs it when
		// the call's work ends, every other way out runs it here.
		var release func()
		defer func() {
			if release != nil {
				release()
			}
		}()
		if st != nil && st.guards != nil {
			info := &callInfo{st: st, mcpMethod: string(mcp.MethodToolsCall), argv: req.Params.Arguments}
			ctx = withCallInfo(ctx, info)
			var refusal *registry.Result
			if ctx, release, refusal = st.guards.admitMCPCall(ctx, info, caller, name, req); refusal != nil {
				return toolResult(refusal.ForTool(name)), nil
			}
		}
		ctx = registry.WithCaller(ctx, caller)
		var sent atomic.Int64
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			token := req.Params.Meta.ProgressToken
			ctx = registry.WithProgress(ctx, func(done, total float64, message string) {
				params := map[string]any{"progressToken": token, "progress": done}
				if total > 0 {
					params["total"] = total
				}
				if message != "" {
					params["message"] = message
				}
				// A client that went away cannot be told; the call goes on.
				if s.SendNotificationToClient(ctx, "notifications/progress", params) == nil {
					sent.Add(1)
				}
			})
		}
		var flushed int64
		if st != nil {
			flushed = st.response.flushes.Load()
		}
		defer func() {
			if n := sent.Load(); n > 0 {
				settleNotifications(ctx, st, flushed+n)
			}
		}()
		args, bad := mcpArguments(req.Params.Arguments)
		var res *registry.Result
		if bad != nil {
			res = bad.ForTool(name)
		} else {
			if release != nil {
				ctx = registry.WithWorkEnd(ctx, release)
				release = nil
			}
			res = reg.Call(ctx, name, args)
		}
		return toolResult(res), nil
	}
}

// toolResult carries an envelope to an MCP client: as text content for
// older clients and as structuredContent, with isError = !ok.
func toolResult(res *registry.Result) *mcp.CallToolResult {
	body := res.Encode()
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(body))},
		StructuredContent: json.RawMessage(body),
		IsError:           !res.OK,
	}
}

// mcpArguments accepts the arguments object a client sent; anything but an
// object (or nothing) is invalid input.
func mcpArguments(raw any) (map[string]any, *registry.Result) {
	switch v := raw.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return v, nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, registry.Fail(registry.CodeInvalidInput, "arguments must be a JSON object")
		}
		return registry.DecodeArgs(b)
	}
}

// callerOf is the remote caller of an MCP request (state st), over HTTP
// or stdio: gates apply to every MCP surface, only the in-process CLI is
// trusted.
func callerOf(st *requestState) registry.Caller {
	if st != nil && st.transport != "" {
		return st.caller()
	}
	// An MCP server used without our HTTP or stdio front end.
	return registry.Caller{Remote: true, Transport: "stdio"}
}

func mcpPrompt(p registry.Prompt) mcp.Prompt {
	opts := []mcp.PromptOption{mcp.WithPromptDescription(p.Description)}
	for _, a := range p.Arguments {
		argOpts := []mcp.ArgumentOption{mcp.ArgumentDescription(a.Description)}
		if a.Required {
			argOpts = append(argOpts, mcp.RequiredArgument())
		}
		opts = append(opts, mcp.WithArgument(a.Name, argOpts...))
	}
	return mcp.NewPrompt(p.Name, opts...)
}

// promptHandler renders the prompt for the caller asking: its text names
// only the tools that caller may call.
func promptHandler(reg *registry.Registry, p registry.Prompt) mcpserver.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		caller := callerOf(stateFrom(ctx))
		text := p.Render(req.Params.Arguments, func(tool string) bool { return reg.MayCall(caller, tool) })
		return mcp.NewGetPromptResult(p.Description, []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
		}), nil
	}
}

// settleNotifications holds a call's result until the progress
// notifications it sent are written, so that none is lost and all precede
// the result. mcp-go v1.2.1 drops a notification that its per-request
// forwarder has taken off the queue but not yet written when the response
// path closes the stream. On streamable HTTP the request's own stream
// carries them, and mcp-go flushes it once per message: the call waits
// until the stream has been flushed flushes times. Elsewhere (legacy SSE,
// stdio) waiting for the session's queue to empty, then briefly, closes
// that window in practice.
func settleNotifications(ctx context.Context, st *requestState, flushes int64) {
	if st != nil && st.transport == "mcp" && st.response.CanStream() {
		st.response.awaitFlushes(ctx, flushes, 2*time.Second)
		return
	}
	type queued interface {
		NotificationChannel() chan<- mcp.JSONRPCNotification
	}
	if q, ok := mcpserver.ClientSessionFromContext(ctx).(queued); ok {
		for i := 0; i < 100 && len(q.NotificationChannel()) > 0; i++ {
			time.Sleep(100 * time.Microsecond)
		}
	}
	time.Sleep(time.Millisecond)
}
