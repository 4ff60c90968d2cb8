package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
)

// PreflightGate is one constructibility gate of a step.
type PreflightGate struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
	Step   string `json:"step,omitempty"`
	Remedy string `json:"remedy,omitempty"`
	// Findings are every finding of the alignment checks
	// (script_alignment gate only): the same validate.alignment reports.
	Findings []validate.Finding `json:"findings,omitempty"`
}

// PreflightRequest names one step (StepName, with JobType) or every
// catalog step (All), and where to look for scripts.
type PreflightRequest struct {
	StepName string
	All      bool
	JobType  string
	Search   ScriptSearch
	// Progress, when set, hears of each step checked.
	Progress func(done, total int, step string)
}

// PreflightReport is the gates of every step requested.
type PreflightReport struct {
	// StepName is the step checked, nil when every step was.
	StepName      any             `json:"step_name"`
	Scope         string          `json:"scope"` // the step type, or "all"
	Constructible bool            `json:"constructible"`
	Gates         []PreflightGate `json:"gates"`
	// Failing names the failing gates ("gate[Step]" for all steps).
	Failing []string `json:"-"`
}

// Preflight runs the four authoring gates — interface, registry binding,
// config construction, alignment (every check validate.alignment runs,
// with the script when found) — of the steps req names.
func (s *Suite) Preflight(ctx context.Context, req PreflightRequest) (*PreflightReport, error) {
	if (req.StepName == "") == !req.All {
		return nil, inputErrorf("provide 'step_name' or set 'all' to true (not both)")
	}
	var targets []*steps.Interface
	if req.All {
		for _, n := range s.Steps.Names() {
			iface, _ := s.Steps.Get(n)
			targets = append(targets, iface)
		}
	} else {
		iface, _, _, err := s.Step(req.StepName, req.JobType)
		if err != nil {
			return nil, err
		}
		targets = append(targets, iface)
	}
	rep := &PreflightReport{Scope: "all"}
	if !req.All {
		rep.Scope, rep.StepName = targets[0].StepType, targets[0].StepType
	}
	for i, iface := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		step := ""
		if req.All {
			step = iface.StepType
		}
		for _, g := range s.preflightGates(ctx, iface, req.Search) {
			g.Step = step
			if !g.Passed {
				name := g.Name
				if step != "" {
					name += "[" + step + "]"
				}
				rep.Failing = append(rep.Failing, name)
			}
			rep.Gates = append(rep.Gates, g)
		}
		if req.Progress != nil {
			req.Progress(i+1, len(targets), iface.StepType)
		}
	}
	rep.Constructible = len(rep.Failing) == 0
	return rep, nil
}

// preflightGates are the four gates of one step. The binding and config
// gates read the alignment report of the catalog step; the last gate runs
// the alignment checks with the script found by search.
func (s *Suite) preflightGates(ctx context.Context, iface *steps.Interface, search ScriptSearch) []PreflightGate {
	rep := s.catalogReport(iface)
	return []PreflightGate{
		s.interfaceGate(iface),
		bindingGate(iface, rep),
		s.configGate(ctx, iface, rep),
		s.alignmentGate(ctx, iface, search),
	}
}

// catalogReport is the alignment report of iface without a script. With
// no script to analyse there is nothing to stop, so no context and no
// error.
func (s *Suite) catalogReport(iface *steps.Interface) validate.StepReport {
	r, _ := validate.CheckStep(context.Background(), s.StepCheck(iface, Script{}))
	return r
}

func (s *Suite) interfaceGate(iface *steps.Interface) PreflightGate {
	ir := s.CheckInterface(iface, "")
	g := PreflightGate{Name: "interface", Passed: ir.OK}
	if ir.OK {
		g.Detail = fmt.Sprintf("interface valid (%d warning(s))", len(ir.Warnings))
		return g
	}
	msgs := []string{}
	for _, f := range firstN(ir.Errors, 3) {
		msgs = append(msgs, f.Path+": "+f.Message)
	}
	g.Detail = fmt.Sprintf("%d blocking error(s): %s", len(ir.Errors), strings.Join(msgs, "; "))
	g.Remedy = "the interface check lists every error with its key path and rule"
	return g
}

func bindingGate(iface *steps.Interface, rep validate.StepReport) PreflightGate {
	g := PreflightGate{Name: "registry_binding", Passed: true}
	var problems []string
	skipped := false
	for _, f := range rep.Findings {
		if f.Category != validate.CatBuilderConfig {
			continue
		}
		if f.Rule == "builder_check_skipped" {
			skipped = true
		}
		if f.Blocking() {
			g.Passed = false
			problems = append(problems, f.Location+": "+f.Message)
			if g.Remedy == "" {
				g.Remedy = f.Fix
			}
		}
	}
	switch {
	case rep.Status == validate.StatusExcluded || skipped:
		g.Detail = "SKIPPED: " + iface.Registry.SageMakerStepType + " steps bind no builder (counts as a pass)"
	case g.Passed:
		g.Detail = fmt.Sprintf("%s (assembly %s) binds builder %s; config has every field it reads", iface.Registry.SageMakerStepType,
			orDefault(iface.Patterns.StepAssembly), iface.BuilderName())
	default:
		g.Detail = strings.Join(firstN(problems, 3), "; ")
	}
	return g
}

func (s *Suite) configGate(ctx context.Context, iface *steps.Interface, rep validate.StepReport) PreflightGate {
	g := PreflightGate{Name: "config_constructible", Passed: true}
	if rep.Status == validate.StatusExcluded {
		g.Detail = "SKIPPED: no config to build"
		return g
	}
	cfgs, probs, err := s.SampleConfigs(ctx, dag.New([]string{iface.StepType}, nil))
	if err != nil {
		g.Passed, g.Detail = false, err.Error()
		return g
	}
	if len(probs) > 0 {
		g.Passed = false
		msgs := []string{}
		for _, p := range firstN(probs, 3) {
			msgs = append(msgs, p.String())
		}
		g.Detail = strings.Join(msgs, "; ")
		g.Remedy = "the step's config constraints give each field's type, default and allowed values; fix the config section of the .step.yaml"
		return g
	}
	g.Detail = fmt.Sprintf("a valid %s was built from sample values (%d field(s))", iface.ConfigClass(), len(cfgs[0].Values))
	return g
}

// alignmentGate runs validate.alignment's checks on one step, so that
// preflight reports every finding alignment would.
func (s *Suite) alignmentGate(ctx context.Context, iface *steps.Interface, search ScriptSearch) PreflightGate {
	g := PreflightGate{Name: "script_alignment", Passed: true}
	script, err := s.FindScript(iface, search)
	if err != nil {
		g.Passed = false
		g.Detail = err.Error()
		g.Remedy = "give a script_path / source_dir inside the workspace"
		return g
	}
	rep, err := validate.CheckStep(ctx, s.StepCheck(iface, script))
	if err != nil {
		g.Passed, g.Detail = false, err.Error()
		return g
	}
	g.Findings = rep.Findings
	var bad []string
	for _, f := range rep.Findings {
		if f.Blocking() {
			g.Passed = false
			bad = append(bad, fmt.Sprintf("[%s] %s: %s", f.Rule, f.Location, f.Message))
			if g.Remedy == "" {
				g.Remedy = f.Fix
			}
		}
	}
	switch {
	case !g.Passed:
		g.Detail = strings.Join(firstN(bad, 3), "; ")
	case rep.Status == validate.StatusExcluded:
		g.Detail = "SKIPPED: " + iface.Registry.SageMakerStepType + " steps are excluded from alignment"
	case !RunsScript(iface):
		g.Detail = fmt.Sprintf("SKIPPED: %s steps run no step script (%d non-blocking finding(s))", iface.Registry.SageMakerStepType, len(rep.Findings))
	case script.Rel == "":
		g.Detail = fmt.Sprintf("SKIPPED: script %s not found (looked in %s); %d non-blocking finding(s)", iface.Contract.EntryPoint,
			strings.Join(script.Searched, ", "), len(rep.Findings))
	default:
		g.Detail = fmt.Sprintf("%s matches the contract (%d non-blocking finding(s))", script.Rel, len(rep.Findings))
	}
	return g
}

// orDefault names an unset step assembly pattern.
func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

func firstN[T any](l []T, n int) []T {
	if len(l) > n {
		return l[:n]
	}
	return l
}
