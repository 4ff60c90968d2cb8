package handlers

import (
	"context"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/registry"
)

// authorConfigTools are the config half of the author namespace; the
// author namespace constructor includes them.
func authorConfigTools(d *Deps) []registry.ToolDef {
	stepName := map[string]any{"type": "string", "minLength": 1, "maxLength": 256,
		"description": "Step type (XGBoostTraining), config class (XGBoostTrainingConfig) or DAG node name (TabularPreprocessing_training)."}
	return []registry.ToolDef{
		{
			Name: "author.config_constraints",
			Description: "The config constraints of one step type: every field with type, tier and default, the fields you must " +
				"supply (required_no_default), and the constrained fields with their allowed values, patterns and ranges.",
			When:     "You are writing or checking config values for a step and need its closed value sets and limits.",
			Examples: []string{`author.config_constraints {"step_name": "TabularPreprocessing"}  # fields + allowed values`},
			Tags:     []string{registry.PhaseValidator},
			Schema:   registry.Object(map[string]any{"step_name": stepName}, "step_name"),
			Handler:  d.authorConfigConstraints,
		},
		{
			Name: "author.preflight_config",
			Description: "Validate a set of config values for one step type exactly as the engine will: types, required fields, " +
				"allowed values, patterns, ranges and cross-field rules. Returns every problem at once (field, kind, message); " +
				"on success, the complete config with defaults and derived values.",
			When: "You want to know whether a step's config values are valid before saving or compiling.",
			Examples: []string{
				`author.preflight_config {"step_name": "XGBoostTraining", "values": {}}  # lists every missing field`,
				`author.preflight_config {"step_name": "XGBoostModel", "values": {"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}}  # valid`,
			},
			Tags: []string{registry.PhaseValidator},
			Schema: registry.Object(map[string]any{
				"step_name": stepName,
				"values":    map[string]any{"type": "object", "maxProperties": 500, "description": "Field name → value (base fields included)."},
			}, "step_name", "values"),
			Handler: d.authorPreflightConfig,
		},
	}
}

func (d *Deps) authorConfigConstraints(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string `json:"step_name"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	sc, err := d.configSchemaFor(args.StepName)
	if err != nil {
		return nil, err
	}
	required := []string{}
	constrained := []map[string]any{}
	for _, f := range sc.Fields {
		if f.Required() {
			required = append(required, f.Name)
		}
		if len(f.Allowed) == 0 && f.Pattern == "" && f.Minimum == nil && f.Maximum == nil {
			continue
		}
		c := map[string]any{"name": f.Name, "type": f.Type}
		if len(f.Allowed) > 0 {
			// Comparison is exact: "csv" is not "CSV".
			c["allowed_values"], c["case_sensitive"] = f.Allowed, true
		}
		if f.Pattern != "" {
			c["pattern"] = f.Pattern
		}
		if f.Minimum != nil {
			c["minimum"] = *f.Minimum
		}
		if f.Maximum != nil {
			c["maximum"] = *f.Maximum
		}
		if f.Type == "array" {
			c["applies_to"] = "each element"
		}
		constrained = append(constrained, c)
	}
	data := map[string]any{
		"step_name": sc.StepType, "config_class": sc.ConfigClass, "chain": sc.Chain,
		"field_count": len(sc.Fields), "fields": sc.Fields,
		"required_no_default": required, "constrained_fields": constrained,
	}
	return registry.OK(data).WithMeta("step_name", sc.StepType).
		Next(registry.NextStep{Tool: "author.preflight_config", When: "you have values to check", Why: "validates them against these constraints",
			ArgsHint: map[string]any{"step_name": sc.StepType, "values": map[string]any{}}}), nil
}

func (d *Deps) authorPreflightConfig(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string         `json:"step_name"`
		Values   map[string]any `json:"values"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	sc, err := d.configSchemaFor(args.StepName)
	if err != nil {
		return nil, err
	}
	values := args.Values
	// A node name carries its job type; use it unless the values set one.
	if n, err := d.Config.ResolveNode(args.StepName); err == nil && n.JobType != "" && n.StepType == sc.StepType {
		if _, has := sc.Field("job_type"); has {
			if _, set := values["job_type"]; !set {
				values = cfgCloneArgs(values)
				values["job_type"] = n.JobType
			}
		}
	}
	cfg, probs := d.Config.Build(sc.StepType, nil, values)
	if len(probs) > 0 {
		return nil, registry.Errorf(registry.CodeConfigInvalid, "config values invalid for %s: %d error(s)", sc.ConfigClass, len(probs)).
			WithDetails(map[string]any{"step_name": sc.StepType, "config_class": sc.ConfigClass, "valid": false, "errors": preflightErrors(probs)}).
			Suggest("Fix each listed field; author.config_constraints shows types, allowed values and ranges.", "author.config_constraints")
	}
	data := map[string]any{
		"step_name": sc.StepType, "config_class": sc.ConfigClass, "valid": true,
		"config_key": cfg.Key, "values": cfg.Values, "derived": cfg.Derived,
	}
	return registry.OK(data).Next(registry.NextStep{Tool: "author.preflight_step", When: "the config is valid",
		Why: "checks the step itself is constructible", ArgsHint: map[string]any{"step_name": sc.StepType}}), nil
}

// preflightErrors keeps the reference's {field, message, type} records and
// adds kind under its own name.
func preflightErrors(probs []config.Problem) []map[string]any {
	out := make([]map[string]any, len(probs))
	for i, p := range probs {
		out[i] = map[string]any{"field": p.Field, "message": p.Message, "type": p.Kind, "kind": p.Kind}
	}
	return out
}

func cfgCloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
