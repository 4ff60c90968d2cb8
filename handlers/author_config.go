package handlers

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/registry"
)

// configStepName names a step's config: a step type, a config class or a
// DAG node name.
type configStepName string

func (configStepName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(256),
		Description: "Step type (XGBoostTraining), config class (XGBoostTrainingConfig) or DAG node name (TabularPreprocessing_training)."}
}

type authorConfigConstraintsIn struct {
	StepName configStepName `json:"step_name"`
}

type authorPreflightConfigIn struct {
	StepName configStepName `json:"step_name"`
	Values   map[string]any `json:"values" jsonschema:"Field name → value (base fields included)." schema:"maxProperties=500"`
}

// authorConfigTools are the config half of the author namespace; the
// author namespace constructor includes them.
func authorConfigTools(d *Deps) []registry.ToolDef {
	return []registry.ToolDef{
		registry.Define(registry.ToolDef{
			Name: "author.config_constraints",
			Description: "The config constraints of one step type: every field with type, tier and default, the fields you must " +
				"supply (required_no_default), and the constrained fields with their allowed values, patterns and ranges. " +
				"The layout of a whole config.json is steps.format {\"format\": \"config_json\"}.",
			When:     "A step's closed value sets and limits.",
			Examples: []string{`author.config_constraints {"step_name": "TabularPreprocessing"}  # fields + allowed values`},
			Tags:     []string{registry.PhaseValidator},
		}, d.authorConfigConstraints),
		registry.Define(registry.ToolDef{
			Name: "author.preflight_config",
			Description: "Validate one step type's config values as the engine will: types, required fields, " +
				"allowed values, patterns, ranges and cross-field rules. Returns every problem at once (field, kind, message); " +
				"on success, the complete config with defaults and derived values.",
			When: "Before saving config values.",
			Examples: []string{
				`author.preflight_config {"step_name": "XGBoostTraining", "values": {}}  # lists every missing field`,
				`author.preflight_config {"step_name": "XGBoostModel", "values": {"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}}  # valid`,
			},
			Tags: []string{registry.PhaseValidator},
		}, d.authorPreflightConfig),
	}
}

type authorConfigConstraintsOut struct {
	Chain             []string           `json:"chain"`
	ConfigClass       string             `json:"config_class"`
	ConstrainedFields []constrainedField `json:"constrained_fields"`
	FieldCount        int                `json:"field_count"`
	Fields            []*config.Field    `json:"fields"`
	RequiredNoDefault []string           `json:"required_no_default"`
	StepName          string             `json:"step_name"`
}

// constrainedField is a field with a closed value set, a pattern or a
// range; each limit is present only when the field has it.
type constrainedField struct {
	AllowedValues []any    `json:"allowed_values,omitempty"`
	AppliesTo     string   `json:"applies_to,omitempty"`
	CaseSensitive bool     `json:"case_sensitive,omitempty"`
	Maximum       *float64 `json:"maximum,omitempty"`
	Minimum       *float64 `json:"minimum,omitempty"`
	Name          string   `json:"name"`
	Pattern       string   `json:"pattern,omitempty"`
	Type          string   `json:"type"`
}

func (d *Deps) authorConfigConstraints(ctx context.Context, in authorConfigConstraintsIn) (registry.Reply[authorConfigConstraintsOut], error) {
	var reply registry.Reply[authorConfigConstraintsOut]
	sc, err := d.catalogs(ctx).configSchemaFor(string(in.StepName))
	if err != nil {
		return reply, err
	}
	out := authorConfigConstraintsOut{StepName: sc.StepType, ConfigClass: sc.ConfigClass, Chain: sc.Chain, FieldCount: len(sc.Fields),
		Fields: sc.Fields, RequiredNoDefault: []string{}, ConstrainedFields: []constrainedField{}}
	for _, f := range sc.Fields {
		if f.Required() {
			out.RequiredNoDefault = append(out.RequiredNoDefault, f.Name)
		}
		if len(f.Allowed) == 0 && f.Pattern == "" && f.Minimum == nil && f.Maximum == nil {
			continue
		}
		// Comparison of allowed values is exact: "csv" is not "CSV".
		c := constrainedField{Name: f.Name, Type: f.Type, AllowedValues: f.Allowed, CaseSensitive: len(f.Allowed) > 0,
			Pattern: f.Pattern, Minimum: f.Minimum, Maximum: f.Maximum}
		if f.Type == "array" {
			c.AppliesTo = "each element"
		}
		out.ConstrainedFields = append(out.ConstrainedFields, c)
	}
	reply.WithMeta("step_name", sc.StepType)
	reply.Next(registry.NextStep{Tool: "author.preflight_config", When: "you have values to check", Why: "validates them against these constraints",
		ArgsHint: map[string]any{"step_name": sc.StepType, "values": map[string]any{}}})
	reply.Out = out
	return reply, nil
}

type authorPreflightConfigOut struct {
	ConfigClass string         `json:"config_class"`
	ConfigKey   string         `json:"config_key"`
	Derived     map[string]any `json:"derived"`
	StepName    string         `json:"step_name"`
	Valid       bool           `json:"valid"`
	Values      map[string]any `json:"values"`
}

func (d *Deps) authorPreflightConfig(ctx context.Context, in authorPreflightConfigIn) (registry.Reply[authorPreflightConfigOut], error) {
	var reply registry.Reply[authorPreflightConfigOut]
	name := string(in.StepName)
	cv := d.catalogs(ctx)
	sc, err := cv.configSchemaFor(name)
	if err != nil {
		return reply, err
	}
	values := in.Values
	// A node name carries its job type; use it unless the values set one.
	if n, err := cv.Config.ResolveNode(name); err == nil && n.JobType != "" && n.StepType == sc.StepType {
		if _, has := sc.Field("job_type"); has {
			if _, set := values["job_type"]; !set {
				values = cfgCloneArgs(values)
				values["job_type"] = n.JobType
			}
		}
	}
	cfg, probs := cv.Config.Build(sc.StepType, nil, values)
	if len(probs) > 0 {
		return reply, registry.Errorf(registry.CodeConfigInvalid, "config values invalid for %s: %d error(s)", sc.ConfigClass, len(probs)).
			WithDetails(map[string]any{"step_name": sc.StepType, "config_class": sc.ConfigClass, "valid": false, "errors": preflightErrors(probs)}).
			Suggest("Fix each listed field; author.config_constraints shows types, allowed values and ranges.", "author.config_constraints")
	}
	reply.Next(registry.NextStep{Tool: "author.preflight_step", When: "the config is valid",
		Why: "checks the step itself is constructible", ArgsHint: map[string]any{"step_name": sc.StepType}})
	reply.Out = authorPreflightConfigOut{StepName: sc.StepType, ConfigClass: sc.ConfigClass, Valid: true,
		ConfigKey: cfg.Key, Values: cfg.Values, Derived: cfg.Derived}
	return reply, nil
}

// preflightConfigError keeps the reference's {field, message, type} record and
// adds kind under its own name.
type preflightConfigError struct {
	Field   string `json:"field"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

func preflightErrors(probs []config.Problem) []preflightConfigError {
	out := make([]preflightConfigError, len(probs))
	for i, p := range probs {
		out[i] = preflightConfigError{Field: p.Field, Message: p.Message, Type: p.Kind, Kind: p.Kind}
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
