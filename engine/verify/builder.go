package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
)

// Component statuses of the builder test.
const (
	ComponentCompleted = "COMPLETED"
	ComponentError     = "ERROR"
	ComponentSkipped   = "SKIPPED"
)

// BuilderComponent is one part of the universal builder test.
type BuilderComponent struct {
	Status string   `json:"status"` // COMPLETED | ERROR | SKIPPED
	Issues []string `json:"issues"`
	Detail any      `json:"detail,omitempty"`
}

func (c *BuilderComponent) fail(issue string) {
	c.Status = ComponentError
	c.Issues = append(c.Issues, issue)
}

// BuilderWeights weigh the components in the builder test's score.
var BuilderWeights = map[string]float64{"alignment_validation": 2.0, "integration_testing": 1.5, "step_creation": 1.0, "step_type_validation": 1.0}

// BuilderScoring is the weighted score of a builder test and its rating.
type BuilderScoring struct {
	OverallScore float64            `json:"overall_score"`
	Rating       string             `json:"rating"`
	Weights      map[string]float64 `json:"weights"`
}

// BuilderReport is the universal builder test of one step type.
type BuilderReport struct {
	StepName          string                       `json:"step_name"`
	Node              string                       `json:"node"`
	ValidationType    string                       `json:"validation_type"`
	SageMakerStepType string                       `json:"sagemaker_step_type"`
	Builder           string                       `json:"builder"`
	Components        map[string]*BuilderComponent `json:"components"`
	OverallStatus     string                       `json:"overall_status"` // PASSED | FAILED
	Scoring           *BuilderScoring              `json:"scoring,omitempty"`
}

// Failed reports whether a component failed.
func (r *BuilderReport) Failed() bool { return r.OverallStatus == "FAILED" }

// TestBuilder runs the universal builder test of one step type (job-type
// variant applied): the catalog-level alignment checks, whether a handler
// exists for its kind, and a compile of the step wired to catalog
// providers, whose request shape is checked. Scoring adds a score.
func (s *Suite) TestBuilder(ctx context.Context, name, jobType string, scoring bool) (*BuilderReport, error) {
	iface, res, _, err := s.Step(name, jobType)
	if err != nil {
		return nil, err
	}
	node := iface.StepType
	if res.JobType != "" {
		node = iface.StepType + "_" + res.JobType
	} else if jobType != "" {
		node = iface.StepType + "_" + jobType
	}
	rep := &BuilderReport{StepName: iface.StepType, Node: node, ValidationType: "comprehensive_builder_validation",
		SageMakerStepType: iface.Registry.SageMakerStepType, Builder: iface.BuilderName(), Components: map[string]*BuilderComponent{}}
	newComp := func(name string) *BuilderComponent {
		c := &BuilderComponent{Status: ComponentCompleted, Issues: []string{}}
		rep.Components[name] = c
		return c
	}
	s.alignmentComponent(newComp("alignment_validation"), iface)
	stv := newComp("step_type_validation")
	stepTypeComponent(stv, iface)
	integ, create := newComp("integration_testing"), newComp("step_creation")
	if stv.Status != ComponentCompleted {
		integ.Status, create.Status = ComponentSkipped, ComponentSkipped
	} else if err := s.integrationComponents(ctx, integ, create, iface, node); err != nil {
		return nil, err
	}
	rep.OverallStatus = "PASSED"
	for _, c := range rep.Components {
		if c.Status == ComponentError {
			rep.OverallStatus = "FAILED"
		}
	}
	if scoring {
		rep.Scoring = score(rep.Components)
	}
	return rep, nil
}

// alignmentComponent runs the catalog-level checks (no script here).
func (s *Suite) alignmentComponent(c *BuilderComponent, iface *steps.Interface) {
	report := s.catalogReport(iface)
	for _, f := range report.Findings {
		if f.Blocking() {
			c.fail(fmt.Sprintf("[%s] %s: %s", f.Rule, f.Location, f.Message))
		}
	}
	c.Detail = map[string]any{"ruleset": report.Ruleset.Name, "counts": report.Counts}
}

// stepTypeComponent asks whether there is a handler for the step's kind.
func stepTypeComponent(c *BuilderComponent, iface *steps.Interface) {
	_, internal := steps.LookupInternal(iface.StepType)
	switch {
	case validate.RulesetFor(iface.Registry.SageMakerStepType).Excluded || iface.Registry.SageMakerStepType == steps.SMLambda:
		c.Status = ComponentSkipped
		c.Issues = append(c.Issues, iface.Registry.SageMakerStepType+" steps bind no builder")
	case internal || iface.Registry.Requires == "secure_ai_sandbox_workflow_python_sdk":
		issue := "Amazon-internal step kind; not compiled here"
		if rep, _ := steps.InternalReplacement(iface.StepType); rep != "" {
			issue += "; use " + rep
		}
		c.fail(issue)
	case iface.Registry.SageMakerStepType != steps.SMRegisterModel && (iface.Compute == nil || iface.Compute.Kind == ""):
		c.fail("no compute.kind: the step is not producible")
	}
}

// integrationComponents synthesize configs, wire providers and compile
// (integ), then check the step built for node (create). Only a cancelled
// context is an error.
func (s *Suite) integrationComponents(ctx context.Context, integ, create *BuilderComponent, iface *steps.Interface, node string) error {
	g, err := s.miniPipeline(iface, node)
	if err != nil {
		integ.fail(err.Error())
		create.Status = ComponentSkipped
		return nil
	}
	integ.Detail = map[string]any{"nodes": g.Nodes, "edges": g.Edges}
	configs, problems, err := s.SampleConfigs(ctx, g)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		for _, p := range problems {
			integ.fail("config: " + p.String())
		}
		create.Status = ComponentSkipped
		return nil
	}
	in := compiler.Input{DAG: g, Configs: configs, Catalog: s.Steps}
	out, err := compiler.Compile(ctx, in)
	var mc *compiler.MissingCodeError
	if errors.As(err, &mc) {
		// The builder is tested, not the script: a step type with no code
		// yet is built with a stand-in script, and the report says so.
		stand := fstest.MapFS{}
		for _, m := range mc.Steps {
			stand[m.Expected] = &fstest.MapFile{Data: []byte("# stand-in for the builder test\n")}
			integ.Issues = append(integ.Issues, fmt.Sprintf("%s has no code yet (%s): the step was built with a stand-in script; compile.* refuses it until the script is sent in files",
				m.Node, m.Expected))
		}
		in.Sources = stand
		out, err = compiler.Compile(ctx, in)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		integ.fail("compile: " + err.Error())
		create.Status = ComponentSkipped
		return nil
	}
	checkStepShape(create, out, node, iface)
	return nil
}

func score(comps map[string]*BuilderComponent) *BuilderScoring {
	total, got := 0.0, 0.0
	for name, c := range comps {
		if c.Status == ComponentSkipped {
			continue
		}
		total += BuilderWeights[name]
		if c.Status == ComponentCompleted {
			got += BuilderWeights[name]
		}
	}
	overall := 100.0
	if total > 0 {
		overall = 100 * got / total
	}
	return &BuilderScoring{OverallScore: overall, Rating: rating(overall), Weights: BuilderWeights}
}

func rating(score float64) string {
	switch {
	case score >= 90:
		return "Excellent"
	case score >= 80:
		return "Good"
	case score >= 70:
		return "Satisfactory"
	case score >= 60:
		return "Needs Work"
	}
	return "Poor"
}

// maxProviderDepth bounds the provider chain miniPipeline builds.
const maxProviderDepth = 6

// miniPipeline is the step plus, for each required dependency, the best
// catalog provider (recursively), so the step can be compiled with its
// inputs wired as they would be in a real pipeline.
func (s *Suite) miniPipeline(target *steps.Interface, node string) (*dag.DAG, error) {
	nodes := []string{node}
	var edges [][2]string
	inGraph := map[string]string{target.StepType: node}
	var add func(iface *steps.Interface, node string, depth int) error
	add = func(iface *steps.Interface, node string, depth int) error {
		for _, depName := range iface.Spec.Dependencies.Keys() {
			dep, _ := iface.Spec.Dependencies.Get(depName)
			if !dep.IsRequired() {
				continue
			}
			best := s.bestProvider(dep, depName, iface.StepType, target.StepType)
			if best == "" {
				return fmt.Errorf("no catalog step provides required input %s.%s", iface.StepType, depName)
			}
			if existing, ok := inGraph[best]; ok {
				edges = append(edges, [2]string{existing, node})
				continue
			}
			if depth >= maxProviderDepth {
				return fmt.Errorf("provider chain for %s is deeper than %d steps", target.StepType, maxProviderDepth)
			}
			inGraph[best] = best
			nodes = append(nodes, best)
			edges = append(edges, [2]string{best, node})
			p, _ := s.Steps.Get(best)
			if err := add(p, best, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(target, node, 0); err != nil {
		return nil, err
	}
	return dag.New(nodes, edges), nil
}

// bestProvider is the public, buildable catalog step (other than the
// consumer and the target) whose output scores highest for dep, "" when
// none scores above the resolver's threshold.
func (s *Suite) bestProvider(dep steps.Dependency, depName, consumer, target string) string {
	best, bestScore := "", 0.0
	for _, n := range s.Steps.Names() {
		p, _ := s.Steps.Get(n)
		if n == consumer || n == target || validate.RulesetFor(p.Registry.SageMakerStepType).Excluded {
			continue
		}
		if _, internal := steps.LookupInternal(n); internal {
			continue
		}
		for _, on := range p.Spec.Outputs.Keys() {
			o, _ := p.Spec.Outputs.Get(on)
			if sc := deps.Score(dep, depName, o, on, n).Total; sc > bestScore {
				best, bestScore = n, sc
			}
		}
	}
	if bestScore <= deps.Threshold {
		return ""
	}
	return best
}

// SampleConfigs builds a valid config for every node of g from sample
// essentials.
// The error is ctx's, when it ends first.
func (s *Suite) SampleConfigs(ctx context.Context, g *dag.DAG) ([]config.Config, []config.Problem, error) {
	rep, err := config.Requirements(ctx, g, s.Config)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, ctxErr
	}
	if err != nil {
		return nil, []config.Problem{{Field: "dag", Message: err.Error()}}, nil
	}
	base, perNode, missing := config.SampleValues(rep)
	if len(missing) > 0 {
		return nil, []config.Problem{{Field: strings.Join(missing, ", "), Kind: config.KindMissing, Message: "no sample value can be synthesized"}}, nil
	}
	return s.Config.BuildDAG(ctx, g, base, perNode)
}

// definitionType is the definition's step type for each SageMaker step
// type, and requiredArguments the request keys each must have.
var (
	definitionType = map[string]string{steps.SMProcessing: "Processing", steps.SMTraining: "Training", steps.SMTuning: "Tuning",
		steps.SMCreateModel: "Model", steps.SMTransform: "Transform", steps.SMRegisterModel: "RegisterModel"}
	requiredArguments = map[string][]string{
		"Processing": {"AppSpecification", "ProcessingResources", "RoleArn"},
		"Training":   {"AlgorithmSpecification", "OutputDataConfig", "ResourceConfig", "RoleArn", "StoppingCondition"},
		"Tuning":     {"HyperParameterTuningJobConfig", "TrainingJobDefinition"},
		"Model":      {"ExecutionRoleArn"},
		"Transform":  {"ModelName", "TransformInput", "TransformOutput", "TransformResources"},
	}
)

// checkStepShape finds the step built for node in the definition and checks
// the request shape of its SageMaker step type.
func checkStepShape(c *BuilderComponent, out *compiler.Result, node string, iface *steps.Interface) {
	var stepName string
	for _, st := range out.Steps {
		if st.Node == node {
			stepName = st.StepName
		}
	}
	var def struct {
		Steps []map[string]any `json:"Steps"`
	}
	if err := json.Unmarshal(out.JSON, &def); err != nil {
		c.fail("definition is not JSON: " + err.Error())
		return
	}
	var step map[string]any
	for _, st := range def.Steps {
		if st["Name"] == stepName {
			step = st
		}
	}
	if step == nil {
		c.fail(fmt.Sprintf("the definition has no step for node %s", node))
		return
	}
	wantType := definitionType[iface.Registry.SageMakerStepType]
	if step["Type"] != wantType {
		c.Issues = append(c.Issues, fmt.Sprintf("step type is %v, want %s", step["Type"], wantType))
	}
	argsObj, _ := step["Arguments"].(map[string]any)
	for _, k := range requiredArguments[wantType] {
		if _, ok := argsObj[k]; !ok {
			c.Issues = append(c.Issues, "request lacks "+k)
		}
	}
	if wantType == "Processing" {
		outs := processingOutputs(argsObj)
		for _, name := range iface.Contract.Outputs.Keys() {
			if !outs[name] {
				c.Issues = append(c.Issues, "ProcessingOutputConfig lacks output "+name)
			}
		}
	}
	if len(c.Issues) > 0 {
		c.Status = ComponentError
	}
	c.Detail = map[string]any{"step_name": stepName, "type": step["Type"], "argument_keys": sortedKeys(argsObj)}
}

// processingOutputs names the outputs of a Processing request.
func processingOutputs(args map[string]any) map[string]bool {
	outs := map[string]bool{}
	poc, _ := args["ProcessingOutputConfig"].(map[string]any)
	list, _ := poc["Outputs"].([]any)
	for _, o := range list {
		if m, ok := o.(map[string]any); ok {
			outs[fmt.Sprint(m["OutputName"])] = true
		}
	}
	return outs
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
