package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// Argument schemas shared by the validate and author tools.
var (
	valStepNameSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 256, "pattern": `^\s*[A-Za-z][A-Za-z0-9_\-]*\s*$`,
		"description": "Step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training)."}
	valJobTypeSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "pattern": `^[A-Za-z][A-Za-z0-9_]*$`,
		"description": "Job type variant to apply (training, calibration, …)."}
	scriptPathSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "The step's script inside the workspace (overrides the search)."}
	sourceDirSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "Directory inside the workspace holding the step scripts (searched for the contract's entry point)."}
	workspaceDirsSchema = map[string]any{"type": "array", "maxItems": 20,
		"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": 4096},
		"description": "Directories inside the workspace searched for scripts (default: scripts, ., dockers/scripts)."}
)

func validateNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil || d.Config == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	tools := []registry.ToolDef{
		{
			Name: "validate.alignment",
			Description: "Alignment checks for one or more step types: script ↔ contract (static analysis of the Python script: main() " +
				"signature, logical names, env vars, argparse flags, container paths), config ↔ contract, spec ↔ the catalog's " +
				"outputs (dependency scores), and builder binding. Each finding has a level (critical/error/warning/info), a rule, a location and a fix.",
			When: "You changed a step's script, contract or config section and want to know whether they still agree.",
			Examples: []string{
				`validate.alignment {"target_scripts": ["TabularPreprocessing"], "source_dir": "scripts"}  # one step against its script`,
				`validate.alignment {}  # every step type in the catalog`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"target_scripts": map[string]any{"type": "array", "maxItems": 200, "items": valStepNameSchema, "description": "Step types to check (default: all)."},
				"workspace_dirs": workspaceDirsSchema,
				"source_dir":     sourceDirSchema,
			}),
			Handler: d.validateAlignment,
		},
		{
			Name:        "validate.step",
			Description: "All alignment checks for one step (optionally one job type), with its script found in the workspace or given by path.",
			When:        "You want the full alignment report of a single step.",
			Examples:    []string{`validate.step {"step_name": "XGBoostTraining"}  # catalog-level checks`},
			Tags:        []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "job_type": valJobTypeSchema, "script_path": scriptPathSchema,
				"source_dir": sourceDirSchema, "workspace_dirs": workspaceDirsSchema,
			}, "step_name"),
			Handler: d.validateStep,
		},
		{
			Name: "validate.step_interface",
			Description: "Validate .step.yaml interfaces: required keys, enumerations, path prefixes, contract ↔ spec key alignment, " +
				"property paths, compute rules and the config section. Checks a catalog step, every catalog step (all), a file or " +
				"directory in the workspace (path), or inline YAML (yaml).",
			When: "You wrote or edited a .step.yaml and want the author-time gate before anything else.",
			Examples: []string{
				`validate.step_interface {"all": true}  # every built-in and extra step type`,
				`validate.step_interface {"step_name": "TabularPreprocessing", "job_type": "training"}`,
				`validate.step_interface {"path": "steps/my_step.step.yaml"}  # a file in the workspace`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "all": registry.Boolean("Validate every step type in the catalog."),
				"job_type": valJobTypeSchema,
				"path":     map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "A .step.yaml file or a directory of them, inside the workspace."},
				"yaml":     map[string]any{"type": "string", "minLength": 1, "maxLength": 262144, "description": "Inline .step.yaml text."},
			}),
			Handler: d.validateStepInterface,
		},
		{
			Name: "validate.builder",
			Description: "Universal builder test for one step type: synthesizes a valid config, wires the step to catalog providers " +
				"for its required inputs, compiles that small pipeline and checks the step's SageMaker request shape; plus the " +
				"alignment, config-construction and step-type checks. Scored (weights 2.0/1.5/1.0/1.0) and rated.",
			When:     "You want proof that a step type can actually be built into a pipeline definition.",
			Examples: []string{`validate.builder {"step_name": "XGBoostTraining", "enable_scoring": false}`},
			Tags:     []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "job_type": valJobTypeSchema,
				"enable_scoring": registry.Boolean("Add a score and rating (default true)."),
			}, "step_name"),
			Handler: d.validateBuilder,
		},
		{
			Name:        "validate.info",
			Description: "What the validation tools check: levels, rulesets per SageMaker step type, rules and their levels, dependency thresholds, and what validate.run_scripts isolates and does not.",
			When:        "You need to know which checks exist before choosing a validation tool.",
			Examples:    []string{`validate.info {}`},
			Tags:        []string{registry.PhaseValidator},
			Schema:      registry.Object(map[string]any{}),
			Handler:     d.validateInfo,
		},
		{
			Name: "validate.run_scripts",
			Description: "Run step scripts locally with python3 in a temporary sandbox: the contract's /opt/ml paths mapped to sandbox " +
				"directories, the contract's env vars (plus config values and overrides) and job arguments, sample inputs copied in. " +
				"Nodes run in DAG order with each step's outputs fed to its consumers. Bounded time and output; reports the outputs " +
				"produced against the contract. Not an OS-level sandbox (see validate.info).",
			When: "Scripts pass static alignment and you want to see them actually run on a small sample.",
			Examples: []string{
				`validate.run_scripts {"nodes": ["TabularPreprocessing_training"], "source_dir": "scripts", "sample_inputs": {"TabularPreprocessing_training": {"input_data": "data/sample.csv"}}, "env": {"LABEL_FIELD": "label"}}`,
				`validate.run_scripts {"dag_file": "examples/xgboost-tabular/dag.json", "config_path": "examples/xgboost-tabular/config.json", "sample_inputs": {"DummyDataLoading_training": {"data_source": "examples/xgboost-tabular/data/tabular.csv"}, "DummyDataLoading_calibration": {"data_source": "examples/xgboost-tabular/data/tabular.csv"}}}  # the whole example`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"nodes": map[string]any{"type": "array", "minItems": 1, "maxItems": verify.MaxRunNodes, "items": valStepNameSchema, "description": "DAG nodes to run. Give this or dag_file."},
				"edges": map[string]any{"type": "array", "maxItems": 500, "description": "[src, dst] pairs between the nodes.",
					"items": map[string]any{"type": "array", "minItems": 2, "maxItems": 2, "items": map[string]any{"type": "string", "maxLength": 256}}},
				"dag_file":       map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "DAG JSON file in the workspace: run every node of it. Give this or nodes."},
				"config_path":    map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "config.json in the workspace: source_dir, entry points and env values come from it."},
				"source_dir":     sourceDirSchema,
				"workspace_dirs": workspaceDirsSchema,
				"sample_inputs": map[string]any{"type": "object", "maxProperties": 50,
					"description":          "node → {input name → file or directory in the workspace}.",
					"additionalProperties": map[string]any{"type": "object", "maxProperties": 50, "additionalProperties": map[string]any{"type": "string", "minLength": 1, "maxLength": 4096}}},
				"env": map[string]any{"type": "object", "maxProperties": 100, "description": "Environment variable overrides for every node.",
					"additionalProperties": map[string]any{"type": "string", "maxLength": 8192}},
				"job_args": map[string]any{"type": "object", "maxProperties": 50, "description": "Job argument values (flag without dashes → value), e.g. {\"job_type\": \"training\"}.",
					"additionalProperties": map[string]any{"type": "string", "maxLength": 1024}},
				"timeout_seconds":           map[string]any{"type": "integer", "minimum": 1, "maximum": 3600, "description": "Wall-clock limit per script (default 60)."},
				"use_dependency_resolution": registry.Boolean("Feed each node's outputs to its consumers' inputs (default true)."),
				"test_workspace_dir":        map[string]any{"type": "string", "maxLength": 4096, "description": "Accepted for compatibility; runs always use a fresh temporary sandbox."},
			}),
			ExecCode: true,
			Handler:  d.validateRunScripts,
		},
	}
	tools = append(tools, validateDepsTools(d)...)
	return registry.Namespace{
		Name:        "validate",
		Description: "Check scripts, contracts, specs, configs and builders against each other, and run scripts in a sandbox.",
		Tools:       tools,
	}, nil
}

// ---- shared helpers -------------------------------------------------------

// stepScriptArgs name one step (and job type) and where to look for its
// script: the arguments of author.check_script and validate.step.
type stepScriptArgs struct {
	StepName string `json:"step_name"`
	JobType  string `json:"job_type"`
	verify.ScriptSearch
}

// ---- validate.alignment / validate.step ----------------------------------

func (d *Deps) validateAlignment(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Targets []string `json:"target_scripts"`
		verify.ScriptSearch
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	rep, err := d.verifier().Alignment(ctx, args.Targets, args.ScriptSearch, func(done, total int, step string) {
		registry.Progress(ctx, float64(done), float64(total), step)
	})
	if err != nil {
		return nil, verifyError(err)
	}
	if rep.FailedSteps > 0 {
		return registry.Fail(registry.CodeValidationFailed, fmt.Sprintf("%d of %d step(s) failed alignment", rep.FailedSteps, rep.TotalSteps)).
			WithDetails(toMap(rep)).
			Suggest("Apply each finding's fix (critical_issues lists them), then re-run validate.alignment.", "author.check_script", "steps.io", "validate.step_interface"), nil
	}
	return registry.OK(rep).Next(registry.NextStep{Tool: "validate.builder", When: "alignment passes", Why: "prove the step builds into a pipeline definition"}).
		WithMeta("tool_scope", rep.Scope), nil
}

func (d *Deps) validateStep(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args stepScriptArgs
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	r, warns, err := d.verifier().CheckStep(args.StepName, args.JobType, args.ScriptSearch)
	if err != nil {
		return nil, verifyError(err)
	}
	if r.Status == validate.StatusFailed {
		return registry.Fail(registry.CodeValidationFailed, fmt.Sprintf("%s failed alignment: %d critical, %d error finding(s)", r.StepName, r.Counts["critical"], r.Counts["error"])).
			WithDetails(map[string]any{"report": r}).
			Suggest("Apply each finding's fix, then re-run validate.step.", "author.check_script", "steps.io"), nil
	}
	return registry.OK(r).Warn(warns...).Next(registry.NextStep{Tool: "validate.builder", When: "alignment passes",
		Why: "build the step from a synthesized config", ArgsHint: map[string]any{"step_name": r.StepName}}), nil
}

// ---- validate.step_interface ---------------------------------------------

func (d *Deps) validateStepInterface(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string `json:"step_name"`
		All      bool   `json:"all"`
		JobType  string `json:"job_type"`
		Path     string `json:"path"`
		YAML     string `json:"yaml"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	rep, err := d.verifier().CheckInterfaces(ctx, verify.InterfaceRequest(args))
	if err != nil {
		return nil, verifyError(err)
	}
	if rep.Failed > 0 {
		return registry.Fail(registry.CodeValidationFailed, fmt.Sprintf("%d interface(s) failed validation", rep.Failed)).WithDetails(toMap(rep)).
			Suggest("Fix each error at its key path (rule names the check); steps.io shows an exemplar's ports.",
				"strategies.for_step_type", "catalog.config_fields", "validate.deps_explain"), nil
	}
	res := registry.OK(rep).Next(registry.NextStep{Tool: "validate.alignment", When: "the interface is valid", Why: "check the script and config against it"})
	if rep.Warnings > 0 {
		res.Warn(fmt.Sprintf("%d non-blocking incompleteness warning(s) across interfaces", rep.Warnings))
	}
	return res, nil
}

// ---- validate.builder -----------------------------------------------------

func (d *Deps) validateBuilder(ctx context.Context, req registry.Request) (*registry.Result, error) {
	args := struct {
		StepName string `json:"step_name"`
		JobType  string `json:"job_type"`
		Scoring  *bool  `json:"enable_scoring"`
	}{}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	rep, err := d.verifier().TestBuilder(ctx, args.StepName, args.JobType, args.Scoring == nil || *args.Scoring)
	if err != nil {
		return nil, verifyError(err)
	}
	if rep.Failed() {
		return registry.Fail(registry.CodeNotConstructible, rep.StepName+" could not be built: see the failing components").WithDetails(toMap(rep)).
			Suggest("Fix the issues of each ERROR component (config problems: author.config_constraints; wiring: steps.io).",
				"validate.step_interface", "author.config_constraints", "steps.io"), nil
	}
	return registry.OK(rep).WithMeta("step_name", rep.StepName), nil
}

// ---- validate.info ----------------------------------------------------------

func (d *Deps) validateInfo(_ context.Context, _ registry.Request) (*registry.Result, error) {
	return registry.OK(d.verifier().Describe()), nil
}

// ---- validate.run_scripts ---------------------------------------------------

func (d *Deps) validateRunScripts(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Nodes      []string                     `json:"nodes"`
		Edges      [][2]string                  `json:"edges"`
		DAGFile    string                       `json:"dag_file"`
		ConfigPath string                       `json:"config_path"`
		Samples    map[string]map[string]string `json:"sample_inputs"`
		Env        map[string]string            `json:"env"`
		JobArgs    map[string]string            `json:"job_args"`
		Timeout    int                          `json:"timeout_seconds"`
		UseDeps    *bool                        `json:"use_dependency_resolution"`
		verify.ScriptSearch
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	rep, err := d.verifier().RunScripts(ctx, verify.RunScriptsRequest{Nodes: args.Nodes, Edges: args.Edges, DAGFile: args.DAGFile,
		ConfigPath: args.ConfigPath, Samples: args.Samples, Env: args.Env, JobArgs: args.JobArgs,
		Timeout: time.Duration(args.Timeout) * time.Second, NoWiring: args.UseDeps != nil && !*args.UseDeps, Search: args.ScriptSearch,
		Progress: func(done, total int, msg string) { registry.Progress(ctx, float64(done), float64(total), msg) }})
	if err != nil {
		return nil, verifyError(err)
	}
	return registry.OK(rep).Warn(rep.Warnings...), nil
}

// newScriptRunner makes the runner: at most two scripts at once (the
// server has few cores), python3 from PATH or the configured interpreter.
func newScriptRunner(opts Options) *validate.Runner {
	r := validate.NewRunner(2)
	if opts.Python != "" {
		r.UseInterpreter(opts.Python)
	}
	if opts.AllowUnisolatedScripts {
		r.AllowUnisolated()
	}
	return r
}
