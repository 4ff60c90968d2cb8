package handlers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/registry"
)

// pipelineNameArg is a SageMaker pipeline name given instead of the
// generated one.
type pipelineNameArg string

func (pipelineNameArg) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(255), Pattern: `^[a-zA-Z0-9](-*[a-zA-Z0-9])*$`,
		Description: "Pipeline name to use instead of the generated one."}
}

// roleARNArg is the IAM role SageMaker runs the pipeline as.
type roleARNArg string

func (roleARNArg) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(2048), Pattern: `^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$`,
		Description: "IAM role ARN for SageMaker (default: the configs' role)."}
}

// manualInputs maps a dependency name to the S3 URI that feeds it.
type manualInputs map[string]string

func (manualInputs) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(50), AdditionalProperties: &jsonschema.Schema{Type: "string", MaxLength: ptr(2048)}}
}

// compileSource is what every compile tool compiles: a config.json, a DAG
// and the files the configs' source_dir and entry points name, each sent
// in the call or read from the workspace.
type compileSource struct {
	configSource
	dagSource
	filesIn
	stepTypesArg
}

func compileNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog or config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "compile",
		Description: "Compile a DAG and its config.json into a SageMaker Pipelines definition; check, preview, name and deploy it.",
		Tools: []registry.ToolDef{
			compileValidateTool(d),
			compilePreviewTool(d),
			compileWithReportTool(d),
			compileNameTool(),
			compileSingleNodeTool(d),
			compileDAGTool(d),
		},
	}, nil
}

// inlineConfigArg is a complete config.json document for a three-node
// training DAG (load → preprocess → train; the built-in code serves each
// step), and inlineCompileArgs that config with its DAG: examples that
// work on an empty workspace, as a remote caller sends them.
const (
	inlineConfigArg = `"config": {"configuration": {"shared": {"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole", ` +
		`"region": "NA", "service_name": "demo", "pipeline_version": "1.0.0"}, "specific": {"DummyDataLoading_training": {"data_source": "s3://my-bucket/data"}, ` +
		`"TabularPreprocessing_training": {"job_type": "training", "label_name": "label"}, "XGBoostTraining": {}}}, ` +
		`"metadata": {"config_types": {"DummyDataLoading_training": "DummyDataLoadingConfig", "TabularPreprocessing_training": "TabularPreprocessingConfig", ` +
		`"XGBoostTraining": "XGBoostTrainingConfig"}}}`
	inlineCompileArgs = `"dag": {"nodes": ["DummyDataLoading_training", "TabularPreprocessing_training", "XGBoostTraining"], ` +
		`"edges": [["DummyDataLoading_training", "TabularPreprocessing_training"], ["TabularPreprocessing_training", "XGBoostTraining"]]}, ` + inlineConfigArg
)

// sendAgain is the placeholder an args hint holds for content the call
// was sent inline: the server keeps nothing between calls, so the next
// tool needs it again.
const sendAgain = "<send again: as sent to this call>"

// resend is the args hint that carries this call's sources to the next
// tool: each file path as given, each inline document, file set and step
// type as a sendAgain placeholder.
func (s compileSource) resend() map[string]any {
	out := map[string]any{}
	switch {
	case s.DAG != nil:
		out["dag"] = sendAgain
	case s.DAGFile != "":
		out["dag_file"] = string(s.DAGFile)
	}
	switch {
	case s.Config != nil:
		out["config"] = sendAgain
	case s.ConfigFile != "":
		out["config_file"] = string(s.ConfigFile)
	}
	carryExtras(out, s.Files, s.StepTypes)
	return out
}

// carryExtras adds the call's inline files and step types to an args
// hint: a tool run next sees neither unless they are sent again.
func carryExtras(hint map[string]any, files inlineFiles, stepTypes []string) map[string]any {
	if len(files) > 0 {
		hint["files"] = sendAgain
	}
	if len(stepTypes) > 0 {
		hint["step_types"] = sendAgain
	}
	return hint
}

// resendWhy is why, plus what to send again when the call had inline
// step types or files.
func resendWhy(why string, files inlineFiles, stepTypes []string) string {
	switch {
	case len(files) > 0 && len(stepTypes) > 0:
		return why + "; send step_types and files again (the server keeps nothing between calls)"
	case len(stepTypes) > 0:
		return why + "; send step_types again (the server keeps nothing between calls)"
	case len(files) > 0:
		return why + "; send files again (the server keeps nothing between calls)"
	}
	return why
}

// compileInput loads the config (checked first, as the reference does)
// and the DAG; the compiler reads sources through the call's files over
// the workspace, so the same content inline or on disk compiles alike.
// The warnings are those of the step types the call sent.
func (d *Deps) compileInput(ctx context.Context, src compileSource, pipelineName pipelineNameArg) (compiler.Input, *config.File, []string, error) {
	return d.compileInputWith(ctx, src, pipelineName, d.configFrom)
}

// compileInputWith is compileInput with the config loaded by load.
func (d *Deps) compileInputWith(ctx context.Context, src compileSource, pipelineName pipelineNameArg,
	load func(*callSources, configSource, string) (*config.File, string, error)) (compiler.Input, *config.File, []string, error) {
	call, err := d.sources(ctx, src.Files, src.stepTypesArg)
	if err != nil {
		return compiler.Input{}, nil, nil, err
	}
	f, _, err := load(call, src.configSource, "config_file")
	if err != nil {
		return compiler.Input{}, nil, nil, err
	}
	doc, err := d.loadDAGDocument(call, src.dagSource, false)
	if err != nil {
		return compiler.Input{}, nil, nil, err
	}
	return compiler.Input{DAG: doc.DAG, Configs: f.Configs, Unloaded: f.Unloaded, Catalog: call.cat.Steps, Sources: call.fs, PipelineName: string(pipelineName),
		DAGName: compiler.DAGName(doc, string(src.DAGFile))}, f, call.cat.Warnings, nil
}

// compileError maps engine errors to tool errors.
func compileError(err error) error {
	var ue *compiler.UnsupportedError
	var re *compiler.ResolutionError
	var ur *compiler.UnresolvedError
	var be *compiler.BuildError
	var ie *compiler.InputError
	var ae *sagemaker.AWSError
	var unreachable *sagemaker.UnreachableError
	var mc *compiler.MissingCodeError
	switch {
	case errors.As(err, &ue):
		fix := "Replace the node with a public step type."
		if ue.Replacement != "" {
			fix = fmt.Sprintf("Replace node %s with %s.", ue.Node, ue.Replacement)
		}
		if ue.Advice != "" {
			fix += " " + ue.Advice
		}
		return registry.Errorf(registry.CodeUnsupported, "%s", ue.Error()).
			WithDetails(map[string]any{"node": ue.Node, "step_type": ue.StepType, "replacement": ue.Replacement}).
			Suggest(fix, "catalog.step_info", "pipeline_catalog.recommend")
	case errors.As(err, &re):
		return registry.Errorf(registry.CodeValidationFailed, "%s", re.Error()).
			WithDetails(map[string]any{"failures": re.Failures, "collisions": re.Collisions}).
			Suggest("Add a config for each listed node (key = node name) or rename the nodes.", "compile.preview", "config.requirements")
	case errors.As(err, &ur):
		return registry.Errorf(registry.CodeValidationFailed, "%s", ur.Error()).
			WithDetails(map[string]any{"unresolved": ur.Unresolved}).
			Suggest("Add an edge from a step that produces the input, or check the producers' outputs.", "dag.resolve_plan", "validate.deps_explain")
	case errors.As(err, &ie):
		return registry.Errorf(registry.CodeInvalidInput, "%s", ie.Error())
	case errors.As(err, &ae):
		return registry.Errorf(registry.CodeUpsertFailed, "%s", ae.Error()).
			WithDetails(map[string]any{"aws_error_code": ae.Code, "operation": ae.Op}).
			Suggest("Check the role, bucket and region and the caller's AWS permissions.")
	case errors.As(err, &unreachable):
		return registry.Errorf(registry.CodeUpsertFailed, "%s", unreachable.Error()).
			WithDetails(map[string]any{"service": unreachable.Service, "operation": unreachable.Op}).
			Suggest("The server could not connect to AWS; retry later, or ask the operator to check its network, aws.region and aws.endpoint.")
	case errors.As(err, &mc):
		return registry.Errorf(registry.CodeValidationFailed, "%s", mc.Error()).
			WithDetails(map[string]any{"missing_code": mc.Steps}).
			Suggest("Send each listed script in files (or the workspace), or point source_dir and the entry point at code you have; steps.code shows a built-in step's code to start from.",
				"steps.code", "author.check_script")
	case errors.As(err, &be):
		return registry.Errorf(registry.CodeConfigInvalid, "%s", be.Error()).
			WithDetails(map[string]any{"node": be.Node, "step": be.StepName}).
			Suggest("Fix the node's config; config.field_info lists its fields.", "config.field_info", "compile.validate")
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return err
	}
	return registry.Errorf(registry.CodeToolError, "compile failed: %v", err)
}

// codeNext points at steps.code when a compile ran a step type's
// built-in code in place of a script the config names (once per step
// type), or found a step with no code at all: the engine states the
// fact, the tool that shows the code is named here.
func codeNext(standIns []compiler.StandIn, missing []compiler.MissingCode) []registry.NextStep {
	var next []registry.NextStep
	seen := map[string]bool{}
	for _, s := range standIns {
		if seen[s.StepType] {
			continue
		}
		seen[s.StepType] = true
		next = append(next, registry.NextStep{Tool: "steps.code", When: "the built-in code stands in for " + s.Script,
			Why: "shows the code " + s.StepType + " runs in its place", ArgsHint: map[string]any{"step_type": s.StepType}})
	}
	if len(missing) > 0 {
		next = append(next, registry.NextStep{Tool: "steps.code", When: "a step has no code", Why: "shows a built-in script to start from",
			ArgsHint: map[string]any{"step_type": "TabularPreprocessing"}})
	}
	return next
}

// progress forwards engine progress to the registry's reporter.
func progress(ctx context.Context) compiler.Option { return compiler.WithProgress(progressTo(ctx)) }

// definitionValue is the compiled definition as JSON data, its numbers
// kept as written.
func definitionValue(res *compiler.Result) any {
	var def any
	dec := json.NewDecoder(bytes.NewReader(res.JSON))
	dec.UseNumber()
	_ = dec.Decode(&def)
	return def
}

type compileValidateIn struct {
	compileSource
	unusedRoleArg
}

func compileValidateTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "compile.validate",
		Description: "Check that a DAG and its config.json fit together (without deploying anything): every node has a config " +
			"(matched with a confidence), an interface and a builder; required inputs are wired; every step builds. Never fails: problems are in the result.",
		When:     "Before compiling.",
		Examples: []string{`compile.validate {` + inlineCompileArgs + `}`},
		Tags:     []string{registry.PhaseValidator},
	}, d.compileValidate)
}

func (d *Deps) compileValidate(ctx context.Context, in compileValidateIn) (registry.Reply[compiler.ValidationResult], error) {
	var reply registry.Reply[compiler.ValidationResult]
	in.unusedRoleArg.warn(reply.Warn)
	// Invalid config values are findings of their nodes, not a failure.
	input, _, stepWarns, err := d.compileInputWith(ctx, in.compileSource, "", d.configForCheck)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	v := compiler.Validate(ctx, input)
	reply.Warn(v.Warnings...)
	if v.IsValid {
		reply.Next(registry.NextStep{Tool: "compile.with_report", When: "validation passed", Why: "get the definition and report",
			ArgsHint: in.compileSource.resend()})
	} else {
		reply.Next(registry.NextStep{Tool: "compile.preview", When: "nodes did not resolve", Why: "see node → config matching"},
			registry.NextStep{Tool: "catalog.search", When: "a step type is unknown", Why: "find the right step type"})
	}
	reply.Next(codeNext(v.StandIns, v.MissingCode)...)
	reply.Out = v
	return reply, nil
}

type compilePreviewIn struct {
	compileSource
	unusedRoleArg
}

func compilePreviewTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "compile.preview",
		Description: "Show how each DAG node resolves to a config (class, method, confidence, reasons) and which builder " +
			"builds it, with renaming recommendations for weak matches, and (when every node resolves) the findings compile.validate " +
			"reports: settings SageMaker would reject or that would misbehave at run time. Deploys nothing.",
		When:     "Before compiling: node → config → builder.",
		Examples: []string{`compile.preview {` + inlineCompileArgs + `}`},
		Tags:     []string{registry.PhasePlanner, registry.PhaseValidator},
	}, d.compilePreview)
}

func (d *Deps) compilePreview(ctx context.Context, in compilePreviewIn) (registry.Reply[compiler.Preview], error) {
	var reply registry.Reply[compiler.Preview]
	in.unusedRoleArg.warn(reply.Warn)
	input, _, stepWarns, err := d.compileInput(ctx, in.compileSource, "")
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	p, err := compiler.PreviewResolution(ctx, input)
	if err != nil {
		return reply, err
	}
	reply.Warn(p.Recommendations...)
	reply.Next(registry.NextStep{Tool: "compile.validate", When: "the mapping looks right", Why: "check inputs and builds"})
	reply.Next(codeNext(p.StandIns, p.MissingCode)...)
	reply.Out = p
	return reply, nil
}

type compileWithReportIn struct {
	compileSource
	PipelineName pipelineNameArg `json:"pipeline_name,omitempty"`
	unusedRoleArg
}

// compileReport is the compile.with_report payload.
type compileReport struct {
	Artifacts         []compiler.Artifact         `json:"artifacts"`
	AvgConfidence     float64                     `json:"avg_confidence"`
	Definition        any                         `json:"definition"`
	Manifest          map[string]string           `json:"manifest"`
	Metadata          compileReportMeta           `json:"metadata"`
	PipelineName      string                      `json:"pipeline_name"`
	ResolutionDetails map[string]resolutionDetail `json:"resolution_details"`
	StepCount         int                         `json:"step_count"`
	Steps             []compiler.StepReport       `json:"steps"`
	Summary           string                      `json:"summary"`
	Warnings          []string                    `json:"warnings"`
}

type compileReportMeta struct {
	ConfigPath       string           `json:"config_path"`
	DAGEdges         int              `json:"dag_edges"`
	DAGNodes         int              `json:"dag_nodes"`
	StepCatalogStats stepCatalogStats `json:"step_catalog_stats"`
}

type stepCatalogStats struct {
	SupportedStepTypes int `json:"supported_step_types"`
}

// resolutionDetail is how one node resolved, in the reference's words.
type resolutionDetail struct {
	BuilderType string  `json:"builder_type"`
	Confidence  float64 `json:"confidence"`
	ConfigType  string  `json:"config_type"`
	Method      string  `json:"method"`
}

func compileWithReportTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "compile.with_report",
		Description: "Compile without deploying and return the report (per step: node, config, builder, confidence, wired inputs), " +
			"the full pipeline definition JSON and the manifest of code artifacts (local file → content-addressed S3 URI).",
		When:     "You want the compiled definition.",
		Examples: []string{`compile.with_report {` + inlineCompileArgs + `}`},
		Tags:     []string{registry.PhaseProgrammer},
	}, d.compileWithReport)
}

func (d *Deps) compileWithReport(ctx context.Context, in compileWithReportIn) (registry.Reply[compileReport], error) {
	var reply registry.Reply[compileReport]
	in.unusedRoleArg.warn(reply.Warn)
	input, _, stepWarns, err := d.compileInput(ctx, in.compileSource, in.PipelineName)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	res, err := compiler.Compile(ctx, input, progress(ctx))
	if err != nil {
		return reply, compileError(err)
	}
	details := map[string]resolutionDetail{}
	sum := 0.0
	var warns []string
	for _, s := range res.Steps {
		details[s.Node] = resolutionDetail{ConfigType: s.ConfigClass, BuilderType: s.Builder, Confidence: s.Confidence, Method: s.Method}
		sum += s.Confidence
		if s.Confidence < compiler.LowConfidence {
			warns = append(warns, fmt.Sprintf("Low confidence resolution for node '%s': %.2f", s.Node, s.Confidence))
		}
	}
	avg := sum / float64(len(res.Steps))
	warns = append(warns, res.Warnings...)
	reply.Warn(warns...)
	reply.WithMeta("step_count", len(res.Steps))
	deploy := in.compileSource.resend()
	deploy["upsert"] = true
	reply.Next(registry.NextStep{Tool: "compile.dag", When: "the definition is right and deploying is allowed", Why: "upsert it to SageMaker",
		ArgsHint: deploy},
		registry.NextStep{Tool: "execdoc.generate", When: "you run it with an execution document", Why: "fill the per-step configs",
			ArgsHint: in.compileSource.resend()})
	reply.Next(codeNext(res.StandIns, nil)...)
	reply.Out = compileReport{
		PipelineName: res.PipelineName, StepCount: len(res.Steps), Steps: nonNilList(res.Steps), ResolutionDetails: details,
		AvgConfidence: avg, Warnings: nonNilList(warns),
		Metadata: compileReportMeta{DAGNodes: len(input.DAG.Nodes), DAGEdges: len(input.DAG.Edges), ConfigPath: string(in.ConfigFile),
			StepCatalogStats: stepCatalogStats{SupportedStepTypes: len(input.Catalog.Names())}},
		Summary:    fmt.Sprintf("Pipeline '%s' compiled with %d steps (avg confidence: %.2f)", res.PipelineName, len(res.Steps), avg),
		Definition: definitionValue(res), Artifacts: nonNilList(res.Artifacts), Manifest: res.Manifest(),
	}
	return reply, nil
}

type compileNameIn struct {
	Base     string `json:"base,omitempty" jsonschema:"Name base, e.g. the config's pipeline_name." schema:"minLength=1,maxLength=512"`
	DAG      string `json:"dag,omitempty" jsonschema:"The DAG's name or id (its metadata.name, a shared DAG id, or its file path without .json and with / as -), as the compile tools put it in the name." schema:"minLength=1,maxLength=256"`
	Version  string `json:"version,omitempty" jsonschema:"Version (default 1.0)." schema:"minLength=1,maxLength=64"`
	Sanitize string `json:"sanitize,omitempty" jsonschema:"A name to sanitise." schema:"minLength=1,maxLength=1024"`
}

// compileNameOut has the generated name only for a base and the sanitised
// one only for a name to sanitise.
type compileNameOut struct {
	Generated        string `json:"generated,omitempty"`
	GeneratedIsValid *bool  `json:"generated_is_valid,omitempty"`
	Sanitized        string `json:"sanitized,omitempty"`
	SanitizedIsValid *bool  `json:"sanitized_is_valid,omitempty"`
}

func compileNameTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "compile.name",
		Description: "Generate a pipeline name (sanitised \"<base>-<dag>-<version>-pipeline\", or \"<base>-<version>-pipeline\" without dag) and/or sanitise a name: \".\" and \"_\" become \"-\", " +
			"other characters outside [a-zA-Z0-9-] are dropped, at most 255 characters; reports whether each result is valid. " +
			"The compile tools name a pipeline this way by default: base is the config's pipeline_name and dag the DAG's metadata.name " +
			"(else its file path without .json, \"/\" as \"-\", a file named dag.json taking its folder's path; an unnamed inline DAG gets dag-<hash of its nodes and edges>), so DAGs compiled with one " +
			"config get distinct pipelines. A pipeline_name_override in the config, or a pipeline_name argument, replaces the generated name.",
		When: "You need a valid SageMaker pipeline name.",
		Examples: []string{`compile.name {"base": "jdoe-fraud-xgboost-NA", "dag": "xgboost_complete_e2e", "version": "1.0.0"}  # jdoe-fraud-xgboost-NA-xgboost-complete-e2e-1-0-0-pipeline`,
			`compile.name {"base": "xgboost-training", "version": "1.0"}  # xgboost-training-1-0-pipeline`,
			`compile.name {"sanitize": "My Pipeline!! v3"}  # MyPipelinev3`},
		Tags: []string{registry.PhaseProgrammer},
	}, registry.Plain(compileName))
}

func compileName(_ context.Context, in compileNameIn) (compileNameOut, error) {
	if in.DAG != "" && in.Base == "" {
		return compileNameOut{}, registry.Errorf(registry.CodeInvalidInput, "dag names a generated name's DAG part: give base too")
	}
	if in.Base == "" && in.Sanitize == "" {
		return compileNameOut{}, registry.Errorf(registry.CodeInvalidInput, "give base (to generate a name) or sanitize (to clean one)")
	}
	var out compileNameOut
	if in.Base != "" {
		v := in.Version
		if v == "" {
			v = "1.0"
		}
		out.Generated = sagemaker.DAGPipelineName(in.Base, in.DAG, v)
		out.GeneratedIsValid = ptr(sagemaker.ValidPipelineName(out.Generated))
	}
	if in.Sanitize != "" {
		out.Sanitized = sagemaker.SanitizePipelineName(in.Sanitize)
		out.SanitizedIsValid = ptr(sagemaker.ValidPipelineName(out.Sanitized))
	}
	return out, nil
}

type compileSingleNodeIn struct {
	compileSource
	TargetNode     string          `json:"target_node" jsonschema:"DAG node to compile." schema:"minLength=1,maxLength=256"`
	ManualInputs   manualInputs    `json:"manual_inputs" jsonschema:"Dependency name → s3:// URI."`
	PipelineName   pipelineNameArg `json:"pipeline_name,omitempty"`
	ValidateInputs *bool           `json:"validate_inputs,omitempty" jsonschema:"Check the node and every URI first (default true)."`
	unusedRoleArg
}

type compileSingleNodeOut struct {
	Artifacts    []compiler.Artifact `json:"artifacts"`
	Definition   any                 `json:"definition"`
	PipelineName string              `json:"pipeline_name"`
	StepCount    int                 `json:"step_count"`
	TargetNode   string              `json:"target_node"`
}

func compileSingleNodeTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "compile.single_node",
		Description: "Compile one DAG node as its own pipeline (its inputs given as S3 URIs: dependency → s3://bucket/key). " +
			"Returns the definition; deploys nothing.",
		When: "To run or debug one step alone.",
		Examples: []string{`compile.single_node {` + inlineCompileArgs + `, ` +
			`"target_node": "XGBoostTraining", "manual_inputs": {"input_path": "s3://my-bucket/run/processed"}}`},
		Tags: []string{registry.PhaseProgrammer},
	}, d.compileSingleNode)
}

func (d *Deps) compileSingleNode(ctx context.Context, in compileSingleNodeIn) (registry.Reply[compileSingleNodeOut], error) {
	var reply registry.Reply[compileSingleNodeOut]
	in.unusedRoleArg.warn(reply.Warn)
	input, _, stepWarns, err := d.compileInput(ctx, in.compileSource, in.PipelineName)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	validate := in.ValidateInputs == nil || *in.ValidateInputs
	res, err := compiler.CompileSingleNode(ctx, input, in.TargetNode, in.ManualInputs, validate, progress(ctx))
	if err != nil {
		return reply, compileError(err)
	}
	reply.Warn("build-only: single-node pipeline compiled but not started/upserted")
	reply.Warn(res.Warnings...)
	reply.Next(codeNext(res.StandIns, nil)...)
	reply.Out = compileSingleNodeOut{PipelineName: res.PipelineName, TargetNode: in.TargetNode, StepCount: len(res.Steps),
		Definition: definitionValue(res), Artifacts: nonNilList(res.Artifacts)}
	return reply, nil
}

type compileDAGIn struct {
	compileSource
	PipelineName pipelineNameArg `json:"pipeline_name,omitempty"`
	Role         roleARNArg      `json:"role,omitempty"`
	Upsert       bool            `json:"upsert,omitempty" jsonschema:"Upload artifacts and create/update the pipeline in SageMaker (default false)."`
}

// compileDAGOut is the compile.dag payload; the upsert report's keys are
// present only after an upsert.
type compileDAGOut struct {
	Artifacts    []compiler.Artifact `json:"artifacts"`
	Created      *bool               `json:"created,omitempty"`
	Definition   any                 `json:"definition"`
	DefinitionS3 string              `json:"definition_s3,omitempty"`
	Existing     *[]string           `json:"existing,omitempty"`
	PipelineARN  *string             `json:"pipeline_arn,omitempty"`
	PipelineName string              `json:"pipeline_name"`
	StepCount    int                 `json:"step_count"`
	Uploaded     *[]string           `json:"uploaded,omitempty"`
	Upserted     bool                `json:"upserted"`
}

func compileDAGTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "compile.dag",
		Description: "Compile the DAG into a SageMaker pipeline definition and return it. With upsert: true, uploads each code " +
			"artifact to S3 (once: keys are content hashes) and creates the pipeline in SageMaker, or updates it when it exists.",
		When: "You want to deploy the pipeline to SageMaker (upsert) or get its definition.",
		Examples: []string{`compile.dag {` + inlineCompileArgs + `}  # build only`,
			`compile.dag {` + inlineCompileArgs + `, "upsert": true}  # deploy`},
		Tags:        []string{registry.PhaseProgrammer},
		Destructive: true,
		Network:     true,
		Alternative: &registry.Alternative{Tool: "compile.with_report", How: "it returns the pipeline definition, the report and the artifact manifest without deploying anything."},
	}, d.compileDAG)
}

func (d *Deps) compileDAG(ctx context.Context, in compileDAGIn) (registry.Reply[compileDAGOut], error) {
	var reply registry.Reply[compileDAGOut]
	input, _, stepWarns, err := d.compileInput(ctx, in.compileSource, in.PipelineName)
	if err != nil {
		return reply, err
	}
	reply.Warn(stepWarns...)
	res, err := compiler.Compile(ctx, input, progress(ctx))
	if err != nil {
		return reply, compileError(err)
	}
	out := compileDAGOut{PipelineName: res.PipelineName, StepCount: len(res.Steps), Definition: definitionValue(res), Artifacts: nonNilList(res.Artifacts)}
	if !in.Upsert {
		reply.Warn("build-only: pipeline definition compiled but not upserted to SageMaker")
		reply.Warn(res.Warnings...)
		reply.Next(codeNext(res.StandIns, nil)...)
		reply.WithMeta("upserted", false)
		reply.Out = out
		return reply, nil
	}
	rep, err := d.upsert(ctx, res, string(in.Role))
	if err != nil {
		return reply, err
	}
	out.Upserted, out.PipelineName, out.PipelineARN, out.Created = true, rep.PipelineName, &rep.PipelineARN, &rep.Created
	out.Uploaded, out.Existing, out.DefinitionS3 = &rep.Uploaded, &rep.Existing, rep.DefinitionS3
	reply.Warn(res.Warnings...)
	reply.Next(codeNext(res.StandIns, nil)...)
	reply.WithMeta("upserted", true)
	reply.Out = out
	return reply, nil
}

// awsClient is the S3 and SageMaker client the AWS options configure, in
// region.
func (d *Deps) awsClient(ctx context.Context, region string) (*sagemaker.Client, error) {
	return sagemaker.NewClient(ctx, sagemaker.ClientOptions{Region: region,
		S3Endpoint:        cmp.Or(d.Opts.AWSS3Endpoint, d.Opts.AWSEndpoint),
		SageMakerEndpoint: cmp.Or(d.Opts.AWSSageMakerEndpoint, d.Opts.AWSEndpoint)})
}

// upsert deploys a compiled pipeline to SageMaker as role (default: the
// configs' role).
func (d *Deps) upsert(ctx context.Context, res *compiler.Result, role string) (*compiler.UpsertReport, error) {
	if role == "" && res.Role == "" {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'role' is required to upsert a pipeline to SageMaker")
	}
	client, err := d.awsClient(ctx, cmp.Or(d.Opts.AWSRegion, res.Region))
	if err != nil {
		return nil, registry.Errorf(registry.CodeUpsertFailed, "AWS client: %v", err)
	}
	rep, err := compiler.Upsert(ctx, client, res, role, progress(ctx))
	if err != nil {
		return nil, compileError(err)
	}
	return rep, nil
}
