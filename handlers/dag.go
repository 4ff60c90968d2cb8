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
	"github.com/cursus-dev/cursus/registry"
)

// Limits on inline DAGs: far above any real pipeline, low enough that a
// hostile call cannot make the server do unbounded work.
const (
	maxDAGNodes = 10000
	maxDAGEdges = 50000
)

var (
	dagNodeName = map[string]any{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^[A-Za-z][A-Za-z0-9_]*$`}
	dagNodesArg = map[string]any{
		"type": "array", "maxItems": maxDAGNodes, "items": dagNodeName,
		"description": "Node names: <StepType> or <StepType>_<job_type>, e.g. TabularPreprocessing_training.",
	}
	dagEdgesArg = map[string]any{
		"type": "array", "maxItems": maxDAGEdges,
		"items":       map[string]any{"type": "array", "minItems": 2, "maxItems": 2, "items": dagNodeName},
		"description": "Edges as [source, destination] node pairs; the source runs first and feeds the destination.",
	}
	dagMetadataArg = map[string]any{"type": "object", "maxProperties": 200, "description": "Free-form metadata stored with the DAG."}
	dagPathArg     = map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "File path inside the workspace root."}
)

func dagNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil {
		return registry.Namespace{}, errors.New("step catalog is not loaded")
	}
	graph := func(extra map[string]any, required ...string) map[string]any {
		props := map[string]any{"nodes": dagNodesArg, "edges": dagEdgesArg}
		for k, v := range extra {
			props[k] = v
		}
		return registry.Object(props, append([]string{"nodes"}, required...)...)
	}
	const ex = `{"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"], "edges": [["DummyDataLoading_training", "TabularPreprocessing_training"], ["TabularPreprocessing_training", "XGBoostTraining"]]}`
	return registry.Namespace{
		Name:        "dag",
		Description: "Build, check, wire, draw and (de)serialise pipeline DAGs.",
		Tools: []registry.ToolDef{
			{
				Name: "dag.construct",
				Description: "Build the DAG document (format version, metadata, nodes, edges) with statistics (entry/exit/isolated nodes, " +
					"longest path, cycles) and a Mermaid flowchart. Nothing is written and nothing is validated against the step catalog.",
				When:     "You have a list of steps and edges and want the DAG document or a picture of it.",
				Examples: []string{`dag.construct ` + ex + `  # three-step training DAG`},
				Tags:     []string{registry.PhasePlanner},
				Schema:   graph(map[string]any{"metadata": dagMetadataArg}),
				Handler:  d.dagConstruct,
			},
			{
				Name: "dag.validate_integrity",
				Description: "Check a DAG: cycles (named), edges to undeclared nodes, duplicate nodes/edges, self-loops, isolated nodes, " +
					"unknown step types (with suggestions) and node-type rules (a source step has no parents, a sink no children). " +
					"Fails with validation_failed and the full report in details when anything is wrong.",
				When:     "Before wiring or compiling a DAG you assembled by hand.",
				Examples: []string{`dag.validate_integrity {"nodes": ["TabularPreprocessing", "XGBoostTraining"], "edges": [["TabularPreprocessing", "XGBoostTrainng"]]}  # typo in an edge`},
				Tags:     []string{registry.PhaseValidator},
				Schema:   graph(nil),
				Handler:  d.dagValidateIntegrity,
			},
			{
				Name: "dag.resolve_plan",
				Description: "Wire the DAG: execution order, and for every node each dependency's chosen upstream output with its " +
					"compatibility score and runtime property reference ({\"Get\": \"Steps.<step>.<path>\"}); required dependencies " +
					"nothing can feed are listed with the best candidates and their score breakdowns. Includes a Mermaid flowchart " +
					"whose edges are labelled with the wired ports.",
				When:     "You want to know how data flows between the steps, or why an input stays empty.",
				Examples: []string{`dag.resolve_plan ` + ex, `dag.resolve_plan {"nodes": ["XGBoostTraining", "Package"], "edges": [["XGBoostTraining", "Package"]], "include_breakdown": true}  # with score components`},
				Tags:     []string{registry.PhasePlanner},
				Schema:   graph(map[string]any{"include_breakdown": registry.Boolean("Include the score breakdown of every binding (default false; unresolved candidates always have one).")}),
				Handler:  d.dagResolvePlan,
			},
			{
				Name:        "dag.dependencies",
				Description: "Immediate parents and children of one node, plus everything upstream and downstream of it.",
				When:        "You want to know what a step depends on or what it affects.",
				Examples:    []string{`dag.dependencies {"step": "B", "nodes": ["A", "B", "C"], "edges": [["A", "B"], ["B", "C"]]}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      graph(map[string]any{"step": dagNodeName}, "step"),
				Handler:     d.dagDependencies,
			},
			{
				Name: "dag.serialize",
				Description: "Render the DAG document as JSON, or with path write it to a file inside the workspace (the DAG must be " +
					"non-empty, acyclic and have no dangling edge). Output is deterministic: no timestamp unless created_at is given.",
				When: "You want to save a DAG for dag.deserialize, config.requirements or compile.*.",
				Examples: []string{
					`dag.serialize ` + strings.TrimSuffix(ex, "}") + `, "path": "pipeline_config/dag.json"}  # write into the workspace`,
					`dag.serialize {"nodes": ["A", "B"], "edges": [["A", "B"]]}  # JSON string only`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: graph(map[string]any{
					"metadata":   dagMetadataArg,
					"path":       dagPathArg,
					"pretty":     registry.Boolean("Indent the JSON (default true)."),
					"overwrite":  registry.Boolean("Replace an existing file (default false)."),
					"created_at": map[string]any{"type": "string", "maxLength": 64, "description": "Timestamp to record (e.g. 2025-01-31T12:00:00Z); omitted when not given."},
				}),
				Handler: d.dagSerialize,
				Writes:  true,
			},
			{
				Name:        "dag.deserialize",
				Description: "Read a DAG JSON file from the workspace (writer format, Cursus shared-DAG format, or flat {nodes, edges}).",
				When:        "You have a DAG file and want its nodes, edges, statistics and metadata.",
				Examples:    []string{`dag.deserialize {"path": "pipeline_config/dag.json"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      registry.Object(map[string]any{"path": dagPathArg}, "path"),
				Handler:     d.dagDeserialize,
			},
			{
				Name:        "dag.mermaid",
				Description: "A Mermaid flowchart (flowchart TD) of the DAG to show a user; with wiring, edges are labelled output → input.",
				When:        "You want a picture of the pipeline.",
				Examples:    []string{`dag.mermaid ` + strings.TrimSuffix(ex, "}") + `, "wiring": true}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      graph(map[string]any{"wiring": registry.Boolean("Label edges with the wired ports (needs known step types; default false).")}),
				Handler:     d.dagMermaid,
			},
		},
	}, nil
}

// dagArgs reads the nodes/edges arguments (schema-checked already).
func dagArgs(args map[string]any) (*dag.DAG, error) {
	g, err := dag.FromValue(args["nodes"], args["edges"], "")
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	return g, nil
}

// nodeClass colours nodes by their step's node type in Mermaid output.
func (d *Deps) nodeClass(node string) string {
	res, err := d.Steps.Resolve(node)
	if err != nil {
		return "unknown"
	}
	if iface, ok := d.Steps.Get(res.StepType); ok {
		switch iface.NodeType {
		case dag.NodeSource, dag.NodeSink, dag.NodeSingular:
			return iface.NodeType
		}
	}
	return ""
}

func (d *Deps) dagConstruct(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := dagArgs(req.Args)
	if err != nil {
		return nil, err
	}
	meta, _ := req.Args["metadata"].(map[string]any)
	data, err := dag.MarshalDocument(dag.Document{DAG: g, Metadata: meta})
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	doc["mermaid"] = g.Mermaid(dag.MermaidOptions{NodeClass: d.nodeClass})
	stats := g.Stats()
	res := registry.OK(doc).WithMeta("node_count", stats.NodeCount).WithMeta("edge_count", stats.EdgeCount)
	if stats.HasCycles {
		res.Warn("DAG contains a cycle — it is not a valid pipeline topology.")
	}
	if r := g.Check(); !r.Valid {
		res.Warn(fmt.Sprintf("structural issues: %s", strings.Join(r.Categories(), ", ")))
	}
	return res.Next(registry.NextStep{Tool: "dag.validate_integrity", When: "before wiring", Why: "checks step types and structure",
		ArgsHint: map[string]any{"nodes": g.Nodes, "edges": g.Edges}}), nil
}

// integrityReport is the payload shape of an integrity check.
func integrityReport(r dag.Integrity) map[string]any {
	return map[string]any{
		"is_valid":         r.Valid,
		"issues":           r.ByCategory(),
		"issue_categories": nonNilStrings(r.Categories()),
		"findings":         r.Issues,
		"node_count":       r.NodeCount,
		"edge_count":       r.EdgeCount,
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// integrityFailure is the validation_failed result for an invalid DAG.
func integrityFailure(r dag.Integrity) *registry.Result {
	var parts []string
	for _, is := range r.Issues {
		parts = append(parts, is.Message)
		if len(parts) == 5 {
			parts = append(parts, fmt.Sprintf("… %d more", len(r.Issues)-5))
			break
		}
	}
	return registry.Fail(registry.CodeValidationFailed, "DAG integrity check failed: "+strings.Join(parts, "; ")).
		WithDetails(integrityReport(r)).
		Suggest("Fix the listed issues (details.findings locate each one) and check again; unknown steps list close matches.",
			"dag.validate_integrity", "catalog.search")
}

func (d *Deps) dagValidateIntegrity(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := dagArgs(req.Args)
	if err != nil {
		return nil, err
	}
	r := g.CheckWith(deps.NodeLookup(d.Steps))
	if !r.Valid {
		return integrityFailure(r), nil
	}
	return registry.OK(integrityReport(r)).WithMeta("node_count", r.NodeCount).
		Next(registry.NextStep{Tool: "dag.resolve_plan", When: "next", Why: "wires each dependency to an upstream output",
			ArgsHint: map[string]any{"nodes": g.Nodes, "edges": g.Edges}}), nil
}

// planPayload renders a wiring plan for a tool result.
func planPayload(g *dag.DAG, plan *deps.Plan, withBreakdown bool) map[string]any {
	bindings := map[string][]map[string]any{}
	flow := map[string]map[string]string{}
	for _, n := range plan.Order {
		for _, b := range plan.Bindings[n] {
			m := map[string]any{
				"dependency": b.Dependency, "required": b.Required, "from_node": b.FromNode, "from_output": b.FromOutput,
				"from_step": b.FromStep, "score": round4(b.Score), "property": b.Property,
				"reference": map[string]string{"Get": b.Reference},
			}
			if withBreakdown {
				m["breakdown"] = b.Breakdown
			}
			bindings[n] = append(bindings[n], m)
			if flow[n] == nil {
				flow[n] = map[string]string{}
			}
			flow[n][b.Dependency] = b.FromNode + "." + b.FromOutput
		}
	}
	dependencies := map[string][]string{}
	for _, n := range plan.Order {
		dependencies[n] = nonNilStrings(g.Parents(n))
	}
	return map[string]any{
		"execution_order":  plan.Order,
		"steps":            plan.Steps,
		"dependencies":     dependencies,
		"bindings":         bindings,
		"data_flow_map":    flow,
		"unresolved":       plan.Unresolved,
		"optional_unbound": plan.OptionalUnbound,
		"is_complete":      len(plan.Unresolved) == 0,
		"mermaid":          g.Mermaid(dag.MermaidOptions{EdgeLabel: edgeLabels(plan), NodeClass: unresolvedClass(plan)}),
	}
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
func (d *Deps) resolveChecked(g *dag.DAG) (*deps.Plan, *registry.Result, error) {
	if r := g.CheckWith(deps.NodeLookup(d.Steps)); !r.Valid {
		return nil, integrityFailure(r), nil
	}
	plan, err := deps.Resolve(g, d.Steps)
	if err != nil {
		return nil, nil, registry.Errorf(registry.CodeValidationFailed, "cannot resolve the DAG: %v", err)
	}
	return plan, nil, nil
}

func (d *Deps) dagResolvePlan(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := dagArgs(req.Args)
	if err != nil {
		return nil, err
	}
	plan, fail, err := d.resolveChecked(g)
	if fail != nil || err != nil {
		return fail, err
	}
	withBreakdown, _ := req.Args["include_breakdown"].(bool)
	res := registry.OK(planPayload(g, plan, withBreakdown)).WithMeta("step_count", len(plan.Order))
	for _, u := range plan.Unresolved {
		res.Warn(fmt.Sprintf("required dependency %s.%s (%s) is unresolved: %s", u.Node, u.Dependency, u.Type, u.Reason))
	}
	if len(plan.Unresolved) > 0 {
		return res.Next(registry.NextStep{Tool: "validate.deps_explain", When: "to see why a candidate scored low",
			Why: "gives every component of one dependency/output score"}), nil
	}
	return res.Next(registry.NextStep{Tool: "config.requirements", When: "next", Why: "lists the configuration the DAG needs",
		ArgsHint: map[string]any{"dag": map[string]any{"nodes": g.Nodes, "edges": g.Edges}}}), nil
}

func (d *Deps) dagDependencies(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := dagArgs(req.Args)
	if err != nil {
		return nil, err
	}
	step, _ := req.Args["step"].(string)
	if !g.HasNode(step) {
		available := append([]string(nil), g.Nodes...)
		sort.Strings(available)
		return nil, registry.Errorf(registry.CodeNotFound, "step '%s' is not a node of the DAG", step).
			WithDetails(map[string]any{"available_nodes": available}).
			Suggest("Use one of details.available_nodes.")
	}
	return registry.OK(map[string]any{
		"step":         step,
		"dependencies": nonNilStrings(g.Parents(step)),
		"dependents":   nonNilStrings(g.Children(step)),
		"upstream":     nonNilStrings(g.Upstream(step)),
		"downstream":   nonNilStrings(g.Downstream(step)),
	}), nil
}

func (d *Deps) dagSerialize(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := dagArgs(req.Args)
	if err != nil {
		return nil, err
	}
	meta, _ := req.Args["metadata"].(map[string]any)
	createdAt, _ := req.Args["created_at"].(string)
	path, hasPath := req.Args["path"].(string)
	pretty := true
	if v, ok := req.Args["pretty"].(bool); ok {
		pretty = v
	}
	overwrite, _ := req.Args["overwrite"].(bool)
	if hasPath {
		// Writing validates, so a file on disk is always a usable DAG.
		if len(g.Nodes) == 0 {
			return nil, registry.Errorf(registry.CodeInvalidInput, "cannot serialize DAG: cannot write an empty DAG (no nodes)")
		}
		if r := g.Check(); !r.Valid {
			f := integrityFailure(r)
			f.Error = "cannot serialize DAG: " + f.Error
			return f, nil
		}
	}
	data, err := dag.MarshalDocument(dag.Document{DAG: g, Metadata: meta, CreatedAt: createdAt})
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "cannot serialize DAG: %v", err)
	}
	if !pretty {
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return nil, err
		}
		data = buf.Bytes()
	}
	stats := g.Stats()
	if !hasPath {
		return registry.OK(map[string]any{"json": string(data), "node_count": stats.NodeCount, "edge_count": stats.EdgeCount}), nil
	}
	if err := d.Root.WriteFile(path, data, overwrite); err != nil {
		return nil, pathError("path", err)
	}
	abs, _ := d.Root.Resolve(path)
	return registry.OK(map[string]any{"path": d.Root.Rel(abs), "node_count": stats.NodeCount, "edge_count": stats.EdgeCount, "bytes": len(data)}).
		Next(registry.NextStep{Tool: "dag.deserialize", When: "to read it back", Why: "round-trips byte-for-byte", ArgsHint: map[string]any{"path": path}}), nil
}

func (d *Deps) dagDeserialize(_ context.Context, req registry.Request) (*registry.Result, error) {
	path, _ := req.Args["path"].(string)
	data, err := d.Root.ReadFile(path)
	if err != nil {
		return nil, pathError("path", err)
	}
	doc, err := dag.ParseDocument(data)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "invalid DAG file '%s': %v", path, err).
			Suggest("The file must hold {\"dag\": {\"nodes\": [...], \"edges\": [...]}} or {\"nodes\": [...], \"edges\": [...]}.")
	}
	stats := doc.DAG.Stats()
	meta := doc.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	res := registry.OK(map[string]any{
		"nodes": doc.DAG.Nodes, "edges": doc.DAG.Edges, "stats": stats, "metadata": meta,
		"created_at": dagOptional(doc.CreatedAt), "version": dagOptional(doc.Version), "description": dagOptional(doc.Description),
	}).WithMeta("node_count", stats.NodeCount).WithMeta("edge_count", stats.EdgeCount)
	if r := doc.DAG.Check(); !r.Valid {
		res.Warn("the DAG has structural issues: " + strings.Join(r.Categories(), ", "))
	}
	return res, nil
}

func dagOptional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (d *Deps) dagMermaid(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := dagArgs(req.Args)
	if err != nil {
		return nil, err
	}
	opts := dag.MermaidOptions{NodeClass: d.nodeClass}
	res := registry.OK(nil)
	if wiring, _ := req.Args["wiring"].(bool); wiring {
		plan, err := deps.Resolve(g, d.Steps)
		if err != nil {
			return nil, registry.Errorf(registry.CodeValidationFailed, "cannot wire the DAG for labels: %v", err).
				Suggest("Check the DAG first, or call without wiring.", "dag.validate_integrity")
		}
		opts.EdgeLabel = edgeLabels(plan)
		if len(plan.Unresolved) > 0 {
			res.Warn(fmt.Sprintf("%d required dependencies are unresolved (see dag.resolve_plan)", len(plan.Unresolved)))
		}
	}
	res.Data = map[string]any{"mermaid": g.Mermaid(opts), "node_count": g.Stats().NodeCount}
	return res, nil
}
