package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// Config is one step's configuration: the values the user gave plus
// defaults, and the derived values computed from them.
type Config struct {
	// Key is the config.json save key: <StepType>[_<job_type>], or the DAG
	// node name when the config was built for a node.
	Key         string         `json:"key"`
	StepType    string         `json:"step_type"`
	ConfigClass string         `json:"config_class"`
	JobType     string         `json:"job_type,omitempty"`
	Values      map[string]any `json:"values"`
	Derived     map[string]any `json:"derived"`
	// Explicit lists the fields the user set (as opposed to defaults).
	Explicit map[string]bool `json:"-"`
	// Warnings are non-blocking findings on the values, such as an
	// undocumented hyperparameter key.
	Warnings []string `json:"-"`
}

// ExplicitValues returns only the values the user set. Building a step
// config from a base config passes these on, so that a base *default*
// never overrides the step's own default (see Derive).
func (c Config) ExplicitValues() map[string]any {
	out := map[string]any{}
	for k := range c.Explicit {
		if v, ok := c.Values[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Get returns a value or derived value.
func (c Config) Get(name string) (any, bool) {
	if v, ok := c.Values[name]; ok {
		return v, true
	}
	v, ok := c.Derived[name]
	return v, ok
}

// Build makes the config of stepType from base (values shared across a
// pipeline) and specific (values for this step; they win over base), and
// returns every problem found. Keys of base that this step type does not
// have are ignored: base values serve every step. Keys of specific that
// are not settable fields are problems of kind "unknown".
//
// Precedence, lowest first: the step's schema default (a step's own
// re-declared default beats its base layer's default), then base, then
// specific. Only values the caller actually supplies take part, so a base
// layer's default can never override a step's default — unlike Cursus'
// from_base_config, where it silently does.
func (s *Schemas) Build(stepType string, base, specific map[string]any) (Config, []Problem) {
	sc, err := s.ForStep(stepType)
	if err != nil {
		return Config{StepType: stepType}, []Problem{{Field: "", Kind: KindUnknown, Message: err.Error()}}
	}
	cfg, probs, warns := sc.build(base, specific, false)
	cfg.Warnings = append(warns, cfg.Warnings...)
	return cfg, probs
}

// Derive builds a step config from a parent config (for example a config
// of the "base" step), taking over only what the user set on the parent.
func (s *Schemas) Derive(stepType string, parent Config, specific map[string]any) (Config, []Problem) {
	return s.Build(stepType, parent.ExplicitValues(), specific)
}

// build does the work of Build. lenient (used when loading files) turns
// unknown keys into warnings and silently drops derived keys.
func (sc *Schema) build(base, specific map[string]any, lenient bool) (Config, []Problem, []string) {
	cfg := Config{
		StepType:    sc.StepType,
		ConfigClass: sc.ConfigClass,
		Values:      map[string]any{},
		Derived:     map[string]any{},
		Explicit:    map[string]bool{},
	}
	var probs []Problem
	var warnings []string
	given := map[string]any{}
	passed := map[string]any{} // values an open schema keeps unchecked
	for _, k := range sortedKeys(base) {
		v := base[k]
		f, known := sc.index[k]
		name, isAlias := sc.alias(k)
		switch {
		case known && f.Tier != steps.TierDerived:
			given[k] = v
		case known:
			// A derived value in the base is recomputed.
		case isAlias:
			if _, direct := base[name]; !direct {
				given[name] = v
				warnings = append(warnings, aliasWarning(k, name))
			}
		case sc.Open && !cursusDerived[k]:
			passed[k] = v
		}
	}
	var unknown []string
	for _, k := range sortedKeys(specific) {
		v := specific[k]
		f, ok := sc.index[k]
		switch {
		case ok && f.Tier != steps.TierDerived:
			given[k] = v
		case ok && lenient:
			// Derived keys in files are recomputed, never trusted.
		case ok:
			probs = append(probs, Problem{Field: k, Kind: KindUnknown,
				Message: fmt.Sprintf("%s is derived (%s) and cannot be set%s", k, f.Rule, overrideHint(sc, k))})
		case cursusDerived[k] && (lenient || sc.Open):
			// Cursus writes its derived values into config.json; they are
			// recomputed here (or have no meaning), never trusted.
		default:
			if name, isAlias := sc.alias(k); isAlias {
				if _, direct := specific[name]; !direct {
					given[name] = v
					warnings = append(warnings, aliasWarning(k, name))
					continue
				}
			}
			if sc.Open {
				passed[k] = v
				continue
			}
			unknown = append(unknown, k)
		}
	}
	for _, k := range unknown {
		msg := fmt.Sprintf("%s is not a field of %s", k, sc.StepType)
		if sg := suggest(k, sc.FieldNames()); len(sg) > 0 {
			msg += " (did you mean " + strings.Join(sg, ", ") + "?)"
		}
		if lenient {
			warnings = append(warnings, msg+"; ignored")
			continue
		}
		probs = append(probs, Problem{Field: k, Kind: KindUnknown, Message: msg})
	}
	if len(passed) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s declares no config section, so %s are passed through unchecked",
			sc.StepType, strings.Join(sortedKeys(passed), ", ")))
	}

	for _, f := range sc.Fields {
		if f.Tier == steps.TierDerived {
			continue
		}
		v, ok := given[f.Name]
		if ok && v == nil && f.Default == nil && f.Tier == steps.TierSystem {
			ok = false // null on an optional field means "not set"
		}
		if !ok {
			if f.Default != nil {
				cfg.Values[f.Name] = cloneValue(f.Default)
			} else if f.Tier == steps.TierEssential {
				probs = append(probs, Problem{Field: f.Name, Kind: KindMissing,
					Message: fmt.Sprintf("%s is required: %s", f.Name, describeField(f))})
			}
			continue
		}
		if v == nil && f.Tier == steps.TierEssential {
			probs = append(probs, Problem{Field: f.Name, Kind: KindMissing,
				Message: fmt.Sprintf("%s is required and may not be null: %s", f.Name, describeField(f))})
			continue
		}
		n, ps := checkValue(f, v)
		if absoluteLocalPath(f, v, ps) {
			n, ps = v, nil
			warnings = append(warnings, fmt.Sprintf("%s is the absolute local path %q: accepted as Cursus does, but the compiler reads scripts from the workspace, so give a path relative to it", f.Name, v))
		}
		if len(ps) > 0 {
			probs = append(probs, ps...)
			continue
		}
		if len(f.Allowed) > 0 && fmt.Sprint(n) != fmt.Sprint(v) && strings.EqualFold(fmt.Sprint(n), fmt.Sprint(v)) {
			warnings = append(warnings, fmt.Sprintf("%s: %v read as %v (allowed values are compared case-insensitively, as Cursus does)", f.Name, v, n))
		}
		cfg.Values[f.Name] = n
		cfg.Explicit[f.Name] = true
	}
	for k, v := range passed {
		cfg.Values[k] = unwrap(v, 0)
		cfg.Explicit[k] = true
	}
	if jt, ok := cfg.Values["job_type"].(string); ok {
		cfg.JobType = jt
	}
	cfg.Key = SaveKey(sc.StepType, cfg.JobType)
	probs = append(probs, crossChecks(sc, cfg.Values)...)
	ps, ws := sc.checkHyperparameters(cfg.Values)
	probs, cfg.Warnings = append(probs, ps...), ws
	sc.derive(&cfg)
	return cfg, probs, warnings
}

func overrideHint(sc *Schema, derived string) string {
	if _, ok := sc.index[derived+"_override"]; ok {
		return "; set " + derived + "_override instead"
	}
	return ""
}

func describeField(f *Field) string {
	d := f.Type
	if f.Description != "" {
		d += " — " + f.Description
	}
	if len(f.Allowed) > 0 {
		d += " (allowed: " + listValues(f.Allowed) + ")"
	}
	return d
}

// SaveKey is the config.json key of a config: the step type, plus
// "_<job_type>" when it has one.
func SaveKey(stepType, jobType string) string {
	if jobType == "" {
		return stepType
	}
	return stepType + "_" + jobType
}

// derive computes the derived fields in dependency order.
func (sc *Schema) derive(cfg *Config) {
	env := func(name string) any {
		if v, ok := cfg.Values[name]; ok {
			return v
		}
		if v, ok := cfg.Derived[name]; ok {
			return v
		}
		switch name {
		case "step_type":
			return sc.StepType
		case "step_snake":
			if sc.snake == "" {
				return nil
			}
			return sc.snake
		case "config_class":
			return sc.ConfigClass
		}
		return nil
	}
	for _, f := range sc.derived {
		if v := f.rule.eval(env); v != nil {
			cfg.Derived[f.Name] = v
		}
	}
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = cloneValue(el)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, el := range x {
			out[k] = cloneValue(el)
		}
		return out
	}
	return v
}

// cursusDerived are the derived values Cursus writes into config.json
// (engine-aux §1.3, §2.1) that no schema here declares: a loader drops them.
var cursusDerived = map[string]bool{
	"aws_region": true, "pipeline_name": true, "pipeline_description": true, "pipeline_s3_loc": true,
	"effective_source_dir": true, "resolved_source_dir": true, "effective_instance_type": true,
	"script_path": true, "full_script_path": true, "hyperparameter_file": true, "script_contract": true,
}

// fieldAliases are field names that mean the same column in Cursus and
// here: Cursus configs say label_name where some built-in steps say
// label_field. Either spelling is read as the one the schema declares.
var fieldAliases = map[string]string{"label_name": "label_field", "label_field": "label_name"}

// FieldAlias returns the other spelling of a field name Cursus and the
// built-in steps both use (label_name and label_field).
func FieldAlias(name string) (string, bool) {
	a, ok := fieldAliases[name]
	return a, ok
}

// alias returns the field of sc that k is another name of.
func (sc *Schema) alias(k string) (string, bool) {
	name, ok := fieldAliases[k]
	if !ok {
		return "", false
	}
	f, ok := sc.index[name]
	return name, ok && f.Tier != steps.TierDerived
}

func aliasWarning(given, field string) string {
	return fmt.Sprintf("%s is read as %s (the name this step type declares; Cursus configs may use either)", given, field)
}

// localPathFields hold local directories; Cursus accepts absolute ones.
var localPathFields = map[string]bool{"source_dir": true, "processing_source_dir": true}

// absoluteLocalPath: v is an absolute local directory, which Cursus
// accepts, and the only problems with it are patterns that refuse it.
func absoluteLocalPath(f *Field, v any, probs []Problem) bool {
	s, ok := v.(string)
	if !ok || !localPathFields[f.Name] || !strings.HasPrefix(s, "/") {
		return false
	}
	for _, p := range probs {
		if p.Kind != KindPattern {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
