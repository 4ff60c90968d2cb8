package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

const toolsOverview = "cursus serves its ML-pipeline engine as small namespaced JSON-in/JSON-out tools. " +
	"Work moves through three phases: PLAN (discover step types, assemble a DAG, generate configs), " +
	"VALIDATE (check alignment, dependencies and integrity before building) and PROGRAM (compile the DAG " +
	"into a SageMaker pipeline definition and generate the execution document). Start here, then call " +
	"<namespace>.help (e.g. compile.help) for one namespace, tools.describe_tool for a tool's full input " +
	"schema, or tools.by_phase for the tools of the phase you are in."

// toolsSummaryOverview opens the default (summary) answer of tools.help.
const toolsSummaryOverview = "cursus serves its ML-pipeline engine as namespaced JSON-in/JSON-out tools, in three phases: " +
	"planner (discover steps, assemble a DAG, configure it), validator (check before building) and programmer " +
	"(compile to a SageMaker pipeline definition, execution documents). Below, each phase's tools with their purpose. " +
	"More: <namespace>.help (when-cues and examples of one namespace), tools.describe_tool {\"name\"} (one tool's " +
	"input schema), tools.help {\"detail\": \"full\"} (everything)."

func toolsNamespace(workflows []workflowInfo, stepDirs func(context.Context) stepCatalogStatus) registry.Namespace {
	return registry.Namespace{
		Name:        "tools",
		Description: "Meta tools over the registry itself: help, by_phase, describe_tool.",
		Tools: []registry.ToolDef{
			toolsHelpTool(workflows, stepDirs),
			toolsByPhaseTool(),
			toolsDescribeTool(),
		},
	}
}

type namespaceHelpIn struct {
	Phase         phaseArg `json:"phase,omitempty" jsonschema:"Restrict to one lifecycle phase."`
	IncludeSchema bool     `json:"include_schema,omitempty" jsonschema:"Attach each tool's JSON input schema (default false)."`
}

// withHelp adds the namespace's <ns>.help tool: tools.help for that one
// namespace.
func withHelp(ns registry.Namespace, workflows []workflowInfo, stepDirs func(context.Context) stepCatalogStatus) registry.Namespace {
	name := ns.Name
	ns.Tools = append(ns.Tools, registry.Define(registry.ToolDef{
		Name: name + ".help",
		Description: "Overview of the '" + name + "' tools: " + ns.Description + " Lists each " + name +
			".* tool with its description, when to use it and examples. Set include_schema for the JSON input schemas. Start here before using " + name + " tools.",
		When: "Start here.",
		Examples: []string{
			name + ".help {}  # every " + name + ".* tool with when and examples",
			name + `.help {"include_schema": true}  # the same, plus JSON input schemas`,
		},
		Tags: []string{registry.PhasePlanner},
	}, func(ctx context.Context, in namespaceHelpIn) (registry.Reply[helpData], error) {
		return toolsHelp(ctx, helpIn{Namespace: &name, Phase: in.Phase, IncludeSchema: in.IncludeSchema, Detail: detailFull}, workflows, stepDirs)
	}))
	return ns
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
		s.Schema = t.Schema()
	}
	return s
}

type helpIn struct {
	Namespace     *string   `json:"namespace,omitempty" jsonschema:"Restrict to one namespace (e.g. catalog, compile)."`
	Phase         phaseArg  `json:"phase,omitempty" jsonschema:"Restrict to one lifecycle phase."`
	IncludeSchema bool      `json:"include_schema,omitempty" jsonschema:"Attach each tool's JSON input schema (default false; implies detail full)."`
	Detail        detailArg `json:"detail,omitempty" jsonschema:"summary (default): each phase's tools with a one-line purpose; full: every tool's description, when-cue, examples and flags, by namespace."`
}

// helpData is the tools.help payload, in the reference's key order. The
// summary (the default) lists each phase's tools with their purpose and
// leaves out namespaces; the full form lists the namespaces' tools whole.
type helpData struct {
	Overview          string               `json:"overview"`
	Detail            string               `json:"detail"`
	TotalTools        int                  `json:"total_tools"`
	Shown             int                  `json:"shown"`
	Phases            map[string]phaseInfo `json:"phases"`
	Namespaces        []namespaceInfo      `json:"namespaces,omitempty"`
	Disabled          []closedGate         `json:"disabled"`
	Workflows         []workflowInfo       `json:"workflows"` // served as MCP prompts
	StepCatalog       stepCatalogStatus    `json:"step_catalog"`
	FilteredNamespace *string              `json:"filtered_namespace,omitempty"`
	FilteredPhase     string               `json:"filtered_phase,omitempty"`
}

type phaseInfo struct {
	Description string `json:"description"`
	Count       int    `json:"count"`
	// Tools maps each of the phase's tools to the lead clause of its
	// description (summary only; <ns>.help tools are left out, the
	// namespaces they cover are the tools' prefixes).
	Tools map[string]string `json:"tools,omitempty"`
}

type namespaceInfo struct {
	Namespace   string        `json:"namespace"`
	Description string        `json:"description"`
	Count       int           `json:"count"`
	Tools       []toolSummary `json:"tools"`
}

// closedGate counts the tools one gate keeps from this caller. It names
// none of them: a caller is told only of tools it may call, among them
// the alternatives declared by the closed ones.
type closedGate struct {
	Gate         string   `json:"gate"`
	Count        int      `json:"count"`
	EnableWith   string   `json:"enable_with,omitempty"`
	Alternatives []string `json:"alternatives,omitempty"`
}

// workflowInfo names a workflow an MCP client can fetch with prompts/get.
type workflowInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Run says how to drive it with server-checked gates, when this
	// caller may call the workflow tools.
	Run string `json:"run,omitempty"`
}

func toolsHelpTool(workflows []workflowInfo, stepDirs func(context.Context) stepCatalogStatus) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "tools.help",
		Description: "Overview of every tool this caller may use (by default each phase's tools with a one-line purpose; detail full for descriptions, when-cues and examples by namespace) and of the multi-stage workflows (served as MCP prompts). Tools closed to this caller are counted by the gate that closes them, with the setting that opens it (only the operator can) and the open tools that do their read-only part.",
		When:        "First, or when unsure which tool to call.",
		Examples: []string{
			`tools.help {}  # every tool's name and purpose, by phase`,
			`tools.help {"detail": "full"}  # everything, by namespace`,
			`tools.help {"namespace": "compile", "detail": "full"}  # one namespace with examples`,
			`tools.help {"phase": "validator", "include_schema": true}  # validator tools with schemas`,
		},
		Tags: []string{registry.PhasePlanner},
	}, func(ctx context.Context, in helpIn) (registry.Reply[helpData], error) {
		return toolsHelp(ctx, in, workflows, stepDirs)
	})
}

func toolsHelp(ctx context.Context, in helpIn, workflows []workflowInfo, stepDirs func(context.Context) stepCatalogStatus) (registry.Reply[helpData], error) {
	var reply registry.Reply[helpData]
	reg, caller := registry.RegistryFrom(ctx), registry.CallerFrom(ctx)
	nsDesc := reg.Namespaces()
	ns := ""
	if in.Namespace != nil {
		ns = *in.Namespace
		if _, ok := nsDesc[ns]; !ok {
			return reply, unknownNamespace(ns, nsDesc)
		}
	}
	var shown []*registry.ToolDef
	disabled := []closedGate{}
	for _, t := range reg.Tools(ns) {
		if in.Phase != "" && !slices.Contains(t.Tags, string(in.Phase)) {
			continue
		}
		if a := reg.Admit(caller, t); !a.Allowed {
			disabled = countClosed(disabled, a)
			continue
		}
		shown = append(shown, t)
	}
	if ns == "" {
		// A namespace's help does not suggest itself.
		reply.Next(registry.NextStep{Tool: "<namespace>.help", When: "You know which namespace you need and want just its tools and examples.",
			Why: "Each namespace has its own help (e.g. compile.help, catalog.help).", ArgsHint: map[string]any{"include_schema": false}})
	}
	reply.Next(
		registry.NextStep{Tool: "tools.describe_tool", When: "You have chosen a tool and need its exact input schema.",
			Why: "Returns the full JSON schema, when-cue, examples, tags and flags.", ArgsHint: map[string]any{"name": "<dotted tool name, e.g. compile.preview>"}},
		registry.NextStep{Tool: "tools.by_phase", When: "You want just the tools for the phase you are in.",
			Why: "Filters to planner, validator or programmer tools.", ArgsHint: map[string]any{"phase": registry.PhasePlanner}},
	)
	out := helpData{
		Overview: toolsOverview, Detail: detailFull, TotalTools: len(reg.Tools("")), Shown: len(shown), Phases: phaseCounts(shown),
		Disabled: disabled, FilteredNamespace: in.Namespace, FilteredPhase: string(in.Phase), StepCatalog: stepDirs(ctx),
	}
	if in.Detail == detailFull || in.IncludeSchema {
		out.Namespaces = groupByNamespace(shown, nsDesc, in.IncludeSchema)
		out.Workflows = runnable(workflows, reg, caller, HowToRun)
		reply.Out = out
		return reply, nil
	}
	out.Overview, out.Detail = toolsSummaryOverview, detailSummary
	for name, p := range out.Phases {
		p.Tools = map[string]string{}
		for _, t := range shown {
			if slices.Contains(t.Tags, name) && t.Name != t.Namespace()+".help" {
				p.Tools[t.Name] = t.Purpose()
			}
		}
		out.Phases[name] = p
	}
	out.Workflows = runnable(workflows, reg, caller, shortRun)
	reply.Out = out
	return reply, nil
}

// shortRun is how to run a workflow, in the summary of tools.help: the
// start call names the arguments the workflow requires.
func shortRun(name string) string {
	var args []string
	if w, ok := workflows.Get(name); ok {
		for _, a := range w.Arguments {
			if a.Required {
				args = append(args, fmt.Sprintf(`%q: "…"`, a.Name))
			}
		}
	}
	start := fmt.Sprintf(`{"workflow": %q}`, name)
	if len(args) > 0 {
		start = fmt.Sprintf(`{"workflow": %q, "args": {%s}}`, name, strings.Join(args, ", "))
	}
	return "workflow.start " + start + ", then workflow.submit each stage's content until green (workflow.help: how)"
}

func unknownNamespace(ns string, nsDesc map[string]string) error {
	names := make([]string, 0, len(nsDesc))
	for n := range nsDesc {
		names = append(names, n)
	}
	slices.Sort(names)
	return registry.Errorf(registry.CodeNotFound, "unknown namespace: '%s'", ns).
		WithDetails(map[string]any{"available_namespaces": names}).
		Suggest("Call tools.help without a namespace to see the valid namespaces.", "tools.help")
}

// phaseCounts counts the shown tools of each phase.
func phaseCounts(shown []*registry.ToolDef) map[string]phaseInfo {
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
	return phases
}

// groupByNamespace groups tools sorted by name into their namespaces.
func groupByNamespace(tools []*registry.ToolDef, nsDesc map[string]string, withSchema bool) []namespaceInfo {
	groups := []namespaceInfo{}
	for _, t := range tools {
		if len(groups) == 0 || groups[len(groups)-1].Namespace != t.Namespace() {
			groups = append(groups, namespaceInfo{Namespace: t.Namespace(), Description: nsDesc[t.Namespace()], Tools: []toolSummary{}})
		}
		g := &groups[len(groups)-1]
		g.Tools = append(g.Tools, summarize(t, withSchema))
		g.Count++
	}
	return groups
}

func countClosed(list []closedGate, a registry.Admission) []closedGate {
	i := slices.IndexFunc(list, func(g closedGate) bool { return g.Gate == string(a.Gate) })
	if i < 0 {
		list, i = append(list, closedGate{Gate: string(a.Gate), EnableWith: a.Hint}), len(list)
	}
	list[i].Count++
	if alt := a.Alternative; alt != nil && !slices.Contains(list[i].Alternatives, alt.Tool) {
		list[i].Alternatives = append(list[i].Alternatives, alt.Tool)
	}
	return list
}

type byPhaseIn struct {
	Phase phaseArg `json:"phase" jsonschema:"Restrict to one lifecycle phase."`
}

type byPhaseOut struct {
	Phase string        `json:"phase"`
	Count int           `json:"count"`
	Tools []toolSummary `json:"tools"`
}

func toolsByPhaseTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "tools.by_phase",
		Description: "The tools of one phase (planner, validator or programmer).",
		When:        "You want only one phase's tools.",
		Examples:    []string{`tools.by_phase {"phase": "planner"}  # discovery and assembly tools`},
		Tags:        []string{registry.PhasePlanner},
	}, registry.Plain(toolsByPhase))
}

func toolsByPhase(ctx context.Context, in byPhaseIn) (byPhaseOut, error) {
	tools := []toolSummary{}
	for _, t := range registry.RegistryFrom(ctx).Visible(registry.CallerFrom(ctx), "") {
		if slices.Contains(t.Tags, string(in.Phase)) {
			tools = append(tools, summarize(t, false))
		}
	}
	return byPhaseOut{Phase: string(in.Phase), Count: len(tools), Tools: tools}, nil
}

type describeIn struct {
	Name string `json:"name" jsonschema:"Dotted (compile.preview) or wire (compile__preview) tool name."`
}

// toolDescription is a summary plus what a client needs to call the tool.
type toolDescription struct {
	toolSummary
	OutputSchema map[string]any       `json:"output_schema,omitempty"`
	DataSchema   map[string]any       `json:"data_schema,omitempty"`
	Annotations  registry.Annotations `json:"annotations"`
	Enabled      bool                 `json:"enabled"`
}

// toolsDescribe describes a tool this caller may call; a closed one
// answers as a call to it would.
func toolsDescribeTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "tools.describe_tool",
		Description: "Full description of one tool: input schema, when-cue, examples, tags and capability flags. Accepts the dotted or the wire name.",
		When:        "You have picked a tool and need its exact input schema.",
		Examples: []string{
			`tools.describe_tool {"name": "compile.preview"}  # dotted name`,
			`tools.describe_tool {"name": "catalog__search"}  # wire name`,
		},
		Tags: []string{registry.PhasePlanner},
	}, registry.Plain(toolsDescribe))
}

func toolsDescribe(ctx context.Context, in describeIn) (toolDescription, error) {
	reg, caller := registry.RegistryFrom(ctx), registry.CallerFrom(ctx)
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return toolDescription{}, registry.Errorf(registry.CodeInvalidInput, "'name' must be a non-empty tool name")
	}
	t, ok := reg.Lookup(name)
	if ok {
		if a := reg.Admit(caller, t); !a.Allowed {
			return toolDescription{}, a.Err(t)
		}
	} else {
		names := []string{}
		for _, t := range reg.Visible(caller, "") {
			names = append(names, t.Name)
		}
		return toolDescription{}, registry.Errorf(registry.CodeNotFound, "unknown tool: '%s'", name).
			WithDetails(map[string]any{"available": names}).
			Suggest("Call tools.help for the full tool list, or tools.by_phase to find the tool for your phase.", "tools.help", "tools.by_phase")
	}
	return toolDescription{toolSummary: summarize(t, true), OutputSchema: t.OutputSchema(), DataSchema: t.DataSchema(), Annotations: t.Annotations(), Enabled: true}, nil
}

// runnable is workflows with how to run each (run), for a caller that may
// call workflow.start and workflow.submit.
func runnable(workflows []workflowInfo, reg *registry.Registry, caller registry.Caller, run func(string) string) []workflowInfo {
	if !reg.MayCall(caller, "workflow.start") || !reg.MayCall(caller, "workflow.submit") {
		return workflows
	}
	out := make([]workflowInfo, len(workflows))
	for i, w := range workflows {
		w.Run = run(w.Name)
		out[i] = w
	}
	return out
}
