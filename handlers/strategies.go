package handlers

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/strategies"
	"github.com/cursus-dev/cursus/registry"
)

// axisArg is a routing axis.
type axisArg string

func (axisArg) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{strategies.AxisSageMakerStepType, strategies.AxisStepAssembly}}
}

// strategyName is a strategy name: a SageMaker step type or a
// step_assembly value.
type strategyName string

func (strategyName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(64), Pattern: `^[A-Za-z][A-Za-z_]*$`}
}

func strategiesNamespace() (registry.Namespace, error) {
	return registry.Namespace{
		Name:        "strategies",
		Description: "The builder strategy library: how each SageMaker step type is constructed, and its knobs.",
		Tools: []registry.ToolDef{
			strategiesListAxesTool(),
			strategiesListTool(),
			strategiesShowTool(),
			strategiesForStepTypeTool(),
			strategiesKnobsTool(),
		},
	}, nil
}

type listAxesOut struct {
	Count int                   `json:"count"`
	Axes  []strategies.AxisInfo `json:"axes"`
}

func strategiesListAxesTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "strategies.list_axes", Description: "Routing axes and how many strategies each has.",
		When: "You want an overview of step routing.", Examples: []string{`strategies.list_axes {}`},
		Tags: []string{registry.PhasePlanner},
	}, registry.Plain(strategiesListAxes))
}

func strategiesListAxes(context.Context, struct{}) (listAxesOut, error) {
	axes := strategies.Default().Axes()
	return listAxesOut{Count: len(axes), Axes: axes}, nil
}

type strategiesListIn struct {
	Axis axisArg `json:"axis,omitempty" jsonschema:"Routing axis."`
}

type strategiesListOut struct {
	Axis       *string               `json:"axis"`
	Count      int                   `json:"count"`
	Strategies []strategies.Strategy `json:"strategies"`
}

func strategiesListTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "strategies.list", Description: "Every strategy descriptor (axis, name, verb, handler, routable, implemented, knobs, preset knobs), sorted by axis and name; non-routable rows included.",
		When: "You want to see all construction strategies.", Examples: []string{`strategies.list {}`, `strategies.list {"axis": "step_assembly"}`},
		Tags: []string{registry.PhasePlanner},
	}, registry.Plain(strategiesList))
}

func strategiesList(_ context.Context, in strategiesListIn) (strategiesListOut, error) {
	rows := strategies.Default().List(string(in.Axis))
	return strategiesListOut{Axis: nullable(string(in.Axis)), Count: len(rows), Strategies: rows}, nil
}

type strategiesShowIn struct {
	Name strategyName `json:"name" jsonschema:"Strategy name: a SageMaker step type (Training, …) or a step assembly (code, step_args, delegation)."`
	Axis axisArg      `json:"axis,omitempty" jsonschema:"Routing axis."`
}

func strategiesShowTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "strategies.show", Description: "One strategy descriptor by name (and axis when the name is ambiguous).",
		When: "You want the details of one strategy.", Examples: []string{`strategies.show {"name": "code", "axis": "step_assembly"}`, `strategies.show {"name": "Training"}`},
		Tags: []string{registry.PhasePlanner},
	}, registry.Plain(strategiesShow))
}

func strategiesShow(_ context.Context, in strategiesShowIn) (strategies.Strategy, error) {
	lib := strategies.Default()
	name, axis := string(in.Name), string(in.Axis)
	found := lib.Find(name, axis)
	switch len(found) {
	case 0:
		msg := "no strategy named '" + name + "'"
		if axis != "" {
			msg += " on axis '" + axis + "'"
		}
		return strategies.Strategy{}, registry.Errorf(registry.CodeNotFound, "%s", msg).
			WithDetails(map[string]any{"available": lib.Names()}).Suggest("Pick a name from strategies.list.", "strategies.list")
	case 1:
		return found[0], nil
	default:
		axes := make([]string, len(found))
		for i, s := range found {
			axes[i] = s.Axis
		}
		return strategies.Strategy{}, registry.Errorf(registry.CodeInvalidInput, "strategy name '%s' exists on several axes; give axis", name).
			WithDetails(map[string]any{"axes": axes})
	}
}

type forStepTypeIn struct {
	SMType   sagemakerStepType `json:"sagemaker_step_type" jsonschema:"SageMaker step type: Processing, Training, CreateModel, Transform, Tuning, RegisterModel, …"`
	Assembly string            `json:"step_assembly,omitempty" jsonschema:"Assembly pattern of a Processing step (default code)." schema:"enum=code|step_args|delegation"`
}

type forStepTypeOut struct {
	SageMakerStepType string              `json:"sagemaker_step_type"`
	StepAssembly      *string             `json:"step_assembly"`
	ResolvedAxis      string              `json:"resolved_axis"`
	ResolvedName      string              `json:"resolved_name"`
	Strategy          strategies.Strategy `json:"strategy"`
}

func strategiesForStepTypeTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "strategies.for_step_type",
		Description: "The builder strategy of a SageMaker step type (Processing routes on step_assembly, " +
			"default code; every other type on itself), with its knobs and presets.",
		When: "How a step type is built.",
		Examples: []string{
			`strategies.for_step_type {"sagemaker_step_type": "Processing", "step_assembly": "step_args"}`,
			`strategies.for_step_type {"sagemaker_step_type": "RegisterModel"}`,
		},
		Tags: []string{registry.PhasePlanner},
	}, strategiesForStepType)
}

func strategiesForStepType(ctx context.Context, in forStepTypeIn) (registry.Reply[forStepTypeOut], error) {
	var reply registry.Reply[forStepTypeOut]
	smType := string(in.SMType)
	s, axis, name, err := strategies.Default().ForStepType(smType, in.Assembly)
	if err != nil {
		return reply, registry.Errorf(registry.CodeNotFound, "%v", err).
			WithDetails(map[string]any{"sagemaker_step_type": smType, "step_assembly": nullable(in.Assembly)}).
			Suggest("See the routable strategies in strategies.list.", "strategies.list")
	}
	if !s.Implemented {
		reply.Warn(s.Note)
	}
	reply.Out = forStepTypeOut{SageMakerStepType: smType, StepAssembly: nullable(in.Assembly), ResolvedAxis: axis, ResolvedName: name, Strategy: s}
	return reply, nil
}

type knobsIn struct {
	Axis axisArg      `json:"axis" jsonschema:"Routing axis."`
	Name strategyName `json:"name" jsonschema:"Strategy name: a SageMaker step type (Training, …) or a step assembly (code, step_args, delegation)."`
}

type knobsOut struct {
	Axis        string            `json:"axis"`
	Name        string            `json:"name"`
	Count       int               `json:"count"`
	Knobs       []strategies.Knob `json:"knobs"`
	PresetKnobs map[string]any    `json:"preset_knobs"`
}

func strategiesKnobsTool() registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "strategies.knobs", Description: "The knobs of one routable strategy: name, type, default, required flag and meaning.",
		When: "You want to tune how a step is constructed.", Examples: []string{`strategies.knobs {"axis": "sagemaker_step_type", "name": "Training"}`},
		Tags: []string{registry.PhasePlanner},
	}, registry.Plain(strategiesKnobs))
}

func strategiesKnobs(_ context.Context, in knobsIn) (knobsOut, error) {
	s, err := strategies.Default().Resolve(string(in.Axis), string(in.Name))
	if err != nil {
		return knobsOut{}, registry.Errorf(registry.CodeNotFound, "%v", err).
			WithDetails(map[string]any{"axis": string(in.Axis), "name": string(in.Name)}).Suggest("See the routable strategies in strategies.list.", "strategies.list")
	}
	return knobsOut{Axis: s.Axis, Name: s.Name, Count: len(s.Knobs), Knobs: s.Knobs, PresetKnobs: s.PresetKnobs}, nil
}
