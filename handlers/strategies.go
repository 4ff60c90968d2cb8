package handlers

import (
	"context"

	"github.com/cursus-dev/cursus/engine/strategies"
	"github.com/cursus-dev/cursus/registry"
)

var (
	axisSchema = registry.Enum("Routing axis.", strategies.AxisSageMakerStepType, strategies.AxisStepAssembly)
	// strategyNameSchema is a strategy name: a SageMaker step type or a
	// step_assembly value.
	strategyNameSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "pattern": `^[A-Za-z][A-Za-z_]*$`,
		"description": "Strategy name: a SageMaker step type (Training, …) or a step assembly (code, step_args, delegation)."}
)

func strategiesNamespace() (registry.Namespace, error) {
	lib := strategies.Default()
	return registry.Namespace{
		Name:        "strategies",
		Description: "The builder strategy library: how each SageMaker step type is constructed, and its knobs.",
		Tools: []registry.ToolDef{
			{
				Name: "strategies.list_axes", Description: "Routing axes and how many strategies each has.",
				When: "You want an overview of how steps are routed to builders.", Examples: []string{`strategies.list_axes {}`},
				Tags: []string{registry.PhasePlanner}, Schema: registry.Object(nil),
				Handler: func(context.Context, registry.Request) (*registry.Result, error) {
					axes := lib.Axes()
					return registry.OK(map[string]any{"count": len(axes), "axes": axes}), nil
				},
			},
			{
				Name: "strategies.list", Description: "Every strategy descriptor (axis, name, verb, handler, routable, implemented, knobs, preset knobs), sorted by axis and name; non-routable rows included.",
				When: "You want to see all construction strategies.", Examples: []string{`strategies.list {}`, `strategies.list {"axis": "step_assembly"}`},
				Tags: []string{registry.PhasePlanner}, Schema: registry.Object(map[string]any{"axis": axisSchema}),
				Handler: func(_ context.Context, req registry.Request) (*registry.Result, error) {
					var args struct {
						Axis string `json:"axis"`
					}
					if err := req.Bind(&args); err != nil {
						return nil, err
					}
					rows := lib.List(args.Axis)
					return registry.OK(map[string]any{"axis": nullable(args.Axis), "count": len(rows), "strategies": rows}), nil
				},
			},
			{
				Name: "strategies.show", Description: "One strategy descriptor by name (and axis when the name is ambiguous).",
				When: "You want the details of one strategy.", Examples: []string{`strategies.show {"name": "code", "axis": "step_assembly"}`, `strategies.show {"name": "Training"}`},
				Tags: []string{registry.PhasePlanner}, Schema: registry.Object(map[string]any{"name": strategyNameSchema, "axis": axisSchema}, "name"),
				Handler: func(_ context.Context, req registry.Request) (*registry.Result, error) {
					var args struct {
						Name string `json:"name"`
						Axis string `json:"axis"`
					}
					if err := req.Bind(&args); err != nil {
						return nil, err
					}
					found := lib.Find(args.Name, args.Axis)
					switch len(found) {
					case 0:
						msg := "no strategy named '" + args.Name + "'"
						if args.Axis != "" {
							msg += " on axis '" + args.Axis + "'"
						}
						return nil, registry.Errorf(registry.CodeNotFound, "%s", msg).
							WithDetails(map[string]any{"available": lib.Names()}).Suggest("Pick a name from strategies.list.", "strategies.list")
					case 1:
						return registry.OK(found[0]), nil
					default:
						axes := make([]string, len(found))
						for i, s := range found {
							axes[i] = s.Axis
						}
						return nil, registry.Errorf(registry.CodeInvalidInput, "strategy name '%s' exists on several axes; give axis", args.Name).
							WithDetails(map[string]any{"axes": axes})
					}
				},
			},
			{
				Name: "strategies.for_step_type",
				Description: "The builder strategy a step of this SageMaker step type is constructed with (Processing routes on step_assembly, " +
					"default code; every other type on itself), with its knobs and presets.",
				When: "You need to know how a step type is built.",
				Examples: []string{
					`strategies.for_step_type {"sagemaker_step_type": "Processing", "step_assembly": "step_args"}`,
					`strategies.for_step_type {"sagemaker_step_type": "RegisterModel"}`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"sagemaker_step_type": sagemakerStepTypeSchema,
					"step_assembly":       registry.Enum("Assembly pattern of a Processing step (default code).", "code", "step_args", "delegation"),
				}, "sagemaker_step_type"),
				Handler: func(_ context.Context, req registry.Request) (*registry.Result, error) {
					var args struct {
						SMType   string `json:"sagemaker_step_type"`
						Assembly string `json:"step_assembly"`
					}
					if err := req.Bind(&args); err != nil {
						return nil, err
					}
					s, axis, name, err := lib.ForStepType(args.SMType, args.Assembly)
					if err != nil {
						return nil, registry.Errorf(registry.CodeNotFound, "%v", err).
							WithDetails(map[string]any{"sagemaker_step_type": args.SMType, "step_assembly": nullable(args.Assembly)}).
							Suggest("See the routable strategies in strategies.list.", "strategies.list")
					}
					res := registry.OK(map[string]any{"sagemaker_step_type": args.SMType, "step_assembly": nullable(args.Assembly),
						"resolved_axis": axis, "resolved_name": name, "strategy": s})
					if !s.Implemented {
						res.Warn(s.Note)
					}
					return res, nil
				},
			},
			{
				Name: "strategies.knobs", Description: "The knobs of one routable strategy: name, type, default, required flag and meaning.",
				When: "You want to tune how a step is constructed.", Examples: []string{`strategies.knobs {"axis": "sagemaker_step_type", "name": "Training"}`},
				Tags: []string{registry.PhasePlanner}, Schema: registry.Object(map[string]any{"axis": axisSchema, "name": strategyNameSchema}, "axis", "name"),
				Handler: func(_ context.Context, req registry.Request) (*registry.Result, error) {
					var args struct {
						Axis string `json:"axis"`
						Name string `json:"name"`
					}
					if err := req.Bind(&args); err != nil {
						return nil, err
					}
					s, err := lib.Resolve(args.Axis, args.Name)
					if err != nil {
						return nil, registry.Errorf(registry.CodeNotFound, "%v", err).
							WithDetails(map[string]any{"axis": args.Axis, "name": args.Name}).Suggest("See the routable strategies in strategies.list.", "strategies.list")
					}
					return registry.OK(map[string]any{"axis": s.Axis, "name": s.Name, "count": len(s.Knobs), "knobs": s.Knobs, "preset_knobs": s.PresetKnobs}), nil
				},
			},
		},
	}, nil
}
