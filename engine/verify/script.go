package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/validate"
)

// ScriptCheckReport is one step script checked against its contract.
type ScriptCheckReport struct {
	StepName          string `json:"step_name"`
	SageMakerStepType string `json:"sagemaker_step_type"`
	Status            string `json:"status"` // checked | skipped
	// Reason says why the check was skipped.
	Reason   string                   `json:"reason,omitempty"`
	Script   string                   `json:"script,omitempty"`
	Passed   bool                     `json:"passed"`
	Issues   []validate.Finding       `json:"issues"`
	Analysis *validate.ScriptAnalysis `json:"analysis,omitempty"`
}

// ScriptNotFoundError is a step script that is not where it was looked for.
type ScriptNotFoundError struct {
	StepType, EntryPoint string
	Searched             []string
}

func (e *ScriptNotFoundError) Error() string {
	return fmt.Sprintf("script %s for %s not found (looked in %s)", e.EntryPoint, e.StepType, strings.Join(e.Searched, ", "))
}

// AnalysisError is a script the analyser cannot read; Err is a
// *validate.ScriptAnalysisError for a syntax error.
type AnalysisError struct {
	Script string
	Err    error
}

func (e *AnalysisError) Error() string { return e.Err.Error() }
func (e *AnalysisError) Unwrap() error { return e.Err }

// CheckScript analyses the script of one step (job-type variant applied)
// and checks it against the contract. Steps that run no script checkable
// here are skipped, unless a script path is given. It stops with ctx's
// error when ctx ends.
func (s *Suite) CheckScript(ctx context.Context, name, jobType string, search ScriptSearch) (*ScriptCheckReport, error) {
	iface, _, _, err := s.Step(name, jobType)
	if err != nil {
		return nil, err
	}
	rep := &ScriptCheckReport{StepName: iface.StepType, SageMakerStepType: iface.Registry.SageMakerStepType, Issues: []validate.Finding{}}
	skip := func(reason string) (*ScriptCheckReport, error) {
		rep.Status, rep.Reason, rep.Passed = "skipped", reason, true
		return rep, nil
	}
	if iface.Registry.Requires == "secure_ai_sandbox_workflow_python_sdk" {
		return skip("the step's script lives in an Amazon-internal SDK")
	}
	if !RunsScript(iface) && search.ScriptPath == "" {
		return skip(iface.Registry.SageMakerStepType + " steps run no step script")
	}
	script, err := s.FindScript(iface, search)
	if err != nil {
		return nil, err
	}
	if script.Rel == "" {
		return nil, &ScriptNotFoundError{StepType: iface.StepType, EntryPoint: iface.Contract.EntryPoint, Searched: script.Searched}
	}
	a, err := validate.AnalyzeScript(ctx, script.Rel, script.Source)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if err != nil {
		return nil, &AnalysisError{Script: script.Rel, Err: err}
	}
	rep.Status, rep.Script, rep.Analysis, rep.Passed = "checked", script.Rel, a, true
	if fs := validate.CheckScript(iface, a); fs != nil {
		rep.Issues = fs
	}
	for _, f := range rep.Issues {
		if f.Blocking() {
			rep.Passed = false
		}
	}
	return rep, nil
}
