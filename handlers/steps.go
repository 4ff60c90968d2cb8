package handlers

import (
	"context"
	"errors"

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
		Description: "Container-level view of one step: paths, channels, property references and construction patterns.",
		Tools: []registry.ToolDef{
			registry.Define(registry.ToolDef{
				Name: "steps.io",
				Description: "Inputs and outputs of a step joined with its script contract: container paths, required flags, types, " +
					"training channels, property paths and the runtime property reference ({\"Get\": \"Steps.<name>.<path>\"}) a consumer receives.",
				When: "You write or check a step script, or wire two steps by hand.",
				Examples: []string{
					`steps.io {"step_name": "XGBoostTraining"}  # channels train/val/test`,
					`steps.io {"step_name": "TabularPreprocessing", "job_type": "training"}`,
				},
				Tags: []string{registry.PhasePlanner},
			}, d.stepsIO),
			registry.Define(registry.ToolDef{
				Name: "steps.patterns",
				Description: "How a step is built, axis by axis: routing strategy and handler, compute class, environment variables, " +
					"job arguments, input deviations and output path pattern, plus build-time and runtime dependencies.",
				When:     "You want to know what the compiler will do with a step.",
				Examples: []string{`steps.patterns {"step_name": "TabularPreprocessing", "job_type": "calibration"}`},
				Tags:     []string{registry.PhasePlanner},
			}, d.stepsPatterns),
		},
	}, nil
}

func (d *Deps) stepsIO(ctx context.Context, in stepIn) (steps.IOView, error) {
	iface, r, warnings, err := d.requestedStep(ctx, in)
	if err != nil {
		return steps.IOView{}, err
	}
	registry.Meta(ctx, "step_name", r.Node)
	registry.Warn(ctx, warnings...)
	registry.Next(ctx, registry.NextStep{Tool: "steps.patterns", When: "You also need the construction details.", Why: "Shows handler, compute and output paths.",
		ArgsHint: map[string]any{"step_name": iface.StepType}})
	return steps.IO(iface), nil
}

func (d *Deps) stepsPatterns(ctx context.Context, in stepIn) (strategies.PatternsView, error) {
	iface, r, warnings, err := d.requestedStep(ctx, in)
	if err != nil {
		return strategies.PatternsView{}, err
	}
	v := strategies.Default().Describe(iface)
	registry.Meta(ctx, "step_name", r.Node)
	registry.Warn(ctx, warnings...)
	registry.Next(ctx, registry.NextStep{Tool: "strategies.show", When: "You want the strategy's knobs.", Why: "Lists every knob with its default.",
		ArgsHint: map[string]any{"name": v.Patterns.CreateStep.Name, "axis": v.Patterns.CreateStep.Axis}})
	return v, nil
}
