package handlers

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/strategies"
	"github.com/cursus-dev/cursus/registry"
)

func stepsNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog is not loaded")
	}
	return registry.Namespace{
		Name:        "steps",
		Description: "Container-level view of one step: paths, channels, property references and construction patterns; its .step.yaml text and built-in code, and the JSON Schemas of the .step.yaml and config.json formats.",
		Tools: []registry.ToolDef{
			stepsIOTool(d),
			stepsPatternsTool(d),
			stepsSourceTool(d),
			stepsCodeTool(d),
			stepsFormatTool(d),
		},
	}, nil
}

func stepsIOTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "steps.io",
		Description: "Inputs and outputs of a step (joined with its script contract): container paths, required flags, types, " +
			"training channels, property paths and the runtime property reference ({\"Get\": \"Steps.<name>.<path>\"}) a consumer receives.",
		When: "You write a step script or wire two steps by hand.",
		Examples: []string{
			`steps.io {"step_name": "XGBoostTraining"}  # channels train/val/test`,
			`steps.io {"step_name": "TabularPreprocessing", "job_type": "training"}`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.stepsIO)
}

func (d *Deps) stepsIO(ctx context.Context, in stepIn) (registry.Reply[steps.IOView], error) {
	var reply registry.Reply[steps.IOView]
	iface, r, warnings, err := d.requestedStep(ctx, in)
	if err != nil {
		return reply, err
	}
	reply.WithMeta("step_name", r.Node)
	reply.Warn(warnings...)
	reply.Next(registry.NextStep{Tool: "steps.patterns", When: "You also need the construction details.", Why: "Shows handler, compute and output paths.",
		ArgsHint: map[string]any{"step_name": iface.StepType}})
	reply.Out = steps.IO(iface)
	return reply, nil
}

func stepsPatternsTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "steps.patterns",
		Description: "How a step is built, axis by axis: routing strategy and handler, compute class, environment variables, " +
			"job arguments, input deviations and output path pattern, plus build-time and runtime dependencies.",
		When:     "What the compiler will do with a step.",
		Examples: []string{`steps.patterns {"step_name": "TabularPreprocessing", "job_type": "calibration"}`},
		Tags:     []string{registry.PhasePlanner},
	}, d.stepsPatterns)
}

func (d *Deps) stepsPatterns(ctx context.Context, in stepIn) (registry.Reply[strategies.PatternsView], error) {
	var reply registry.Reply[strategies.PatternsView]
	iface, r, warnings, err := d.requestedStep(ctx, in)
	if err != nil {
		return reply, err
	}
	v := strategies.Default().Describe(iface)
	reply.WithMeta("step_name", r.Node)
	reply.Warn(warnings...)
	reply.Next(registry.NextStep{Tool: "strategies.show", When: "You want the strategy's knobs.", Why: "Lists every knob with its default.",
		ArgsHint: map[string]any{"name": v.Patterns.CreateStep.Name, "axis": v.Patterns.CreateStep.Axis}})
	reply.Out = v
	return reply, nil
}

type stepsSourceOut struct {
	StepType string `json:"step_type"`
	// Source is where the interface comes from: builtin:<file>, a file of
	// a step directory, or step_types[<i>].
	Source string `json:"source"`
	YAML   string `json:"yaml"`
}

func stepsSourceTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "steps.source",
		Description: "The .step.yaml text of a step type (as its file is written): a built-in one, one from an operator's step directory, " +
			"or one sent in step_types. Copy it as an exemplar for a new step type; steps.format gives the format's JSON Schema.",
		When: "To start a new step from an interface file.",
		Examples: []string{
			`steps.source {"step_name": "XGBoostTraining"}`,
			`steps.source {"step_name": "TabularPreprocessing"}  # a processing step with job-type variants`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.stepsSource)
}

func (d *Deps) stepsSource(ctx context.Context, in stepNameIn) (registry.Reply[stepsSourceOut], error) {
	var reply registry.Reply[stepsSourceOut]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	iface, r, text, err := cv.stepSource(string(in.StepName))
	if err != nil {
		return reply, err
	}
	reply.WithMeta("step_name", r.Node)
	reply.Next(registry.NextStep{Tool: "steps.format", When: "You change keys and want to know what each may hold.", Why: "The .step.yaml format as a JSON Schema.",
		ArgsHint: map[string]any{"format": formatStepYAML}},
		registry.NextStep{Tool: "validate.step_interface", When: "You wrote your own version.", Why: "Checks it as step_types are checked.",
			ArgsHint: map[string]any{"step_types": []string{"<your .step.yaml text>"}}})
	reply.Out = stepsSourceOut{StepType: iface.StepType, Source: iface.Source, YAML: string(text)}
	return reply, nil
}

// stepSource is the step type name resolves to and its .step.yaml text,
// as steps.source and the cursus://steps resources serve it.
func (v *catalogView) stepSource(name string) (*steps.Interface, steps.Resolution, []byte, error) {
	iface, r, _, err := v.lookupStep(name, "")
	if err != nil {
		return nil, r, nil, err
	}
	text := iface.Text()
	if text == nil {
		return nil, r, nil, registry.Errorf(registry.CodeNotFound, "step '%s' has no interface file text", iface.StepType)
	}
	return iface, r, text, nil
}

type stepsCodeOut struct {
	StepType string `json:"step_type"`
	// Folder is the code's manifest name in a compile: builtin:<folder>.
	Folder     string          `json:"folder"`
	EntryPoint string          `json:"entry_point"`
	Files      []stepcode.File `json:"files"`
	// Override says how a caller's version replaces it.
	Override string `json:"override"`
}

type stepsCodeIn struct {
	StepType stepTypeName `json:"step_type" jsonschema:"Built-in step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training)."`
}

func stepsCodeTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "steps.code",
		Description: "The built-in code of a step type: each file of its folder (path, text) and the entry point. A compile without your script ships it; send your version in files to replace it.",
		When:        "To read or adapt a step's script.",
		Examples: []string{
			`steps.code {"step_type": "TabularPreprocessing"}`,
			`steps.code {"step_type": "XGBoostTraining"}  # script, helper module, serving handler`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.stepsCode)
}

func (d *Deps) stepsCode(ctx context.Context, in stepsCodeIn) (registry.Reply[stepsCodeOut], error) {
	var reply registry.Reply[stepsCodeOut]
	out, err := d.catalogs(ctx).stepCode(string(in.StepType))
	if err != nil {
		return reply, err
	}
	reply.WithMeta("file_count", len(out.Files))
	reply.Next(registry.NextStep{Tool: "steps.io", When: "You adapt the script.", Why: "The container paths, channels and outputs it must honour.",
		ArgsHint: map[string]any{"step_name": out.StepType}})
	reply.Out = out
	return reply, nil
}

// stepCode is the built-in code of the step type name resolves to, as
// steps.code and the cursus://steps/{step_type}/code resource serve it.
func (v *catalogView) stepCode(name string) (stepsCodeOut, error) {
	iface, _, _, err := v.lookupStep(name, "")
	if err != nil {
		return stepsCodeOut{}, err
	}
	dir, ok := stepcode.Dir(iface.StepType)
	if !ok {
		if iface.Contract.EntryPoint == "" {
			return stepsCodeOut{}, registry.Errorf(registry.CodeNotFound, "%s has no built-in code: its %s step runs no script of its own",
				iface.StepType, iface.Registry.SageMakerStepType)
		}
		return stepsCodeOut{}, registry.Errorf(registry.CodeNotFound, "%s has no built-in code: send %s in files when you compile it",
			iface.StepType, iface.Contract.EntryPoint).Suggest("Start from a built-in step's code.", "steps.code")
	}
	files, err := stepcode.Files(dir)
	if err != nil {
		return stepsCodeOut{}, err
	}
	return stepsCodeOut{StepType: iface.StepType, Folder: compiler.BuiltinPrefix + dir, EntryPoint: iface.Contract.EntryPoint, Files: files,
		Override: "Send your version in files under the step's source_dir (at " + iface.Contract.EntryPoint +
			" when it has none); the compile then ships yours for this step and the built-in code for the others."}, nil
}

// The formats steps.format describes.
const (
	formatStepYAML   = "step_yaml"
	formatConfigJSON = "config_json"
)

// formatName is steps.format's format argument.
type formatName string

func (formatName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{formatStepYAML, formatConfigJSON}}
}

type stepsFormatIn struct {
	Format formatName `json:"format" jsonschema:"step_yaml (a .step.yaml step interface) or config_json (config.json, Cursus layout)."`
}

type stepsFormatOut struct {
	Format string         `json:"format"`
	Schema map[string]any `json:"schema"`
	// Exemplar says where a complete example of the format comes from.
	Exemplar string `json:"exemplar"`
}

func stepsFormatTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "steps.format",
		Description: "The JSON Schema (draft 2020-12) of a format callers write: step_yaml is a .step.yaml step interface " +
			"(as JSON: every key, what it holds, closed sets), config_json is config.json in the Cursus layout.",
		When: "You write a .step.yaml or a config.json by hand.",
		Examples: []string{
			`steps.format {"format": "step_yaml"}`,
			`steps.format {"format": "config_json"}`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.stepsFormat)
}

func (d *Deps) stepsFormat(ctx context.Context, in stepsFormatIn) (registry.Reply[stepsFormatOut], error) {
	var reply registry.Reply[stepsFormatOut]
	schema, err := formatSchema(string(in.Format))
	if err != nil {
		return reply, err
	}
	if in.Format == formatStepYAML {
		reply.Next(registry.NextStep{Tool: "steps.source", When: "You want a complete file to start from.", Why: "The .step.yaml of an existing step type.",
			ArgsHint: map[string]any{"step_name": "TabularPreprocessing"}})
		reply.Out = stepsFormatOut{Format: string(in.Format), Schema: schema,
			Exemplar: `steps.source {"step_name": "TabularPreprocessing"} returns a built-in file; send yours in step_types.`}
		return reply, nil
	}
	reply.Next(registry.NextStep{Tool: "config.requirements", When: "You have a DAG.", Why: "Lists every field each node needs, as a template."})
	reply.Out = stepsFormatOut{Format: string(in.Format), Schema: schema,
		Exemplar: "config.merge_save builds this document from plain values (base, per_node) and returns it."}
	return reply, nil
}

// formatSchema is the JSON Schema of a format (formatStepYAML or
// formatConfigJSON), as steps.format and the cursus://schemas resources
// serve it.
func formatSchema(format string) (map[string]any, error) {
	if format == formatStepYAML {
		return steps.InterfaceSchema(), nil
	}
	var schema map[string]any
	if err := json.Unmarshal(config.FileSchema(), &schema); err != nil {
		return nil, err
	}
	return schema, nil
}
