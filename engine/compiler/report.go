package compiler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
)

// ValidationResult is the compatibility check of a DAG and its configs:
// missing configs, unresolvable builders, config errors, dependency
// issues. It never fails; problems are in the fields.
type ValidationResult struct {
	IsValid              bool                `json:"is_valid"`
	MissingConfigs       []string            `json:"missing_configs"`
	UnresolvableBuilders []string            `json:"unresolvable_builders"`
	ConfigErrors         map[string][]string `json:"config_errors"`
	DependencyIssues     []string            `json:"dependency_issues"`
	Warnings             []string            `json:"warnings"`
	Summary              string              `json:"summary"`
	// StandIns and MissingCode are the steps built with built-in code in
	// place of a named script, and those with no code (also in Warnings
	// and ConfigErrors).
	StandIns    []StandIn     `json:"-"`
	MissingCode []MissingCode `json:"-"`
}

// Validate checks that every node has a config, a loadable interface and a
// builder, that node and config agree on the step type, that required
// inputs are wired, that every step has code (the caller's or built-in)
// and that the steps build.
func Validate(ctx context.Context, in Input) (r ValidationResult) {
	r = ValidationResult{MissingConfigs: []string{}, UnresolvableBuilders: []string{}, ConfigErrors: map[string][]string{},
		DependencyIssues: []string{}, Warnings: []string{}}
	defer func() {
		r.IsValid = len(r.MissingConfigs) == 0 && len(r.UnresolvableBuilders) == 0 && len(r.ConfigErrors) == 0 && len(r.DependencyIssues) == 0
		if r.IsValid {
			r.Summary = "Validation passed"
			if len(r.Warnings) > 0 {
				r.Summary += fmt.Sprintf(" with %d warning(s)", len(r.Warnings))
			}
		} else {
			r.Summary = fmt.Sprintf("Validation failed: %d missing config(s), %d unresolvable builder(s), %d node(s) with config errors, %d dependency issue(s)",
				len(r.MissingConfigs), len(r.UnresolvableBuilders), len(r.ConfigErrors), len(r.DependencyIssues))
		}
	}()
	if in.DAG == nil || len(in.DAG.Nodes) == 0 {
		r.ConfigErrors["dag"] = []string{"the DAG has no nodes"}
		return r
	}
	if _, err := in.DAG.TopoSort(); err != nil {
		r.DependencyIssues = append(r.DependencyIssues, err.Error())
		return r
	}
	// Every node is checked and reported: an internal step type, a missing
	// or invalid config on one node does not hide another node's problem.
	internal := map[string]bool{}
	unsupported := func(err error) {
		var ue *UnsupportedError
		if errors.As(err, &ue) && !internal[ue.Node] {
			internal[ue.Node] = true
			r.UnresolvableBuilders = append(r.UnresolvableBuilders, fmt.Sprintf("%s (%s)", ue.Node, ue.StepType))
			r.ConfigErrors[ue.Node] = append(r.ConfigErrors[ue.Node], err.Error())
		}
	}
	for _, err := range internalNodes(in.DAG) {
		unsupported(err)
	}
	nodes, failures, routeErrs, warnings, err := bind(ctx, in)
	if err != nil {
		r.ConfigErrors["compile"] = append(r.ConfigErrors["compile"], err.Error())
		return r
	}
	r.Warnings = append(r.Warnings, warnings...)
	for _, f := range failures {
		switch u, _ := unloadedFor(f.Node, in.Unloaded); {
		case internal[f.Node]:
		case len(u.Problems) > 0:
			// The config is there but its values are invalid: one error each.
			for _, p := range u.Problems {
				r.ConfigErrors[f.Node] = append(r.ConfigErrors[f.Node], fmt.Sprintf("config %s: %s: %s", u.Key, p.Field, p.Message))
			}
		default:
			r.MissingConfigs = append(r.MissingConfigs, f.Node)
			r.ConfigErrors[f.Node] = append(r.ConfigErrors[f.Node], f.Message)
		}
	}
	for _, err := range routeErrs {
		unsupported(err)
	}
	if len(internal) > 0 {
		return r
	}
	known := func(p string) bool { _, ok := in.Catalog.Get(p); return ok || catalogHasKey(in.Catalog, p) }
	for _, name := range in.DAG.Nodes {
		n := nodes[name]
		if n == nil {
			continue
		}
		if prefix, _, ok := steps.SplitJobType(name, known); ok && steps.CanonicalKey(prefix) != steps.CanonicalKey(n.cfg.StepType) {
			r.ConfigErrors[name] = append(r.ConfigErrors[name], fmt.Sprintf("node %q names step type %s but its config %q is a %s", name, prefix, n.cfg.Key, n.cfg.StepType))
		}
	}
	if coll := collisions(in.DAG.Nodes, nodes); len(coll) > 0 {
		r.ConfigErrors["step_names"] = coll
	}
	if len(failures) > 0 || len(routeErrs) > 0 {
		return r
	}
	res, err := Compile(ctx, in)
	if err != nil {
		var ue *UnresolvedError
		var be *BuildError
		var mc *MissingCodeError
		switch {
		case errors.As(err, &ue):
			for _, u := range ue.Unresolved {
				r.DependencyIssues = append(r.DependencyIssues, fmt.Sprintf("%s: required input %q has no producer (%s)", u.Node, u.Dependency, u.Reason))
			}
		case errors.As(err, &mc):
			r.MissingCode = mc.Steps
			for _, m := range mc.Steps {
				r.ConfigErrors[m.Node] = append(r.ConfigErrors[m.Node], m.String())
			}
		case errors.As(err, &be):
			r.ConfigErrors[be.Node] = append(r.ConfigErrors[be.Node], be.Err.Error())
		default:
			r.ConfigErrors["compile"] = append(r.ConfigErrors["compile"], err.Error())
		}
		return r
	}
	r.Warnings = append(r.Warnings[:0], res.Warnings...)
	r.StandIns = res.StandIns
	return r
}

func catalogHasKey(c Catalog, name string) bool {
	key := steps.CanonicalKey(name)
	for _, n := range c.Names() {
		if steps.CanonicalKey(n) == key {
			return true
		}
	}
	return false
}

// Preview is the node → config → builder map with confidences.
type Preview struct {
	NodeConfigMap        map[string]string         `json:"node_config_map"`
	ConfigBuilderMap     map[string]string         `json:"config_builder_map"`
	ResolutionConfidence map[string]float64        `json:"resolution_confidence"`
	NodeResolution       map[string]NodeResolution `json:"node_resolution"`
	AmbiguousResolutions []string                  `json:"ambiguous_resolutions"`
	Recommendations      []string                  `json:"recommendations"`
	// Findings are what building the steps reports once every node
	// resolves (compile.validate's errors and warnings): a configuration
	// SageMaker would reject or that would misbehave at run time.
	Findings []string `json:"findings"`
	// StandIns and MissingCode are as in ValidationResult (the steps with
	// no code are in Recommendations too).
	StandIns    []StandIn     `json:"-"`
	MissingCode []MissingCode `json:"-"`
}

// PreviewResolution resolves every node without building anything, and
// recommends what to do about steps with no code. It stops with ctx's
// error when ctx ends.
func PreviewResolution(ctx context.Context, in Input) (Preview, error) {
	p := Preview{NodeConfigMap: map[string]string{}, ConfigBuilderMap: map[string]string{}, ResolutionConfidence: map[string]float64{},
		NodeResolution: map[string]NodeResolution{}, AmbiguousResolutions: []string{}, Recommendations: []string{}, Findings: []string{}}
	if in.DAG == nil {
		return p, nil
	}
	internal := map[string]error{}
	for _, err := range internalNodes(in.DAG) {
		var ue *UnsupportedError
		errors.As(err, &ue)
		internal[ue.Node] = err
	}
	nodes, _, _, _, err := bind(ctx, in)
	if err != nil {
		return Preview{}, err
	}
	missing, err := missingCode(in.Sources, nodes, in.DAG.Nodes)
	if err != nil {
		return Preview{}, err
	}
	for _, name := range in.DAG.Nodes {
		if err, ok := internal[name]; ok {
			p.NodeConfigMap[name] = unresolvedClassName
			p.ResolutionConfidence[name] = 0
			p.Recommendations = append(p.Recommendations, err.Error())
			continue
		}
		n := nodes[name]
		if n == nil {
			p.NodeConfigMap[name] = unresolvedClassName
			p.ResolutionConfidence[name] = 0
			p.Recommendations = append(p.Recommendations,
				fmt.Sprintf("Node %q has no configuration: add a config with key %q", name, name),
				fmt.Sprintf("Or rename %q to <StepType>[_<job_type>] matching an existing config key", name))
			continue
		}
		p.NodeConfigMap[name] = n.cfg.ConfigClass
		p.NodeResolution[name] = n.res
		p.ResolutionConfidence[name] = n.res.Confidence
		builder := "UNKNOWN"
		if n.handler != "" {
			builder = n.iface.BuilderName()
		}
		p.ConfigBuilderMap[n.cfg.ConfigClass] = builder
		if n.res.Confidence < LowConfidence {
			p.Recommendations = append(p.Recommendations, fmt.Sprintf("Consider renaming %q for better matching (confidence %.2f)", name, n.res.Confidence))
		}
		if len(n.res.Alternatives) > 0 {
			p.AmbiguousResolutions = append(p.AmbiguousResolutions, fmt.Sprintf("%s: %s ties with %s", name, n.res.ConfigKey, strings.Join(n.res.Alternatives, ", ")))
		}
	}
	for _, m := range missing {
		p.Recommendations = append(p.Recommendations, m.String())
	}
	p.MissingCode = missing
	if len(internal) == 0 && len(nodes) == len(in.DAG.Nodes) {
		v := Validate(ctx, in)
		p.Findings = buildFindings(v)
		p.StandIns = v.StandIns
	}
	return p, ctx.Err()
}

// buildFindings flattens a validation into one line per finding: errors
// by node (sorted), dependency issues, then warnings.
func buildFindings(v ValidationResult) []string {
	out := []string{}
	for _, node := range slices.Sorted(maps.Keys(v.ConfigErrors)) {
		for _, e := range v.ConfigErrors[node] {
			out = append(out, fmt.Sprintf("error: node %q: %s", node, e))
		}
	}
	for _, d := range v.DependencyIssues {
		out = append(out, "error: "+d)
	}
	for _, w := range v.Warnings {
		out = append(out, "warning: "+w)
	}
	return out
}

var manualInputRe = regexp.MustCompile(`^s3://[a-z0-9][a-z0-9\-\.]{1,61}[a-z0-9]/.+$`)

// InputError is a bad single-node request (unknown node, bad S3 URI).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// CompileSingleNode compiles one node of the DAG on its own, its inputs
// given as S3 URIs (dependency name → URI). The pipeline is named
// "<node>-isolated" unless in.PipelineName is set; it has no DependsOn.
func CompileSingleNode(ctx context.Context, in Input, target string, manual map[string]string, validateInputs bool, opts ...Option) (*Result, error) {
	if in.DAG == nil || !in.DAG.HasNode(target) {
		return nil, &InputError{Msg: fmt.Sprintf("target node %q is not in the DAG", target)}
	}
	if validateInputs {
		for _, k := range slices.Sorted(maps.Keys(manual)) {
			if !manualInputRe.MatchString(manual[k]) {
				return nil, &InputError{Msg: fmt.Sprintf("manual input %q: %q is not an s3://bucket/key URI", k, manual[k])}
			}
		}
	}
	one := dag.New([]string{target}, nil)
	sub := in
	sub.DAG = one
	if sub.PipelineName == "" {
		sub.PipelineName = strings.ReplaceAll(target, "_", "-") + "-isolated"
	}
	nodes, warnings, err := bindAll(ctx, sub)
	if err != nil {
		return nil, err
	}
	n := nodes[target]
	inputs := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(manual)) {
		if _, ok := n.iface.Spec.Dependencies.Get(k); !ok {
			return nil, &InputError{Msg: fmt.Sprintf("manual input %q is not a dependency of %s (dependencies: %s)", k, n.cfg.StepType,
				strings.Join(n.iface.Spec.Dependencies.Keys(), ", "))}
		}
		inputs[k] = manual[k]
	}
	plan := &deps.Plan{Order: []string{target}}
	return assemble(ctx, sub, nodes, []string{target}, map[string]map[string]any{target: inputs}, nil, plan, false, warnings, collect(opts))
}

// BoundNode is a DAG node bound to its config and pipeline step name,
// for callers that fill per-step documents (the execution document).
type BoundNode struct {
	Node          string
	StepName      string
	StepType      string
	JobType       string
	SageMakerType string // the interface's registry type (Processing, RegisterModel, …)
	Config        *config.Config
}

// Bind resolves every node of in.DAG in DAG order. Nodes that cannot be
// bound are reported in the error (a *ResolutionError) and left out. It
// stops with ctx's error when ctx ends.
func Bind(ctx context.Context, in Input) ([]BoundNode, error) {
	if in.DAG == nil {
		return nil, errors.New("no DAG")
	}
	nodes, failures, _, _, err := bind(ctx, in)
	if err != nil {
		return nil, err
	}
	var out []BoundNode
	for _, name := range in.DAG.Nodes {
		if n := nodes[name]; n != nil {
			out = append(out, BoundNode{Node: name, StepName: n.stepName, StepType: n.cfg.StepType, JobType: n.cfg.JobType,
				SageMakerType: n.smType, Config: n.cfg})
		}
	}
	if len(failures) > 0 {
		return out, &ResolutionError{Failures: failures}
	}
	return out, nil
}
