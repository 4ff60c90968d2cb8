// Package strategies is the builder strategy library: the construction strategies a step can be built with, their knobs, and the
// routing from a step's SageMaker step type (and, for Processing,
// patterns.step_assembly) to one of them. The table is data, embedded from
// strategies.yaml. It knows nothing about HTTP, MCP or tool envelopes.
package strategies

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cursus-dev/cursus/engine/steps"
)

//go:embed strategies.yaml
var tableYAML []byte

// Routing axes.
const (
	AxisStepAssembly      = "step_assembly"
	AxisSageMakerStepType = "sagemaker_step_type"
)

// Knob is one tunable of a strategy.
type Knob struct {
	Name     string `yaml:"name" json:"name"`
	Type     string `yaml:"type" json:"type"` // bool | str | list | callable
	Default  any    `yaml:"default" json:"default"`
	Required bool   `yaml:"required" json:"required"`
	Doc      string `yaml:"doc" json:"doc"`
}

// Strategy is one row of the library.
type Strategy struct {
	Axis    string `json:"axis"`
	Name    string `json:"name"`
	Verb    string `json:"verb"`
	Handler string `json:"handler"`
	// Routable rows can be chosen by routing; Implemented rows can be
	// compiled by this service (Amazon-internal delegations cannot).
	Routable    bool           `json:"routable"`
	Implemented bool           `json:"implemented"`
	Knobs       []Knob         `json:"knobs"`
	PresetKnobs map[string]any `json:"preset_knobs"`
	Note        string         `json:"note,omitempty"`
}

type row struct {
	Axis        string         `yaml:"axis"`
	Name        string         `yaml:"name"`
	Verb        string         `yaml:"verb"`
	Handler     string         `yaml:"handler"`
	Knobs       string         `yaml:"knobs"`
	PresetKnobs map[string]any `yaml:"preset_knobs"`
	Routable    *bool          `yaml:"routable"`
	Implemented bool           `yaml:"implemented"`
	Note        string         `yaml:"note"`
}

// Library is the loaded table. The zero value is empty; use Default.
type Library struct {
	rows []Strategy // sorted by (axis, name)
}

var defaultLib = mustLoad(tableYAML)

// Default returns the embedded library.
func Default() *Library { return defaultLib }

func mustLoad(data []byte) *Library {
	l, err := Load(data)
	if err != nil {
		panic(fmt.Sprintf("embedded strategies.yaml: %v", err)) // a build defect, caught by tests
	}
	return l
}

// Load parses a strategy table.
func Load(data []byte) (*Library, error) {
	var doc struct {
		KnobSets   map[string][]Knob `yaml:"knob_sets"`
		Strategies []row             `yaml:"strategies"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	l := &Library{}
	seen := map[string]bool{}
	for i, r := range doc.Strategies {
		if r.Axis != AxisStepAssembly && r.Axis != AxisSageMakerStepType {
			return nil, fmt.Errorf("strategies[%d]: unknown axis %q", i, r.Axis)
		}
		key := r.Axis + "/" + r.Name
		if seen[key] {
			return nil, fmt.Errorf("strategies[%d]: duplicate %s", i, key)
		}
		seen[key] = true
		s := Strategy{
			Axis: r.Axis, Name: r.Name, Verb: r.Verb, Handler: r.Handler, Routable: r.Routable == nil || *r.Routable,
			Implemented: r.Implemented, Knobs: []Knob{}, PresetKnobs: r.PresetKnobs, Note: r.Note,
		}
		if s.PresetKnobs == nil {
			s.PresetKnobs = map[string]any{}
		}
		if r.Knobs != "" {
			ks, ok := doc.KnobSets[r.Knobs]
			if !ok {
				return nil, fmt.Errorf("strategies[%d]: unknown knob set %q", i, r.Knobs)
			}
			s.Knobs = append(s.Knobs, ks...)
		}
		for k := range s.PresetKnobs {
			if !hasKnob(s.Knobs, k) {
				return nil, fmt.Errorf("strategies[%d]: preset knob %q is not a knob of %s", i, k, key)
			}
		}
		if s.Routable && s.Handler == "" {
			return nil, fmt.Errorf("strategies[%d]: routable %s has no handler", i, key)
		}
		l.rows = append(l.rows, s)
	}
	sort.SliceStable(l.rows, func(a, b int) bool {
		if l.rows[a].Axis != l.rows[b].Axis {
			return l.rows[a].Axis < l.rows[b].Axis
		}
		return l.rows[a].Name < l.rows[b].Name
	})
	return l, nil
}

func hasKnob(ks []Knob, name string) bool {
	for _, k := range ks {
		if k.Name == name {
			return true
		}
	}
	return false
}

// AxisInfo counts the strategies of one axis.
type AxisInfo struct {
	Axis          string `json:"axis"`
	StrategyCount int    `json:"strategy_count"`
}

// Axes lists the axes, sorted, with their row counts.
func (l *Library) Axes() []AxisInfo {
	counts := map[string]int{}
	for _, s := range l.rows {
		counts[s.Axis]++
	}
	out := make([]AxisInfo, 0, len(counts))
	for a, n := range counts {
		out = append(out, AxisInfo{a, n})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Axis < out[b].Axis })
	return out
}

// List returns the rows of one axis ("" for all), sorted by (axis, name).
// Non-routable rows are included.
func (l *Library) List(axis string) []Strategy {
	out := []Strategy{}
	for _, s := range l.rows {
		if axis == "" || s.Axis == axis {
			out = append(out, s)
		}
	}
	return out
}

// Find returns the rows named name, on axis if given.
func (l *Library) Find(name, axis string) []Strategy {
	out := []Strategy{}
	for _, s := range l.rows {
		if s.Name == name && (axis == "" || s.Axis == axis) {
			out = append(out, s)
		}
	}
	return out
}

// Names lists the distinct strategy names, sorted.
func (l *Library) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l.rows {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// NoBuilderError says a (axis, name) pair has no routable strategy.
type NoBuilderError struct {
	Axis, Name string
	// Known is false when no row exists at all (as opposed to a row that
	// is not routable).
	Known bool
}

func (e *NoBuilderError) Error() string {
	return fmt.Sprintf("'%s' on axis '%s' is not a routable construction strategy", e.Name, e.Axis)
}

// Resolve returns the routable strategy (axis, name).
func (l *Library) Resolve(axis, name string) (Strategy, error) {
	for _, s := range l.rows {
		if s.Axis == axis && s.Name == name {
			if !s.Routable {
				return s, &NoBuilderError{Axis: axis, Name: name, Known: true}
			}
			return s, nil
		}
	}
	return Strategy{}, &NoBuilderError{Axis: axis, Name: name}
}

// Route is the routing rule: Processing steps route on step_assembly
// (default "code"), every other SageMaker step type on itself.
func Route(sagemakerStepType, stepAssembly string) (axis, name string) {
	if sagemakerStepType == steps.SMProcessing {
		if stepAssembly == "" {
			stepAssembly = "code"
		}
		return AxisStepAssembly, stepAssembly
	}
	return AxisSageMakerStepType, sagemakerStepType
}

// ForStepType routes and resolves in one call.
func (l *Library) ForStepType(sagemakerStepType, stepAssembly string) (Strategy, string, string, error) {
	axis, name := Route(sagemakerStepType, stepAssembly)
	s, err := l.Resolve(axis, name)
	return s, axis, name, err
}

// StepAssembly is the interface's assembly pattern: patterns.step_assembly,
// else the deprecated registry.step_assembly.
func StepAssembly(iface *steps.Interface) string {
	if iface.Patterns.StepAssembly != "" {
		return iface.Patterns.StepAssembly
	}
	return iface.Registry.StepAssembly
}

// ForInterface returns the strategy a step is built with.
func (l *Library) ForInterface(iface *steps.Interface) (Strategy, error) {
	s, _, _, err := l.ForStepType(iface.Registry.SageMakerStepType, StepAssembly(iface))
	return s, err
}

// EffectiveKnobs merges knob defaults, the strategy's presets and the
// interface's patterns (direct_input_keys when set; contract.source_dir
// turns on split_source_dir; include_job_type_in_path follows
// Interface.JobTypeInPath, as the compiler does), in that order.
func EffectiveKnobs(s Strategy, iface *steps.Interface) map[string]any {
	out := map[string]any{}
	for _, k := range s.Knobs {
		out[k.Name] = k.Default
	}
	for k, v := range s.PresetKnobs {
		out[k] = v
	}
	if iface == nil {
		return out
	}
	if _, ok := out["direct_input_keys"]; ok && len(iface.Patterns.DirectInputKeys) > 0 {
		out["direct_input_keys"] = append([]string(nil), iface.Patterns.DirectInputKeys...)
	}
	if _, ok := out["include_job_type_in_path"]; ok {
		out["include_job_type_in_path"] = iface.JobTypeInPath()
	}
	if _, ok := out["split_source_dir"]; ok && isTrue(iface.Contract.SourceDir) {
		out["split_source_dir"] = true
	}
	return out
}

// isTrue reads contract.source_dir, which Cursus files write as a boolean.
func isTrue(s string) bool { return strings.EqualFold(s, "true") }
