package handlers

import (
	"context"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/execdoc"
	"github.com/cursus-dev/cursus/registry"
)

// execdocArg is an execution document given as an argument.
type execdocArg map[string]any

func (execdocArg) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(10), Description: execdocShape}
}

const execdocShape = `Execution document: {"PIPELINE_STEP_CONFIGS": {step: {"STEP_TYPE": [...], "STEP_CONFIG": {...}}}, "PIPELINE_ADDITIONAL_PARAMS": {...}}.`

// execDocument is an execution document a tool answers with. It is the
// caller's document where one was given, so its shape is not enforced.
type execDocument map[string]any

func (execDocument) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: execdocShape}
}

// execdocStepNames is the compiled pipeline's step names.
type execdocStepNames []string

func (execdocStepNames) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", MinItems: ptr(1), MaxItems: ptr(1000), Items: &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(256)}}
}

func execdocNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog or config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "execdoc",
		Description: "Build, fill, check and merge execution documents keyed by the compiled pipeline's step names.",
		Tools: []registry.ToolDef{
			execdocTemplateTool(),
			execdocGenerateTool(d),
			execdocValidateTool(d),
			execdocMergeTool(),
		},
	}, nil
}

type execdocTemplateIn struct {
	StepNames execdocStepNames `json:"step_names" jsonschema:"Pipeline step names."`
}

func execdocTemplateTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "execdoc.template",
		Description: "An empty execution document (one entry per step name) (STEP_TYPE [\"PROCESSING_STEP\"], empty STEP_CONFIG).",
		When:        "You need a blank execution document.",
		Examples:    []string{`execdoc.template {"step_names": ["TabularPreprocessing-Training", "XGBoostTraining"]}`},
		Tags:        []string{registry.PhaseProgrammer},
	}, execdocTemplate)
}

func execdocTemplate(ctx context.Context, in execdocTemplateIn) (registry.Reply[execDocument], error) {
	var reply registry.Reply[execDocument]
	reply.WithMeta("step_count", len(in.StepNames))
	reply.Out = execdoc.Template(in.StepNames)
	return reply, nil
}

// execdocBound binds the DAG's nodes to their configs, in the step
// catalog of the call (returned too, with the warnings of the step types
// it sent).
func (d *Deps) execdocBound(ctx context.Context, src compileSource) ([]compiler.BoundNode, compiler.Catalog, int, []string, error) {
	in, f, stepWarns, err := d.compileInput(ctx, src, "")
	if err != nil {
		return nil, nil, 0, nil, err
	}
	bound, err := compiler.Bind(ctx, in)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, 0, nil, ctxErr
	}
	if err != nil {
		return nil, nil, 0, nil, compileError(err)
	}
	return bound, in.Catalog, len(f.Configs), stepWarns, nil
}

type execdocGenerateIn struct {
	compileSource
	ConfigPath        workspacePath `json:"config_path,omitempty" jsonschema:"Deprecated alias of config_file (the Cursus argument name); answers with a warning."`
	ExecutionDocument execdocArg    `json:"execution_document,omitempty"`
	unusedRoleArg
	ProjectRoot string `json:"project_root,omitempty" jsonschema:"Accepted for Cursus; unused (paths are inside the workspace)." schema:"maxLength=4096"`
	AnchorFile  string `json:"anchor_file,omitempty" jsonschema:"Accepted for Cursus; unused (paths are inside the workspace)." schema:"maxLength=4096"`
}

func execdocGenerateTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "execdoc.generate",
		Description: "Fill an execution document (for a DAG and its config.json): entries keyed by the compiled step names " +
			"(TabularPreprocessing-Training), data-loading and registration steps get their STEP_CONFIG from their configs. " +
			"Without execution_document a template for the DAG is used.",
		When:     "Before a run with an execution document.",
		Examples: []string{`execdoc.generate {` + inlineCompileArgs + `}`},
		Tags:     []string{registry.PhaseProgrammer},
	}, d.execdocGenerate)
}

func (d *Deps) execdocGenerate(ctx context.Context, in execdocGenerateIn) (registry.Reply[execDocument], error) {
	var reply registry.Reply[execDocument]
	in.unusedRoleArg.warn(reply.Warn)
	warnUnused(reply.Warn, "project_root", in.ProjectRoot != "", "config_file, dag_file and the configs' source_dir are paths inside the workspace")
	warnUnused(reply.Warn, "anchor_file", in.AnchorFile != "", "config_file, dag_file and the configs' source_dir are paths inside the workspace")
	if err := deprecatedAlias(reply.Warn, &in.ConfigFile, in.ConfigPath, "config_file", "config_path"); err != nil {
		reply.Out = nil
		return reply, err
	}
	bound, cat, nConfigs, stepWarns, err := d.execdocBound(ctx, in.compileSource)
	if err != nil {
		reply.Out = nil
		return reply, err
	}
	reply.Warn(stepWarns...)
	out, st, warns := execdoc.Generate(bound, cat, in.ExecutionDocument, nConfigs)
	reply.Warn(warns...)
	reply.WithMeta("node_count", st.NodeCount)
	reply.WithMeta("config_count", st.ConfigCount)
	reply.WithMeta("step_count", st.StepCount)
	reply.WithMeta("steps_with_config", st.StepsWithConfig)
	reply.WithMeta("auto_template", st.AutoTemplate)
	reply.Next(registry.NextStep{Tool: "execdoc.validate", When: "before running", Why: "check every step is present with its type"})
	reply.Out = out
	return reply, nil
}

type execdocValidateIn struct {
	ExecutionDocument execdocArg `json:"execution_document"`
	compileSource
}

type execdocValidateOut struct {
	Issues []execdoc.Issue `json:"issues"`
	Valid  bool            `json:"valid"`
}

func execdocValidateTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "execdoc.validate",
		Description: "Check an execution document's structure; with a DAG and config.json also that every compiled step is present " +
			"with the right STEP_TYPE and no unknown step is listed. Never fails: {valid, issues}.",
		When:     "Before a run with an execution document.",
		Examples: []string{`execdoc.validate {"execution_document": {"PIPELINE_STEP_CONFIGS": {}}}`},
		Tags:     []string{registry.PhaseValidator},
	}, d.execdocValidate)
}

func (d *Deps) execdocValidate(ctx context.Context, in execdocValidateIn) (registry.Reply[execdocValidateOut], error) {
	var reply registry.Reply[execdocValidateOut]
	var expected []execdoc.ExpectedStep
	hasCfg, hasDAG := in.Config != nil || in.ConfigFile != "", in.DAG != nil || in.DAGFile != ""
	if hasCfg != hasDAG {
		return reply, registry.Errorf(registry.CodeInvalidInput, "give config or config_file together with dag or dag_file (or neither, for a structure check only)")
	}
	if hasCfg {
		bound, cat, _, stepWarns, err := d.execdocBound(ctx, in.compileSource)
		if err != nil {
			return reply, err
		}
		reply.Warn(stepWarns...)
		expected = execdoc.Expected(bound, cat)
	}
	// Validate inspects the document's dynamic type: pass the plain map.
	issues := execdoc.Validate(map[string]any(in.ExecutionDocument), expected)
	reply.WithMeta("issue_count", len(issues))
	reply.Out = execdocValidateOut{Valid: len(issues) == 0, Issues: nonNilList(issues)}
	return reply, nil
}

type execdocMergeIn struct {
	BaseDoc       execdocArg `json:"base_doc"`
	AdditionalDoc execdocArg `json:"additional_doc"`
}

func execdocMergeTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "execdoc.merge",
		Description: "Merge two execution documents: new steps are added; for an existing step STEP_CONFIG is updated key by key and other keys replaced.",
		When:        "You add hand-written parts to a generated document.",
		Examples:    []string{`execdoc.merge {"base_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_TYPE": ["PROCESSING_STEP"], "STEP_CONFIG": {}}}}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_CONFIG": {"k": "v"}}}}}`},
		Tags:        []string{registry.PhaseProgrammer},
	}, execdocMerge)
}

func execdocMerge(ctx context.Context, in execdocMergeIn) (registry.Reply[execDocument], error) {
	var reply registry.Reply[execDocument]
	out, err := execdoc.Merge(in.BaseDoc, in.AdditionalDoc)
	if err != nil {
		reply.Out = nil
		return reply, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	n := 0
	if e, ok := out[execdoc.StepConfigs].(map[string]any); ok {
		n = len(e)
	}
	reply.WithMeta("step_count", n)
	reply.Out = out
	return reply, nil
}
