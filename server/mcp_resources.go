package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/cursus-dev/cursus/registry"
)

// maxCompletionValues is the most values one completion/complete answer
// carries (the MCP limit); total and hasMore tell the rest.
const maxCompletionValues = 100

// mcpResources serves registry resources over MCP for the caller of
// each request: resources/list shows the fixed resources and every
// template value the caller may read, resources/templates/list the
// templates, resources/read one document, and completion/complete the
// template values and prompt argument values. Toolsets do not narrow
// them: a resource follows the admission of its tool only.
type mcpResources struct {
	reg       *registry.Registry
	resources []registry.Resource
	prompts   []registry.Prompt
}

// readable reports whether caller may list and read r.
func (m *mcpResources) readable(caller registry.Caller, r registry.Resource) bool {
	return r.Tool == "" || m.reg.MayCall(caller, r.Tool)
}

// resolve finds the resource uri names for caller, or says why there is
// none.
func (m *mcpResources) resolve(ctx context.Context, caller registry.Caller, uri string) (registry.Resource, string, error) {
	for _, r := range m.resources {
		value, ok := r.Match(uri)
		if !ok {
			continue
		}
		if !m.readable(caller, r) {
			return r, "", fmt.Errorf("it serves %s, which this server does not open to you", r.Tool)
		}
		if r.Variable() != "" && !slices.Contains(r.Values(ctx), value) {
			return r, "", fmt.Errorf("no %s %q; completion/complete on %s lists them", r.Variable(), value, r.URI)
		}
		return r, value, nil
	}
	return registry.Resource{}, "", fmt.Errorf("no cursus resource has this URI; resources/list and resources/templates/list show them")
}

// hooks adds the per-caller listing and the read check to hooks.
// mcp-go answers a handler's error with -32603 (internal error), so a URI
// that names nothing for this caller is turned, before mcp-go looks it
// up, into one that matches no resource, with the reason appended: mcp-go
// then answers with its resource-not-found error (-32002, or -32602 from
// protocol 2026-07-28 on), whose message carries the reason.
func (m *mcpResources) hooks(hooks *mcpserver.Hooks) {
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, result *mcp.ListResourcesResult) {
		caller := callerOf(stateFrom(ctx))
		listed := []mcp.Resource{}
		for _, r := range m.resources {
			if !m.readable(caller, r) {
				continue
			}
			if r.Variable() == "" {
				listed = append(listed, mcp.NewResource(r.URI, r.Name, mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIMEType)))
				continue
			}
			for _, v := range r.Values(ctx) {
				listed = append(listed, mcp.NewResource(r.Expand(v), r.Name+" "+v, mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIMEType)))
			}
		}
		result.Resources = listed
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, result *mcp.ListResourceTemplatesResult) {
		caller := callerOf(stateFrom(ctx))
		kept := result.ResourceTemplates[:0]
		for _, t := range result.ResourceTemplates {
			if i := slices.IndexFunc(m.resources, func(r registry.Resource) bool { return r.URI == t.URITemplate.Raw() }); i >= 0 && m.readable(caller, m.resources[i]) {
				kept = append(kept, t)
			}
		}
		result.ResourceTemplates = kept
	})
	hooks.AddBeforeReadResource(func(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
		if _, _, err := m.resolve(ctx, callerOf(stateFrom(ctx)), req.Params.URI); err != nil {
			req.Params.URI = fmt.Sprintf("%s (%v)", req.Params.URI, err)
		}
	})
}

// register adds every resource to s: fixed ones as resources, the others
// as templates.
func (m *mcpResources) register(s *mcpserver.MCPServer) {
	for _, r := range m.resources {
		if r.Variable() == "" {
			s.AddResource(mcp.NewResource(r.URI, r.Name, mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIMEType)), m.read)
			continue
		}
		s.AddResourceTemplate(mcp.NewResourceTemplate(r.URI, r.Name, mcp.WithTemplateDescription(r.Description), mcp.WithTemplateMIMEType(r.MIMEType)),
			mcpserver.ResourceTemplateHandlerFunc(m.read))
	}
}

// read serves a URI the read hook has let through.
func (m *mcpResources) read(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	caller := callerOf(stateFrom(ctx))
	r, value, err := m.resolve(ctx, caller, req.Params.URI)
	if err != nil {
		return nil, err
	}
	text, err := r.Read(ctx, value, func(tool string) bool { return m.reg.MayCall(caller, tool) })
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: r.MIMEType, Text: text}}, nil
}

// CompletePromptArgument completes a prompt argument that picks from a
// known set; any other argument, and an unknown prompt, get no values.
func (m *mcpResources) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	for _, p := range m.prompts {
		if p.Name != prompt {
			continue
		}
		for _, a := range p.Arguments {
			if a.Name == arg.Name && a.Values != nil {
				return completion(a.Values(ctx), arg.Value), nil
			}
		}
	}
	return completion(nil, ""), nil
}

// CompleteResourceArgument completes the variable of a resource template
// (uri is the template) the caller may read.
func (m *mcpResources) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	caller := callerOf(stateFrom(ctx))
	for _, r := range m.resources {
		if r.URI == uri && r.Variable() == arg.Name && r.Variable() != "" && m.readable(caller, r) {
			return completion(r.Values(ctx), arg.Value), nil
		}
	}
	return completion(nil, ""), nil
}

// completion is the values that start with prefix (ignoring case), in
// their order, at most maxCompletionValues of them.
func completion(values []string, prefix string) *mcp.Completion {
	matched := []string{}
	for _, v := range values {
		if len(v) >= len(prefix) && strings.EqualFold(v[:len(prefix)], prefix) {
			matched = append(matched, v)
		}
	}
	c := &mcp.Completion{Values: matched, Total: len(matched)}
	if len(matched) > maxCompletionValues {
		c.Values, c.HasMore = matched[:maxCompletionValues], true
	}
	return c
}
