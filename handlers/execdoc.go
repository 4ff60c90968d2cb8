package handlers

import (
	"context"
	"errors"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/execdoc"
	"github.com/cursus-dev/cursus/registry"
)

var execdocDocSchema = map[string]any{"type": "object", "maxProperties": 10,
	"description": `Execution document: {"PIPELINE_STEP_CONFIGS": {step: {"STEP_TYPE": [...], "STEP_CONFIG": {...}}}, "PIPELINE_ADDITIONAL_PARAMS": {...}}.`}

func execdocNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil || d.Config == nil {
		return registry.Namespace{}, errors.New("step catalog or config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "execdoc",
		Description: "Build, fill, check and merge execution documents keyed by the compiled pipeline's step names.",
		Tools: []registry.ToolDef{
			{
				Name:        "execdoc.template",
				Description: "An empty execution document with one entry per step name (STEP_TYPE [\"PROCESSING_STEP\"], empty STEP_CONFIG).",
				When:        "You need a blank execution document for known step names.",
				Examples:    []string{`execdoc.template {"step_names": ["TabularPreprocessing-Training", "XGBoostTraining"]}`},
				Tags:        []string{registry.PhaseProgrammer},
				Schema: registry.Object(map[string]any{"step_names": map[string]any{"type": "array", "minItems": 1, "maxItems": 1000,
					"items": map[string]any{"type": "string", "minLength": 1, "maxLength": 256}, "description": "Pipeline step names."}}, "step_names"),
				Handler: d.execdocTemplate,
			},
			{
				Name: "execdoc.generate",
				Description: "Fill an execution document for a DAG and its config.json: entries keyed by the compiled step names " +
					"(TabularPreprocessing-Training), data-loading and registration steps get their STEP_CONFIG from their configs. " +
					"Without execution_document a template for the DAG is used.",
				When:     "You run the compiled pipeline with an execution document.",
				Examples: []string{`execdoc.generate {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json"}`},
				Tags:     []string{registry.PhaseProgrammer},
				Schema: registry.Object(map[string]any{"config_file": configFileSchema,
					"config_path": map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "Alias of config_file (the Cursus argument name)."},
					"dag":         configDAGSchema, "dag_file": configDAGFileSchema, "execution_document": execdocDocSchema}),
				Handler: d.execdocGenerate,
			},
			{
				Name: "execdoc.validate",
				Description: "Check an execution document's structure; with a DAG and config.json also that every compiled step is present " +
					"with the right STEP_TYPE and no unknown step is listed. Never fails: {valid, issues}.",
				When:     "Before running a pipeline with an execution document.",
				Examples: []string{`execdoc.validate {"execution_document": {"PIPELINE_STEP_CONFIGS": {}}}`},
				Tags:     []string{registry.PhaseValidator},
				Schema: registry.Object(map[string]any{"execution_document": execdocDocSchema, "config_file": configFileSchema,
					"dag": configDAGSchema, "dag_file": configDAGFileSchema}, "execution_document"),
				Handler: d.execdocValidate,
			},
			{
				Name:        "execdoc.merge",
				Description: "Merge two execution documents: new steps are added; for an existing step STEP_CONFIG is updated key by key and other keys replaced.",
				When:        "You combine a generated document with hand-written additions.",
				Examples:    []string{`execdoc.merge {"base_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_TYPE": ["PROCESSING_STEP"], "STEP_CONFIG": {}}}}, "additional_doc": {"PIPELINE_STEP_CONFIGS": {"A": {"STEP_CONFIG": {"k": "v"}}}}}`},
				Tags:        []string{registry.PhaseProgrammer},
				Schema:      registry.Object(map[string]any{"base_doc": execdocDocSchema, "additional_doc": execdocDocSchema}, "base_doc", "additional_doc"),
				Handler:     d.execdocMerge,
			},
		},
	}, nil
}

func (d *Deps) execdocTemplate(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepNames []string `json:"step_names"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	return registry.OK(execdoc.Template(args.StepNames)).WithMeta("step_count", len(args.StepNames)), nil
}

// execdocBound binds the DAG's nodes to their configs.
func (d *Deps) execdocBound(args map[string]any) ([]compiler.BoundNode, int, error) {
	in, f, err := d.compileInput(args)
	if err != nil {
		return nil, 0, err
	}
	bound, err := compiler.Bind(in)
	if err != nil {
		return nil, 0, compileError(err)
	}
	return bound, len(f.Configs), nil
}

func (d *Deps) execdocGenerate(_ context.Context, req registry.Request) (*registry.Result, error) {
	args := req.Args
	if p, ok := args["config_path"].(string); ok {
		if _, both := args["config_file"]; both {
			return nil, registry.Errorf(registry.CodeInvalidInput, "give config_file or config_path, not both")
		}
		args = cloneArgs(args)
		args["config_file"] = p
	}
	if _, ok := args["config_file"]; !ok {
		return nil, registry.Errorf(registry.CodeInvalidInput, "config_file is required")
	}
	bound, nConfigs, err := d.execdocBound(args)
	if err != nil {
		return nil, err
	}
	doc, _ := args["execution_document"].(map[string]any)
	out, st, warns := execdoc.Generate(bound, d.Steps, doc, nConfigs)
	return registry.OK(toMap(out)).Warn(warns...).WithMeta("node_count", st.NodeCount).WithMeta("config_count", st.ConfigCount).
		WithMeta("step_count", st.StepCount).WithMeta("steps_with_config", st.StepsWithConfig).WithMeta("auto_template", st.AutoTemplate).
		Next(registry.NextStep{Tool: "execdoc.validate", When: "before running", Why: "check every step is present with its type"}), nil
}

func cloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	delete(out, "config_path")
	return out
}

func (d *Deps) execdocValidate(_ context.Context, req registry.Request) (*registry.Result, error) {
	var expected []execdoc.ExpectedStep
	_, hasCfg := req.Args["config_file"]
	_, hasDAG := req.Args["dag"]
	_, hasDAGFile := req.Args["dag_file"]
	if hasCfg != (hasDAG || hasDAGFile) {
		return nil, registry.Errorf(registry.CodeInvalidInput, "give config_file together with dag or dag_file (or neither, for a structure check only)")
	}
	if hasCfg {
		bound, _, err := d.execdocBound(req.Args)
		if err != nil {
			return nil, err
		}
		expected = execdoc.Expected(bound, d.Steps)
	}
	issues := execdoc.Validate(req.Args["execution_document"], expected)
	data := toMap(map[string]any{"valid": len(issues) == 0, "issues": nonNilList(issues)})
	return registry.OK(data).WithMeta("issue_count", len(issues)), nil
}

func (d *Deps) execdocMerge(_ context.Context, req registry.Request) (*registry.Result, error) {
	base, _ := req.Args["base_doc"].(map[string]any)
	add, _ := req.Args["additional_doc"].(map[string]any)
	out, err := execdoc.Merge(base, add)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	n := 0
	if e, ok := out[execdoc.StepConfigs].(map[string]any); ok {
		n = len(e)
	}
	return registry.OK(out).WithMeta("step_count", n), nil
}
