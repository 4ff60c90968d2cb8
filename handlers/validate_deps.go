package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/registry"
)

// depsName is a step type, node name, dependency or output name.
type depsName string

func (depsName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(256)}
}

// depsResolveIn takes a step set or a DAG in one of three forms; a key is
// non-nil exactly when it was given.
// depsExplanation is one of the two answers of validate.deps_explain: the
// similarity of two names, or the score of one dependency/output pair.
type depsExplanation struct {
	*deps.Explanation
	*depsPairScore
}

func (depsExplanation) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{mustSchema[deps.Explanation](), mustSchema[depsPairScore]()}}
}

// depsPairScore is the compatibility score that decides whether a
// producer's output is wired to a consumer's dependency.
type depsPairScore struct {
	Consumer   string           `json:"consumer"`
	Dependency string           `json:"dependency"`
	Producer   string           `json:"producer"`
	Output     string           `json:"output"`
	Score      float64          `json:"score"`
	Viable     bool             `json:"viable"`
	Threshold  float64          `json:"threshold"`
	Breakdown  deps.Breakdown   `json:"breakdown"`
	Similarity deps.Explanation `json:"similarity"`
}

// mustSchema derives T's schema for a Schemer built of plain types; it
// cannot fail for such types, so a failure is a programming error.
func mustSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	return s
}

type depsResolveIn struct {
	StepNames []depsName     `json:"step_names,omitempty" jsonschema:"Step types or node names to resolve as a set." schema:"maxItems=500"`
	DAG       map[string]any `json:"dag,omitempty" jsonschema:"Inline DAG: {\"nodes\": [...], \"edges\": [...]} or {\"dag\": {...}}."`
	DAGFile   workspacePath  `json:"dag_file,omitempty" jsonschema:"DAG JSON file inside the workspace."`
	Nodes     []nodeName     `json:"nodes,omitempty" jsonschema:"Node names: <StepType> or <StepType>_<job_type>, e.g. TabularPreprocessing_training." schema:"maxItems=10000"`
	Edges     []dagEdge      `json:"edges,omitempty" jsonschema:"Edges as [source, destination] node pairs; the source runs first and feeds the destination." schema:"maxItems=50000"`
	stepTypesArg
	unusedWorkspaceDirsArg
}

func validateDepsResolveTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.deps_resolve",
		Description: "Dependency resolution report. With a DAG (dag, dag_file, or nodes/edges) every node is wired to its " +
			"parents exactly as compile does; with step_names every dependency is matched against the outputs of all the " +
			"other named steps (could they be wired at all?). Per step: resolved dependencies with scores, unresolved ones, and a summary.",
		When: "To check steps can feed each other.",
		Examples: []string{
			`validate.deps_resolve {"step_names": ["TabularPreprocessing_training", "XGBoostTraining", "XGBoostModelEval_calibration"]}  # a set of steps`,
			`validate.deps_resolve {"nodes": ["XGBoostTraining", "Package"], "edges": [["XGBoostTraining", "Package"]]}  # a DAG`,
		},
		Tags: []string{registry.PhaseValidator},
	}, d.validateDepsResolve)
}

func (d *Deps) validateDepsResolve(ctx context.Context, in depsResolveIn) (registry.Reply[deps.Report], error) {
	var reply registry.Reply[deps.Report]
	in.unusedWorkspaceDirsArg.warn(reply.Warn)
	given := 0
	for _, h := range []bool{in.StepNames != nil, in.Nodes != nil, in.DAG != nil, in.DAGFile != ""} {
		if h {
			given++
		}
	}
	if given != 1 {
		return reply, registry.Errorf(registry.CodeInvalidInput, "pass exactly one of step_names, nodes (with edges), dag or dag_file").
			Suggest(`Resolve a set of steps with {"step_names": ["TabularPreprocessing_training", "XGBoostTraining"]}, or a DAG with {"nodes": [...], "edges": [...]}.`)
	}
	if in.Edges != nil && in.Nodes == nil {
		return reply, registry.Errorf(registry.CodeInvalidInput, "edges needs nodes")
	}
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	if in.StepNames != nil {
		rep, err := depsResolveSet(ctx, cv.Steps, strs(in.StepNames))
		if err != nil {
			return reply, err
		}
		depsResult(&reply, rep)
		return reply, nil
	}
	g := dagGraph{Nodes: in.Nodes, Edges: in.Edges}.graph()
	if in.Nodes == nil {
		var err error
		if g, err = d.loadDAG(ctx, dagSource{DAG: in.DAG, DAGFile: in.DAGFile}, false); err != nil {
			return reply, err
		}
	}
	plan, err := resolveChecked(ctx, cv.Steps, g)
	if err != nil {
		return reply, err
	}
	rep, err := deps.PlanReport(ctx, plan, cv.Steps)
	if err != nil {
		return reply, err
	}
	depsResult(&reply, rep)
	return reply, nil
}

// depsResult answers with a dependency report, its meta and warnings.
func depsResult(reply *registry.Reply[deps.Report], rep *deps.Report) {
	reply.WithMeta("steps_with_errors", rep.Report.ResolutionSummary.StepsWithErrors)
	if len(rep.MissingSpecs) > 0 {
		reply.Warn(fmt.Sprintf("no specification found for %d requested step(s): %s", len(rep.MissingSpecs), strings.Join(rep.MissingSpecs, ", ")))
	}
	if len(rep.Suggestions) > 0 {
		reply.WithMeta("suggestions", rep.Suggestions)
	}
	reply.Out = *rep
}

func depsResolveSet(ctx context.Context, cat *steps.Catalog, names []string) (*deps.Report, error) {
	if len(names) == 0 {
		return nil, registry.Errorf(registry.CodeInvalidInput, "step_names is empty: name at least two steps, e.g. [\"TabularPreprocessing_training\", \"XGBoostTraining\"]")
	}
	rep, err := deps.SetReport(ctx, names, cat)
	var none *deps.NoKnownStepsError
	if errors.As(err, &none) {
		return nil, registry.Errorf(registry.CodeNotFound, "%s", none.Error()).
			WithDetails(map[string]any{"missing_specs": none.Missing, "suggestions": none.Suggestions}).
			Suggest("Use step types from catalog.list_steps (job-type suffixes like _training are fine).", "catalog.search")
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

type depsExplainIn struct {
	Name1      depsName `json:"name1,omitempty"`
	Name2      depsName `json:"name2,omitempty"`
	Consumer   depsName `json:"consumer,omitempty"`
	Dependency depsName `json:"dependency,omitempty"`
	Producer   depsName `json:"producer,omitempty"`
	Output     depsName `json:"output,omitempty"`
	stepTypesArg
}

func validateDepsExplainTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.deps_explain",
		Description: "Explain a score. With name1/name2: the semantic name similarity and its parts (string ratio, token " +
			"Jaccard, synonyms, substring) on the normalised names. With consumer/dependency/producer/output: every component " +
			"of the compatibility score that decides wiring (type, data type, similarity, exact-name bonus, compatible sources, keywords).",
		When: "A dependency was wired unexpectedly, or not at all.",
		Examples: []string{
			`validate.deps_explain {"name1": "processed_data", "name2": "input_data"}`,
			`validate.deps_explain {"consumer": "XGBoostTraining", "dependency": "input_path", "producer": "TabularPreprocessing_training", "output": "processed_data"}`,
		},
		Tags: []string{registry.PhaseValidator},
	}, d.validateDepsExplain)
}

func (d *Deps) validateDepsExplain(ctx context.Context, in depsExplainIn) (registry.Reply[depsExplanation], error) {
	var reply registry.Reply[depsExplanation]
	trim := func(s depsName) string { return strings.TrimSpace(string(s)) }
	n1, n2 := trim(in.Name1), trim(in.Name2)
	consumer, dependency, producer, output := trim(in.Consumer), trim(in.Dependency), trim(in.Producer), trim(in.Output)
	pairMode := consumer != "" || dependency != "" || producer != "" || output != ""
	nameMode := n1 != "" || n2 != ""
	const how = `pass {"name1", "name2"} for name similarity, or {"consumer", "dependency", "producer", "output"} for a full compatibility score`
	switch {
	case pairMode && nameMode:
		return reply, registry.Errorf(registry.CodeInvalidInput, "mixed arguments: %s", how)
	case nameMode:
		if n1 == "" || n2 == "" {
			return reply, registry.Errorf(registry.CodeInvalidInput, "name1 and name2 must both be non-blank: %s", how)
		}
		e := deps.Explain(n1, n2)
		reply.WithMeta("name1", n1)
		reply.WithMeta("name2", n2)
		reply.Out = depsExplanation{Explanation: &e}
		return reply, nil
	case !pairMode:
		return reply, registry.Errorf(registry.CodeInvalidInput, "nothing to explain: %s", how)
	}
	if consumer == "" || dependency == "" || producer == "" || output == "" {
		return reply, registry.Errorf(registry.CodeInvalidInput, "consumer, dependency, producer and output are all needed: %s", how)
	}
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	score, err := scorePair(cv.Steps, consumer, dependency, producer, output)
	reply.Out = depsExplanation{depsPairScore: score}
	return reply, err
}

// depsPairScore scores the producer's output for the consumer's
// dependency.
func scorePair(cat *steps.Catalog, consumer, dependency, producer, output string) (*depsPairScore, error) {
	lookup := deps.CatalogLookup(cat)
	c, err := lookup(consumer)
	if err != nil {
		return nil, depsStepNotFound("consumer", err)
	}
	p, err := lookup(producer)
	if err != nil {
		return nil, depsStepNotFound("producer", err)
	}
	dep, ok := c.Spec.Dependencies.Get(dependency)
	if !ok {
		return nil, registry.Errorf(registry.CodeNotFound, "%s has no dependency '%s'", c.StepType, dependency).
			WithDetails(map[string]any{"dependencies": nonNilStrings(c.Spec.Dependencies.Keys())})
	}
	out, ok := p.Spec.Outputs.Get(output)
	if !ok {
		return nil, registry.Errorf(registry.CodeNotFound, "%s has no output '%s'", p.StepType, output).
			WithDetails(map[string]any{"outputs": nonNilStrings(p.Spec.Outputs.Keys())})
	}
	b := deps.Score(dep, dependency, out, output, p.StepType)
	return &depsPairScore{Consumer: consumer, Dependency: dependency, Producer: producer, Output: output,
		Score: b.Total, Viable: b.Viable, Threshold: deps.Threshold, Breakdown: b, Similarity: deps.Explain(dependency, b.SimilarityWith)}, nil
}

func depsStepNotFound(arg string, err error) error {
	var nf *steps.NotFoundError
	if errors.As(err, &nf) {
		return registry.Errorf(registry.CodeNotFound, "%s: %v", arg, err).
			WithDetails(map[string]any{"suggestions": nonNilStrings(nf.Suggestions)}).
			Suggest("Use a step type from catalog.list_steps, optionally with a job type suffix (_training).", "catalog.search")
	}
	return registry.Errorf(registry.CodeInvalidInput, "%s: %v", arg, err)
}
