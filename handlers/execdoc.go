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

type execdocTemplateIn struct {
	StepNames execdocStepNames `json:"step_names" jsonschema:"Pipeline step names."`
}

type execdocGenerateIn struct {
	compileSource
	ConfigPath        workspacePath `json:"config_path,omitempty" jsonschema:"Deprecated alias of config_file (the Cursus argument name); answers with a warning."`
	ExecutionDocument execdocArg    `json:"execution_document,omitempty"`
	unusedRoleArg
	ProjectRoot string `json:"project_root,omitempty" jsonschema:"Accepted for Cursus; unused (paths are inside the workspace)." schema:"maxLength=4096"`
	AnchorFile  string `json:"anchor_file,omitempty" jsonschema:"Accepted for Cursus; unused (paths are inside the workspace)." schema:"maxLength=4096"`
}

type execdocValidateIn struct {
	ExecutionDocument execdocArg `json:"execution_document"`
	compileSource
}

type execdocMergeIn struct {
	BaseDoc       execdocArg `json:"base_doc"`
	AdditionalDoc execdocArg `json:"additional_doc"`
}

func execdocNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog or config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "execdoc",
		Description: "Build, fill, check and merge execution documents keyed by the compiled pipeline's step names.",
		Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name:        "execdoc.template",
				Description: "An empty execution document (one entry per step name) (STEP_TYPE [\"PROCESSING_STEP\"], empty STEP_CONFIG).",
				When:        "You need a blank execution document.",
				Examples:    []string{`execdoc.template {"step_names": ["TabularPreprocessing-Training", "XGBoostTraining"]}`},
				Tags:        []string{registry.PhaseProgrammer},
			}, registry.Plain(execdocTemplate)),
			registry.Define(registry.ToolDef{
				Name: "execdoc.generate",
				Description: "Fill an execution document (for a DAG and its config.json): entries keyed by the compiled step names " +
					"(TabularPreprocessing-Training), data-loading and registration steps get their STEP_CONFIG from their configs. " +
					"Without execution_document a template for the DAG is used.",
				When:     "Before a run with an execution document.",
				Examples: []string{`execdoc.generate {` + inlineCompileArgs + `}`},
				Tags:     []string{registry.PhaseProgrammer},
			}, registry.Plain(d.execdocGenerate)),
			registry.Define(registry.ToolDef{
				Name: "execdoc.validate",
				Description: "Check an execution document's structure; with a DAG and config.json also that every compiled step is present " +
					"with the right STEP_TYPE and no unknown step is listed. Never fails: {valid, issues}.",
				When:     "Before a run with an execution document.",
				Examples: []string{`execdoc.validate {"execution_document": {"PIPELINE_STEP_CONFIGS": {}}}`},
				Tags:     []string{registry.PhaseValidator},
			}, registry.Plain(d.execdocValidate)),
			registry.Define(registry.ToolDef{
				Name:        "execdoc.merge",
				Description: "Merge two execution documents: new steps are added; for an existing step STEP_CONFIG is updated key by key and other keys replaced.",
				When:        "You add hand-written parts to a generated document.",
				Examples:    []string{`execdoc.merge {"base_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_TYPE": ["PROCESSING_STEP"], "STEP_CONFIG": {}}}}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_CONFIG": {"k": "v"}}}}}`},
				Tags:        []string{registry.PhaseProgrammer},
			}, registry.Plain(execdocMerge)),
		},
	}, nil
}

func execdocTemplate(ctx context.Context, in execdocTemplateIn) (execDocument, error) {
	registry.Meta(ctx, "step_count", len(in.StepNames))
	return execdoc.Template(in.StepNames), nil
}

// execdocBound binds the DAG's nodes to their configs, in the step
// catalog of the call (returned too).
func (d *Deps) execdocBound(ctx context.Context, src compileSource) ([]compiler.BoundNode, compiler.Catalog, int, error) {
	in, f, err := d.compileInput(ctx, src, "")
	if err != nil {
		return nil, nil, 0, err
	}
	bound, err := compiler.Bind(ctx, in)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, nil, 0, ctxErr
	}
	if err != nil {
		return nil, nil, 0, compileError(err)
	}
	return bound, in.Catalog, len(f.Configs), nil
}

func (d *Deps) execdocGenerate(ctx context.Context, in execdocGenerateIn) (execDocument, error) {
	in.unusedRoleArg.warn(ctx)
	warnUnused(ctx, "project_root", in.ProjectRoot != "", "config_file, dag_file and the configs' source_dir are paths inside the workspace")
	warnUnused(ctx, "anchor_file", in.AnchorFile != "", "config_file, dag_file and the configs' source_dir are paths inside the workspace")
	if err := deprecatedAlias(ctx, &in.ConfigFile, in.ConfigPath, "config_file", "config_path"); err != nil {
		return nil, err
	}
	bound, cat, nConfigs, err := d.execdocBound(ctx, in.compileSource)
	if err != nil {
		return nil, err
	}
	out, st, warns := execdoc.Generate(bound, cat, in.ExecutionDocument, nConfigs)
	registry.Warn(ctx, warns...)
	registry.Meta(ctx, "node_count", st.NodeCount)
	registry.Meta(ctx, "config_count", st.ConfigCount)
	registry.Meta(ctx, "step_count", st.StepCount)
	registry.Meta(ctx, "steps_with_config", st.StepsWithConfig)
	registry.Meta(ctx, "auto_template", st.AutoTemplate)
	registry.Next(ctx, registry.NextStep{Tool: "execdoc.validate", When: "before running", Why: "check every step is present with its type"})
	return out, nil
}

type execdocValidateOut struct {
	Issues []execdoc.Issue `json:"issues"`
	Valid  bool            `json:"valid"`
}

func (d *Deps) execdocValidate(ctx context.Context, in execdocValidateIn) (execdocValidateOut, error) {
	var expected []execdoc.ExpectedStep
	hasCfg, hasDAG := in.Config != nil || in.ConfigFile != "", in.DAG != nil || in.DAGFile != ""
	if hasCfg != hasDAG {
		return execdocValidateOut{}, registry.Errorf(registry.CodeInvalidInput, "give config or config_file together with dag or dag_file (or neither, for a structure check only)")
	}
	if hasCfg {
		bound, cat, _, err := d.execdocBound(ctx, in.compileSource)
		if err != nil {
			return execdocValidateOut{}, err
		}
		expected = execdoc.Expected(bound, cat)
	}
	// Validate inspects the document's dynamic type: pass the plain map.
	issues := execdoc.Validate(map[string]any(in.ExecutionDocument), expected)
	registry.Meta(ctx, "issue_count", len(issues))
	return execdocValidateOut{Valid: len(issues) == 0, Issues: nonNilList(issues)}, nil
}

func execdocMerge(ctx context.Context, in execdocMergeIn) (execDocument, error) {
	out, err := execdoc.Merge(in.BaseDoc, in.AdditionalDoc)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	n := 0
	if e, ok := out[execdoc.StepConfigs].(map[string]any); ok {
		n = len(e)
	}
	registry.Meta(ctx, "step_count", n)
	return out, nil
}
