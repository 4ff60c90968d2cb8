package deps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// Report modes: a DAG's actual wiring, or a set of steps matched as if
// each could feed each.
const (
	ModeDAG     = "dag"
	ModeStepSet = "step_set"
)

// Report summarises a resolution step by step.
type Report struct {
	Mode            string   `json:"mode"`
	RequestedSteps  []string `json:"requested_steps"`
	RegisteredSteps []string `json:"registered_steps"`
	// MissingSpecs are requested steps the catalog does not know.
	MissingSpecs []string   `json:"missing_specs"`
	Report       ReportBody `json:"report"`
	// Suggestions are close catalog names for each missing step.
	Suggestions map[string][]string `json:"-"`
}

// ReportBody is the per-step detail and the totals of a Report.
type ReportBody struct {
	TotalSteps      int                   `json:"total_steps"`
	RegisteredSteps int                   `json:"registered_steps"`
	StepDetails     map[string]StepDetail `json:"step_details"`
	// UnresolvedDependencies are "node.dependency" for every required
	// dependency left unbound.
	UnresolvedDependencies []string          `json:"unresolved_dependencies"`
	ResolutionSummary      ResolutionSummary `json:"resolution_summary"`
	// Diagnostics are the DAG resolver's candidates for each unresolved
	// dependency (DAG mode only).
	Diagnostics []Unresolved `json:"diagnostics"`
	// Warnings are optional bindings from producers outside the
	// dependency's compatible_sources (DAG mode only).
	Warnings []SourceWarning `json:"warnings"`
}

// ResolutionSummary counts dependencies over all steps.
type ResolutionSummary struct {
	TotalDependencies    int     `json:"total_dependencies"`
	ResolvedDependencies int     `json:"resolved_dependencies"`
	ResolutionRate       float64 `json:"resolution_rate"`
	StepsWithErrors      int     `json:"steps_with_errors"`
}

// StepDetail is one step's dependencies and how they were bound.
type StepDetail struct {
	StepType             string   `json:"step_type"`
	TotalDependencies    int      `json:"total_dependencies"`
	RequiredDependencies int      `json:"required_dependencies"`
	OptionalDependencies int      `json:"optional_dependencies"`
	Outputs              []string `json:"outputs"`
	// ResolvedDependencies maps a dependency to "node.output".
	ResolvedDependencies   map[string]string  `json:"resolved_dependencies"`
	Scores                 map[string]float64 `json:"scores"`
	UnresolvedDependencies []string           `json:"unresolved_dependencies"`
	// OptionalUnbound is set in DAG mode only: a step set binds no DAG.
	OptionalUnbound *[]string `json:"optional_unbound,omitempty"`
	Error           string    `json:"error,omitempty"`
}

// NoKnownStepsError means none of a step set is in the catalog.
type NoKnownStepsError struct {
	Missing     []string
	Suggestions map[string][]string
}

func (e *NoKnownStepsError) Error() string {
	return "none of the requested steps is a known step type"
}

// PlanReport reports plan, the resolution of a DAG over cat. It stops
// with ctx's error when ctx ends.
func PlanReport(ctx context.Context, plan *Plan, cat *steps.Catalog) (*Report, error) {
	rep := newReport(ModeDAG, plan.Order, plan.Order, nil)
	rep.Report.Diagnostics = plan.Unresolved
	rep.Report.Warnings = nonNil(plan.Warnings)
	unresolved := map[string][]string{}
	for _, u := range plan.Unresolved {
		unresolved[u.Node] = append(unresolved[u.Node], u.Dependency)
	}
	for _, n := range plan.Order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info := plan.Steps[n]
		iface, _, _ := cat.ForJobType(info.StepType, info.JobType)
		d := StepDetail{StepType: info.StepType, ResolvedDependencies: map[string]string{}, Scores: map[string]float64{}, Outputs: []string{}}
		countDependencies(&d, iface)
		for _, b := range plan.Bindings[n] {
			d.ResolvedDependencies[b.Dependency] = b.FromNode + "." + b.FromOutput
			d.Scores[b.Dependency] = round4(b.Score)
		}
		unbound := nonNil(plan.OptionalUnbound[n])
		d.OptionalUnbound = &unbound
		rep.add(n, d, unresolved[n], len(d.ResolvedDependencies))
	}
	rep.summarise()
	return rep, nil
}

// SetReport matches the named steps against each other (ResolveSet) and
// reports it; names the catalog does not know are listed, not fatal,
// unless none is known (*NoKnownStepsError). It stops with ctx's error
// when ctx ends.
func SetReport(ctx context.Context, names []string, cat *steps.Catalog) (*Report, error) {
	lookup := CatalogLookup(cat)
	var known, missing []string
	suggestions := map[string][]string{}
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := lookup(n); err != nil {
			missing = append(missing, n)
			var nf *steps.NotFoundError
			if errors.As(err, &nf) {
				suggestions[n] = nonNil(nf.Suggestions)
			}
			continue
		}
		known = append(known, n)
	}
	if len(known) == 0 {
		return nil, &NoKnownStepsError{Missing: missing, Suggestions: suggestions}
	}
	set, err := ResolveSet(ctx, known, lookup)
	if err != nil {
		return nil, err
	}
	rep := newReport(ModeStepSet, names, known, missing)
	rep.Suggestions = suggestions
	for _, st := range set {
		d := StepDetail{StepType: st.StepType, Outputs: st.Outputs, ResolvedDependencies: map[string]string{}, Scores: map[string]float64{}}
		var missingDeps []string
		for _, m := range st.Matches {
			if m.Required {
				d.RequiredDependencies++
			} else {
				d.OptionalDependencies++
			}
			if m.Resolved {
				d.ResolvedDependencies[m.Dependency] = m.FromNode + "." + m.FromOutput
				d.Scores[m.Dependency] = round4(m.Score)
			} else if m.Required {
				missingDeps = append(missingDeps, m.Dependency)
			}
		}
		d.TotalDependencies = d.RequiredDependencies + d.OptionalDependencies
		rep.add(st.Node, d, missingDeps, len(d.ResolvedDependencies))
	}
	rep.summarise()
	return rep, nil
}

func newReport(mode string, requested, registered, missing []string) *Report {
	return &Report{Mode: mode, RequestedSteps: requested, RegisteredSteps: registered, MissingSpecs: nonNil(missing),
		Report: ReportBody{TotalSteps: len(registered), RegisteredSteps: len(registered), StepDetails: map[string]StepDetail{},
			UnresolvedDependencies: []string{}, Warnings: []SourceWarning{}}}
}

// add records node's detail with its unresolved required dependencies.
func (r *Report) add(node string, d StepDetail, missing []string, resolved int) {
	d.UnresolvedDependencies = nonNil(missing)
	for _, m := range missing {
		r.Report.UnresolvedDependencies = append(r.Report.UnresolvedDependencies, node+"."+m)
	}
	if len(missing) > 0 {
		d.Error = fmt.Sprintf("Step '%s' has unresolved required dependencies: [%s]", node, strings.Join(missing, ", "))
		r.Report.ResolutionSummary.StepsWithErrors++
	}
	r.Report.ResolutionSummary.TotalDependencies += d.TotalDependencies
	r.Report.ResolutionSummary.ResolvedDependencies += resolved
	r.Report.StepDetails[node] = d
}

func (r *Report) summarise() {
	s := &r.Report.ResolutionSummary
	if s.TotalDependencies > 0 {
		s.ResolutionRate = round4(float64(s.ResolvedDependencies) / float64(s.TotalDependencies))
	}
}

// countDependencies fills d's dependency counts and outputs from iface.
func countDependencies(d *StepDetail, iface *steps.Interface) {
	if iface == nil {
		return
	}
	for _, k := range iface.Spec.Dependencies.Keys() {
		dep, _ := iface.Spec.Dependencies.Get(k)
		if dep.IsRequired() {
			d.RequiredDependencies++
		} else {
			d.OptionalDependencies++
		}
	}
	d.TotalDependencies = d.RequiredDependencies + d.OptionalDependencies
	d.Outputs = nonNil(append([]string(nil), iface.Spec.Outputs.Keys()...))
}

// round4 keeps four decimals, so reports do not show float noise.
func round4(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 4, 64), 64)
	return v
}

func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
