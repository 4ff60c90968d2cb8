package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// config.json in the Cursus layout (engine-aux §2.3):
//
//	{"configuration": {"shared": {field: value},
//	                   "specific": {key: {"__model_type__": class, field: value}}},
//	 "metadata": {"config_types": {key: class}, "created_at": "…",
//	              "field_sources": {field: [key, …]}}}
//
// Written with sorted keys and a 2-space indent, so equal configs give equal
// bytes.

const (
	modelTypeKey = "__model_type__"
	typeInfoKey  = "__type_info__"
)

// Marshal writes configs as a config.json document. createdAt is stored
// verbatim in metadata.created_at (callers pin it for reproducible output).
// A field goes to "shared" when there are at least two configs and every
// config has it with the same value; everything else, and every derived
// value, goes to the config's "specific" entry.
func Marshal(configs []Config, createdAt string) ([]byte, error) {
	sorted := append([]Config(nil), configs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for i, c := range sorted {
		if c.Key == "" || c.ConfigClass == "" {
			return nil, fmt.Errorf("config %d (%s) has no save key or config class", i, c.StepType)
		}
		if i > 0 && sorted[i-1].Key == c.Key {
			return nil, fmt.Errorf("duplicate config key %q: two configs would overwrite each other", c.Key)
		}
	}
	shared := map[string]any{}
	if len(sorted) >= 2 {
		for name, v := range sorted[0].Values {
			if v == nil {
				continue
			}
			key := canonical(v)
			same := true
			for _, c := range sorted[1:] {
				if w, ok := c.Values[name]; !ok || w == nil || canonical(w) != key {
					same = false
					break
				}
			}
			if same {
				shared[name] = v
			}
		}
	}
	specific := map[string]any{}
	types := map[string]string{}
	sources := map[string][]string{}
	for _, c := range sorted {
		entry := map[string]any{modelTypeKey: c.ConfigClass}
		for name, v := range c.Values {
			if v == nil {
				continue
			}
			sources[name] = append(sources[name], c.Key)
			if _, ok := shared[name]; !ok {
				entry[name] = v
			}
		}
		for name, v := range c.Derived {
			if v == nil {
				continue
			}
			if _, dup := c.Values[name]; dup {
				continue
			}
			sources[name] = append(sources[name], c.Key)
			entry[name] = v
		}
		specific[c.Key] = entry
		types[c.Key] = c.ConfigClass
	}
	doc := map[string]any{
		"configuration": map[string]any{"shared": shared, "specific": specific},
		"metadata":      map[string]any{"config_types": types, "created_at": createdAt, "field_sources": sources},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode config.json: %w", err)
	}
	return buf.Bytes(), nil
}

// File is a loaded config.json.
type File struct {
	// Configs are validated, sorted by key, with defaults filled in and
	// derived values recomputed.
	Configs   []Config `json:"configs"`
	CreatedAt string   `json:"created_at,omitempty"`
	// SharedFields and SpecificFields list the keys as written in the file
	// (without __model_type__), for summaries.
	SharedFields   []string            `json:"shared_fields"`
	SpecificFields map[string][]string `json:"specific_fields"`
	// Warnings: unknown keys (ignored), keys that do not match the config's
	// job type, entries missing from metadata.config_types.
	Warnings []string `json:"warnings,omitempty"`
	// Unloaded are configs whose class no step type declares (and, from
	// ParseForCheck, configs with invalid values): each fails only the DAG
	// node that needs it, not the file.
	Unloaded []Unloaded `json:"unloaded,omitempty"`
}

// Unloaded is a config of a file that could not be built: its config
// class is unknown, or (ParseForCheck) its values are invalid.
type Unloaded struct {
	Key     string `json:"key"`
	Class   string `json:"config_class"`
	Message string `json:"message"`
	// Problems are the invalid values of a config ParseForCheck left out.
	Problems []Problem `json:"problems,omitempty"`
}

func joinProblems(ps []Problem) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Field + ": " + p.Message
	}
	return strings.Join(parts, "; ")
}

// Get returns the config saved under key.
func (f *File) Get(key string) (Config, bool) {
	for _, c := range f.Configs {
		if c.Key == key {
			return c, true
		}
	}
	return Config{}, false
}

// Keys lists the config keys, sorted.
func (f *File) Keys() []string {
	out := make([]string, len(f.Configs))
	for i, c := range f.Configs {
		out[i] = c.Key
	}
	return out
}

// LoadError reports why a config.json could not be loaded; Problems lists
// every invalid value (Problem.Node is the config key).
type LoadError struct {
	File     string
	Msg      string
	Problems []Problem
}

func (e *LoadError) Error() string {
	prefix := "config.json"
	if e.File != "" {
		prefix = e.File
	}
	if len(e.Problems) == 0 {
		return prefix + ": " + e.Msg
	}
	lines := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	return fmt.Sprintf("%s: %s: %s", prefix, e.Msg, strings.Join(lines, "; "))
}

// Parse loads a config.json document: for every config, shared values then
// its specific values (specific wins) are validated against the schema of
// its config class. Derived keys are ignored (recomputed), unknown keys
// become warnings, and any invalid value fails the whole load with every
// problem listed — an invalid config is never accepted. A config whose
// class is unknown is left out and listed in File.Unloaded (Cursus fails
// the whole file; here only the nodes that need it fail).
func Parse(data []byte, s *Schemas) (*File, error) { return parse(data, s, false) }

// ParseForCheck loads a config.json document as Parse does, except that a
// config with invalid values does not fail the load: it is left out and
// listed in File.Unloaded with its problems, so a check reports them as
// findings of the nodes that need it; a document without configs loads
// empty. Only a document that is not a config.json (bad JSON, a wrong
// shape) fails.
func ParseForCheck(data []byte, s *Schemas) (*File, error) { return parse(data, s, true) }

func parse(data []byte, s *Schemas, check bool) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, &LoadError{Msg: "not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &LoadError{Msg: "trailing data after the JSON document"}
	}
	root, ok := top.(map[string]any)
	if !ok {
		return nil, &LoadError{Msg: "top level must be a JSON object"}
	}
	cfgRoot := root
	if c, present := root["configuration"]; present {
		if cfgRoot, ok = c.(map[string]any); !ok {
			return nil, &LoadError{Msg: "configuration must be an object"}
		}
	}
	shared, err := objectAt(cfgRoot, "shared", "configuration.shared")
	if err != nil {
		return nil, err
	}
	specificRaw, err := objectAt(cfgRoot, "specific", "configuration.specific")
	if err != nil {
		return nil, err
	}
	meta, err := objectAt(root, "metadata", "metadata")
	if err != nil {
		return nil, err
	}
	typesRaw, err := objectAt(meta, "config_types", "metadata.config_types")
	if err != nil {
		return nil, err
	}
	out := &File{SpecificFields: map[string][]string{}}
	if ca, ok := meta["created_at"].(string); ok {
		out.CreatedAt = ca
	}

	specific := map[string]map[string]any{}
	for key, v := range specificRaw {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &LoadError{Msg: fmt.Sprintf("configuration.specific.%s must be an object", key)}
		}
		specific[key] = m
	}
	classes := map[string]string{}
	for key, v := range typesRaw {
		c, ok := v.(string)
		if !ok || c == "" {
			return nil, &LoadError{Msg: fmt.Sprintf("metadata.config_types.%s must be a class name", key)}
		}
		classes[key] = c
	}
	for key, m := range specific {
		mt, _ := m[modelTypeKey].(string)
		if _, listed := classes[key]; !listed {
			if mt == "" {
				return nil, &LoadError{Msg: fmt.Sprintf("configuration.specific.%s has no __model_type__ and is not in metadata.config_types", key)}
			}
			classes[key] = mt
			out.Warnings = append(out.Warnings, fmt.Sprintf("configuration.specific.%s is not listed in metadata.config_types; loaded as %s", key, mt))
		} else if mt != "" && mt != classes[key] {
			out.Warnings = append(out.Warnings, fmt.Sprintf("configuration.specific.%s: __model_type__ %s differs from metadata.config_types (%s); using the latter", key, mt, classes[key]))
		}
	}
	if len(classes) == 0 && !check {
		return nil, &LoadError{Msg: "no configs: metadata.config_types and configuration.specific are empty"}
	}

	sharedVals := unwrapMap(shared)
	out.SharedFields = slices.Sorted(maps.Keys(shared))
	family := trainedFamily(s, classes)
	var probs []Problem
	sharedUnknown := map[string][]string{}
	for _, key := range slices.Sorted(maps.Keys(classes)) {
		sc, err := s.ForConfigClass(classes[key])
		if err != nil {
			out.Unloaded = append(out.Unloaded, Unloaded{Key: key, Class: classes[key], Message: err.Error()})
			out.Warnings = append(out.Warnings, fmt.Sprintf("configuration.specific.%s: not loaded: %v; a DAG node that needs it cannot compile", key, err))
			continue
		}
		spec := unwrapMap(specific[key])
		delete(spec, modelTypeKey)
		fields := slices.Sorted(maps.Keys(specific[key]))
		out.SpecificFields[key] = removeString(fields, modelTypeKey)
		for k := range sharedVals {
			_, known := sc.index[k]
			_, isAlias := sc.alias(k)
			if !known && !isAlias && !sc.Open && !cursusDerived[k] {
				sharedUnknown[k] = append(sharedUnknown[k], key)
			}
		}
		base, inherited := frameworkBase(sc, family, sharedVals, spec)
		cfg, ps, warns := sc.build(base, spec, true)
		if inherited {
			delete(cfg.Explicit, modelClassField)
		} else if w := frameworkConflict(sc, family, cfg); w != "" {
			warns = append(warns, w)
		}
		for _, w := range append(warns, cfg.Warnings...) {
			out.Warnings = append(out.Warnings, "configuration.specific."+key+": "+w)
		}
		for i := range ps {
			ps[i].Node = key
		}
		if check && len(ps) > 0 {
			out.Unloaded = append(out.Unloaded, Unloaded{Key: key, Class: classes[key], Problems: ps,
				Message: fmt.Sprintf("%d invalid value(s): %s", len(ps), joinProblems(ps))})
			continue
		}
		probs = append(probs, ps...)
		if want := SaveKey(sc.StepType, cfg.JobType); want != key && !strings.EqualFold(want, key) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("configuration.specific.%s: key does not match step type %s with job_type %q (expected %s)", key, sc.StepType, cfg.JobType, want))
		}
		cfg.Key = key
		out.Configs = append(out.Configs, cfg)
	}
	for _, k := range slices.Sorted(maps.Keys(sharedUnknown)) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("configuration.shared.%s is not a field of %s; ignored there", k, strings.Join(sharedUnknown[k], ", ")))
	}
	if len(probs) > 0 {
		return nil, &LoadError{Msg: fmt.Sprintf("%d invalid value(s)", len(probs)), Problems: probs}
	}
	if len(out.Configs) == 0 && !check {
		ps := make([]Problem, len(out.Unloaded))
		for i, u := range out.Unloaded {
			ps[i] = Problem{Node: u.Key, Field: modelTypeKey, Kind: KindUnknown, Message: u.Message}
		}
		return nil, &LoadError{Msg: "no config could be loaded", Problems: ps}
	}
	return out, nil
}

const modelClassField = "model_class"

// trainedFamily is the model family the file's training and tuning
// configs train (their steps' compute.model_family) when they agree on
// one; "" when none trains or they train different families.
func trainedFamily(s *Schemas, classes map[string]string) string {
	family := ""
	for _, class := range classes {
		sc, err := s.ForConfigClass(class)
		if err != nil || sc.family == "" {
			continue
		}
		if family != "" && !strings.EqualFold(family, sc.family) {
			return ""
		}
		family = strings.ToLower(sc.family)
	}
	return family
}

// frameworkBase is the shared values a config is built from: when the
// user set no model_class (shared or specific) and the file trains one
// model family, model_class defaults to that family on every step, so
// every node's pipeline name and description name the framework trained
// rather than the base layer's default. inherited reports the addition.
func frameworkBase(sc *Schema, family string, shared, spec map[string]any) (map[string]any, bool) {
	if family == "" || sc.family != "" {
		return shared, false
	}
	if _, ok := sc.index[modelClassField]; !ok {
		return shared, false
	}
	_, inShared := shared[modelClassField]
	_, inSpec := spec[modelClassField]
	if inShared || inSpec {
		return shared, false
	}
	base := maps.Clone(shared)
	if base == nil {
		base = map[string]any{}
	}
	base[modelClassField] = family
	return base, true
}

// frameworkConflict names a model_class the user set that differs from
// the model family the file trains (a training step's own disagreement
// is the compiler's finding).
func frameworkConflict(sc *Schema, family string, cfg Config) string {
	if family == "" || sc.family != "" || !cfg.Explicit[modelClassField] {
		return ""
	}
	mc, _ := cfg.Values[modelClassField].(string)
	if mc == "" || strings.EqualFold(mc, family) {
		return ""
	}
	return fmt.Sprintf("model_class %q differs from the model family the training step trains (%s); the pipeline name and description use %q", mc, family, mc)
}

func objectAt(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, &LoadError{Msg: path + " must be an object"}
	}
	return o, nil
}

func removeString(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func unwrapMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = unwrap(v, 0)
	}
	return out
}

// unwrap undoes Cursus' typed wrappers: {"__type_info__": …, "value": v}
// becomes v, and nested model objects lose their __model_type__ tag.
func unwrap(v any, depth int) any {
	if depth > MaxDepth {
		return v // the validator reports the depth
	}
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[typeInfoKey]; ok {
			if inner, ok := x["value"]; ok {
				return unwrap(inner, depth+1)
			}
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			if k == modelTypeKey {
				continue
			}
			out[k] = unwrap(el, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = unwrap(el, depth+1)
		}
		return out
	}
	return v
}

//go:embed file_schema.json
var fileSchema []byte

// FileSchema is the JSON Schema (draft 2020-12) of config.json in the
// Cursus layout: the document's structure. Each config's fields are
// checked against its step's schema (Schemas.ForConfigClass), which this
// schema does not repeat.
func FileSchema() []byte { return bytes.Clone(fileSchema) }
