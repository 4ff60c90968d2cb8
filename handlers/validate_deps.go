package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/registry"
)

var depsNameArg = map[string]any{"type": "string", "minLength": 1, "maxLength": 256}

// validateDepsTools are validate.deps_resolve and validate.deps_explain; the
// validate namespace includes them.
func validateDepsTools(d *Deps) []registry.ToolDef {
	return []registry.ToolDef{
		{
			Name: "validate.deps_resolve",
			Description: "Dependency resolution report. With a DAG (dag, dag_file, or nodes/edges) every node is wired to its " +
				"parents exactly as compile does; with step_names every dependency is matched against the outputs of all the " +
				"other named steps (could they be wired at all?). Per step: resolved dependencies with scores, unresolved ones, and a summary.",
			When: "You want to check that steps can feed each other before building the DAG or compiling it.",
			Examples: []string{
				`validate.deps_resolve {"step_names": ["TabularPreprocessing_training", "XGBoostTraining", "XGBoostModelEval_calibration"]}  # a set of steps`,
				`validate.deps_resolve {"nodes": ["XGBoostTraining", "Package"], "edges": [["XGBoostTraining", "Package"]]}  # a DAG`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_names": map[string]any{"type": "array", "maxItems": 500, "items": depsNameArg, "description": "Step types or node names to resolve as a set."},
				"dag":        map[string]any{"type": "object", "description": `Inline DAG: {"nodes": [...], "edges": [...]} or {"dag": {...}}.`},
				"dag_file":   map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "DAG JSON file inside the workspace."},
				"nodes":      dagNodesArg,
				"edges":      dagEdgesArg,
			}),
			Handler: d.validateDepsResolve,
		},
		{
			Name: "validate.deps_explain",
			Description: "Explain a score. With name1/name2: the semantic name similarity and its parts (string ratio, token " +
				"Jaccard, synonyms, substring) on the normalised names. With consumer/dependency/producer/output: every component " +
				"of the compatibility score that decides wiring (type, data type, similarity, exact-name bonus, compatible sources, keywords).",
			When: "A dependency was wired unexpectedly or not at all and you want to know why.",
			Examples: []string{
				`validate.deps_explain {"name1": "processed_data", "name2": "input_data"}`,
				`validate.deps_explain {"consumer": "XGBoostTraining", "dependency": "input_path", "producer": "TabularPreprocessing_training", "output": "processed_data"}`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"name1":      depsNameArg,
				"name2":      depsNameArg,
				"consumer":   depsNameArg,
				"dependency": depsNameArg,
				"producer":   depsNameArg,
				"output":     depsNameArg,
			}),
			Handler: d.validateDepsExplain,
		},
	}
}

func (d *Deps) validateDepsResolve(ctx context.Context, req registry.Request) (*registry.Result, error) {
	names, hasNames := req.Args["step_names"]
	_, hasNodes := req.Args["nodes"]
	_, hasDAG := req.Args["dag"]
	_, hasFile := req.Args["dag_file"]
	given := 0
	for _, h := range []bool{hasNames, hasNodes, hasDAG, hasFile} {
		if h {
			given++
		}
	}
	if given != 1 {
		return nil, registry.Errorf(registry.CodeInvalidInput, "pass exactly one of step_names, nodes (with edges), dag or dag_file").
			Suggest(`Resolve a set of steps with {"step_names": ["TabularPreprocessing_training", "XGBoostTraining"]}, or a DAG with {"nodes": [...], "edges": [...]}.`)
	}
	if _, hasEdges := req.Args["edges"]; hasEdges && !hasNodes {
		return nil, registry.Errorf(registry.CodeInvalidInput, "edges needs nodes")
	}
	if hasNames {
		list, _ := names.([]any)
		var stepNames []string
		for _, v := range list {
			s, _ := v.(string)
			stepNames = append(stepNames, s)
		}
		if len(stepNames) == 0 {
			return nil, registry.Errorf(registry.CodeInvalidInput, "step_names is empty: name at least two steps, e.g. [\"TabularPreprocessing_training\", \"XGBoostTraining\"]")
		}
		return d.depsResolveSet(ctx, stepNames)
	}
	var g *dag.DAG
	var err error
	if hasNodes {
		g, err = dagArgs(req.Args)
	} else {
		g, err = d.configDAG(req.Args, false)
	}
	if err != nil {
		return nil, err
	}
	plan, err := d.resolveChecked(ctx, g)
	if err != nil {
		return nil, err
	}
	rep, err := deps.PlanReport(ctx, plan, d.Steps)
	if err != nil {
		return nil, err
	}
	return depsResult(rep), nil
}

// depsResult is the envelope of a dependency report.
func depsResult(rep *deps.Report) *registry.Result {
	res := registry.OK(depsPayload(rep)).WithMeta("steps_with_errors", rep.Report.ResolutionSummary.StepsWithErrors)
	if len(rep.MissingSpecs) > 0 {
		res.Warn(fmt.Sprintf("no specification found for %d requested step(s): %s", len(rep.MissingSpecs), strings.Join(rep.MissingSpecs, ", ")))
	}
	if len(rep.Suggestions) > 0 {
		res.WithMeta("suggestions", rep.Suggestions)
	}
	return res
}

// depsPayload lays rep out as the tool's payload of plain maps, which
// in-process callers read as Go values.
func depsPayload(rep *deps.Report) map[string]any {
	details := map[string]any{}
	for node, d := range rep.Report.StepDetails {
		entry := map[string]any{"step_type": d.StepType, "total_dependencies": d.TotalDependencies,
			"required_dependencies": d.RequiredDependencies, "optional_dependencies": d.OptionalDependencies, "outputs": d.Outputs,
			"resolved_dependencies": d.ResolvedDependencies, "scores": d.Scores, "unresolved_dependencies": d.UnresolvedDependencies}
		if d.OptionalUnbound != nil {
			entry["optional_unbound"] = *d.OptionalUnbound
		}
		if d.Error != "" {
			entry["error"] = d.Error
		}
		details[node] = entry
	}
	sum := rep.Report.ResolutionSummary
	return map[string]any{"mode": rep.Mode, "requested_steps": rep.RequestedSteps, "registered_steps": rep.RegisteredSteps,
		"missing_specs": rep.MissingSpecs,
		"report": map[string]any{"total_steps": rep.Report.TotalSteps, "registered_steps": rep.Report.RegisteredSteps,
			"step_details": details, "unresolved_dependencies": rep.Report.UnresolvedDependencies,
			"resolution_summary": map[string]any{"total_dependencies": sum.TotalDependencies, "resolved_dependencies": sum.ResolvedDependencies,
				"resolution_rate": sum.ResolutionRate, "steps_with_errors": sum.StepsWithErrors},
			"diagnostics": rep.Report.Diagnostics}}
}

func (d *Deps) depsResolveSet(ctx context.Context, names []string) (*registry.Result, error) {
	rep, err := deps.SetReport(ctx, names, d.Steps)
	var none *deps.NoKnownStepsError
	if errors.As(err, &none) {
		return nil, registry.Errorf(registry.CodeNotFound, "%s", none.Error()).
			WithDetails(map[string]any{"missing_specs": none.Missing, "suggestions": none.Suggestions}).
			Suggest("Use step types from catalog.list_steps (job-type suffixes like _training are fine).", "catalog.search")
	}
	if err != nil {
		return nil, err
	}
	return depsResult(rep), nil
}

func (d *Deps) validateDepsExplain(_ context.Context, req registry.Request) (*registry.Result, error) {
	str := func(k string) string { s, _ := req.Args[k].(string); return strings.TrimSpace(s) }
	n1, n2 := str("name1"), str("name2")
	consumer, dependency, producer, output := str("consumer"), str("dependency"), str("producer"), str("output")
	pairMode := consumer != "" || dependency != "" || producer != "" || output != ""
	nameMode := n1 != "" || n2 != ""
	const how = `pass {"name1", "name2"} for name similarity, or {"consumer", "dependency", "producer", "output"} for a full compatibility score`
	switch {
	case pairMode && nameMode:
		return nil, registry.Errorf(registry.CodeInvalidInput, "mixed arguments: %s", how)
	case nameMode:
		if n1 == "" || n2 == "" {
			return nil, registry.Errorf(registry.CodeInvalidInput, "name1 and name2 must both be non-blank: %s", how)
		}
		e := deps.Explain(n1, n2)
		return registry.OK(map[string]any{
			"overall_score": e.Overall, "normalized_names": e.Normalized, "string_similarity": e.String,
			"token_similarity": e.Token, "semantic_similarity": e.Semantic, "substring_similarity": e.Substring,
		}).WithMeta("name1", n1).WithMeta("name2", n2), nil
	case !pairMode:
		return nil, registry.Errorf(registry.CodeInvalidInput, "nothing to explain: %s", how)
	}
	if consumer == "" || dependency == "" || producer == "" || output == "" {
		return nil, registry.Errorf(registry.CodeInvalidInput, "consumer, dependency, producer and output are all needed: %s", how)
	}
	lookup := deps.CatalogLookup(d.Steps)
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
	sem := deps.Explain(dependency, b.SimilarityWith)
	return registry.OK(map[string]any{
		"consumer": consumer, "dependency": dependency, "producer": producer, "output": output,
		"score": b.Total, "viable": b.Viable, "threshold": deps.Threshold, "breakdown": b, "similarity": sem,
	}), nil
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
