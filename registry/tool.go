package registry

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Phase tags.
const (
	PhasePlanner    = "planner"
	PhaseValidator  = "validator"
	PhaseProgrammer = "programmer"
)

// Phases lists the phases in their fixed order with a one-line description.
var Phases = []struct{ Name, Description string }{
	{PhasePlanner, "Discover, select and assemble: explore steps, configs and DAGs and plan the pipeline."},
	{PhaseValidator, "Check before building: alignment, dependencies, config and DAG integrity, scripts."},
	{PhaseProgrammer, "Compile and generate: turn a resolved DAG into a pipeline definition and execution document."},
}

// call is a tool's handler as the registry runs it: the arguments, already
// validated against the tool's schema, in (with the JSON text they were
// decoded from, when the front end has it: nil otherwise); the envelope
// out. A returned *ToolError keeps its code, details and remedy; any other
// error becomes internal_error. Define builds it from the typed handler.
type callFunc func(ctx context.Context, args map[string]any, text []byte) (*Result, error)

// callScope is what the context of a running call carries for the
// registry: the registry running it.
type callScope struct {
	registry *Registry
}

type callScopeKey struct{}

func scopeFrom(ctx context.Context) *callScope {
	s, _ := ctx.Value(callScopeKey{}).(*callScope)
	return s
}

// RegistryFrom is the registry running the call ctx belongs to (for the
// meta tools that describe the registry itself).
func RegistryFrom(ctx context.Context) *Registry {
	if s := scopeFrom(ctx); s != nil {
		return s.registry
	}
	return nil
}

// ToolDef declares one tool.
type ToolDef struct {
	Name        string       // dotted: <namespace>.<verb>
	Description string       // what it does
	When        string       // one-line trigger cue
	Examples    []string     // `name {json}  # note`
	Tags        []string     // phases
	call        callFunc     // the typed handler's adapter (Define)
	schemas     *lazySchemas // Define's types' schemas (Schema, OutputSchema, DataSchema)

	Destructive bool // mutates external state (e.g. a SageMaker upsert)
	Writes      bool // writes the local filesystem
	// WritesWith names the arguments that make a call write the local
	// filesystem (config.merge_save's output_file). Without them the tool
	// only returns what it produced: it is listed to read-only callers and
	// admission decides per call. Set this or Writes, not both.
	WritesWith []string
	ExecCode   bool // runs user code
	Network    bool // reaches AWS or the network
	// Alternative is what a caller the gates keep from this tool may call
	// instead; for a WritesWith tool, the tool itself without those
	// arguments.
	Alternative *Alternative
}

// Alternative names the read-only tool that does what a refused call
// cannot, and how to call it.
type Alternative struct {
	Tool string `json:"tool"`
	How  string `json:"how"` // one sentence: what to pass and what comes back
}

var wireNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Namespace is the text before the first dot.
func (t *ToolDef) Namespace() string {
	ns, _, _ := strings.Cut(t.Name, ".")
	return ns
}

// WireName is the name external clients see: dots become "__".
func (t *ToolDef) WireName() string { return WireName(t.Name) }

// WireName converts a dotted name to its wire form.
func WireName(dotted string) string { return strings.ReplaceAll(dotted, ".", "__") }

// ReadOnly reports whether the tool changes nothing outside its reply,
// whatever the arguments: a WritesWith tool is not read-only.
func (t *ToolDef) ReadOnly() bool {
	return !(t.Destructive || t.Writes || len(t.WritesWith) > 0 || t.ExecCode)
}

// WriteArgs lists the WritesWith arguments args holds (present and not
// null, "" or false): the ones that make this call a write.
func (t *ToolDef) WriteArgs(args map[string]any) []string {
	var given []string
	for _, name := range t.WritesWith {
		if v, ok := args[name]; ok && v != nil && v != "" && v != false {
			given = append(given, name)
		}
	}
	return given
}

// capabilities are what one call does: the flags, with a WritesWith tool
// writing only when args hold one of those arguments (nil args: the call
// without them, which is how a tool is listed).
type capabilities struct{ destructive, writes, exec bool }

func (t *ToolDef) capabilitiesFor(args map[string]any) capabilities {
	return capabilities{destructive: t.Destructive, writes: t.Writes || len(t.WriteArgs(args)) > 0, exec: t.ExecCode}
}

func (c capabilities) gated() bool { return c.destructive || c.writes || c.exec }

// Annotations are the MCP tool hints, every one set explicitly (mcp-go's
// defaults would mark every tool destructive).
type Annotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// Annotations derives the MCP hints from the capability flags.
func (t *ToolDef) Annotations() Annotations {
	return Annotations{
		Title:           t.Name,
		ReadOnlyHint:    t.ReadOnly(),
		DestructiveHint: t.Destructive,
		IdempotentHint:  t.ReadOnly(),
		OpenWorldHint:   t.Network || t.ExecCode,
	}
}

// Flags lists the capability flags that are set, in a fixed order.
func (t *ToolDef) Flags() []string {
	flags := []string{}
	for _, f := range []struct {
		on   bool
		name string
	}{{t.Destructive, "destructive"}, {t.Writes, "writes"}, {t.ExecCode, "exec_code"}, {t.Network, "network"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	for _, arg := range t.WritesWith {
		flags = append(flags, "writes_with:"+arg)
	}
	return flags
}

func (t *ToolDef) check() error {
	if !strings.Contains(t.Name, ".") || strings.Contains(t.Name, "__") {
		return fmt.Errorf("tool %q: name must be <namespace>.<verb> without \"__\"", t.Name)
	}
	if !wireNamePattern.MatchString(t.WireName()) {
		return fmt.Errorf("tool %q: wire name %q must match %s", t.Name, t.WireName(), wireNamePattern)
	}
	if t.Description == "" || t.When == "" || len(t.Examples) == 0 {
		return fmt.Errorf("tool %q: description, when and examples are required", t.Name)
	}
	if t.call == nil {
		return fmt.Errorf("tool %q: not declared with Define", t.Name)
	}
	if t.Writes && len(t.WritesWith) > 0 {
		return fmt.Errorf("tool %q: set writes or writes_with, not both", t.Name)
	}
	var props map[string]any
	if len(t.WritesWith) > 0 {
		// The few tools with writes_with derive their argument schema
		// here, to check it; the rest at their first listing or call.
		in, err := t.inputSchema()
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		props, _ = in["properties"].(map[string]any)
	}
	for _, arg := range t.WritesWith {
		if _, ok := props[arg]; !ok {
			return fmt.Errorf("tool %q: writes_with names %q, which is not an argument", t.Name, arg)
		}
	}
	if t.Alternative != nil && (t.Alternative.Tool == "" || t.Alternative.How == "") {
		return fmt.Errorf("tool %q: an alternative needs a tool and how to call it", t.Name)
	}
	for _, tag := range t.Tags {
		if tag != PhasePlanner && tag != PhaseValidator && tag != PhaseProgrammer {
			return fmt.Errorf("tool %q: unknown phase tag %q", t.Name, tag)
		}
	}
	return nil
}

// RenderDescription folds when and examples into one description for
// external clients.
func (t *ToolDef) RenderDescription() string {
	parts := []string{t.Description}
	if t.When != "" {
		parts = append(parts, "When: "+t.When)
	}
	if len(t.Examples) > 0 {
		var b strings.Builder
		b.WriteString("Examples:")
		for _, ex := range t.Examples {
			b.WriteString("\n  - " + ex)
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n\n")
}
