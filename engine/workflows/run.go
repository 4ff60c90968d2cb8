package workflows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/verify"
)

// Content fields a checked stage may take.
const (
	FieldDAG       = "dag"
	FieldConfig    = "config"
	FieldFiles     = "files"
	FieldStepTypes = "step_types"
	FieldStepName  = "step_name"
)

// Content is what one submission sends.
type Content struct {
	DAG       map[string]any    `json:"dag,omitempty"`
	Config    map[string]any    `json:"config,omitempty"`
	Files     map[string]string `json:"files,omitempty"`
	StepTypes []string          `json:"step_types,omitempty"`
	StepName  string            `json:"step_name,omitempty"`
}

func (c Content) value(field string) (any, bool) {
	switch field {
	case FieldDAG:
		return c.DAG, c.DAG != nil
	case FieldConfig:
		return c.Config, c.Config != nil
	case FieldFiles:
		return c.Files, len(c.Files) > 0
	case FieldStepTypes:
		return c.StepTypes, len(c.StepTypes) > 0
	case FieldStepName:
		return c.StepName, c.StepName != ""
	}
	return nil, false
}

// only keeps the fields in fields, so a gate checks exactly the content it
// certifies.
func (c Content) only(fields []string) Content {
	var out Content
	if slices.Contains(fields, FieldDAG) {
		out.DAG = c.DAG
	}
	if slices.Contains(fields, FieldConfig) {
		out.Config = c.Config
	}
	if slices.Contains(fields, FieldFiles) {
		out.Files = c.Files
	}
	if slices.Contains(fields, FieldStepTypes) {
		out.StepTypes = c.StepTypes
	}
	if slices.Contains(fields, FieldStepName) {
		out.StepName = c.StepName
	}
	return out
}

// hashes is the SHA-256 of each given field's JSON encoding (map keys
// sorted, so equal content hashes alike whatever order it was sent in).
func (c Content) hashes(fields []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range fields {
		v, ok := c.value(f)
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		sum := sha256.Sum256(b)
		out[f] = hex.EncodeToString(sum[:])
	}
	return out, nil
}

// Subject is a submission's content loaded as the front end loads it:
// the DAG and config parsed, and the checks' catalogs and files with the
// submission's step types and files laid over the server's.
type Subject struct {
	// Sent is the content as submitted, the fields the stage takes: what
	// the run's hashes certify.
	Sent Content
	DAG  *dag.DAG
	// DAGName is the DAG's name in the pipeline's name (compiler.DAGName
	// of the document sent), as every compile names it.
	DAGName   string
	Config    *config.File
	Suite     *verify.Suite
	StepTypes []string
	StepName  string
}

// Loader loads a submission's content; the front end supplies it, with
// its limits and overlays. Its error is the gate's finding, or, when it
// is a ContentError, each of its problems is one.
type Loader func(ctx context.Context, c Content) (*Subject, error)

// ContentError is content a Loader could not load, with every problem
// it found in it (a config with several invalid values), so that the
// gate names each one rather than only counting them.
type ContentError struct {
	Err      error
	Problems []string
	// Remedy, when set, replaces the gate's generic one.
	Remedy string
}

func (e *ContentError) Error() string { return e.Err.Error() }
func (e *ContentError) Unwrap() error { return e.Err }

// Verdict is what one gate found.
type Verdict struct {
	Passed   bool
	Findings []string
	Remedy   string
	// Warnings are what the gate's checks warned of, pass or fail: a
	// passing gate passes them on rather than swallowing them.
	Warnings []string
	// Outcome is what the last gate issues when it passes.
	Outcome any
	// Code is what the gate's compile found of the steps' code.
	Code Code
}

// check is a gate's function: an engine check of a submission.
type check func(ctx context.Context, args map[string]string, s *Subject) (Verdict, error)

// Transition statuses.
const (
	StatusStarted  = "started"
	StatusPassed   = "passed"
	StatusFailed   = "failed"
	StatusBlocked  = "blocked"
	StatusReopened = "reopened"
	StatusGreen    = "green"
)

// Transition is the result of one submission.
type Transition struct {
	Status   string   `json:"status"`
	Stage    string   `json:"stage"`
	Findings []string `json:"findings,omitempty"`
	Remedy   string   `json:"remedy,omitempty"`
	// Warnings are the gate's warnings (a built-in script standing in for
	// a missing one, say): the outcome stands on them.
	Warnings []string `json:"warnings,omitempty"`
	// Next is the stage to submit next (nil when green or blocked).
	Next *Stage `json:"-"`
	// Certified are the content hashes the outcome stands on, per stage.
	Certified map[string]map[string]string `json:"certified,omitempty"`
	Outcome   any                          `json:"outcome,omitempty"`
	// Code is the gate's Code.
	Code  Code  `json:"-"`
	State State `json:"-"`
}

// RunError refuses a submission without running a gate; Reason is one of
// the Reason* constants.
type RunError struct {
	Reason string
	Msg    string
	// Expected is the stage the run waits for, when there is one.
	Expected string
}

func (e *RunError) Error() string { return e.Msg }

// RunError reasons.
const (
	ReasonUnknownWorkflow = "unknown_workflow"
	ReasonMissingArgument = "missing_argument"
	ReasonUnknownStage    = "unknown_stage"
	ReasonOutOfOrder      = "out_of_order"
	ReasonMissingContent  = "missing_content"
	ReasonBlocked         = "blocked"
	ReasonFinished        = "finished"
)

// Stages are the checked stages of the named workflow, in order: the
// stages a run submits.
func Stages(name string) ([]Stage, bool) {
	w, ok := Get(name)
	return w.Checked(), ok
}

// Start begins a run of the named workflow with args; it checks the
// required arguments and refuses unknown ones.
func Start(name string, args map[string]string) (State, error) {
	w, ok := Get(name)
	stages, runnable := Stages(name)
	if !ok || !runnable {
		return State{}, &RunError{Reason: ReasonUnknownWorkflow, Msg: fmt.Sprintf("no workflow %q", name)}
	}
	for k := range args {
		if !slices.ContainsFunc(w.Arguments, func(a Argument) bool { return a.Name == k }) {
			return State{}, &RunError{Reason: ReasonMissingArgument, Msg: fmt.Sprintf("workflow %s takes no argument %q", name, k)}
		}
	}
	for _, a := range w.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			return State{}, &RunError{Reason: ReasonMissingArgument, Msg: fmt.Sprintf("workflow %s needs argument %q (%s)", name, a.Name, a.Description)}
		}
	}
	return State{Workflow: name, Args: args, AttemptsLeft: stages[0].FixAttempts}, nil
}

// Submit runs stage's gate on c for the run st. The stage must be the one
// the run waits for; content a passed gate certified must come unchanged,
// else that gate reopens. The same state and content always give the
// same transition.
func Submit(ctx context.Context, st State, stage string, c Content, load Loader) (Transition, error) {
	stages, ok := Stages(st.Workflow)
	if !ok {
		return Transition{}, &RunError{Reason: ReasonUnknownWorkflow, Msg: fmt.Sprintf("no workflow %q", st.Workflow)}
	}
	switch {
	case st.Blocked:
		return Transition{}, &RunError{Reason: ReasonBlocked, Msg: fmt.Sprintf("the run is blocked: stage %s failed with no fix attempts left; start a new run", stages[min(st.Stage, len(stages)-1)].Name)}
	case st.Stage >= len(stages):
		return Transition{}, &RunError{Reason: ReasonFinished, Msg: "the run is already green; its status shows the outcome"}
	}
	expected := stages[st.Stage]
	idx := slices.IndexFunc(stages, func(s Stage) bool { return strings.EqualFold(s.Name, stage) })
	if idx < 0 {
		return Transition{}, &RunError{Reason: ReasonUnknownStage, Expected: expected.Name,
			Msg: fmt.Sprintf("workflow %s has no stage %q; the run waits for %s", st.Workflow, stage, expected.Name)}
	}
	if idx != st.Stage {
		return Transition{}, &RunError{Reason: ReasonOutOfOrder, Expected: expected.Name,
			Msg: fmt.Sprintf("stage %s cannot be submitted now: the run waits for %s (stages run in order and none is skipped)", stages[idx].Name, expected.Name)}
	}
	if c.StepName == "" && slices.Contains(expected.Takes(), FieldStepName) {
		c.StepName = st.Args["name"]
	}
	c = c.only(expected.Takes())
	var missing []string
	for _, f := range expected.Requires() {
		if _, ok := c.value(f); !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return Transition{}, &RunError{Reason: ReasonMissingContent, Expected: expected.Name,
			Msg: fmt.Sprintf("stage %s needs %s", expected.Name, strings.Join(missing, ", "))}
	}
	hashes, err := c.hashes(expected.Takes())
	if err != nil {
		return Transition{}, err
	}
	if t, reopened := reopen(st, stages, hashes); reopened {
		return t, nil
	}
	v, err := runGate(ctx, expected, st.Args, c, load)
	if err != nil {
		return Transition{}, err
	}
	next := st
	next.Passed = slices.Clone(st.Passed)
	t := Transition{Stage: expected.Name, Findings: v.Findings, Remedy: v.Remedy, Warnings: v.Warnings, Code: v.Code}
	switch {
	case v.Passed:
		next.Passed = append(next.Passed, hashes)
		next.Stage++
		if next.Stage == len(stages) {
			t.Status, t.Outcome, next.AttemptsLeft = StatusGreen, v.Outcome, 0
			t.Certified = certified(next, stages)
		} else {
			t.Status, next.AttemptsLeft = StatusPassed, stages[next.Stage].FixAttempts
			t.Next = &stages[next.Stage]
		}
	case st.AttemptsLeft > 0:
		t.Status, next.AttemptsLeft = StatusFailed, st.AttemptsLeft-1
		t.Next = &stages[st.Stage]
	default:
		t.Status, next.Blocked = StatusBlocked, true
	}
	t.State = next
	return t, nil
}

// reopen finds the first passed stage whose certified content the
// submission changed and moves the run back to it.
func reopen(st State, stages []Stage, hashes map[string]string) (Transition, bool) {
	for j, passed := range st.Passed {
		for _, f := range stages[j].Takes() {
			was, certified := passed[f]
			now, sent := hashes[f]
			if certified && sent && was != now {
				next := st
				next.Stage, next.Passed, next.AttemptsLeft = j, slices.Clone(st.Passed[:j]), stages[j].FixAttempts
				return Transition{Status: StatusReopened, Stage: stages[j].Name, Next: &stages[j], State: next,
					Findings: []string{fmt.Sprintf("%s changed after stage %s passed on it", f, stages[j].Name)},
					Remedy:   fmt.Sprintf("Submit stage %s again with the changed content (or send the content it passed on).", stages[j].Name)}, true
			}
		}
	}
	return Transition{}, false
}

// runGate runs the check s declares on c.
func runGate(ctx context.Context, s Stage, args map[string]string, c Content, load Loader) (Verdict, error) {
	var subject *Subject
	if len(s.Takes()) > 0 {
		var err error
		subject, err = load(ctx, c)
		if ctx.Err() != nil {
			return Verdict{}, ctx.Err()
		}
		if err != nil {
			v := Verdict{Findings: []string{err.Error()}, Remedy: "Send content the server can read: " + strings.Join(s.Takes(), ", ") + "."}
			if ce := (*ContentError)(nil); errors.As(err, &ce) {
				v.Findings = append(v.Findings, ce.Problems...)
				if ce.Remedy != "" {
					v.Remedy = ce.Remedy
				}
			}
			return v, nil
		}
		subject.Sent = c
	}
	return checks[s.Check].run(ctx, args, subject)
}

// certified is the content hashes of every passed stage, by stage name.
func certified(st State, stages []Stage) map[string]map[string]string {
	out := map[string]map[string]string{}
	for i, h := range st.Passed {
		out[stages[i].Name] = h
	}
	return out
}

// Status is what a run's state says without running anything.
func Status(st State) (Transition, error) {
	stages, ok := Stages(st.Workflow)
	if !ok {
		return Transition{}, &RunError{Reason: ReasonUnknownWorkflow, Msg: fmt.Sprintf("no workflow %q", st.Workflow)}
	}
	t := Transition{State: st, Certified: certified(st, stages)}
	switch {
	case st.Blocked:
		t.Status, t.Stage = StatusBlocked, stages[st.Stage].Name
	case st.Stage >= len(stages):
		t.Status, t.Stage = StatusGreen, stages[len(stages)-1].Name
	default:
		t.Status, t.Stage, t.Next = StatusStarted, stages[st.Stage].Name, &stages[st.Stage]
		if st.Stage > 0 {
			t.Status = StatusPassed
		}
	}
	return t, nil
}
