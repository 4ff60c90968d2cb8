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

// plans are the gate stages of each workflow: the stages of All whose
// gate the server can decide on content, each checked by the engine
// functions its tools call. Stages that only read guidance (Consult's
// catalog look-up, Guide) or act outside the server (writing files) are
// left to the prompt.
func plans() map[string][]GateStage {
	args := GateStage{Name: "Consult", Purpose: "Check the project name, framework and target directory.",
		Takes: []string{}, Requires: []string{},
		Gate: "name, framework and target_dir are valid project arguments", check: argsGate}
	dagStage := func(name, purpose string) GateStage {
		return GateStage{Name: name, Purpose: purpose, Takes: []string{FieldDAG, FieldStepTypes}, Requires: []string{FieldDAG},
			Gate: "the DAG is non-empty and dag.validate_integrity finds nothing", check: dagGate}
	}
	compile := func(issue check, gate string) GateStage {
		return GateStage{Name: "DagCheck", Purpose: "Check the DAG, the configs and the wiring together.",
			Takes: []string{FieldDAG, FieldConfig, FieldFiles, FieldStepTypes}, Requires: []string{FieldDAG, FieldConfig},
			Gate: gate, check: issue}
	}
	configure := []GateStage{
		{Name: "Constrain", Purpose: "Find the fields every node needs (config.requirements).",
			Takes: []string{FieldDAG, FieldStepTypes}, Requires: []string{FieldDAG},
			Gate: "every node resolves to a step type (no unresolved nodes)", check: requirementsGate},
		{Name: "Validate", Purpose: "Check the config.json document against the DAG's nodes.",
			Takes: []string{FieldDAG, FieldConfig, FieldStepTypes}, Requires: []string{FieldDAG, FieldConfig}, FixAttempts: 2,
			Gate: "the config loads (config.load) and every node has a valid config (no missing configs or config errors in compile.validate)", check: configGate},
		compile(compileGate(false), "dag.validate_integrity and compile.validate pass; the outcome is the compile-ready config"),
	}
	newProject := []GateStage{
		{Name: "Scaffold", Purpose: "Check the arguments and the project's files (project.init without target_dir returns them) and DAG.",
			Takes: []string{FieldDAG, FieldFiles, FieldStepTypes}, Requires: []string{FieldDAG, FieldFiles}, FixAttempts: 2,
			Gate: "the arguments are valid, the DAG is valid and every script step's script is in files under <target_dir>/<name>_<framework>/scripts with no critical issue", check: scaffoldGate},
		dagStage("GateDAG", "Check the project's DAG (seeded from the pipeline catalog or written by hand)."),
		compile(compileGate(true), "dag.validate_integrity and compile.validate pass and the pipeline compiles; the outcome is the compiled definition"),
	}
	newProject[2].Name, newProject[2].Purpose = "Configure", "Check the configured pipeline and compile it."
	return map[string][]GateStage{
		InitProject: {
			args,
			{Name: "Verify", Purpose: "Check the project's DAG and every script stub against its contract.",
				Takes: []string{FieldDAG, FieldFiles, FieldStepTypes}, Requires: []string{FieldDAG}, FixAttempts: 2,
				Gate: "the DAG is valid, every script step's script is in files under <target_dir>/<name>_<framework>/scripts and validate.alignment finds no critical issue there", check: verifyProjectGate},
		},
		ConfigurePipeline: configure,
		AuthorStep: {
			{Name: "Validate", Purpose: "Check the new step's .step.yaml (sent as step_types) and its script (in files).",
				Takes: []string{FieldStepTypes, FieldFiles}, Requires: []string{FieldStepTypes}, FixAttempts: 2,
				Gate: "validate.step_interface finds no error in any document", check: interfaceGate},
			{Name: "Preflight", Purpose: "Prove the step can be built (author.preflight_step).",
				Takes: []string{FieldStepTypes, FieldFiles, FieldStepName}, Requires: []string{FieldStepTypes, FieldStepName}, FixAttempts: 2,
				Gate: "author.preflight_step returns constructible=true; the outcome is the validated step", check: preflightGate},
		},
		NewProject: newProject,
	}
}

func argsGate(_ context.Context, args map[string]string, _ *Subject) (Verdict, error) {
	_, err := scaffold.Check(scaffold.Options{Name: args["name"], Framework: args["framework"], TargetDir: args["target_dir"]})
	if err != nil {
		return Verdict{Findings: []string{err.Error()}, Remedy: "Start a new run with valid arguments."}, nil
	}
	return Verdict{Passed: true}, nil
}

// integrity is dag.validate_integrity's check of s's DAG.
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
		return Verdict{Findings: issues, Remedy: "Fix the DAG (dag.validate_integrity explains each issue) and submit it again."}, err
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
		return Verdict{Findings: out, Remedy: "Rename the nodes to step types the catalog knows (catalog.search), or send their step_types."}, nil
	}
	return Verdict{Passed: true}, nil
}

func (s *Subject) compilerInput() compiler.Input {
	return compiler.Input{DAG: s.DAG, Configs: s.Config.Configs, Unloaded: s.Config.Unloaded, Catalog: s.Suite.Steps, Sources: s.Suite.Files, DAGName: s.DAGName}
}

func configGate(ctx context.Context, _ map[string]string, s *Subject) (Verdict, error) {
	v := compiler.Validate(ctx, s.compilerInput())
	out := append([]string{}, prefixed("missing config: ", v.MissingConfigs)...)
	out = append(out, keyed(v.ConfigErrors)...)
	if len(out) > 0 {
		return Verdict{Findings: out, Warnings: v.Warnings, Remedy: "Fill the listed fields (config.requirements, author.preflight_config) and submit the config again."}, nil
	}
	return Verdict{Passed: true, Warnings: v.Warnings}, nil
}

// compileGate is compile.validate over the DAG and configs; with
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
			return Verdict{Findings: issues, Warnings: v.Warnings, Remedy: "Fix the DAG or configs (compile.validate, compile.preview explain each issue) and submit again."}, nil
		}
		if !definition {
			return Verdict{Passed: true, Warnings: v.Warnings, Outcome: map[string]any{"compile_ready_config": s.Sent.Config}}, nil
		}
		res, err := compiler.Compile(ctx, in)
		if err != nil {
			return Verdict{Findings: []string{err.Error()}, Warnings: v.Warnings, Remedy: "Fix what the compiler names (compile.with_report) and submit again."}, ctx.Err()
		}
		return Verdict{Passed: true, Warnings: res.Warnings, Outcome: map[string]any{"pipeline_name": res.PipelineName, "definition": rawJSON(res.JSON)}}, nil
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
// runs a script must have it in the files sent, where project.init puts
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
		return Verdict{Findings: missing, Remedy: "Send the project's files (project.init without target_dir returns them) with every script at its path."}, nil
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
		return Verdict{Findings: out, Remedy: "Fix the scripts (author.check_script, validate.alignment) and submit the files again."}, nil
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
		return Verdict{Findings: out, Remedy: "Fix the interface (steps.format, steps.source show the shape) and submit again."}, nil
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
