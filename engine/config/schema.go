// Package config is the configuration engine: per-step-type schemas built
// from embedded base schemas plus each step interface's config section,
// validation that reports every problem at once, derived fields computed by
// named rules, and config.json in the Cursus layout. It knows nothing about
// HTTP, MCP or tool envelopes.
package config

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/engine/steps"
)

//go:embed bases/*.yaml hyperparameters/*.yaml
var basesFS embed.FS

// Layer names of the base chain, as step files name them in config.extends.
const (
	LayerBase         = "base"
	LayerProcessing   = "processing"
	LayerTraining     = "training"
	LayerModel        = "model"
	LayerTransform    = "transform"
	LayerTuning       = "tuning"
	LayerRegistration = "registration"
	// LayerStep marks fields declared (or refined) by the step file itself.
	LayerStep = "step"
)

// Catalog is the part of the step catalog the config engine reads.
// *steps.Catalog satisfies it.
type Catalog interface {
	Names() []string
	Get(stepType string) (*steps.Interface, bool)
}

// Field is one configuration field of a step type's schema.
type Field struct {
	Name string `json:"name"`
	steps.Field
	// Source is the layer whose declaration is in effect ("base",
	// "processing", …, or "step" when the step file declares or refines it).
	Source string `json:"source"`
	// Origin is the layer that first declared the field.
	Origin string `json:"origin"`

	re   *regexp.Regexp
	rule expr
}

// Required reports whether the user must supply the field.
func (f *Field) Required() bool { return f.Tier == steps.TierEssential && f.Default == nil }

// Schema is the full configuration schema of one step type.
type Schema struct {
	StepType    string `json:"step_type"`
	ConfigClass string `json:"config_class"`
	// Chain is the base chain, root first, e.g. ["base", "processing"].
	Chain  []string `json:"chain"`
	Fields []*Field `json:"fields"`
	// Open: the step's interface declares no config section (as Cursus
	// interface files do not), so values the base chain does not know are
	// kept and passed through unchecked, and job_type is a field.
	Open bool `json:"open,omitempty"`
	// Hyperparameters documents the keys of the hyperparameters field
	// for the step's framework (compute.model_family); nil when it has none.
	Hyperparameters *HyperparameterSchema `json:"hyperparameters,omitempty"`

	// family is the model family a training or tuning step trains
	// (compute.model_family); "" for every other step.
	family  string
	index   map[string]*Field
	derived []*Field // in evaluation order
	snake   string
}

// Field returns the named field.
func (s *Schema) Field(name string) (*Field, bool) {
	f, ok := s.index[name]
	return f, ok
}

// FieldNames lists the field names in schema order.
func (s *Schema) FieldNames() []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

// HasLayer reports whether layer is part of the base chain.
func (s *Schema) HasLayer(layer string) bool {
	for _, l := range s.Chain {
		if l == layer {
			return true
		}
	}
	return false
}

// SchemaProblem is a defect in a base or step config section. A defective
// field is left out of the schema; the rest of the step stays usable. It
// is located by step type, config layer and field, not by a file and key
// path as a finding.Finding is, and it reaches callers only as its String.
type SchemaProblem struct {
	StepType string `json:"step_type,omitempty"`
	Layer    string `json:"layer"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
}

func (p SchemaProblem) String() string {
	where := p.Layer
	if p.StepType != "" {
		where = p.StepType
	}
	if p.Field != "" {
		where += "." + p.Field
	}
	return where + ": " + p.Message
}

// Schemas holds the schema of every step type in a catalog.
type Schemas struct {
	bases    map[string]*baseLayer
	hps      map[string]*HyperparameterSchema // by compute.model_family
	byStep   map[string]*Schema
	names    []string
	problems []SchemaProblem
	resolve  func(node string) (Node, error)
}

// Names lists the step types with a schema, sorted.
func (s *Schemas) Names() []string { return append([]string(nil), s.names...) }

// Problems lists defects found in step config sections while loading.
func (s *Schemas) Problems() []SchemaProblem { return append([]SchemaProblem(nil), s.problems...) }

// ForStep returns the schema of stepType.
func (s *Schemas) ForStep(stepType string) (*Schema, error) {
	if sc, ok := s.byStep[stepType]; ok {
		return sc, nil
	}
	return nil, &UnknownStepError{StepType: stepType, Suggestions: suggest(stepType, s.names)}
}

// ForConfigClass finds the schema whose config class is class (e.g.
// "XGBoostTrainingConfig"). Cursus files name classes, not step types.
func (s *Schemas) ForConfigClass(class string) (*Schema, error) {
	for _, n := range s.names {
		if s.byStep[n].ConfigClass == class {
			return s.byStep[n], nil
		}
	}
	// Files written by other tools may drop the registry's special class
	// names; fall back to the step type the name spells.
	trimmed := strings.TrimSuffix(strings.TrimSuffix(class, "Config"), "Step")
	if sc, ok := s.byStep[trimmed]; ok {
		return sc, nil
	}
	classes := make([]string, 0, len(s.names))
	for _, n := range s.names {
		classes = append(classes, s.byStep[n].ConfigClass)
	}
	sort.Strings(classes)
	return nil, &UnknownStepError{StepType: class, Suggestions: suggest(class, classes), Class: true}
}

// UnknownStepError names a step type (or config class) without a schema.
type UnknownStepError struct {
	StepType    string
	Class       bool
	Suggestions []string
	msg         string
}

func (e *UnknownStepError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	what := "step type"
	if e.Class {
		what = "config class"
	}
	msg := fmt.Sprintf("unknown %s %q", what, e.StepType)
	if len(e.Suggestions) > 0 {
		msg += " (did you mean " + strings.Join(e.Suggestions, ", ") + "?)"
	}
	return msg
}

type baseLayer struct {
	Name        string
	Description string                     `yaml:"description"`
	Extends     string                     `yaml:"extends"`
	Fields      steps.Ordered[steps.Field] `yaml:"fields"`
}

// defaultLayer maps a SageMaker step type to the base a step without an
// explicit config.extends gets.
var defaultLayer = map[string]string{
	steps.SMProcessing:    LayerProcessing,
	steps.SMTraining:      LayerTraining,
	steps.SMCreateModel:   LayerModel,
	steps.SMTransform:     LayerTransform,
	steps.SMTuning:        LayerTuning,
	steps.SMRegisterModel: LayerRegistration,
}

// entryPointFields default to the step's own script when the step file
// does not set them: the base cannot know the script name.
var entryPointFields = []string{"processing_entry_point", "training_entry_point"}

// LoadSchemas builds the schema of every step type in cat. Defects in a
// step's config section become Problems and leave that field out; an error
// is returned only when the embedded bases themselves are broken.
func LoadSchemas(cat Catalog) (*Schemas, error) {
	bases, err := loadBases()
	if err != nil {
		return nil, err
	}
	hps, err := loadHyperparameters()
	if err != nil {
		return nil, err
	}
	s := &Schemas{bases: bases, hps: hps, byStep: map[string]*Schema{}}
	for _, name := range cat.Names() {
		iface, ok := cat.Get(name)
		if !ok || iface == nil {
			continue
		}
		s.problems = append(s.problems, s.add(iface)...)
	}
	s.finish(cat)
	return s, nil
}

// Overlay returns the schemas of cat, a catalog derived from s's own with
// stepTypes added or replaced (steps.Catalog.Overlay): the schemas of the
// other steps are shared, s is not modified. The problems are those of the
// overlaid steps' config sections only.
func (s *Schemas) Overlay(cat Catalog, stepTypes []string) (*Schemas, []SchemaProblem) {
	if len(stepTypes) == 0 {
		return s, nil
	}
	out := &Schemas{bases: s.bases, hps: s.hps, byStep: maps.Clone(s.byStep), problems: slices.Clone(s.problems)}
	var problems []SchemaProblem
	for _, name := range stepTypes {
		delete(out.byStep, name)
		if iface, ok := cat.Get(name); ok && iface != nil {
			problems = append(problems, out.add(iface)...)
		}
	}
	out.problems = append(out.problems, problems...)
	out.finish(cat)
	return out, problems
}

// add builds iface's schema into s and returns its problems.
func (s *Schemas) add(iface *steps.Interface) []SchemaProblem {
	sc, probs := buildSchema(s.bases, iface)
	if sc != nil {
		if _, has := sc.Field("hyperparameters"); has && iface.Compute != nil {
			sc.Hyperparameters = s.hps[iface.Compute.ModelFamily]
		}
		if iface.Compute != nil {
			sc.family = iface.Compute.ModelFamily
		}
		s.byStep[iface.StepType] = sc
	}
	return probs
}

// finish indexes the names and binds node resolution to cat.
func (s *Schemas) finish(cat Catalog) {
	s.names = slices.Sorted(maps.Keys(s.byStep))
	s.resolve = s.resolveByPrefix
	if r, ok := cat.(catalogResolver); ok {
		s.resolve = resolveWith(r)
	}
}

func loadBases() (map[string]*baseLayer, error) {
	entries, err := fs.ReadDir(basesFS, "bases")
	if err != nil {
		return nil, fmt.Errorf("config bases: %w", err)
	}
	bases := map[string]*baseLayer{}
	for _, e := range entries {
		data, err := basesFS.ReadFile("bases/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("config bases: %w", err)
		}
		var b baseLayer
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&b); err != nil {
			return nil, fmt.Errorf("config base %s: %w", e.Name(), err)
		}
		b.Name = strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		bases[b.Name] = &b
	}
	// Every base must be usable on its own: check it as a step-less schema.
	for name := range bases {
		if _, err := chainOf(bases, name); err != nil {
			return nil, err
		}
		_, probs := assemble(bases, name, "", nil, "")
		if len(probs) > 0 {
			return nil, fmt.Errorf("config base %s: %s", name, probs[0])
		}
	}
	return bases, nil
}

func chainOf(bases map[string]*baseLayer, layer string) ([]string, error) {
	var chain []string
	seen := map[string]bool{}
	for l := layer; l != ""; l = bases[l].Extends {
		if _, ok := bases[l]; !ok {
			return nil, fmt.Errorf("unknown config base %q (known: %s)", l, strings.Join(slices.Sorted(maps.Keys(bases)), ", "))
		}
		if seen[l] {
			return nil, fmt.Errorf("config base %q extends itself", l)
		}
		seen[l] = true
		chain = append([]string{l}, chain...)
	}
	return chain, nil
}

func buildSchema(bases map[string]*baseLayer, iface *steps.Interface) (*Schema, []SchemaProblem) {
	layer := iface.Config.Extends
	if layer == "" {
		layer = defaultLayer[iface.Registry.SageMakerStepType]
		if layer == "" {
			layer = LayerBase
		}
	}
	if _, ok := bases[layer]; !ok {
		return nil, []SchemaProblem{{StepType: iface.StepType, Layer: LayerStep, Field: "extends",
			Message: fmt.Sprintf("config.extends %q is not a base (known: %s)", layer, strings.Join(slices.Sorted(maps.Keys(bases)), ", "))}}
	}
	return assemble(bases, layer, iface.StepType, iface, iface.ConfigClass())
}

// assemble merges the base chain of layer with the step's own fields.
func assemble(bases map[string]*baseLayer, layer, stepType string, iface *steps.Interface, class string) (*Schema, []SchemaProblem) {
	chain, err := chainOf(bases, layer)
	if err != nil {
		return nil, []SchemaProblem{{StepType: stepType, Layer: layer, Message: err.Error()}}
	}
	sc := &Schema{StepType: stepType, ConfigClass: class, Chain: chain, index: map[string]*Field{}, snake: steps.CanonicalToSnake(stepType)}
	var probs []SchemaProblem
	add := func(layerName string, fields *steps.Ordered[steps.Field]) {
		for _, name := range fields.Keys() {
			decl, _ := fields.Get(name)
			if p := mergeField(sc, layerName, name, decl); p != "" {
				probs = append(probs, SchemaProblem{StepType: stepType, Layer: layerName, Field: name, Message: p})
			}
		}
	}
	for _, l := range chain {
		add(l, &bases[l].Fields)
	}
	if iface != nil {
		add(LayerStep, &iface.Config.Fields)
		stepDefaults(sc, iface)
		if iface.Config.Extends == "" && iface.Config.Fields.Len() == 0 {
			sc.Open = true
			if _, ok := sc.index["job_type"]; !ok {
				jt := *openJobType
				sc.index["job_type"] = &jt
				sc.Fields = append(sc.Fields, &jt)
			}
		}
	}
	probs = append(probs, finishFields(sc)...)
	return sc, probs
}

// openJobType is the job_type of a step type without a config section:
// Cursus configs carry one (engine-aux §1.6: lowercase letters, digits and
// underscores) and the compiled step name keeps it.
var openJobType = &Field{Name: "job_type", Source: LayerStep, Origin: LayerStep, re: regexp.MustCompile(`^[a-z][a-z0-9_]*$`),
	Field: steps.Field{Type: "string", Tier: steps.TierSystem, Pattern: `^[a-z][a-z0-9_]*$`,
		Description: "Data split or variant this step runs for (training, calibration, …); part of the step name"}}

// mergeField adds a new field or refines an existing one; it returns a
// problem message or "".
func mergeField(sc *Schema, layer, name string, decl steps.Field) string {
	if old, ok := sc.index[name]; ok {
		merged := old.Field
		if decl.Type != "" && decl.Type != old.Type {
			return fmt.Sprintf("re-declares type %q as %q; a refinement may not change the type", old.Type, decl.Type)
		}
		if decl.Tier != "" {
			merged.Tier = decl.Tier
		}
		if decl.Default != nil {
			merged.Default = decl.Default
		}
		if decl.Description != "" {
			merged.Description = decl.Description
		}
		if decl.Allowed != nil {
			merged.Allowed = decl.Allowed
		}
		if decl.Pattern != "" {
			merged.Pattern = decl.Pattern
		}
		if decl.Minimum != nil {
			merged.Minimum = decl.Minimum
		}
		if decl.Maximum != nil {
			merged.Maximum = decl.Maximum
		}
		if decl.Items != "" {
			merged.Items = decl.Items
		}
		if decl.Rule != "" {
			merged.Rule = decl.Rule
		}
		if merged.Tier == steps.TierDerived && old.Tier != steps.TierDerived || merged.Tier != steps.TierDerived && old.Tier == steps.TierDerived {
			return fmt.Sprintf("cannot move a field between tier %q and tier %q", old.Tier, merged.Tier)
		}
		f := &Field{Name: name, Field: merged, Source: layer, Origin: old.Origin}
		if p := checkDecl(f); p != "" {
			return p
		}
		sc.index[name] = f
		for i := range sc.Fields {
			if sc.Fields[i].Name == name {
				sc.Fields[i] = f
			}
		}
		return ""
	}
	if decl.Type == "" {
		return "missing type (string, integer, number, boolean, array or object)"
	}
	if decl.Tier == "" {
		return "missing tier (essential, system or derived)"
	}
	f := &Field{Name: name, Field: decl, Source: layer, Origin: layer}
	if p := checkDecl(f); p != "" {
		return p
	}
	sc.index[name] = f
	sc.Fields = append(sc.Fields, f)
	return ""
}

var validTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "array": true, "object": true}

// checkDecl validates one field declaration and normalises its default and
// allowed values.
// patterns holds every field pattern compiled so far. The same few
// patterns are declared by many fields of many step types, and every
// catalog load checks every field again; a *regexp.Regexp is safe to share.
// Only the catalogs' own patterns are kept (at most maxPatterns), so a
// stream of step directories cannot grow it without bound.
var patterns struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

const maxPatterns = 1024

func compilePattern(p string) (*regexp.Regexp, error) {
	patterns.Lock()
	re, ok := patterns.m[p]
	patterns.Unlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	patterns.Lock()
	if patterns.m == nil {
		patterns.m = map[string]*regexp.Regexp{}
	}
	if len(patterns.m) < maxPatterns {
		patterns.m[p] = re
	}
	patterns.Unlock()
	return re, nil
}

func checkDecl(f *Field) string {
	if !validTypes[f.Type] {
		return fmt.Sprintf("type %q is not one of string, integer, number, boolean, array, object", f.Type)
	}
	switch f.Tier {
	case steps.TierEssential, steps.TierSystem, steps.TierDerived:
	default:
		return fmt.Sprintf("tier %q is not one of essential, system, derived", f.Tier)
	}
	if f.Items != "" && (f.Type != "array" || !validTypes[f.Items]) {
		return fmt.Sprintf("items %q needs type array and an element type", f.Items)
	}
	f.re = nil
	if f.Pattern != "" {
		re, err := compilePattern(f.Pattern)
		if err != nil {
			return fmt.Sprintf("pattern does not compile: %v", err)
		}
		f.re = re
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		return fmt.Sprintf("minimum %v exceeds maximum %v", *f.Minimum, *f.Maximum)
	}
	if f.Tier == steps.TierDerived {
		if f.Rule == "" {
			return "a derived field needs a rule"
		}
		if f.Default != nil {
			return "a derived field cannot have a default"
		}
		return ""
	}
	if f.Rule != "" {
		return "only derived fields have a rule"
	}
	elem := f.Type
	if f.Type == "array" && f.Items != "" {
		elem = f.Items
	}
	allowed := make([]any, 0, len(f.Allowed))
	for _, a := range f.Allowed {
		n, p := normalize(a, elem, "", 0)
		if p != nil {
			return fmt.Sprintf("allowed value %v: %s", a, p.Message)
		}
		allowed = append(allowed, n)
	}
	if f.Allowed != nil {
		f.Allowed = allowed
	}
	if f.Default != nil {
		d, probs := checkValue(f, f.Default)
		if len(probs) > 0 {
			return "default " + probs[0].Message
		}
		f.Default = d
	}
	return ""
}

// stepDefaults gives entry-point fields the step's script as default when
// the step file did not set one.
func stepDefaults(sc *Schema, iface *steps.Interface) {
	script := iface.Contract.EntryPoint
	if script == "" && sc.snake != "" {
		script = sc.snake + ".py"
	}
	for _, name := range entryPointFields {
		f, ok := sc.index[name]
		if !ok || f.Default != nil || script == "" {
			continue
		}
		cp := *f
		cp.Default = script
		sc.index[name] = &cp
		for i := range sc.Fields {
			if sc.Fields[i].Name == name {
				sc.Fields[i] = &cp
			}
		}
	}
}

// finishFields parses derived rules and orders them so every rule runs
// after the derived fields it reads.
func finishFields(sc *Schema) []SchemaProblem {
	var probs []SchemaProblem
	deps := map[string][]string{}
	var keep []*Field
	for _, f := range sc.Fields {
		if f.Tier != steps.TierDerived {
			keep = append(keep, f)
			continue
		}
		e, err := parseRule(f.Rule)
		if err == nil {
			err = e.check(func(id string) bool { _, ok := sc.index[id]; return ok || pseudoVars[id] })
		}
		if err != nil {
			probs = append(probs, SchemaProblem{StepType: sc.StepType, Layer: f.Source, Field: f.Name, Message: fmt.Sprintf("rule %q: %v", f.Rule, err)})
			delete(sc.index, f.Name)
			continue
		}
		f.rule = e
		keep = append(keep, f)
		for _, id := range e.idents(nil) {
			if d, ok := sc.index[id]; ok && d.Tier == steps.TierDerived {
				deps[f.Name] = append(deps[f.Name], id)
			}
		}
	}
	sc.Fields = keep
	// Depth-first topological order; a cycle drops the fields on it.
	state := map[string]int{}
	var visit func(name string, stack []string) bool
	visit = func(name string, stack []string) bool {
		switch state[name] {
		case 1:
			return false
		case 2:
			return true
		}
		state[name] = 1
		ok := true
		for _, d := range deps[name] {
			if _, still := sc.index[d]; !still || !visit(d, append(stack, name)) {
				ok = false
			}
		}
		state[name] = 2
		if !ok {
			f := sc.index[name]
			probs = append(probs, SchemaProblem{StepType: sc.StepType, Layer: f.Source, Field: name,
				Message: fmt.Sprintf("rule %q depends on a derived field that is cyclic or broken", f.Rule)})
			delete(sc.index, name)
			return false
		}
		sc.derived = append(sc.derived, sc.index[name])
		return true
	}
	for _, f := range keep {
		if f.Tier == steps.TierDerived {
			visit(f.Name, nil)
		}
	}
	final := sc.Fields[:0]
	for _, f := range sc.Fields {
		if _, ok := sc.index[f.Name]; ok {
			final = append(final, f)
		}
	}
	sc.Fields = final
	return probs
}
