package workflows

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/scaffold"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/verify"
)

// Check names an engine check a stage's gate runs.
type Check string

// The engine checks. Each is the check the matching front-end tools run
// on the same content.
const (
	// CheckArguments: the project arguments are valid.
	CheckArguments Check = "arguments"
	// CheckRequirements: every DAG node resolves to a step type.
	CheckRequirements Check = "requirements"
	// CheckConfigs: the config loads and every node's config is valid.
	CheckConfigs Check = "configs"
	// CheckCompile: DAG integrity and the compiler's validation.
	CheckCompile Check = "compile"
	// CheckCompileDefinition: CheckCompile, then the pipeline compiles.
	CheckCompileDefinition Check = "compile_definition"
	// CheckDAG: DAG integrity.
	CheckDAG Check = "dag_integrity"
	// CheckProject: the project's DAG and scripts.
	CheckProject Check = "project"
	// CheckScaffold: CheckArguments, then CheckProject.
	CheckScaffold Check = "scaffold"
	// CheckInterface: the .step.yaml interfaces.
	CheckInterface Check = "step_interface"
	// CheckPreflight: the step is constructible.
	CheckPreflight Check = "step_preflight"
)

// checkDef is a check: what it decides (the gate condition of a stage
// that runs it), the content fields it reads (a submission keeps exactly
// these, so a check reads only what its run certifies) and the function.
type checkDef struct {
	condition string
	takes     []string
	requires  []string
	run       check
}

// checks are the engine checks by name.
var checks = map[Check]checkDef{
	CheckArguments: {condition: "name, framework and target_dir are valid project arguments",
		takes: []string{}, requires: []string{}, run: argsGate},
	CheckRequirements: {condition: "every node resolves to a step type (no unresolved nodes)",
		takes: []string{FieldDAG, FieldStepTypes}, requires: []string{FieldDAG}, run: requirementsGate},
	CheckConfigs: {condition: "the config loads and every node has a valid config (no missing config and no config error in the compiler's validation)",
		takes: []string{FieldDAG, FieldConfig, FieldStepTypes}, requires: []string{FieldDAG, FieldConfig}, run: configGate},
	CheckCompile: {condition: "the DAG passes its integrity check and the compiler's validation passes; the outcome is the compile-ready config",
		takes: []string{FieldDAG, FieldConfig, FieldFiles, FieldStepTypes}, requires: []string{FieldDAG, FieldConfig}, run: compileGate(false)},
	CheckCompileDefinition: {condition: "the DAG passes its integrity check, the compiler's validation passes and the pipeline compiles; the outcome is the compiled definition",
		takes: []string{FieldDAG, FieldConfig, FieldFiles, FieldStepTypes}, requires: []string{FieldDAG, FieldConfig}, run: compileGate(true)},
	CheckDAG: {condition: "the DAG is non-empty and its integrity check finds nothing",
		takes: []string{FieldDAG, FieldStepTypes}, requires: []string{FieldDAG}, run: dagGate},
	CheckProject: {condition: "the DAG is valid, every script step's script is in files under <target_dir>/<name>_<framework>/scripts and the alignment check finds no critical issue there",
		takes: []string{FieldDAG, FieldFiles, FieldStepTypes}, requires: []string{FieldDAG}, run: verifyProjectGate},
	CheckScaffold: {condition: "the arguments are valid, the DAG is valid and every script step's script is in files under <target_dir>/<name>_<framework>/scripts with no critical issue",
		takes: []string{FieldDAG, FieldFiles, FieldStepTypes}, requires: []string{FieldDAG, FieldFiles}, run: scaffoldGate},
	CheckInterface: {condition: "the interface check finds no error in any document",
		takes: []string{FieldStepTypes, FieldFiles}, requires: []string{FieldStepTypes}, run: interfaceGate},
	CheckPreflight: {condition: "the step's preflight finds it constructible; the outcome is the validated step",
		takes: []string{FieldStepTypes, FieldFiles, FieldStepName}, requires: []string{FieldStepTypes, FieldStepName}, run: preflightGate},
}

func argsGate(_ context.Context, args map[string]string, _ *Subject) (Verdict, error) {
	_, err := scaffold.Check(scaffold.Options{Name: args["name"], Framework: args["framework"], TargetDir: args["target_dir"]})
	if err != nil {
		return Verdict{Findings: []string{err.Error()}, Remedy: "Start a new run with valid arguments."}, nil
	}
	return Verdict{Passed: true}, nil
}

// integrity is the DAG integrity check of s's DAG.
func integrity(ctx context.Context, s *Subject) ([]string, error) {
	r, err := s.DAG.CheckWith(ctx, deps.NodeLookup(s.Suite.Steps))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, is := range r.Issues {
		out = append(out, is.Category+": "+is.Message)
	}
	return out, nil
}

func dagGate(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
	issues, err := integrity(ctx, s)
	if err != nil || len(issues) > 0 {
		return Verdict{Findings: issues, Remedy: "Fix the DAG (the integrity check explains each issue) and submit it again."}, err
	}
	return Verdict{Passed: true}, nil
}

func requirementsGate(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
	rep, err := config.Requirements(ctx, s.DAG, s.Suite.Config)
	if err != nil {
		return Verdict{}, err
	}
	var out []string
	for _, u := range rep.Unresolved {
		out = append(out, fmt.Sprintf("node %s: %s", u.Node, u.Message))
	}
	if len(out) > 0 {
		return Verdict{Findings: out, Remedy: "Rename the nodes to step types the catalog knows, or send their step_types."}, nil
	}
	return Verdict{Passed: true}, nil
}

func (s *Subject) compilerInput() compiler.Input {
	return compiler.Input{DAG: s.DAG, Configs: s.Config.Configs, Unloaded: s.Config.Unloaded, Catalog: s.Suite.Steps, Sources: s.Suite.Files, DAGName: s.DAGName}
}

// Code is what a compile found of the steps' code: the steps built with
// built-in code in place of the script their config names, and the steps
// with no code at all (also in the warnings and findings, as text).
type Code struct {
	StandIns    []compiler.StandIn
	MissingCode []compiler.MissingCode
}

// codeOf is what the compiler's validation found of the steps' code.
func codeOf(v compiler.ValidationResult) Code {
	return Code{StandIns: v.StandIns, MissingCode: v.MissingCode}
}

func configGate(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
	v := compiler.Validate(ctx, s.compilerInput())
	out := append([]string{}, prefixed("missing config: ", v.MissingConfigs)...)
	out = append(out, keyed(v.ConfigErrors)...)
	if len(out) > 0 {
		return Verdict{Findings: out, Warnings: v.Warnings, Code: codeOf(v), Remedy: "Fill the listed fields and submit the config again."}, nil
	}
	return Verdict{Passed: true, Warnings: v.Warnings, Code: codeOf(v)}, nil
}

// compileGate is the compiler's validation of the DAG and configs; with
// definition the pipeline is compiled too, and its definition issued.
func compileGate(definition bool) check {
	return func(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
		issues, err := integrity(ctx, s)
		if err != nil {
			return Verdict{}, err
		}
		in := s.compilerInput()
		v := compiler.Validate(ctx, in)
		issues = append(issues, prefixed("missing config: ", v.MissingConfigs)...)
		issues = append(issues, prefixed("no builder: ", v.UnresolvableBuilders)...)
		issues = append(issues, keyed(v.ConfigErrors)...)
		issues = append(issues, v.DependencyIssues...)
		if len(issues) > 0 {
			return Verdict{Findings: issues, Warnings: v.Warnings, Code: codeOf(v), Remedy: "Fix the DAG or configs and submit again."}, nil
		}
		if !definition {
			return Verdict{Passed: true, Warnings: v.Warnings, Code: codeOf(v), Outcome: map[string]any{"compile_ready_config": s.Sent.Config}}, nil
		}
		res, err := compiler.Compile(ctx, in)
		if err != nil {
			return Verdict{Findings: []string{err.Error()}, Warnings: v.Warnings, Code: codeOf(v), Remedy: "Fix what the compiler names and submit again."}, ctx.Err()
		}
		return Verdict{Passed: true, Warnings: res.Warnings, Code: Code{StandIns: res.StandIns},
			Outcome: map[string]any{"pipeline_name": res.PipelineName, "definition": rawJSON(res.JSON)}}, nil
	}
}

// scaffoldGate is the arguments' check and then the project's.
func scaffoldGate(ctx context.Context, args map[string]string, s *Subject) (Verdict, error) {
	if v, err := argsGate(ctx, args, s); err != nil || !v.Passed {
		return v, err
	}
	return verifyProjectGate(ctx, args, s)
}

// verifyProjectGate checks the project's DAG and scripts: every node that
// runs a script must have it in the files sent, where the scaffold puts
// it, and no script may break its contract. A missing script is a
// finding, not a pass: "no critical issue" over no files proves nothing.
func verifyProjectGate(ctx context.Context, args map[string]string, s *Subject) (Verdict, error) {
	issues, err := integrity(ctx, s)
	if err != nil || len(issues) > 0 {
		return Verdict{Findings: issues, Remedy: "Fix the DAG and submit again."}, err
	}
	opts, err := scaffold.Check(scaffold.Options{Name: args["name"], Framework: args["framework"], TargetDir: args["target_dir"]})
	if err != nil {
		return Verdict{Findings: []string{err.Error()}, Remedy: "Start a new run with valid arguments."}, nil
	}
	scripts := path.Join(opts.TargetDir, scaffold.ProjectDir(opts), "scripts")
	var missing []string
	seen := map[string]bool{}
	known := func(name string) bool { _, ok := s.Suite.Steps.Get(name); return ok }
	for _, n := range s.DAG.Nodes {
		name, _, ok := steps.SplitJobType(n, known)
		if !ok {
			continue // integrity has named it
		}
		st, _ := s.Suite.Steps.Get(name)
		if seen[st.StepType] || !scaffold.NeedsScript(st) {
			continue
		}
		seen[st.StepType] = true
		want := path.Join(scripts, st.Contract.EntryPoint)
		if fi, err := fs.Stat(s.Suite.Files, want); err != nil || fi.IsDir() {
			missing = append(missing, fmt.Sprintf("%s: no script %s in files", n, want))
		}
	}
	if len(missing) > 0 {
		return Verdict{Findings: missing, Remedy: "Send the project's files with every script at its path."}, nil
	}
	rep, err := s.Suite.Alignment(ctx, s.DAG.Nodes, verify.ScriptSearch{WorkspaceDirs: []string{scripts}}, nil)
	if err != nil {
		return Verdict{Findings: []string{err.Error()}, Remedy: "Fix the DAG's nodes and submit again."}, ctx.Err()
	}
	var out []string
	for _, c := range rep.CriticalIssues {
		out = append(out, fmt.Sprintf("%s: %s (%s) %s", c.StepName, c.Message, c.Rule, c.Fix))
	}
	if len(out) > 0 {
		return Verdict{Findings: out, Remedy: "Fix the scripts and submit the files again."}, nil
	}
	return Verdict{Passed: true}, nil
}

func interfaceGate(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
	rep, err := s.Suite.CheckInterfaces(ctx, verify.InterfaceRequest{Documents: s.StepTypes})
	if err != nil {
		return Verdict{Findings: []string{err.Error()}, Remedy: "Send valid .step.yaml documents as step_types."}, ctx.Err()
	}
	var out []string
	for _, r := range rep.Results {
		for _, e := range r.Errors {
			out = append(out, fmt.Sprintf("%s: %v", r.Step, e))
		}
	}
	if rep.Failed > 0 {
		return Verdict{Findings: out, Remedy: "Fix the interface and submit again."}, nil
	}
	return Verdict{Passed: true}, nil
}

func preflightGate(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
	rep, err := s.Suite.Preflight(ctx, verify.PreflightRequest{StepName: s.StepName})
	if err != nil {
		return Verdict{Findings: []string{err.Error()}, Remedy: "Name the step type the documents declare as step_name."}, ctx.Err()
	}
	var out []string
	var remedy string
	for _, g := range rep.Gates {
		if !g.Passed {
			out = append(out, g.Name+": "+g.Detail)
			if remedy == "" {
				remedy = g.Remedy
			}
		}
	}
	if !rep.Constructible {
		return Verdict{Findings: out, Remedy: remedy}, nil
	}
	return Verdict{Passed: true, Outcome: map[string]any{"validated_step": rep.Scope, "gates": rep.Gates}}, nil
}

func prefixed(prefix string, l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = prefix + s
	}
	return out
}

func keyed(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		for _, e := range m[k] {
			out = append(out, k+": "+e)
		}
	}
	return out
}

// rawJSON keeps the compiled definition's bytes as they are.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }
