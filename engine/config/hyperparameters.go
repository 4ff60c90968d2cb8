package config

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/engine/steps"
)

// HyperparameterSchema documents the keys a framework's training script
// reads from a training or tuning config's hyperparameters object.
// Hyperparameters stay open: an unknown key is a warning (the script may
// read it), a known key with a wrong type or range is a problem.
type HyperparameterSchema struct {
	Framework   string            `json:"framework"`
	Description string            `json:"description"`
	Fields      []*Hyperparameter `json:"fields"`

	index map[string]*Hyperparameter
}

// Hyperparameter is one documented key, as the embedded files declare it
// (Name and Source come from where it is declared).
type Hyperparameter struct {
	Name    string   `json:"name" yaml:"-"`
	Type    string   `json:"type" yaml:"type"`
	Items   string   `json:"items,omitempty" yaml:"items"`
	Default any      `json:"default,omitempty" yaml:"default"`
	Allowed []any    `json:"allowed,omitempty" yaml:"allowed"`
	Minimum *float64 `json:"minimum,omitempty" yaml:"minimum"`
	Maximum *float64 `json:"maximum,omitempty" yaml:"maximum"`
	// ExclusiveMinimum makes Minimum a bound the value must exceed, as for
	// learning rates and sampling fractions.
	ExclusiveMinimum bool   `json:"exclusive_minimum,omitempty" yaml:"exclusive_minimum"`
	Description      string `json:"description" yaml:"description"`
	// Source is "common" for the data layout keys every built-in script
	// reads, else the framework.
	Source string `json:"source" yaml:"-"`
}

type hpFile struct {
	Framework   string                        `yaml:"framework"`
	Description string                        `yaml:"description"`
	Fields      steps.Ordered[Hyperparameter] `yaml:"fields"`
}

// hpCommon is the file whose keys every framework schema starts with.
const hpCommon = "common"

// loadHyperparameters reads the embedded schemas, keyed by framework (the
// compute.model_family of a step interface).
func loadHyperparameters() (map[string]*HyperparameterSchema, error) {
	entries, err := fs.ReadDir(basesFS, "hyperparameters")
	if err != nil {
		return nil, fmt.Errorf("hyperparameter schemas: %w", err)
	}
	files := map[string]*hpFile{}
	for _, e := range entries {
		data, err := basesFS.ReadFile("hyperparameters/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("hyperparameter schemas: %w", err)
		}
		var f hpFile
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("hyperparameter schema %s: %w", e.Name(), err)
		}
		files[strings.TrimSuffix(e.Name(), path.Ext(e.Name()))] = &f
	}
	common, ok := files[hpCommon]
	if !ok {
		return nil, fmt.Errorf("hyperparameter schemas: %s.yaml is missing", hpCommon)
	}
	out := map[string]*HyperparameterSchema{}
	for name, f := range files {
		if name == hpCommon {
			continue
		}
		if f.Framework != name {
			return nil, fmt.Errorf("hyperparameter schema %s.yaml declares framework %q", name, f.Framework)
		}
		hs := &HyperparameterSchema{Framework: f.Framework, Description: f.Description, index: map[string]*Hyperparameter{}}
		for _, src := range []struct {
			file   *hpFile
			source string
		}{{common, hpCommon}, {f, f.Framework}} {
			for _, key := range src.file.Fields.Keys() {
				decl, _ := src.file.Fields.Get(key)
				h := &decl
				h.Name, h.Source = key, src.source
				if _, dup := hs.index[key]; dup {
					return nil, fmt.Errorf("hyperparameter schema %s.yaml: %s is declared twice", name, key)
				}
				if msg := checkHyperparameterDecl(h); msg != "" {
					return nil, fmt.Errorf("hyperparameter schema %s.yaml: %s: %s", name, key, msg)
				}
				hs.index[key] = h
				hs.Fields = append(hs.Fields, h)
			}
		}
		out[name] = hs
	}
	return out, nil
}

// checkHyperparameterDecl rejects a declaration whose own default fails it.
func checkHyperparameterDecl(h *Hyperparameter) string {
	switch h.Type {
	case "string", "integer", "number", "boolean", "array":
	default:
		return "unsupported type " + h.Type
	}
	if h.Description == "" {
		return "no description"
	}
	if h.Default != nil {
		if probs := h.check("default", h.Default); len(probs) > 0 {
			return "default: " + probs[0].Message
		}
	}
	return ""
}

// field is h as a config field, to reuse the config value checks.
func (h *Hyperparameter) field(name string) *Field {
	return &Field{Name: name, Field: steps.Field{Type: h.Type, Items: h.Items, Allowed: h.Allowed, Minimum: h.Minimum, Maximum: h.Maximum}}
}

// check validates one value; name is its path in problems.
func (h *Hyperparameter) check(name string, v any) []Problem {
	n, probs := checkValue(h.field(name), v)
	if len(probs) > 0 || !h.ExclusiveMinimum {
		return probs
	}
	vals := []any{n}
	if arr, ok := n.([]any); ok {
		vals = arr
	}
	for _, el := range vals {
		if x, ok := toFloat(el); ok && x <= *h.Minimum {
			probs = append(probs, Problem{Field: name, Kind: KindRange, Message: fmt.Sprintf("%s must be greater than %v", short(el), *h.Minimum)})
		}
	}
	return probs
}

// Check validates hp: a known key's wrong type or range is a problem, an
// unknown key a warning naming the nearest known keys. Null values count
// as unset.
func (hs *HyperparameterSchema) Check(hp map[string]any) (probs []Problem, warnings []string) {
	for _, k := range slices.Sorted(maps.Keys(hp)) {
		name := "hyperparameters." + k
		h, ok := hs.index[k]
		if !ok {
			warnings = append(warnings, hs.unknown(name, k))
			continue
		}
		if hp[k] != nil {
			probs = append(probs, h.check(name, hp[k])...)
		}
	}
	return probs, warnings
}

func (hs *HyperparameterSchema) unknown(path, key string) string {
	msg := fmt.Sprintf("%s is not a documented %s hyperparameter", path, hs.Framework)
	if sg := suggest(key, slices.Sorted(maps.Keys(hs.index))); len(sg) > 0 {
		msg += " (did you mean " + strings.Join(sg, ", ") + "?)"
	}
	return msg + "; the training script gets it as given"
}

// CheckSearchSpace validates a tuning step's ranges against the schema:
// a range over an unknown key is a warning; a numeric range over a key
// that is not numeric, bounds outside the key's range, or categorical
// values of the wrong type are problems. The range shape itself is
// checked by checkSearchSpace.
func (hs *HyperparameterSchema) CheckSearchSpace(ss map[string]any) (probs []Problem, warnings []string) {
	for _, kind := range []string{"continuous", "integer", "categorical"} {
		list, _ := ss[kind].([]any)
		for i, el := range list {
			r, _ := el.(map[string]any)
			key, _ := r["name"].(string)
			if key == "" {
				continue
			}
			at := fmt.Sprintf("search_space.%s[%d]", kind, i)
			h, ok := hs.index[key]
			if !ok {
				warnings = append(warnings, hs.unknown(at+".name", key))
				continue
			}
			if kind == "categorical" {
				vals, _ := r["values"].([]any)
				for j, v := range vals {
					probs = append(probs, h.check(fmt.Sprintf("%s.values[%d]", at, j), v)...)
				}
				continue
			}
			if h.Type != "integer" && h.Type != "number" {
				probs = append(probs, Problem{Field: at, Kind: KindType,
					Message: fmt.Sprintf("a %s range over %s, which is %s; use a categorical range", kind, key, article(h.Type))})
				continue
			}
			if kind == "continuous" && h.Type == "integer" {
				warnings = append(warnings, fmt.Sprintf("%s: %s is an integer; an integer range passes whole values", at, key))
			}
			bound := &Hyperparameter{Name: key, Type: "number", Minimum: h.Minimum, Maximum: h.Maximum, ExclusiveMinimum: h.ExclusiveMinimum}
			for _, end := range []string{"min", "max"} {
				if _, numeric := toFloat(r[end]); numeric {
					probs = append(probs, bound.check(at+"."+end, r[end])...)
				}
			}
		}
	}
	return probs, warnings
}

// checkHyperparameters checks the hyperparameters, and a tuning step's
// search space, against the step's framework schema.
func (sc *Schema) checkHyperparameters(values map[string]any) ([]Problem, []string) {
	if sc.Hyperparameters == nil {
		return nil, nil
	}
	var probs []Problem
	var warnings []string
	if hp, ok := values["hyperparameters"].(map[string]any); ok {
		probs, warnings = sc.Hyperparameters.Check(hp)
	}
	if ss, ok := values["search_space"].(map[string]any); ok && sc.HasLayer(LayerTuning) {
		ps, ws := sc.Hyperparameters.CheckSearchSpace(ss)
		probs, warnings = append(probs, ps...), append(warnings, ws...)
	}
	return probs, warnings
}

// sampleSearchSpace is a continuous range over the framework's first
// number-typed key (its learning rate in the built-in schemas).
func (hs *HyperparameterSchema) sampleSearchSpace() (map[string]any, bool) {
	for _, h := range hs.Fields {
		if h.Type != "number" || h.Source == hpCommon {
			continue
		}
		r := map[string]any{"name": h.Name, "min": 0.01, "max": 0.3}
		if probs := h.check("min", r["min"]); len(probs) > 0 {
			continue
		}
		if probs := h.check("max", r["max"]); len(probs) > 0 {
			continue
		}
		return map[string]any{"continuous": []any{r}}, true
	}
	return nil, false
}
