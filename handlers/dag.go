package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/registry"
)

// dagGraph is the inline DAG the dag.* tools take. Its limits are far
// above any real pipeline, low enough that a hostile call cannot make the
// server do unbounded work.
type dagGraph struct {
	Nodes []nodeName `json:"nodes" jsonschema:"Node names: <StepType> or <StepType>_<job_type>, e.g. TabularPreprocessing_training." schema:"maxItems=10000"`
	Edges []dagEdge  `json:"edges,omitempty" jsonschema:"Edges as [source, destination] node pairs; the source runs first and feeds the destination." schema:"maxItems=50000"`
}

// graph is the DAG in the engine's terms; nodes and edges are never nil,
// so they answer as lists.
func (in dagGraph) graph() *dag.DAG {
	g := &dag.DAG{Nodes: make([]string, len(in.Nodes)), Edges: make([][2]string, len(in.Edges))}
	for i, n := range in.Nodes {
		g.Nodes[i] = string(n)
	}
	for i, e := range in.Edges {
		g.Edges[i] = [2]string{string(e[0]), string(e[1])}
	}
	return g
}

// dagReadIn is the DAG a tool checks, wires or draws: its nodes and
// edges, or a DAG document inline or in a file, as the compile and config
// tools take it.
type dagReadIn struct {
	Nodes []nodeName `json:"nodes,omitempty" jsonschema:"Node names: <StepType> or <StepType>_<job_type>, e.g. TabularPreprocessing_training. Give this, dag or dag_file." schema:"maxItems=10000"`
	Edges []dagEdge  `json:"edges,omitempty" jsonschema:"Edges as [source, destination] node pairs; the source runs first and feeds the destination." schema:"maxItems=50000"`
	dagSource
}

// readGraph is the DAG in, from exactly one of nodes (with edges), dag
// or dag_file.
func (d *Deps) readGraph(ctx context.Context, in dagReadIn) (*dag.DAG, error) {
	if in.DAG == nil && in.DAGFile == "" {
		if in.Nodes == nil {
			return nil, registry.Errorf(registry.CodeInvalidInput, "give nodes (with edges), dag or dag_file")
		}
		return dagGraph{Nodes: in.Nodes, Edges: in.Edges}.graph(), nil
	}
	if in.Nodes != nil || in.Edges != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "give nodes and edges, dag or dag_file, not more than one")
	}
	return d.loadDAG(ctx, in.dagSource, false)
}

// readGraphWith is readGraph with the catalogs of the call's step types.
func (d *Deps) readGraphWith(ctx context.Context, in dagAndStepsIn) (*dag.DAG, *catalogView, error) {
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return nil, nil, err
	}
	g, err := d.readGraph(ctx, in.dagReadIn)
	return g, cv, err
}

type dagDocumentIn struct {
	dagGraph
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"Free-form metadata stored with the DAG." schema:"maxProperties=200"`
}

// dagAndStepsIn is a DAG in with the step types it may use: the
// argument of dag.validate_integrity, and part of resolve_plan's and
// mermaid's.
type dagAndStepsIn struct {
	dagReadIn
	stepTypesArg
}

// dagExample is the three-step training DAG of the dag tools' examples.
const dagExample = `{"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"], "edges": [["DummyDataLoading_training", "TabularPreprocessing_training"], ["TabularPreprocessing_training", "XGBoostTraining"]]}`

func dagNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog is not loaded")
	}
	return registry.Namespace{
		Name:        "dag",
		Description: "Build, check, wire, draw and (de)serialise pipeline DAGs.",
		Tools: []registry.ToolDef{
			dagConstructTool(d),
			dagValidateIntegrityTool(d),
			dagResolvePlanTool(d),
			dagDependenciesTool(d),
			dagSerializeTool(d),
			dagDeserializeTool(d),
			dagMermaidTool(d),
		},
	}, nil
}

// nodeClassIn colours nodes by their step's node type in Mermaid output.
func nodeClassIn(cat *steps.Catalog) func(node string) string {
	return func(node string) string {
		res, err := cat.Resolve(node)
		if err != nil {
			return "unknown"
		}
		if iface, ok := cat.Get(res.StepType); ok {
			switch iface.NodeType {
			case dag.NodeSource, dag.NodeSink, dag.NodeSingular:
				return iface.NodeType
			}
		}
		return ""
	}
}

// dagConstructIn is dag.construct's argument: the document, and the step
// types that colour its picture.
type dagConstructIn struct {
	dagDocumentIn
	stepTypesArg
}

// dagDocument is the dag.construct payload: the writer format's document
// (no created_at: construct never records one) plus its Mermaid picture.
type dagDocument struct {
	Version    string         `json:"version"`
	Metadata   map[string]any `json:"metadata"`
	DAG        dagNodesEdges  `json:"dag"`
	Statistics dag.Statistics `json:"statistics"`
	Mermaid    string         `json:"mermaid"`
	// CreatedAt is Cursus's timestamp key, null here: the same nodes and
	// edges give the same document (dag.serialize records a created_at).
	CreatedAt *string `json:"created_at"`
}

type dagNodesEdges struct {
	Nodes []string    `json:"nodes"`
	Edges [][2]string `json:"edges"`
}

func dagConstructTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "dag.construct",
		Description: "Build the DAG document (format version, metadata, nodes, edges) with statistics (entry/exit/isolated nodes, " +
			"longest path, cycles) and a Mermaid flowchart. Nothing is written and nothing is validated against the step catalog.",
		When:     "You have steps and edges and want the DAG document.",
		Examples: []string{`dag.construct ` + dagExample + `  # three-step training DAG`},
		Tags:     []string{registry.PhasePlanner},
	}, d.dagConstruct)
}

func (d *Deps) dagConstruct(ctx context.Context, in dagConstructIn) (registry.Reply[dagDocument], error) {
	var reply registry.Reply[dagDocument]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	g := in.graph()
	stats := g.Stats()
	meta := in.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	reply.WithMeta("node_count", stats.NodeCount)
	reply.WithMeta("edge_count", stats.EdgeCount)
	if stats.HasCycles {
		reply.Warn("DAG contains a cycle — it is not a valid pipeline topology.")
	}
	if r := g.Check(); !r.Valid {
		reply.Warn(fmt.Sprintf("structural issues: %s", strings.Join(r.Categories(), ", ")))
	}
	mermaid, err := g.Mermaid(ctx, dag.MermaidOptions{NodeClass: nodeClassIn(cv.Steps)})
	if err != nil {
		return reply, err
	}
	reply.Next(registry.NextStep{Tool: "dag.validate_integrity", When: "before wiring", Why: "checks step types and structure",
		ArgsHint: map[string]any{"nodes": g.Nodes, "edges": g.Edges}})
	reply.Out = dagDocument{Version: dag.WriterVersion, Metadata: meta, DAG: dagNodesEdges{Nodes: g.Nodes, Edges: g.Edges},
		Statistics: stats, Mermaid: mermaid}
	return reply, nil
}

// integrityReport is the payload of an integrity check; a failed check
// carries the same report in its details.
type integrityReport struct {
	IsValid         bool                `json:"is_valid"`
	Issues          map[string][]string `json:"issues"`
	IssueCategories []string            `json:"issue_categories"`
	Findings        []dag.Issue         `json:"findings"`
	NodeCount       int                 `json:"node_count"`
	EdgeCount       int                 `json:"edge_count"`
}

func newIntegrityReport(r dag.Integrity) integrityReport {
	return integrityReport{IsValid: r.Valid, Issues: r.ByCategory(), IssueCategories: nonNilStrings(r.Categories()),
		Findings: r.Issues, NodeCount: r.NodeCount, EdgeCount: r.EdgeCount}
}

func (rep integrityReport) details() map[string]any {
	return map[string]any{"is_valid": rep.IsValid, "issues": rep.Issues, "issue_categories": rep.IssueCategories,
		"findings": rep.Findings, "node_count": rep.NodeCount, "edge_count": rep.EdgeCount}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// integrityFailure is the validation_failed error for an invalid DAG.
func integrityFailure(r dag.Integrity) *registry.ToolError {
	var parts []string
	for _, is := range r.Issues {
		parts = append(parts, is.Message)
		if len(parts) == 5 {
			parts = append(parts, fmt.Sprintf("… %d more", len(r.Issues)-5))
			break
		}
	}
	return registry.Errorf(registry.CodeValidationFailed, "DAG integrity check failed: %s", strings.Join(parts, "; ")).
		WithDetails(newIntegrityReport(r).details()).
		Suggest("Fix the listed issues (details.findings locate each one) and check again; unknown steps list close matches.",
			"dag.validate_integrity", "catalog.search")
}

func dagValidateIntegrityTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "dag.validate_integrity",
		Description: "Check a DAG: cycles (named), edges to undeclared nodes, duplicate nodes/edges, self-loops, isolated nodes, " +
			"unknown step types (with suggestions) and node-type rules (a source step has no parents, a sink no children). " +
			"Fails with validation_failed and the full report in details when anything is wrong.",
		When: "Before wiring or compiling a DAG you assembled by hand.",
		Examples: []string{`dag.validate_integrity {"nodes": ["TabularPreprocessing", "XGBoostTraining"], "edges": [["TabularPreprocessing", "XGBoostTrainng"]]}  # typo in an edge`,
			`dag.validate_integrity {"dag": {"nodes": ["XGBoostTraining"], "edges": []}}  # a DAG document, as the compile tools take it`},
		Tags: []string{registry.PhaseValidator},
	}, d.dagValidateIntegrity)
}

func (d *Deps) dagValidateIntegrity(ctx context.Context, in dagAndStepsIn) (registry.Reply[integrityReport], error) {
	var reply registry.Reply[integrityReport]
	g, cv, err := d.readGraphWith(ctx, in)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	r, err := g.CheckWith(ctx, deps.NodeLookup(cv.Steps))
	if err != nil {
		return reply, err
	}
	if !r.Valid {
		return reply, integrityFailure(r)
	}
	reply.WithMeta("node_count", r.NodeCount)
	reply.Next(registry.NextStep{Tool: "dag.resolve_plan", When: "next", Why: "wires each dependency to an upstream output",
		ArgsHint: map[string]any{"nodes": g.Nodes, "edges": g.Edges}})
	reply.Out = newIntegrityReport(r)
	return reply, nil
}

// wiringPlan is the dag.resolve_plan payload.
type wiringPlan struct {
	ExecutionOrder []string                     `json:"execution_order"`
	Steps          map[string]deps.StepInfo     `json:"steps"`
	Dependencies   map[string][]string          `json:"dependencies"`
	Bindings       map[string][]planBinding     `json:"bindings"`
	DataFlowMap    map[string]map[string]string `json:"data_flow_map"`
	// StepConfigs is the Cursus name: an empty object per node in execution order, as Cursus answers (configs belong to config.*).
	StepConfigs     map[string]struct{} `json:"step_configs"`
	Unresolved      []deps.Unresolved   `json:"unresolved"`
	OptionalUnbound map[string][]string `json:"optional_unbound"`
	IsComplete      bool                `json:"is_complete"`
	Mermaid         string              `json:"mermaid"`
}

// planBinding is a deps.Binding as a client reads it: the score rounded,
// the reference in its runtime form, the breakdown only when asked for.
type planBinding struct {
	Dependency string          `json:"dependency"`
	Required   bool            `json:"required"`
	FromNode   string          `json:"from_node"`
	FromOutput string          `json:"from_output"`
	FromStep   string          `json:"from_step"`
	Score      float64         `json:"score"`
	Property   string          `json:"property"`
	Reference  propertyRef     `json:"reference"`
	Breakdown  *deps.Breakdown `json:"breakdown,omitempty"`
}

// propertyRef is a runtime property reference: {"Get": "Steps.<step>.<path>"}.
type propertyRef struct {
	Get string `json:"Get"`
}

func newWiringPlan(ctx context.Context, g *dag.DAG, plan *deps.Plan, withBreakdown bool) (wiringPlan, error) {
	bindings := map[string][]planBinding{}
	flow := map[string]map[string]string{}
	for _, n := range plan.Order {
		if err := ctx.Err(); err != nil {
			return wiringPlan{}, err
		}
		for _, b := range plan.Bindings[n] {
			pb := planBinding{Dependency: b.Dependency, Required: b.Required, FromNode: b.FromNode, FromOutput: b.FromOutput,
				FromStep: b.FromStep, Score: round4(b.Score), Property: b.Property, Reference: propertyRef{Get: b.Reference}}
			if withBreakdown {
				pb.Breakdown = &b.Breakdown
			}
			bindings[n] = append(bindings[n], pb)
			if flow[n] == nil {
				flow[n] = map[string]string{}
			}
			flow[n][b.Dependency] = b.FromNode + "." + b.FromOutput
		}
	}
	dependencies := g.ParentsByNode()
	stepConfigs := make(map[string]struct{}, len(plan.Order))
	for _, n := range plan.Order {
		dependencies[n] = nonNilStrings(dependencies[n])
		stepConfigs[n] = struct{}{}
	}
	mermaid, err := g.Mermaid(ctx, dag.MermaidOptions{EdgeLabel: edgeLabels(plan), NodeClass: unresolvedClass(plan)})
	if err != nil {
		return wiringPlan{}, err
	}
	return wiringPlan{
		ExecutionOrder: plan.Order, Steps: plan.Steps, Dependencies: dependencies, Bindings: bindings, DataFlowMap: flow,
		StepConfigs: stepConfigs, Unresolved: plan.Unresolved, OptionalUnbound: plan.OptionalUnbound, IsComplete: len(plan.Unresolved) == 0,
		Mermaid: mermaid,
	}, nil
}

func round4(x float64) float64 {
	v, _ := json.Number(fmt.Sprintf("%.4f", x)).Float64()
	return v
}

// edgeLabels labels src → dst with "output → dependency" for every binding.
func edgeLabels(plan *deps.Plan) func(src, dst string) string {
	return func(src, dst string) string {
		var parts []string
		for _, b := range plan.Bindings[dst] {
			if b.FromNode == src {
				parts = append(parts, b.FromOutput+" → "+b.Dependency)
			}
		}
		return strings.Join(parts, ", ")
	}
}

func unresolvedClass(plan *deps.Plan) func(string) string {
	bad := map[string]bool{}
	for _, u := range plan.Unresolved {
		bad[u.Node] = true
	}
	return func(n string) string {
		if bad[n] {
			return "unresolved"
		}
		return ""
	}
}

// resolveChecked runs the integrity check, then the resolver.
func resolveChecked(ctx context.Context, cat *steps.Catalog, g *dag.DAG) (*deps.Plan, error) {
	r, err := g.CheckWith(ctx, deps.NodeLookup(cat))
	if err != nil {
		return nil, err
	}
	if !r.Valid {
		return nil, integrityFailure(r)
	}
	plan, err := deps.Resolve(ctx, g, cat)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, registry.Errorf(registry.CodeValidationFailed, "cannot resolve the DAG: %v", err)
	}
	return plan, nil
}

type dagResolvePlanIn struct {
	dagAndStepsIn
	IncludeBreakdown bool `json:"include_breakdown,omitempty" jsonschema:"Include the score breakdown of every binding (default false; unresolved candidates always have one)."`
}

func dagResolvePlanTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "dag.resolve_plan",
		Description: "Wire the DAG: execution order, and for every node each dependency's chosen upstream output with its " +
			"compatibility score and runtime property reference ({\"Get\": \"Steps.<step>.<path>\"}); required dependencies " +
			"nothing can feed are listed with the best candidates and their score breakdowns. Includes a Mermaid flowchart " +
			"whose edges are labelled with the wired ports.",
		When:     "How data flows between steps.",
		Examples: []string{`dag.resolve_plan ` + dagExample, `dag.resolve_plan {"nodes": ["XGBoostTraining", "Package"], "edges": [["XGBoostTraining", "Package"]], "include_breakdown": true}  # with score components`},
		Tags:     []string{registry.PhasePlanner},
	}, d.dagResolvePlan)
}

func (d *Deps) dagResolvePlan(ctx context.Context, in dagResolvePlanIn) (registry.Reply[wiringPlan], error) {
	var reply registry.Reply[wiringPlan]
	g, cv, err := d.readGraphWith(ctx, in.dagAndStepsIn)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	plan, err := resolveChecked(ctx, cv.Steps, g)
	if err != nil {
		return reply, err
	}
	reply.WithMeta("step_count", len(plan.Order))
	for _, u := range plan.Unresolved {
		reply.Warn(fmt.Sprintf("required dependency %s.%s (%s) is unresolved: %s", u.Node, u.Dependency, u.Type, u.Reason))
	}
	if len(plan.Unresolved) > 0 {
		reply.Next(registry.NextStep{Tool: "validate.deps_explain", When: "to see why a candidate scored low",
			Why: "gives every component of one dependency/output score"})
	} else {
		reply.Next(registry.NextStep{Tool: "config.requirements", When: "next", Why: "lists the configuration the DAG needs",
			ArgsHint: map[string]any{"dag": map[string]any{"nodes": g.Nodes, "edges": g.Edges}}})
	}
	reply.Out, err = newWiringPlan(ctx, g, plan, in.IncludeBreakdown)
	return reply, err
}

type dagDependenciesIn struct {
	dagReadIn
	Step nodeName `json:"step"`
}

// nodeNeighbours is the dag.dependencies payload.
type nodeNeighbours struct {
	Step         string   `json:"step"`
	Dependencies []string `json:"dependencies"`
	Dependents   []string `json:"dependents"`
	Upstream     []string `json:"upstream"`
	Downstream   []string `json:"downstream"`
}

func dagDependenciesTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "dag.dependencies",
		Description: "The neighbours of one node (immediate parents and children, and everything upstream and downstream of it).",
		When:        "You want a step's neighbours.",
		Examples:    []string{`dag.dependencies {"step": "B", "nodes": ["A", "B", "C"], "edges": [["A", "B"], ["B", "C"]]}`},
		Tags:        []string{registry.PhasePlanner},
	}, registry.Plain(d.dagDependencies))
}

func (d *Deps) dagDependencies(ctx context.Context, in dagDependenciesIn) (nodeNeighbours, error) {
	g, err := d.readGraph(ctx, in.dagReadIn)
	if err != nil {
		return nodeNeighbours{}, err
	}
	step := string(in.Step)
	if !g.HasNode(step) {
		available := append([]string(nil), g.Nodes...)
		sort.Strings(available)
		return nodeNeighbours{}, registry.Errorf(registry.CodeNotFound, "step '%s' is not a node of the DAG", step).
			WithDetails(map[string]any{"available_nodes": available}).
			Suggest("Use one of details.available_nodes.")
	}
	return nodeNeighbours{Step: step, Dependencies: nonNilStrings(g.Parents(step)), Dependents: nonNilStrings(g.Children(step)),
		Upstream: nonNilStrings(g.Upstream(step)), Downstream: nonNilStrings(g.Downstream(step))}, nil
}

type dagSerializeIn struct {
	dagDocumentIn
	Path      workspacePath `json:"path,omitempty" jsonschema:"File path inside the workspace root."`
	Pretty    *bool         `json:"pretty,omitempty" jsonschema:"Indent the JSON (default true)."`
	Overwrite bool          `json:"overwrite,omitempty" jsonschema:"Replace an existing file (default false)."`
	CreatedAt string        `json:"created_at,omitempty" jsonschema:"Timestamp to record (e.g. 2025-01-31T12:00:00Z); omitted when not given." schema:"maxLength=64"`
}

// dagSerialized is the dag.serialize payload: the JSON itself, or where
// it was written (path and bytes).
type dagSerialized struct {
	JSON      string `json:"json,omitempty"`
	Path      string `json:"path,omitempty"`
	NodeCount int    `json:"node_count"`
	EdgeCount int    `json:"edge_count"`
	Bytes     int    `json:"bytes,omitempty"`
}

func dagSerializeTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "dag.serialize",
		Description: "Render the DAG document as JSON (read-only without path), or with path also write it to a file inside the workspace: " +
			"a write, which needs the server's write gate (the DAG must then be non-empty, acyclic and have no dangling edge). " +
			"Output is deterministic: no timestamp unless created_at is given.",
		When: "You want the DAG as JSON (or saved).",
		Examples: []string{
			`dag.serialize {"nodes": ["A", "B"], "edges": [["A", "B"]]}  # JSON string only`,
			`dag.serialize ` + strings.TrimSuffix(dagExample, "}") + `, "path": "dags/training.json"}  # write into the workspace`,
		},
		Tags:        []string{registry.PhasePlanner},
		WritesWith:  []string{"path"},
		Alternative: &registry.Alternative{Tool: "dag.serialize", How: "leave out path and it returns the DAG document as JSON in data.json, writing nothing; the other tools take the DAG inline."},
	}, d.dagSerialize)
}

func (d *Deps) dagSerialize(ctx context.Context, in dagSerializeIn) (registry.Reply[dagSerialized], error) {
	var reply registry.Reply[dagSerialized]
	g, path := in.graph(), string(in.Path)
	if path != "" {
		// Writing validates, so a file on disk is always a usable DAG.
		if len(g.Nodes) == 0 {
			return reply, registry.Errorf(registry.CodeInvalidInput, "cannot serialize DAG: cannot write an empty DAG (no nodes)")
		}
		if r := g.Check(); !r.Valid {
			fail := integrityFailure(r)
			fail.Message = "cannot serialize DAG: " + fail.Message
			return reply, fail
		}
	}
	data, err := dag.MarshalDocument(dag.Document{DAG: g, Metadata: in.Metadata, CreatedAt: in.CreatedAt})
	if err != nil {
		return reply, registry.Errorf(registry.CodeInvalidInput, "cannot serialize DAG: %v", err)
	}
	if in.Pretty != nil && !*in.Pretty {
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return reply, err
		}
		data = buf.Bytes()
	}
	stats := g.Stats()
	out := dagSerialized{NodeCount: stats.NodeCount, EdgeCount: stats.EdgeCount}
	if path == "" {
		out.JSON = string(data)
		reply.Out = out
		return reply, nil
	}
	if err := d.Root.WriteFile(path, data, in.Overwrite); err != nil {
		return reply, pathError("path", err)
	}
	abs, _ := d.Root.Resolve(path)
	out.Path, out.Bytes = d.Root.Rel(abs), len(data)
	reply.Next(registry.NextStep{Tool: "dag.deserialize", When: "to read it back", Why: "round-trips byte-for-byte", ArgsHint: map[string]any{"path": path}})
	reply.Out = out
	return reply, nil
}

type dagDeserializeIn struct {
	Path workspacePath `json:"path" jsonschema:"File path inside the workspace root."`
}

// dagFile is the dag.deserialize payload; created_at, version and
// description are null when the file has none.
type dagFile struct {
	Nodes       []string       `json:"nodes"`
	Edges       [][2]string    `json:"edges"`
	Stats       dag.Statistics `json:"stats"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   *string        `json:"created_at"`
	Version     *string        `json:"version"`
	Description *string        `json:"description"`
}

func dagDeserializeTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "dag.deserialize",
		Description: "Read a DAG JSON file from the workspace (writer format, Cursus shared-DAG format, or flat {nodes, edges}).",
		When:        "You have a DAG file to read.",
		Examples:    []string{`dag.deserialize {"path": "dags/training.json"}  # a file in the workspace (the other tools take the DAG inline)`},
		Tags:        []string{registry.PhasePlanner},
	}, d.dagDeserialize)
}

func (d *Deps) dagDeserialize(ctx context.Context, in dagDeserializeIn) (registry.Reply[dagFile], error) {
	var reply registry.Reply[dagFile]
	path := string(in.Path)
	call, err := d.sources(ctx, nil, stepTypesArg{})
	if err != nil {
		return reply, err
	}
	data, err := call.read("path", path)
	if err != nil {
		return reply, err
	}
	doc, err := dag.ParseDocument(data)
	if err != nil {
		return reply, registry.Errorf(registry.CodeInvalidInput, "invalid DAG file '%s': %v", path, err).
			Suggest("The file must hold {\"dag\": {\"nodes\": [...], \"edges\": [...]}} or {\"nodes\": [...], \"edges\": [...]}.")
	}
	stats := doc.DAG.Stats()
	meta := doc.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	reply.WithMeta("node_count", stats.NodeCount)
	reply.WithMeta("edge_count", stats.EdgeCount)
	if r := doc.DAG.Check(); !r.Valid {
		reply.Warn("the DAG has structural issues: " + strings.Join(r.Categories(), ", "))
	}
	reply.Out = dagFile{Nodes: doc.DAG.Nodes, Edges: doc.DAG.Edges, Stats: stats, Metadata: meta,
		CreatedAt: nullable(doc.CreatedAt), Version: nullable(doc.Version), Description: nullable(doc.Description)}
	return reply, nil
}

type dagMermaidIn struct {
	dagAndStepsIn
	Wiring bool `json:"wiring,omitempty" jsonschema:"Label edges with the wired ports (needs known step types; default false)."`
}

type dagMermaidOut struct {
	Mermaid   string `json:"mermaid"`
	NodeCount int    `json:"node_count"`
}

func dagMermaidTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "dag.mermaid",
		Description: "A Mermaid flowchart (flowchart TD) of the DAG to show a user; with wiring, edges are labelled output → input.",
		When:        "You want a picture of the pipeline.",
		Examples:    []string{`dag.mermaid ` + strings.TrimSuffix(dagExample, "}") + `, "wiring": true}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.dagMermaid)
}

func (d *Deps) dagMermaid(ctx context.Context, in dagMermaidIn) (registry.Reply[dagMermaidOut], error) {
	var reply registry.Reply[dagMermaidOut]
	g, cv, err := d.readGraphWith(ctx, in.dagAndStepsIn)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	opts := dag.MermaidOptions{NodeClass: nodeClassIn(cv.Steps)}
	if in.Wiring {
		plan, err := deps.Resolve(ctx, g, cv.Steps)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return reply, ctxErr
		}
		if err != nil {
			return reply, registry.Errorf(registry.CodeValidationFailed, "cannot wire the DAG for labels: %v", err).
				Suggest("Check the DAG first, or call without wiring.", "dag.validate_integrity")
		}
		opts.EdgeLabel = edgeLabels(plan)
		if len(plan.Unresolved) > 0 {
			reply.Warn(fmt.Sprintf("%d required dependencies are unresolved (see dag.resolve_plan)", len(plan.Unresolved)))
		}
	}
	mermaid, err := g.Mermaid(ctx, opts)
	if err != nil {
		return reply, err
	}
	reply.Out = dagMermaidOut{Mermaid: mermaid, NodeCount: g.Stats().NodeCount}
	return reply, nil
}
