package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// runNodes is bounded by what one run may start.
type runNodes []string

func (runNodes) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", MinItems: ptr(1), MaxItems: ptr(verify.MaxRunNodes), Items: verifyStepName("").JSONSchema()}
}

// runEdges are [src, dst] pairs between the nodes.
type runEdges [][2]string

func (runEdges) JSONSchema() *jsonschema.Schema {
	edge := &jsonschema.Schema{Type: "array", MinItems: ptr(2), MaxItems: ptr(2), Items: &jsonschema.Schema{Type: "string", MaxLength: ptr(256)}}
	return &jsonschema.Schema{Type: "array", MaxItems: ptr(500), Items: edge}
}

// sampleInputs is node → contract input → file or directory in the
// workspace.
type sampleInputs map[string]map[string]string

func (sampleInputs) JSONSchema() *jsonschema.Schema {
	perNode := &jsonschema.Schema{Type: "object", MaxProperties: ptr(50), AdditionalProperties: workspacePath("").JSONSchema()}
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(50), AdditionalProperties: perNode}
}

// envOverrides and jobArgValues are bounded string maps: what a caller
// may hand every script.
type envOverrides map[string]string

func (envOverrides) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(100), AdditionalProperties: &jsonschema.Schema{Type: "string", MaxLength: ptr(8192)}}
}

type jobArgValues map[string]string

func (jobArgValues) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(50), AdditionalProperties: &jsonschema.Schema{Type: "string", MaxLength: ptr(1024)}}
}

func validateNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	tools := []registry.ToolDef{
		validateAlignmentTool(d),
		validateStepTool(d),
		validateStepInterfaceTool(d),
		validateBuilderTool(d),
		validateInfoTool(d),
		validateRunScriptsTool(d),
		validateRunPipelineTool(d),
		validateDepsResolveTool(d),
		validateDepsExplainTool(d),
	}
	return registry.Namespace{
		Name:        "validate",
		Description: "Check scripts, contracts, specs, configs and builders against each other, and run scripts in a sandbox.",
		Tools:       tools,
	}, nil
}

// progressTo reports an engine use-case's progress on the call.
func progressTo(ctx context.Context) func(done, total int, msg string) {
	return func(done, total int, msg string) { registry.Progress(ctx, float64(done), float64(total), msg) }
}

type validateAlignmentIn struct {
	Targets []verifyStepName `json:"target_scripts,omitempty" jsonschema:"Step types to check (default: all)." schema:"maxItems=200"`
	scriptDirsIn
	filesIn
	stepTypesArg
}

// alignmentOut is validate.alignment's report plus Cursus's
// detailed_results: each step's result by step name.
type alignmentOut struct {
	verify.AlignmentReport
	DetailedResults map[string]cursusStepResult `json:"detailed_results"`
}

// cursusStepResult is one step of validate.alignment's detailed_results.
type cursusStepResult struct {
	StepName          string `json:"step_name"`
	SageMakerStepType string `json:"sagemaker_step_type"`
	Category          string `json:"category"`
	OverallStatus     string `json:"overall_status"`
	cursusLevels
}

func validateAlignmentTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.alignment",
		Description: "Alignment checks of step types: script ↔ contract (static analysis of the Python script: main() " +
			"signature, logical names, env vars, argparse flags, container paths), config ↔ contract, spec ↔ the catalog's " +
			"outputs (dependency scores), and builder binding. Each finding has a level (critical/error/warning/info), a rule, a location and a fix.",
		When: "You changed a step's script, contract or config section.",
		Examples: []string{
			`validate.alignment {"target_scripts": ["TabularPreprocessing"], "source_dir": "scripts", "files": {"scripts/tabular_preprocessing.py": ` + stubScript + `}}  # one step against its script, sent inline`,
			`validate.alignment {}  # every step type in the catalog`,
		},
		Tags: []string{registry.PhaseValidator},
	}, d.validateAlignment)
}

// ---- validate.alignment / validate.step ----------------------------------

func (d *Deps) validateAlignment(ctx context.Context, in validateAlignmentIn) (registry.Reply[alignmentOut], error) {
	var reply registry.Reply[alignmentOut]
	suite, stepWarns, err := d.verifierFor(ctx, in.Files, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	rep, err := suite.Alignment(ctx, strs(in.Targets), in.search(), progressTo(ctx))
	if err != nil {
		return reply, verifyError(err)
	}
	if rep.FailedSteps > 0 {
		return reply, registry.Errorf(registry.CodeValidationFailed, "%d of %d step(s) failed alignment", rep.FailedSteps, rep.TotalSteps).
			WithDetails(toMap(rep)).
			Suggest("Apply each finding's fix (critical_issues lists them), then re-run validate.alignment.", "author.check_script", "steps.io", "validate.step_interface")
	}
	reply.Next(registry.NextStep{Tool: "validate.builder", When: "alignment passes", Why: "prove the step builds into a pipeline definition"})
	reply.WithMeta("tool_scope", rep.Scope)
	out := alignmentOut{AlignmentReport: *rep, DetailedResults: map[string]cursusStepResult{}}
	for _, r := range rep.Results {
		out.DetailedResults[r.StepName] = cursusStepResult{StepName: r.StepName, SageMakerStepType: r.SageMakerStepType,
			Category: r.Ruleset.Name, OverallStatus: r.Status, cursusLevels: cursusLevelsOf(r)}
	}
	reply.Out = out
	return reply, nil
}

// cursusLevels is a step report as Cursus numbers its validation levels:
// 1 script ↔ contract, 3 spec ↔ other steps' specs, 4 builder ↔ registry.
// Level 2 carries the config ↔ contract checks, which Cursus does not
// run (docs/CURSUS.md).
type cursusLevels struct {
	// EnabledLevels are the levels the step's ruleset runs.
	EnabledLevels []int `json:"enabled_levels"`
	// ValidationResults are the findings of each level, as level_<N>.
	ValidationResults map[string]cursusLevelResult `json:"validation_results"`
}

type cursusLevelResult struct {
	Status   string             `json:"status"` // PASSED, or ERROR with a blocking finding
	Category string             `json:"category"`
	Issues   []validate.Finding `json:"issues"`
}

var cursusLevelOf = map[string]int{validate.CatScriptContract: 1, validate.CatConfigContract: 2, validate.CatSpecDependency: 3, validate.CatBuilderConfig: 4}

func cursusLevelsOf(r validate.StepReport) cursusLevels {
	out := cursusLevels{EnabledLevels: []int{}, ValidationResults: map[string]cursusLevelResult{}}
	if r.Ruleset.Excluded {
		return out
	}
	for _, cat := range r.Ruleset.Categories {
		n, ok := cursusLevelOf[cat]
		if !ok {
			continue
		}
		res := cursusLevelResult{Status: validate.StatusPassed, Category: cat, Issues: []validate.Finding{}}
		for _, f := range r.Findings {
			if f.Category != cat {
				continue
			}
			res.Issues = append(res.Issues, f)
			if f.Blocking() {
				res.Status = "ERROR"
			}
		}
		out.EnabledLevels = append(out.EnabledLevels, n)
		out.ValidationResults[fmt.Sprintf("level_%d", n)] = res
	}
	slices.Sort(out.EnabledLevels)
	return out
}

type validateStepIn struct {
	stepJobIn
	scriptSearchIn
	filesIn
	stepTypesArg
}

// stepReportOut is validate.step's report plus the keys the Python
// project's report has under other names: its overall_status is status,
// its category is the ruleset's name.
type stepReportOut struct {
	validate.StepReport
	OverallStatus string `json:"overall_status"`
	Category      string `json:"category"`
	cursusLevels
}

func validateStepTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "validate.step",
		Description: "All alignment checks for one step (optionally one job type), with its script found in the workspace or given by path.",
		When:        "For one step's full report.",
		Examples:    []string{`validate.step {"step_name": "XGBoostTraining"}  # catalog-level checks`},
		Tags:        []string{registry.PhaseValidator},
	}, d.validateStep)
}

func (d *Deps) validateStep(ctx context.Context, in validateStepIn) (registry.Reply[stepReportOut], error) {
	var reply registry.Reply[stepReportOut]
	suite, stepWarns, err := d.verifierFor(ctx, in.Files, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	r, warns, err := suite.CheckStep(ctx, string(in.StepName), string(in.JobType), in.search())
	if err != nil {
		return reply, verifyError(err)
	}
	if r.Status == validate.StatusFailed {
		return reply, registry.Errorf(registry.CodeValidationFailed, "%s failed alignment: %d critical, %d error finding(s)", r.StepName, r.Counts["critical"], r.Counts["error"]).
			WithDetails(map[string]any{"report": r}).
			Suggest("Apply each finding's fix, then re-run validate.step.", "author.check_script", "steps.io")
	}
	reply.Warn(warns...)
	reply.Next(registry.NextStep{Tool: "validate.builder", When: "alignment passes",
		Why: "build the step from a synthesized config", ArgsHint: map[string]any{"step_name": r.StepName}})
	reply.Out = stepReportOut{StepReport: r, OverallStatus: r.Status, Category: r.Ruleset.Name, cursusLevels: cursusLevelsOf(r)}
	return reply, nil
}

type validateStepInterfaceIn struct {
	StepName verifyStepName `json:"step_name,omitempty"`
	All      bool           `json:"all,omitempty" jsonschema:"Validate every step type in the catalog."`
	JobType  jobTypeName    `json:"job_type,omitempty" jsonschema:"Job type variant to apply (training, calibration, …)."`
	Path     workspacePath  `json:"path,omitempty" jsonschema:"A .step.yaml file or a directory of them, inside the workspace."`
	YAML     string         `json:"yaml,omitempty" jsonschema:"Inline .step.yaml text." schema:"minLength=1,maxLength=262144"`
	// Alone, step_types are the documents to validate; with step_name or
	// all they overlay the catalog those name.
	stepTypesArg
	filesIn
}

func validateStepInterfaceTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.step_interface",
		Description: "Validate .step.yaml interfaces: required keys, enumerations, path prefixes, contract ↔ spec key alignment, " +
			"property paths, compute rules and the config section. Checks a catalog step, every catalog step (all), a file or " +
			"directory in the workspace (path), or inline YAML (yaml).",
		When: "You wrote or edited a .step.yaml.",
		Examples: []string{
			`validate.step_interface {"all": true}  # every built-in and extra step type`,
			`validate.step_interface {"step_name": "TabularPreprocessing", "job_type": "training"}`,
		},
		Tags: []string{registry.PhaseValidator},
	}, d.validateStepInterface)
}

// ---- validate.step_interface ---------------------------------------------

func (d *Deps) validateStepInterface(ctx context.Context, in validateStepInterfaceIn) (registry.Reply[verify.InterfaceReport], error) {
	var reply registry.Reply[verify.InterfaceReport]
	req := verify.InterfaceRequest{StepName: string(in.StepName), All: in.All, JobType: string(in.JobType), Path: string(in.Path), YAML: in.YAML}
	types := in.stepTypesArg
	if req.StepName == "" && !req.All && req.Path == "" && req.YAML == "" {
		// Only step_types: they are what to validate, so a broken one is a
		// finding of the report, not a rejected call.
		if err := d.checkStepTypeCaps(in.stepTypesArg); err != nil {
			return reply, err
		}
		req.Documents, types = in.StepTypes, stepTypesArg{}
	}
	suite, stepWarns, err := d.verifierFor(ctx, in.Files, types)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	rep, err := suite.CheckInterfaces(ctx, req)
	if err != nil {
		return reply, verifyError(err)
	}
	if rep.Failed > 0 {
		return reply, registry.Errorf(registry.CodeValidationFailed, "%d interface(s) failed validation", rep.Failed).WithDetails(toMap(rep)).
			Suggest("Fix each error at its key path (rule names the check); steps.io shows an exemplar's ports.",
				"strategies.for_step_type", "catalog.config_fields", "validate.deps_explain")
	}
	reply.Next(registry.NextStep{Tool: "validate.alignment", When: "the interface is valid", Why: "check the script and config against it"})
	if rep.Warnings > 0 {
		reply.Warn(fmt.Sprintf("%d non-blocking incompleteness warning(s) across interfaces", rep.Warnings))
	}
	reply.Out = *rep
	return reply, nil
}

type validateBuilderIn struct {
	stepJobIn
	Scoring *bool `json:"enable_scoring,omitempty" jsonschema:"Add a score and rating (default true)."`
	stepTypesArg
	unusedWorkspaceDirsArg
}

func validateBuilderTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.builder",
		Description: "Universal builder test for one step type: synthesizes a valid config, wires the step to catalog providers " +
			"for its required inputs, compiles that small pipeline and checks the step's SageMaker request shape; plus the " +
			"alignment, config-construction and step-type checks. Scored (weights 2.0/1.5/1.0/1.0) and rated.",
		When:     "You want proof that a step type builds.",
		Examples: []string{`validate.builder {"step_name": "XGBoostTraining", "enable_scoring": false}`},
		Tags:     []string{registry.PhaseValidator},
	}, d.validateBuilder)
}

// ---- validate.builder -----------------------------------------------------

func (d *Deps) validateBuilder(ctx context.Context, in validateBuilderIn) (registry.Reply[verify.BuilderReport], error) {
	var reply registry.Reply[verify.BuilderReport]
	in.unusedWorkspaceDirsArg.warn(reply.Warn)
	suite, stepWarns, err := d.verifierFor(ctx, nil, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	rep, err := suite.TestBuilder(ctx, string(in.StepName), string(in.JobType), in.Scoring == nil || *in.Scoring)
	if err != nil {
		return reply, verifyError(err)
	}
	if rep.Failed() {
		return reply, registry.Errorf(registry.CodeNotConstructible, "%s could not be built: see the failing components", rep.StepName).WithDetails(toMap(rep)).
			Suggest("Fix the issues of each ERROR component (config problems: author.config_constraints; wiring: steps.io).",
				"validate.step_interface", "author.config_constraints", "steps.io")
	}
	reply.WithMeta("step_name", rep.StepName)
	reply.Out = *rep
	return reply, nil
}

func validateInfoTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "validate.info",
		Description: "What the validation tools check: levels, rulesets per SageMaker step type, rules and their levels, dependency thresholds, and what a script run isolates and does not.",
		When:        "Before choosing a validation tool.",
		Examples:    []string{`validate.info {}`},
		Tags:        []string{registry.PhaseValidator},
	}, registry.Plain(d.validateInfo))
}

// ---- validate.info ----------------------------------------------------------

func (d *Deps) validateInfo(ctx context.Context, _ struct{}) (verify.Info, error) {
	return d.verifier(ctx).Describe(), nil
}

type validateRunScriptsIn struct {
	Nodes      runNodes      `json:"nodes,omitempty" jsonschema:"DAG nodes to run. Give this or dag_file."`
	Edges      runEdges      `json:"edges,omitempty" jsonschema:"[src, dst] pairs between the nodes."`
	DAGFile    workspacePath `json:"dag_file,omitempty" jsonschema:"DAG JSON file in the workspace: run every node of it. Give this or nodes."`
	ConfigFile workspacePath `json:"config_file,omitempty" jsonschema:"config.json in the workspace: source_dir, entry points and env values come from it."`
	ConfigPath workspacePath `json:"config_path,omitempty" jsonschema:"Deprecated alias of config_file; answers with a warning."`
	scriptDirsIn
	Samples       sampleInputs `json:"sample_inputs,omitempty" jsonschema:"node → {input name → file or directory in the workspace}."`
	Env           envOverrides `json:"env,omitempty" jsonschema:"Environment variable overrides for every node."`
	JobArgs       jobArgValues `json:"job_args,omitempty" jsonschema:"Job argument values (flag without dashes → value), e.g. {\"job_type\": \"training\"}."`
	Timeout       int          `json:"timeout_seconds,omitempty" jsonschema:"Wall-clock limit per script (default 60)." schema:"minimum=1,maximum=3600"`
	UseDeps       *bool        `json:"use_dependency_resolution,omitempty" jsonschema:"Feed each node's outputs to its consumers' inputs (default true)."`
	TestWorkspace string       `json:"test_workspace_dir,omitempty" jsonschema:"Accepted for compatibility; runs always use a fresh temporary sandbox." schema:"maxLength=4096"`
}

func validateRunScriptsTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "validate.run_scripts",
		Description: "Run step scripts locally with python3 in a temporary sandbox: the contract's /opt/ml paths mapped to sandbox " +
			"directories, the contract's env vars (plus config values and overrides) and job arguments, sample inputs copied in. " +
			"Nodes run in DAG order with each step's outputs fed to its consumers. Bounded time and output; reports the outputs " +
			"produced against the contract. Each script runs in a kernel sandbox (Landlock, seccomp, rlimits; no network, no reads outside its inputs); where the kernel cannot provide it the tool answers runtime_unavailable (see validate.info).",
		When: "Scripts pass static alignment and you want to see them actually run on a small sample.",
		Examples: []string{
			`validate.run_scripts {"nodes": ["TabularPreprocessing_training"], "source_dir": "scripts", "sample_inputs": {"TabularPreprocessing_training": {"input_data": "data/sample.csv"}}, "env": {"LABEL_FIELD": "label"}}`,
			`validate.run_scripts {"dag_file": "examples/xgboost-tabular/dag.json", "config_file": "examples/xgboost-tabular/config.json", "sample_inputs": {"DummyDataLoading_training": {"data_source": "examples/xgboost-tabular/data/tabular.csv"}, "DummyDataLoading_calibration": {"data_source": "examples/xgboost-tabular/data/tabular.csv"}}}  # the whole example`,
		},
		Tags:        []string{registry.PhaseValidator},
		ExecCode:    true,
		Alternative: &registry.Alternative{Tool: "validate.alignment", How: "it checks each script against its contract statically, running nothing."},
	}, d.validateRunScripts)
}

// ---- validate.run_scripts ---------------------------------------------------

func (d *Deps) validateRunScripts(ctx context.Context, in validateRunScriptsIn) (registry.Reply[verify.RunScriptsReport], error) {
	var reply registry.Reply[verify.RunScriptsReport]
	if err := deprecatedAlias(reply.Warn, &in.ConfigFile, in.ConfigPath, "config_file", "config_path"); err != nil {
		return reply, err
	}
	rep, err := d.verifier(ctx).RunScripts(ctx, verify.RunScriptsRequest{Nodes: in.Nodes, Edges: in.Edges, DAGFile: string(in.DAGFile),
		ConfigPath: string(in.ConfigFile), Samples: in.Samples, Env: in.Env, JobArgs: in.JobArgs,
		Timeout: time.Duration(in.Timeout) * time.Second, NoWiring: in.UseDeps != nil && !*in.UseDeps, Search: in.search(),
		Progress: progressTo(ctx)})
	if err != nil {
		return reply, verifyError(err)
	}
	reply.Warn(rep.Warnings...)
	reply.Out = *rep
	return reply, nil
}

// newScriptRunner makes the runner: at most two scripts at once (the
// server has few cores), python3 from PATH or the configured interpreter,
// each run's process tree within the configured limits.
func newScriptRunner(opts Options) *scriptrun.Runner {
	r := scriptrun.NewRunner(2)
	r.LimitTrees(scriptrun.TreeLimits{MaxProcesses: opts.ScriptMaxProcesses, MemoryBytes: opts.ScriptMemoryBytes, CPUWeight: opts.ScriptCPUWeight})
	if opts.Python != "" {
		r.UseInterpreter(opts.Python)
	}
	if opts.AllowUnisolatedScripts {
		r.AllowUnisolated()
	}
	return r
}
