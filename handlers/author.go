package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/strategies"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// authorTopic is a topic of the engine's rule table.
type authorTopic string

// stubScript is a step script sent inline in examples: one that works on
// an empty workspace.
const stubScript = `"def main(input_paths, output_paths, environ_vars, job_args):\n    pass\n"`

func (authorTopic) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: enumOf(steps.RuleTopics)}
}

// authorSMType is any SageMaker step type a .step.yaml may declare.
type authorSMType string

func (authorSMType) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: enumOf(steps.SageMakerStepTypes)}
}

// authorAssembly is a Processing step's assembly.
type authorAssembly string

func (authorAssembly) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: enumOf(steps.StepAssemblies)}
}

func enumOf(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func authorNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("the step catalog is not loaded")
	}
	tools := []registry.ToolDef{
		authorRulesTool(d),
		authorChecklistTool(d),
		authorCheckScriptTool(d),
		authorPreflightStepTool(d),
	}
	tools = append(tools, authorConfigTools(d)...)
	return registry.Namespace{
		Name:        "author",
		Description: "Guardrails for authoring new step types: rules, the checklist, script and config checks, and preflight gates.",
		Tools:       tools,
	}, nil
}

type authorRulesIn struct {
	Topic authorTopic `json:"topic,omitempty" jsonschema:"Rule topic; leave out for every topic."`
}

// authorRulesOut is one topic's rules; each topic has its own fixed shape.
type authorRulesOut struct {
	Topic string         `json:"topic"`
	Rules map[string]any `json:"rules"`
}

func authorRulesTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "author.rules",
		Description: "The rules a new step type must follow, by topic: naming, packaging, sdk_carveout, reuse_class, closure.",
		When:        "Before writing a .step.yaml or script.",
		Examples:    []string{`author.rules {}  # every topic`, `author.rules {"topic": "naming"}`},
		Tags:        []string{registry.PhaseValidator},
	}, registry.Plain(d.authorRules))
}

func (d *Deps) authorRules(_ context.Context, in authorRulesIn) (authorRulesOut, error) {
	if in.Topic == "" {
		all := map[string]any{}
		for _, topic := range steps.RuleTopics {
			all[topic] = authorRules(topic)
		}
		return authorRulesOut{Topic: "all", Rules: all}, nil
	}
	return authorRulesOut{Topic: string(in.Topic), Rules: authorRules(string(in.Topic))}, nil
}

type authorChecklistIn struct {
	SMType   authorSMType   `json:"sagemaker_step_type" jsonschema:"SageMaker step type of the new step."`
	Assembly authorAssembly `json:"step_assembly,omitempty" jsonschema:"How the step is assembled (Processing only)."`
}

// authorChecklistOut is the authoring procedure for one step type.
type authorChecklistOut struct {
	SageMakerStepType string  `json:"sagemaker_step_type"`
	StepAssembly      *string `json:"step_assembly"` // null when not given
	Routable          bool    `json:"routable"`
	// BoundHandler is the strategy that builds such a step (null when not
	// routable), as strategies.for_step_type answers it.
	BoundHandler *strategies.Strategy `json:"bound_handler"`
	ExemplarStep string               `json:"exemplar_step"`
	Steps        []checklistStep      `json:"steps"`
}

type checklistStep struct {
	Order    int            `json:"order"`
	Phase    string         `json:"phase"`
	Action   string         `json:"action"`
	Tool     string         `json:"tool"`
	ArgsHint map[string]any `json:"args_hint"`
}

func authorChecklistTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "author.checklist",
		Description: "The authoring procedure for a new step type (of a SageMaker step type), as ordered data: which tools to call, " +
			"which exemplar step to copy shapes from, which files to write, and the gates to pass. The exemplar's .step.yaml is steps.source; " +
			"the formats are steps.format (step_yaml, config_json); a new step type is usable at once when sent in step_types.",
		When:     "Before authoring a step type.",
		Examples: []string{`author.checklist {"sagemaker_step_type": "Processing", "step_assembly": "code"}`},
		Tags:     []string{registry.PhasePlanner},
	}, d.authorChecklist)
}

func (d *Deps) authorChecklist(ctx context.Context, in authorChecklistIn) (registry.Reply[authorChecklistOut], error) {
	var reply registry.Reply[authorChecklistOut]
	smType, assembly := string(in.SMType), string(in.Assembly)
	routable, warn := checklistRouting(smType, assembly)
	exemplar := d.checklistExemplar(ctx, smType)
	snake := "<snake_name>"
	list := []checklistStep{
		{1, "resolve", "Confirm the SageMaker type routes to a builder and read its knobs", "strategies.for_step_type", map[string]any{"sagemaker_step_type": smType}},
		{2, "resolve", "Read the naming rules", "author.rules", map[string]any{"topic": "naming"}},
		{3, "author", "Copy shapes from the exemplar: its .step.yaml, ports, patterns, config fields", "steps.source / steps.io / steps.patterns / catalog.config_fields", map[string]any{"step_name": exemplar}},
		{4, "author", "Write " + snake + ".step.yaml (with its config section; steps.format {\"format\": \"step_yaml\"} is its JSON Schema) and send it in step_types, or put it in a step directory the server loads; write scripts/" + snake + ".py with main(input_paths, output_paths, environ_vars, job_args)", "steps.format", map[string]any{"format": formatStepYAML}},
		{5, "validate", "Validate the interface, then the script against it", "validate.step_interface", map[string]any{"step_types": []any{"<the .step.yaml text>"}, "step_name": "<StepName>", "files": map[string]any{"scripts/" + snake + ".py": "<the script>"}}},
		{6, "preflight", "Pass the constructibility gates", "author.preflight_step", map[string]any{"step_name": "<StepName>"}},
		{7, "integrate", "Configure a DAG that uses the step: config.requirements lists the fields, config.merge_save builds the document; source_dir is the scripts' folder in files", "config.merge_save",
			map[string]any{"dag": "<the DAG>", "base": map[string]any{"source_dir": "scripts"}, "step_types": []any{"<the .step.yaml text>"}}},
		{8, "integrate", "Compile the DAG and read the report", "compile.with_report", map[string]any{"dag": map[string]any{"nodes": []any{"<upstream node>", "<StepName>"}, "edges": []any{[]any{"<upstream node>", "<StepName>"}}},
			"config": "<config.json document with a config for each node>", "step_types": []any{"<the .step.yaml text>"}, "files": map[string]any{"scripts/" + snake + ".py": "<the script>"}}},
	}
	reply.Warn(warn...)
	if routable {
		reply.Next(registry.NextStep{Tool: "strategies.for_step_type", When: "first", Why: "see the builder strategy and its knobs",
			ArgsHint: map[string]any{"sagemaker_step_type": smType}})
	}
	reply.Next(registry.NextStep{Tool: "steps.source", When: "you start the .step.yaml", Why: "the exemplar's file, to copy from", ArgsHint: map[string]any{"step_name": exemplar}},
		registry.NextStep{Tool: "steps.format", When: "you need what each key may hold", Why: "the .step.yaml format as a JSON Schema", ArgsHint: map[string]any{"format": formatStepYAML}})
	out := authorChecklistOut{SageMakerStepType: smType, Routable: routable, ExemplarStep: exemplar, Steps: list}
	if routable {
		if s, _, _, err := strategies.Default().ForStepType(smType, assembly); err == nil {
			out.BoundHandler = &s
		}
	}
	if assembly != "" {
		out.StepAssembly = &assembly
	}
	reply.Out = out
	return reply, nil
}

// checklistExemplar is the catalog step whose shapes a new step of smType
// copies.
func (d *Deps) checklistExemplar(ctx context.Context, smType string) string {
	exemplar := map[string]string{steps.SMTraining: "XGBoostTraining", steps.SMTransform: "BatchTransform",
		steps.SMCreateModel: "XGBoostModel", steps.SMTuning: "XGBoostTuning", steps.SMRegisterModel: "Registration"}[smType]
	if _, ok := d.catalogs(ctx).Steps.Get(exemplar); !ok {
		return "TabularPreprocessing"
	}
	return exemplar
}

// checklistRouting says whether a step of smType (and assembly) can be
// compiled here, with the warnings a caller needs when not.
func checklistRouting(smType, assembly string) (bool, []string) {
	switch {
	case smType == steps.SMBase || smType == steps.SMUtility || smType == steps.SMLambda:
		return false, []string{fmt.Sprintf("'%s' binds no construction handler: such a step cannot be compiled", smType)}
	case smType == steps.SMCradleDataLoading || smType == steps.SMRedshiftDataLoading || smType == steps.SMMimsModelRegistrationProcessing:
		rep, _ := steps.InternalReplacement(smType)
		return false, []string{fmt.Sprintf("'%s' is Amazon-internal and not compiled here; use %s", smType, rep)}
	case assembly == "delegation":
		return false, []string{"step_assembly 'delegation' hands the step to an Amazon-internal SDK; use code or step_args"}
	case assembly != "" && smType != steps.SMProcessing:
		return true, []string{"step_assembly only matters for Processing steps; it is ignored for " + smType}
	}
	return true, nil
}

type authorCheckScriptIn struct {
	stepJobIn
	scriptSearchIn
	filesIn
	stepTypesArg
}

func authorCheckScriptTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "author.check_script",
		Description: "Check a step's Python script against its contract (static analysis; no interpreter): main() signature, " +
			"forward checks (names, env vars and job args the script reads must be declared) and reverse checks (declared " +
			"outputs written, required env vars read, declared flags parsed). Issues carry severity, rule, location and fix.",
		When: "You wrote or edited a step script.",
		Examples: []string{
			`author.check_script {"step_name": "TabularPreprocessing", "source_dir": "scripts", "files": {"scripts/tabular_preprocessing.py": ` + stubScript + `}}`,
			`author.check_script {"step_name": "XGBoostTraining", "script_path": "scripts/xgboost_training.py", "files": {"scripts/xgboost_training.py": ` + stubScript + `}}`,
		},
		Tags: []string{registry.PhaseValidator},
	}, d.authorCheckScript)
}

func (d *Deps) authorCheckScript(ctx context.Context, in authorCheckScriptIn) (registry.Reply[verify.ScriptCheckReport], error) {
	var reply registry.Reply[verify.ScriptCheckReport]
	suite, stepWarns, err := d.verifierFor(ctx, in.Files, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	rep, err := suite.CheckScript(ctx, string(in.StepName), string(in.JobType), in.search())
	var missing *verify.ScriptNotFoundError
	var bad *verify.AnalysisError
	switch {
	case errors.As(err, &missing):
		return reply, registry.Errorf(registry.CodeNotFound, "%s", missing.Error()).WithDetails(map[string]any{"searched": nonNilList(missing.Searched)}).
			Suggest("Send the script in files (path → text) and name it in script_path, or name the directory holding it in source_dir; steps.io shows the contract a stub must satisfy.", "steps.io")
	case errors.As(err, &bad):
		return reply, analysisError(bad)
	case err != nil:
		return reply, verifyError(err)
	}
	if !rep.Passed {
		return reply, registry.Errorf(registry.CodeScriptCheckFailed, "%s does not match the %s contract", rep.Script, rep.StepName).
			WithDetails(toMap(rep)).Suggest("Apply each issue's fix; steps.io shows the declared ports.", "steps.io", "author.config_constraints")
	}
	if rep.Status == "checked" {
		reply.Next(registry.NextStep{Tool: "author.preflight_step", When: "the script passes", Why: resendWhy("run the constructibility gates", in.Files, in.StepTypes),
			ArgsHint: carryExtras(map[string]any{"step_name": rep.StepName}, in.Files, in.StepTypes)})
	}
	reply.Out = *rep
	return reply, nil
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

type authorPreflightIn struct {
	StepName verifyStepName `json:"step_name,omitempty"`
	All      bool           `json:"all,omitempty" jsonschema:"Check every step type in the catalog."`
	JobType  jobTypeName    `json:"job_type,omitempty" jsonschema:"Job type variant to apply (training, calibration, …)."`
	scriptSearchIn
	filesIn
	stepTypesArg
}

func authorPreflightStepTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "author.preflight_step",
		Description: "The CI gates of a step type (what it must pass to be constructible): interface (the .step.yaml is valid), " +
			"registry_binding (a builder handler binds its SageMaker type and assembly, and the config has the fields the " +
			"builder reads), config_constructible (a valid config can be built from sample values) and script_alignment " +
			"(every check validate.alignment runs, with the script when found; its findings are listed). Each gate has a detail and a remedy.",
		When: "Before using a new or edited step.",
		Examples: []string{
			`author.preflight_step {"step_name": "TabularPreprocessing"}`,
			`author.preflight_step {"all": true}  # every step type in the catalog`,
		},
		Tags: []string{registry.PhaseValidator},
	}, d.authorPreflightStep)
}

func (d *Deps) authorPreflightStep(ctx context.Context, in authorPreflightIn) (registry.Reply[verify.PreflightReport], error) {
	var reply registry.Reply[verify.PreflightReport]
	suite, stepWarns, err := d.verifierFor(ctx, in.Files, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	rep, err := suite.Preflight(ctx, verify.PreflightRequest{StepName: string(in.StepName), All: in.All, JobType: string(in.JobType),
		Search: in.search(), Progress: progressTo(ctx)})
	if err != nil {
		return reply, verifyError(err)
	}
	if !rep.Constructible {
		return reply, registry.Errorf(registry.CodeNotConstructible, "step not constructible — failing gate(s): %s", strings.Join(rep.Failing, ", ")).
			WithDetails(toMap(rep)).
			Suggest("Each failing gate has a remedy; fix them in order (interface first).", "validate.step_interface", "strategies.for_step_type", "author.rules")
	}
	reply.Next(registry.NextStep{Tool: "compile.with_report", When: "all gates pass", Why: resendWhy("compile a DAG that uses the step and read the report", in.Files, in.StepTypes),
		ArgsHint: carryExtras(map[string]any{"dag": "<a DAG with a node of the step>", "config": "<a config.json document for its nodes>"}, in.Files, in.StepTypes)},
		registry.NextStep{Tool: "compile.dag", When: "the report is right and deploying is allowed", Why: "integrate the step into a deployed pipeline"})
	reply.Out = *rep
	return reply, nil
}
