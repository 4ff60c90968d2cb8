package verify

import (
	"context"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/validate"
)

// CriticalIssue is one blocking alignment finding (validate.Finding),
// named by its step, as the tools emit it.
type CriticalIssue struct {
	StepName string        `json:"step_name"`
	StepType string        `json:"step_type"`
	Level    finding.Level `json:"level"`
	Rule     string        `json:"rule"`
	Location string        `json:"location"`
	Message  string        `json:"message"`
	Fix      string        `json:"fix"`
}

// AlignmentReport aggregates the alignment reports of several steps.
type AlignmentReport struct {
	// Scope is "target_scripts" when steps were named, else "all_steps".
	Scope         string   `json:"scope"`
	TargetScripts []string `json:"target_scripts,omitempty"`
	TotalSteps    int      `json:"total_steps"`
	PassedSteps   int      `json:"passed_steps"`
	FailedSteps   int      `json:"failed_steps"`
	ExcludedSteps int      `json:"excluded_steps"`
	// PassRate is passed over the steps not excluded.
	PassRate float64 `json:"pass_rate"`
	// StepTypeBreakdown counts total/passed/failed/excluded per SageMaker
	// step type.
	StepTypeBreakdown  map[string]map[string]int `json:"step_type_breakdown"`
	CriticalIssues     []CriticalIssue           `json:"critical_issues"`
	CriticalIssueCount int                       `json:"critical_issue_count"`
	Results            []validate.StepReport     `json:"results"`
}

// Alignment checks each target step (every catalog step when none is
// named) against its script, found by search; progress, when set, hears
// of each step checked.
func (s *Suite) Alignment(ctx context.Context, targets []string, search ScriptSearch, progress func(done, total int, step string)) (*AlignmentReport, error) {
	rep := &AlignmentReport{Scope: "target_scripts", TargetScripts: targets,
		StepTypeBreakdown: map[string]map[string]int{}, CriticalIssues: []CriticalIssue{}}
	if len(targets) == 0 {
		targets, rep.Scope, rep.TargetScripts = s.Steps.Names(), "all_steps", nil
	}
	search.ScriptPath = "" // one path cannot be every step's script
	if err := s.CheckSearch(search); err != nil {
		return nil, err
	}
	for i, name := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, _, err := s.CheckStep(ctx, name, "", search)
		if err != nil {
			return nil, err
		}
		rep.add(r)
		if progress != nil {
			progress(i+1, len(targets), r.StepName)
		}
	}
	if n := rep.TotalSteps - rep.ExcludedSteps; n > 0 {
		rep.PassRate = float64(rep.PassedSteps) / float64(n)
	}
	rep.CriticalIssueCount = len(rep.CriticalIssues)
	return rep, nil
}

func (rep *AlignmentReport) add(r validate.StepReport) {
	rep.Results = append(rep.Results, r)
	rep.TotalSteps++
	b := rep.StepTypeBreakdown[r.SageMakerStepType]
	if b == nil {
		b = map[string]int{"total": 0, "passed": 0, "failed": 0, "excluded": 0}
		rep.StepTypeBreakdown[r.SageMakerStepType] = b
	}
	b["total"]++
	switch r.Status {
	case validate.StatusPassed:
		rep.PassedSteps++
		b["passed"]++
	case validate.StatusFailed:
		rep.FailedSteps++
		b["failed"]++
	default:
		rep.ExcludedSteps++
		b["excluded"]++
	}
	for _, f := range r.Findings {
		if f.Blocking() {
			rep.CriticalIssues = append(rep.CriticalIssues, CriticalIssue{StepName: r.StepName, StepType: r.SageMakerStepType,
				Level: f.Level, Rule: f.Rule, Location: f.Location, Message: f.Message, Fix: f.Fix})
		}
	}
}

// CheckStep runs every alignment check of one step (job-type variant
// applied) against its script, found by search. It returns the variant
// warnings too. It stops with ctx's error when ctx ends.
func (s *Suite) CheckStep(ctx context.Context, name, jobType string, search ScriptSearch) (validate.StepReport, []string, error) {
	iface, _, warns, err := s.Step(name, jobType)
	if err != nil {
		return validate.StepReport{}, nil, err
	}
	script, err := s.FindScript(iface, search)
	if err != nil {
		return validate.StepReport{}, nil, err
	}
	r, err := validate.CheckStep(ctx, s.StepCheck(iface, script))
	if err != nil {
		return validate.StepReport{}, nil, err
	}
	return r, warns, nil
}
