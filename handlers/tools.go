package handlers

import (
	"context"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/registry"
)

const toolsOverview = "cursus serves its ML-pipeline engine as small namespaced JSON-in/JSON-out tools. " +
	"Work moves through three phases: PLAN (discover step types, assemble a DAG, generate configs), " +
	"VALIDATE (check alignment, dependencies and integrity before building) and PROGRAM (compile the DAG " +
	"into a SageMaker pipeline definition and generate the execution document). Start here, then call " +
	"<namespace>.help (e.g. compile.help) for one namespace, tools.describe_tool for a tool's full input " +
	"schema, or tools.by_phase for the tools of the phase you are in."

func toolsNamespace(prompts []registry.Prompt) registry.Namespace {
	workflows := make([]workflowInfo, 0, len(prompts))
	for _, p := range prompts {
		workflows = append(workflows, workflowInfo{Name: p.Name, Description: p.Description})
	}
	phase := registry.Enum("Restrict to one lifecycle phase.", registry.PhasePlanner, registry.PhaseValidator, registry.PhaseProgrammer)
	return registry.Namespace{
		Name:        "tools",
		Description: "Meta tools over the registry itself: help, by_phase, describe_tool.",
		Tools: []registry.ToolDef{
			{
				Name:        "tools.help",
				Description: "Overview of every tool this caller may use, grouped by namespace, with phase counts, and the multi-stage workflows (served as MCP prompts). Tools the server has disabled are listed separately with the setting that enables each.",
				When:        "You are starting out, or do not know which tool to call.",
				Examples: []string{
					`tools.help {}  # everything`,
					`tools.help {"namespace": "compile"}  # one namespace with examples`,
					`tools.help {"phase": "validator", "include_schema": true}  # validator tools with schemas`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"namespace":      registry.String("Restrict to one namespace (e.g. catalog, compile)."),
					"phase":          phase,
					"include_schema": registry.Boolean("Attach each tool's JSON input schema (default false)."),
				}),
				Handler: func(ctx context.Context, req registry.Request) (*registry.Result, error) {
					return toolsHelp(ctx, req, workflows)
				},
			},
			{
				Name:        "tools.by_phase",
				Description: "List the tools tagged with one phase (planner, validator or programmer).",
				When:        "You know which phase you are in and want only its tools.",
				Examples:    []string{`tools.by_phase {"phase": "planner"}  # discovery and assembly tools`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      registry.Object(map[string]any{"phase": phase}, "phase"),
				Handler:     toolsByPhase,
			},
			{
				Name:        "tools.describe_tool",
				Description: "Full description of one tool: input schema, when-cue, examples, tags and capability flags. Accepts the dotted or the wire name.",
				When:        "You have picked a tool and need its exact input schema.",
				Examples: []string{
					`tools.describe_tool {"name": "compile.dag"}  # dotted name`,
					`tools.describe_tool {"name": "catalog__search"}  # wire name`,
				},
				Tags:    []string{registry.PhasePlanner},
				Schema:  registry.Object(map[string]any{"name": registry.String("Dotted (compile.dag) or wire (compile__dag) tool name.")}, "name"),
				Handler: toolsDescribe,
			},
		},
	}
}

// toolSummary is how meta tools describe one tool.
type toolSummary struct {
	Name        string         `json:"name"`
	WireName    string         `json:"wire_name"`
	Namespace   string         `json:"namespace"`
	Description string         `json:"description"`
	Tags        []string       `json:"tags"`
	Destructive bool           `json:"destructive"`
	Flags       []string       `json:"flags"`
	When        string         `json:"when,omitempty"`
	Examples    []string       `json:"examples,omitempty"`
	Schema      map[string]any `json:"schema,omitempty"`
}

func summarize(t *registry.ToolDef, withSchema bool) toolSummary {
	s := toolSummary{
		Name: t.Name, WireName: t.WireName(), Namespace: t.Namespace(), Description: t.Description,
		Tags: nonNilStrings(t.Tags), Destructive: t.Destructive, Flags: t.Flags(), When: t.When, Examples: t.Examples,
	}
	if withSchema {
		s.Schema = t.Schema
	}
	return s
}

type helpArgs struct {
	Namespace     *string `json:"namespace"`
	Phase         string  `json:"phase"`
	IncludeSchema bool    `json:"include_schema"`
}

// helpData is the tools.help payload, in the reference's key order.
type helpData struct {
	Overview          string               `json:"overview"`
	TotalTools        int                  `json:"total_tools"`
	Shown             int                  `json:"shown"`
	Phases            map[string]phaseInfo `json:"phases"`
	Namespaces        []namespaceInfo      `json:"namespaces"`
	Disabled          []disabledTool       `json:"disabled"`
	Workflows         []workflowInfo       `json:"workflows"` // served as MCP prompts
	FilteredNamespace *string              `json:"filtered_namespace,omitempty"`
	FilteredPhase     string               `json:"filtered_phase,omitempty"`
}

type phaseInfo struct {
	Description string `json:"description"`
	Count       int    `json:"count"`
}

type namespaceInfo struct {
	Namespace   string        `json:"namespace"`
	Description string        `json:"description"`
	Count       int           `json:"count"`
	Tools       []toolSummary `json:"tools"`
}

type disabledTool struct {
	Name    string `json:"name"`
	Setting string `json:"enable_with"`
}

// workflowInfo names a workflow an MCP client can fetch with prompts/get.
type workflowInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func toolsHelp(ctx context.Context, req registry.Request, workflows []workflowInfo) (*registry.Result, error) {
	var args helpArgs
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	reg := req.Registry
	nsDesc := reg.Namespaces()
	if args.Namespace != nil {
		if _, ok := nsDesc[*args.Namespace]; !ok {
			names := make([]string, 0, len(nsDesc))
			for n := range nsDesc {
				names = append(names, n)
			}
			slices.Sort(names)
			return nil, registry.Errorf(registry.CodeNotFound, "unknown namespace: '%s'", *args.Namespace).
				WithDetails(map[string]any{"available_namespaces": names}).
				Suggest("Call tools.help without a namespace to see the valid namespaces.", "tools.help")
		}
	}
	ns := ""
	if args.Namespace != nil {
		ns = *args.Namespace
	}
	caller := registry.CallerFrom(ctx)
	var shown []*registry.ToolDef
	var disabled []disabledTool
	for _, t := range reg.Tools(ns) {
		if args.Phase != "" && !slices.Contains(t.Tags, args.Phase) {
			continue
		}
		if ok, setting := reg.Enabled(caller, t); !ok {
			disabled = append(disabled, disabledTool{Name: t.Name, Setting: setting})
			continue
		}
		shown = append(shown, t)
	}

	phases := map[string]phaseInfo{}
	for _, p := range registry.Phases {
		n := 0
		for _, t := range shown {
			if slices.Contains(t.Tags, p.Name) {
				n++
			}
		}
		phases[p.Name] = phaseInfo{Description: p.Description, Count: n}
	}
	var groups []namespaceInfo
	for _, t := range shown {
		if len(groups) == 0 || groups[len(groups)-1].Namespace != t.Namespace() {
			groups = append(groups, namespaceInfo{Namespace: t.Namespace(), Description: nsDesc[t.Namespace()], Tools: []toolSummary{}})
		}
		g := &groups[len(groups)-1]
		g.Tools = append(g.Tools, summarize(t, args.IncludeSchema))
		g.Count++
	}
	data := helpData{
		Overview: toolsOverview, TotalTools: len(reg.Tools("")), Shown: len(shown), Phases: phases,
		Namespaces: nonNilGroups(groups), Disabled: nonNilDisabled(disabled), Workflows: workflows,
		FilteredPhase: args.Phase,
	}
	if args.Namespace != nil {
		data.FilteredNamespace = &ns
	}
	nsHint := "<namespace>"
	if ns != "" {
		nsHint = ns
	}
	return registry.OK(data).Next(
		registry.NextStep{Tool: nsHint + ".help", When: "You know which namespace you need and want just its tools and examples.",
			Why: "Each namespace has its own help (e.g. compile.help, catalog.help).", ArgsHint: map[string]any{"include_schema": false}},
		registry.NextStep{Tool: "tools.describe_tool", When: "You have chosen a tool and need its exact input schema.",
			Why: "Returns the full JSON schema, when-cue, examples, tags and flags.", ArgsHint: map[string]any{"name": "<dotted tool name, e.g. compile.dag>"}},
		registry.NextStep{Tool: "tools.by_phase", When: "You want just the tools for the phase you are in.",
			Why: "Filters to planner, validator or programmer tools.", ArgsHint: map[string]any{"phase": registry.PhasePlanner}},
	), nil
}

func nonNilGroups(g []namespaceInfo) []namespaceInfo {
	if g == nil {
		return []namespaceInfo{}
	}
	return g
}

func nonNilDisabled(d []disabledTool) []disabledTool {
	if d == nil {
		return []disabledTool{}
	}
	return d
}

func toolsByPhase(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Phase string `json:"phase"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	caller := registry.CallerFrom(ctx)
	tools := []toolSummary{}
	for _, t := range req.Registry.Visible(caller, "") {
		if slices.Contains(t.Tags, args.Phase) {
			tools = append(tools, summarize(t, false))
		}
	}
	return registry.OK(map[string]any{"phase": args.Phase, "count": len(tools), "tools": tools}), nil
}

func toolsDescribe(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Name string `json:"name"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'name' must be a non-empty tool name")
	}
	t, ok := req.Registry.Lookup(name)
	if !ok {
		names := []string{}
		for _, t := range req.Registry.Tools("") {
			names = append(names, t.Name)
		}
		return nil, registry.Errorf(registry.CodeNotFound, "unknown tool: '%s'", name).
			WithDetails(map[string]any{"available": names}).
			Suggest("Call tools.help for the full tool list, or tools.by_phase to find the tool for your phase.", "tools.help", "tools.by_phase")
	}
	enabled, setting := req.Registry.Enabled(registry.CallerFrom(ctx), t)
	return registry.OK(toolDescription{
		toolSummary: summarize(t, true), Annotations: t.Annotations(), Enabled: enabled, EnableWith: setting,
	}), nil
}

// toolDescription is a summary plus what a client needs to call the tool.
type toolDescription struct {
	toolSummary
	Annotations registry.Annotations `json:"annotations"`
	Enabled     bool                 `json:"enabled"`
	EnableWith  string               `json:"enable_with,omitempty"`
}
