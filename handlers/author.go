package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

var authorTopics = []string{"naming", "packaging", "sdk_carveout", "reuse_class", "closure"}

func authorNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil || d.Config == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	tools := []registry.ToolDef{
		{
			Name:        "author.rules",
			Description: "The rules a new step type must follow, by topic: naming, packaging, sdk_carveout, reuse_class, closure.",
			When:        "You are about to write a .step.yaml or its script and need the restrictions.",
			Examples:    []string{`author.rules {"topic": "naming"}`, `author.rules {"topic": "closure"}`},
			Tags:        []string{registry.PhaseValidator},
			Schema:      registry.Object(map[string]any{"topic": registry.Enum("Rule topic.", authorTopics...)}, "topic"),
			Handler:     d.authorRules,
		},
		{
			Name: "author.checklist",
			Description: "The authoring procedure for a new step of a SageMaker step type, as ordered data: which tools to call, " +
				"which exemplar step to copy shapes from, which files to write, and the gates to pass.",
			When:     "You are starting to author a new step type.",
			Examples: []string{`author.checklist {"sagemaker_step_type": "Processing", "step_assembly": "code"}`},
			Tags:     []string{registry.PhasePlanner},
			Schema: registry.Object(map[string]any{
				"sagemaker_step_type": registry.Enum("SageMaker step type of the new step.", steps.SageMakerStepTypes...),
				"step_assembly":       registry.Enum("How the step is assembled (Processing only).", steps.StepAssemblies...),
			}, "sagemaker_step_type"),
			Handler: d.authorChecklist,
		},
		{
			Name: "author.check_script",
			Description: "Check a step's Python script against its contract (static analysis; no interpreter): main() signature, " +
				"forward checks (names, env vars and job args the script reads must be declared) and reverse checks (declared " +
				"outputs written, required env vars read, declared flags parsed). Issues carry severity, rule, location and fix.",
			When: "You wrote or edited a step script.",
			Examples: []string{
				`author.check_script {"step_name": "TabularPreprocessing", "source_dir": "scripts"}`,
				`author.check_script {"step_name": "XGBoostTraining", "script_path": "projects/demo_xgboost/scripts/xgboost_training.py"}`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "job_type": valJobTypeSchema, "script_path": scriptPathSchema,
				"source_dir": sourceDirSchema, "workspace_dirs": workspaceDirsSchema,
			}, "step_name"),
			Handler: d.authorCheckScript,
		},
		{
			Name: "author.preflight_step",
			Description: "The CI gates a step type must pass to be constructible: interface (the .step.yaml is valid), " +
				"registry_binding (a builder handler binds its SageMaker type and assembly, and the config has the fields the " +
				"builder reads), config_constructible (a valid config can be built from sample values) and script_alignment " +
				"(the script, when found, matches its contract). Each gate has a detail and a remedy.",
			When: "Before integrating a new or edited step into a pipeline.",
			Examples: []string{
				`author.preflight_step {"step_name": "TabularPreprocessing"}`,
				`author.preflight_step {"all": true}  # every step type in the catalog`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": valStepNameSchema, "all": registry.Boolean("Check every step type in the catalog."),
				"job_type": valJobTypeSchema, "script_path": scriptPathSchema, "source_dir": sourceDirSchema,
				"workspace_dirs": workspaceDirsSchema,
			}),
			Handler: d.authorPreflightStep,
		},
	}
	tools = append(tools, authorConfigTools(d)...)
	return registry.Namespace{
		Name:        "author",
		Description: "Guardrails for authoring new step types: rules, the checklist, script and config checks, and preflight gates.",
		Tools:       tools,
	}, nil
}

func (d *Deps) authorRules(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Topic string `json:"topic"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	var rules map[string]any
	switch args.Topic {
	case "naming":
		rules = map[string]any{
			"step_name": map[string]any{"rule": "PascalCase; equals the .step.yaml step_type and the registry name; the file is <snake_case>.step.yaml",
				"pascal_case_regex": "^[A-Z][a-zA-Z0-9]*$"},
			"config_class":      map[string]any{"rule": "<StepName>Config unless registry.config_class overrides it", "suffix": "Config"},
			"builder_step_name": map[string]any{"rule": "<StepName>StepBuilder; derived, no file to write", "suffix": "StepBuilder"},
			"sagemaker_step_type": map[string]any{"rule": "registry.sagemaker_step_type picks the builder; Amazon-internal kinds load but are not compiled",
				"valid_values": steps.SageMakerStepTypes},
			"dag_node": "a DAG node is <StepName> or <StepName>_<job_type>; the SageMaker step name is <StepName>-<Jobtype>",
		}
	case "packaging":
		rules = map[string]any{
			"source_dir": map[string]any{"field": "contract.source_dir", "default": false,
				"true": "the whole script directory is uploaded (needs step_args / a framework processor)", "false": "only the entry point is uploaded"},
			"output_path_token": map[string]any{"field": "contract.output_path_token", "default": nil,
				"none": "outputs go under <base>/<step_type lowercased>/[<job_type>/]<logical name>", "set": "every output goes to <base>/<token>",
				"caveat": "a token makes all outputs of the step share one prefix"},
			"include_job_type_in_path": map[string]any{"field": "patterns.include_job_type_in_path", "default": true,
				"true": "the job type is a path segment", "false": "job types of the same step share paths"},
			"entry_point": "contract.entry_point names the script; the config's processing_entry_point / training_entry_point default must agree",
			"scripts":     "scripts live in the config's source_dir (relative to the workspace); code is uploaded content-addressed",
		}
	case "sdk_carveout":
		rules = map[string]any{
			"registry_requires": map[string]any{"field": "registry.requires", "valid_values": []string{"none", "secure_ai_sandbox_workflow_python_sdk"},
				"rule": "only the Amazon-internal SDK steps set it; such steps are not compiled here"},
			"compute_requires": map[string]any{"field": "compute.requires", "valid_values": []string{"none", "mods_workflow_core"},
				"rule": "mods_workflow_core only with compute.kms_network"},
			"closed_sets": map[string]any{"compute.kind": steps.ComputeKinds, "compute.sdk_class": steps.SDKClasses, "patterns.step_assembly": steps.StepAssemblies},
			"note":        "public replacements: DummyDataLoading for Cradle/Redshift loading, Registration for MIMS registration",
		}
	case "reuse_class":
		rules = map[string]any{
			"shared":          "framework-agnostic steps reused as-is by every pipeline (TabularPreprocessing, DummyDataLoading, …)",
			"model_dependent": "steps tied to one framework (XGBoostTraining, PyTorchModelEval, …); leave the model section of the script open",
			"user_template":   "steps expected to be copied and customised per project",
			"decision":        "prefer reusing a step with new config values, then extending an optional dependency, and only then a new step",
		}
	case "closure":
		rules = map[string]any{
			"registry_by_construction": "the registry is derived from the .step.yaml files; never hand-edit a registry",
			"contract_spec_alignment":  "every contract.inputs key is a spec.dependencies key; every contract.outputs key is a spec.outputs key (or alias)",
			"compatible_sources":       "exact, case-sensitive step type names",
			"gates":                    []string{"validate.step_interface", "author.check_script", "author.preflight_step", "compile.validate"},
		}
	}
	return registry.OK(map[string]any{"topic": args.Topic, "rules": rules}), nil
}

func (d *Deps) authorChecklist(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		SMType   string `json:"sagemaker_step_type"`
		Assembly string `json:"step_assembly"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	exemplar := map[string]string{steps.SMTraining: "XGBoostTraining", steps.SMTransform: "BatchTransform",
		steps.SMCreateModel: "XGBoostModel", steps.SMTuning: "XGBoostTuning", steps.SMRegisterModel: "Registration"}[args.SMType]
	if exemplar == "" {
		exemplar = "TabularPreprocessing"
	}
	if _, ok := d.Steps.Get(exemplar); !ok {
		exemplar = "TabularPreprocessing"
	}
	routable := true
	var warn []string
	switch {
	case args.SMType == steps.SMBase || args.SMType == steps.SMUtility || args.SMType == steps.SMLambda:
		routable = false
		warn = append(warn, fmt.Sprintf("'%s' binds no construction handler: such a step cannot be compiled", args.SMType))
	case args.SMType == steps.SMCradleDataLoading || args.SMType == steps.SMRedshiftDataLoading || args.SMType == steps.SMMimsModelRegistrationProcessing:
		routable = false
		rep, _ := steps.InternalReplacement(args.SMType)
		warn = append(warn, fmt.Sprintf("'%s' is Amazon-internal and not compiled here; use %s", args.SMType, rep))
	case args.Assembly == "delegation":
		routable = false
		warn = append(warn, "step_assembly 'delegation' hands the step to an Amazon-internal SDK; use code or step_args")
	case args.Assembly != "" && args.SMType != steps.SMProcessing:
		warn = append(warn, "step_assembly only matters for Processing steps; it is ignored for "+args.SMType)
	}
	snake := "<snake_name>"
	list := []map[string]any{
		{"order": 1, "phase": "resolve", "action": "Confirm the SageMaker type routes to a builder and read its knobs", "tool": "strategies.for_step_type", "args_hint": map[string]any{"sagemaker_step_type": args.SMType}},
		{"order": 2, "phase": "resolve", "action": "Read the naming rules", "tool": "author.rules", "args_hint": map[string]any{"topic": "naming"}},
		{"order": 3, "phase": "author", "action": "Copy shapes from the exemplar: ports, patterns, config fields", "tool": "steps.io / steps.patterns / catalog.config_fields", "args_hint": map[string]any{"step_name": exemplar}},
		{"order": 4, "phase": "author", "action": "Write " + snake + ".step.yaml (with its config section) in a step directory the server loads, and scripts/" + snake + ".py with main(input_paths, output_paths, environ_vars, job_args)", "tool": "(your Write tool)", "args_hint": map[string]any{}},
		{"order": 5, "phase": "validate", "action": "Validate the interface, then the script against it", "tool": "validate.step_interface", "args_hint": map[string]any{"path": "<dir>/" + snake + ".step.yaml"}},
		{"order": 6, "phase": "preflight", "action": "Pass the constructibility gates", "tool": "author.preflight_step", "args_hint": map[string]any{"step_name": "<StepName>"}},
		{"order": 7, "phase": "integrate", "action": "Compile a DAG that uses the step", "tool": "compile.dag", "args_hint": map[string]any{"dag_file": "pipeline_config/dag.json"}},
	}
	data := map[string]any{"sagemaker_step_type": args.SMType, "step_assembly": nilIfEmpty(args.Assembly), "routable": routable,
		"exemplar_step": exemplar, "steps": list}
	res := registry.OK(data).Warn(warn...)
	if routable {
		res.Next(registry.NextStep{Tool: "strategies.for_step_type", When: "first", Why: "see the builder strategy and its knobs",
			ArgsHint: map[string]any{"sagemaker_step_type": args.SMType}})
	}
	return res, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (d *Deps) authorCheckScript(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args stepScriptArgs
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	rep, err := d.verifier().CheckScript(ctx, args.StepName, args.JobType, args.ScriptSearch)
	var missing *verify.ScriptNotFoundError
	var bad *verify.AnalysisError
	switch {
	case errors.As(err, &missing):
		return nil, registry.Errorf(registry.CodeNotFound, "%s", missing.Error()).WithDetails(map[string]any{"searched": nonNilList(missing.Searched)}).
			Suggest("Pass script_path or source_dir; project.init scaffolds a stub that satisfies the contract.", "project.init")
	case errors.As(err, &bad):
		return nil, analysisError(bad)
	case err != nil:
		return nil, verifyError(err)
	}
	if !rep.Passed {
		return registry.Fail(registry.CodeScriptCheckFailed, fmt.Sprintf("%s does not match the %s contract", rep.Script, rep.StepName)).
			WithDetails(toMap(rep)).Suggest("Apply each issue's fix; steps.io shows the declared ports.", "steps.io", "author.config_constraints"), nil
	}
	res := registry.OK(rep)
	if rep.Status == "checked" {
		res.Next(registry.NextStep{Tool: "author.preflight_step", When: "the script passes", Why: "run the constructibility gates",
			ArgsHint: map[string]any{"step_name": rep.StepName}})
	}
	return res, nil
}

// analysisError is script_analysis_error, with the line of a syntax error.
func analysisError(e *verify.AnalysisError) error {
	var se *validate.ScriptAnalysisError
	if errors.As(e.Err, &se) {
		return registry.Errorf(registry.CodeScriptAnalysisError, "%s", se.Error()).
			WithDetails(map[string]any{"script": e.Script, "line": se.Line, "message": se.Message}).
			Suggest(fmt.Sprintf("Fix the syntax at line %d.", se.Line))
	}
	return registry.Errorf(registry.CodeScriptAnalysisError, "%v", e.Err)
}

func (d *Deps) authorPreflightStep(ctx context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string `json:"step_name"`
		All      bool   `json:"all"`
		JobType  string `json:"job_type"`
		verify.ScriptSearch
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	rep, err := d.verifier().Preflight(ctx, verify.PreflightRequest{StepName: args.StepName, All: args.All, JobType: args.JobType,
		Search: args.ScriptSearch, Progress: func(done, total int, step string) { registry.Progress(ctx, float64(done), float64(total), step) }})
	if err != nil {
		return nil, verifyError(err)
	}
	if !rep.Constructible {
		return registry.Fail(registry.CodeNotConstructible, "step not constructible — failing gate(s): "+strings.Join(rep.Failing, ", ")).
			WithDetails(toMap(rep)).
			Suggest("Each failing gate has a remedy; fix them in order (interface first).", "validate.step_interface", "strategies.for_step_type", "author.rules"), nil
	}
	return registry.OK(rep).Next(registry.NextStep{Tool: "compile.dag", When: "all gates pass", Why: "integrate the step into a pipeline"}), nil
}
