package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/errgroup"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/engine/workspace"
	"github.com/cursus-dev/cursus/registry"
)

// maxBatchItems bounds a batch; batchParallel is how many items' gates
// run at once.
const (
	maxBatchItems = 50
	batchParallel = 4
)

// runToken is a run token as workflow.start and workflow.submit return it.
type runToken string

func (runToken) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(64 << 10), Description: "The run token the last workflow call returned."}
}

type workflowArgs map[string]string

func (workflowArgs) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(20), Description: "The workflow's arguments, name → text (workflow.list names them)."}
}

// workflowContent is what a submission sends; each stage's takes lists
// the fields its gate reads.
type workflowContent struct {
	DAG       map[string]any `json:"dag,omitempty"`
	Config    configDoc      `json:"config,omitempty"`
	Files     inlineFiles    `json:"files,omitempty"`
	StepTypes []string       `json:"step_types,omitempty"`
	StepName  string         `json:"step_name,omitempty"`
}

// JSONSchema names the fields without spelling out their schemas: the
// lean tool list then stays within its budget, and UnmarshalJSON refuses
// an unknown field by name.
func (workflowContent) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: "The stage's content, the fields its takes lists: dag (inline DAG), " +
		"config (config.json document), files (path → text), step_types (.step.yaml texts), step_name (default: the run's name argument)."}
}

func (c *workflowContent) UnmarshalJSON(data []byte) error {
	type plain workflowContent
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("content: %w", err)
	}
	*c = workflowContent(p)
	return nil
}

func (c workflowContent) engine() workflows.Content {
	return workflows.Content{DAG: c.DAG, Config: c.Config, Files: c.Files, StepTypes: c.StepTypes, StepName: c.StepName}
}

// workflowRun is one run's place: its token and what to send next.
type workflowRun struct {
	Run          string                       `json:"run"`
	Workflow     string                       `json:"workflow"`
	Status       string                       `json:"status"`
	Stage        string                       `json:"stage"`
	Findings     []string                     `json:"findings,omitempty"`
	Remedy       string                       `json:"remedy,omitempty"`
	Warnings     []string                     `json:"warnings,omitempty"`
	AttemptsLeft int                          `json:"attempts_left"`
	Next         *gateStage                   `json:"next,omitempty"`
	Certified    map[string]map[string]string `json:"certified,omitempty"`
	Outcome      any                          `json:"outcome,omitempty"`
	// Error is why a batch item's submission was refused.
	Error string `json:"error,omitempty"`
}

// workflowOut is one run, or a batch's runs with a summary.
type workflowOut struct {
	workflowRun
	Items   []workflowRun `json:"items,omitempty"`
	Summary *batchSummary `json:"summary,omitempty"`
}

type batchSummary struct {
	Total    int            `json:"total"`
	Green    int            `json:"green"`
	ByStatus map[string]int `json:"by_status"`
	// NotGreen says why each item that is not green is not.
	NotGreen []notGreen `json:"not_green,omitempty"`
}

type notGreen struct {
	Item   int    `json:"item"`
	Reason string `json:"reason"`
}

func workflowNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog or config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "workflow",
		Description: "Run a guided workflow with server-checked gates: each stage's content is checked by the same engine checks as the validate, author and compile tools; the run state is a signed token.",
		Tools: []registry.ToolDef{
			workflowListTool(d),
			workflowStartTool(d),
			workflowSubmitTool(d),
			workflowStatusTool(d),
		},
	}, nil
}

type workflowListOut struct {
	Workflows []workflowListed `json:"workflows"`
}

type workflowListed struct {
	Name      string               `json:"name"`
	Title     string               `json:"title"`
	Arguments []workflows.Argument `json:"arguments"`
	Stages    []gateStage          `json:"stages"`
}

func workflowListTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{Name: "workflow.list", Description: "The workflows and their stages.",
		When: "Before workflow.start.", Examples: []string{`workflow.list {}`}, Tags: []string{registry.PhasePlanner}}, registry.Plain(d.workflowList))
}

func (d *Deps) workflowList(ctx context.Context, _ struct{}) (workflowListOut, error) {
	out := workflowListOut{Workflows: []workflowListed{}}
	for _, w := range workflows.All() {
		var stages []gateStage
		for _, s := range w.Checked() {
			stages = append(stages, gateStageOf(w.Name, s, nil, mayCall(ctx)))
		}
		out.Workflows = append(out.Workflows, workflowListed{Name: w.Name, Title: w.Title, Arguments: w.Arguments, Stages: stages})
	}
	return out, nil
}

type workflowStartIn struct {
	Workflow string         `json:"workflow" jsonschema:"Workflow name (workflow.list)." schema:"minLength=1,maxLength=64"`
	Args     workflowArgs   `json:"args,omitempty"`
	Items    []workflowArgs `json:"items,omitempty" jsonschema:"Batch: one run per item, each with these arguments over args." schema:"maxItems=50"`
}

func workflowStartTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{Name: "workflow.start", Description: "Start a run (items: a batch); returns its token and the first stage.",
		When: "To run a workflow.", Examples: []string{`workflow.start {"workflow": "cursus-configure-pipeline"}`}, Tags: []string{registry.PhasePlanner}}, d.workflowStart)
}

func (d *Deps) workflowStart(ctx context.Context, in workflowStartIn) (registry.Reply[workflowOut], error) {
	var reply registry.Reply[workflowOut]
	if len(in.Items) == 0 {
		run, err := d.startRun(ctx, in.Workflow, in.Args)
		if err != nil {
			return reply, runError(err)
		}
		reply.Next(registry.NextStep{Tool: "workflow.submit", When: "next", Why: "run the first stage's gate",
			ArgsHint: map[string]any{"run": run.Run, "stage": run.Stage}})
		reply.Out = workflowOut{workflowRun: run}
		return reply, nil
	}
	out := workflowOut{workflowRun: workflowRun{Workflow: in.Workflow, Status: workflows.StatusStarted}}
	for _, item := range in.Items {
		args := make(map[string]string, len(in.Args)+len(item))
		maps.Copy(args, in.Args)
		maps.Copy(args, item) // an item's own arguments win
		run, err := d.startRun(ctx, in.Workflow, args)
		if err != nil {
			return reply, runError(err)
		}
		out.Items = append(out.Items, run)
	}
	out.Summary = summarizeBatch(out.Items)
	reply.Out = out
	return reply, nil
}

func (d *Deps) startRun(ctx context.Context, name string, args map[string]string) (workflowRun, error) {
	st, err := workflows.Start(name, args)
	if err != nil {
		return workflowRun{}, err
	}
	t, err := workflows.Status(st)
	if err != nil {
		return workflowRun{}, err
	}
	t.Status = workflows.StatusStarted
	return d.sealed(ctx, t)
}

type workflowSubmitIn struct {
	Run     runToken             `json:"run,omitempty"`
	Stage   string               `json:"stage" jsonschema:"The stage this content is for (the one the run waits for)." schema:"minLength=1,maxLength=64"`
	Content workflowContent      `json:"content,omitempty"`
	Items   []workflowSubmitItem `json:"items,omitempty" jsonschema:"Batch: each run with its own content; gates run in parallel." schema:"maxItems=50"`
}

type workflowSubmitItem struct {
	Run     runToken        `json:"run"`
	Content workflowContent `json:"content,omitempty"`
}

func workflowSubmitTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{Name: "workflow.submit", Description: "Run a stage's gate on the content sent.",
		When: "For each stage, in order.", Examples: []string{`workflow.submit {"run": "<token>", "stage": "Constrain", "content": {"dag": {"nodes": ["XGBoostTraining"], "edges": []}}}`}, Tags: []string{registry.PhasePlanner}}, d.workflowSubmit)
}

func (d *Deps) workflowSubmit(ctx context.Context, in workflowSubmitIn) (registry.Reply[workflowOut], error) {
	var reply registry.Reply[workflowOut]
	if (in.Run == "") == (len(in.Items) == 0) {
		return reply, registry.Errorf(registry.CodeInvalidInput, "give run (one run) or items (a batch), not both")
	}
	if len(in.Items) == 0 {
		run, code, err := d.submitRun(ctx, in.Run, in.Stage, in.Content, reply.Warn)
		if err != nil {
			return reply, err
		}
		if run.Next != nil {
			reply.Next(registry.NextStep{Tool: "workflow.submit", When: run.Status, Why: "stage " + run.Next.Name + " is next",
				ArgsHint: map[string]any{"run": run.Run, "stage": run.Next.Name}})
		}
		reply.Next(codeNext(code.StandIns, code.MissingCode)...)
		reply.Out = workflowOut{workflowRun: run}
		return reply, nil
	}
	items := make([]workflowRun, len(in.Items))
	var mu sync.Mutex // the items' warnings and code, in the order their loads end
	var warnings []string
	var code workflows.Code
	warn := func(msgs ...string) { mu.Lock(); warnings = append(warnings, msgs...); mu.Unlock() }
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(batchParallel)
	for i, item := range in.Items {
		g.Go(func() error {
			run, c, err := d.submitRun(gctx, item.Run, in.Stage, item.Content, warn)
			if gctx.Err() != nil {
				return gctx.Err()
			}
			if err != nil {
				run = workflowRun{Run: string(item.Run), Status: "refused", Stage: in.Stage, Error: err.Error()}
			}
			items[i] = run // each goroutine writes its own element
			mu.Lock()
			code.StandIns = append(code.StandIns, c.StandIns...)
			code.MissingCode = append(code.MissingCode, c.MissingCode...)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return reply, err
	}
	reply.Warn(warnings...)
	reply.Next(codeNext(code.StandIns, code.MissingCode)...)
	reply.Out = workflowOut{workflowRun: workflowRun{Stage: in.Stage, Status: "batch"}, Items: items, Summary: summarizeBatch(items)}
	return reply, nil
}

// submitRun submits one run's stage; warn receives the warnings of the
// step types the submission sent. It returns what the gate's compile
// found of the steps' code besides the run.
func (d *Deps) submitRun(ctx context.Context, token runToken, stage string, c workflowContent, warn func(...string)) (workflowRun, workflows.Code, error) {
	st, err := d.openRun(token)
	if err != nil {
		return workflowRun{}, workflows.Code{}, err
	}
	id := workflows.SpentID(string(token))
	if was, err := d.spent.Was(ctx, id); err != nil {
		return workflowRun{}, workflows.Code{}, spentStoreError(err)
	} else if was {
		return workflowRun{}, workflows.Code{}, spentError()
	}
	t, err := workflows.Submit(ctx, st, stage, c.engine(), d.workflowLoader(warn))
	if err != nil {
		return workflowRun{}, workflows.Code{}, runError(err)
	}
	// Two submissions racing with one token: the first to spend it wins.
	// A store that cannot answer fails the submission closed: admitting it
	// could let a replay through on another replica, and the caller loses
	// nothing by sending the same token again.
	if spent, err := d.spent.Spend(ctx, id, time.Unix(st.Expires, 0)); err != nil {
		return workflowRun{}, workflows.Code{}, spentStoreError(err)
	} else if !spent {
		return workflowRun{}, workflows.Code{}, spentError()
	}
	run, err := d.sealed(ctx, t)
	return run, t.Code, err
}

// spentError refuses a token a submission already used.
func spentError() error {
	return registry.Errorf(registry.CodeRunTokenSpent, "'run': this run token was already used for a submission; each token moves its run once").
		WithDetails(map[string]any{"argument": "run", "reason": "spent"}).
		Suggest("Send the token the last workflow.submit returned (workflow.status with it shows where the run is).", "workflow.status")
}

// spentStoreError refuses a submission whose token the shared store of
// spent tokens could not check or mark: it is for the caller to retry.
// The store's own error (which may name its address) is the server's to
// log, not the caller's to read.
func spentStoreError(error) error {
	return registry.Errorf(registry.CodeRunStoreUnavailable, "'run': the store of spent run tokens did not answer; the run did not move").
		WithDetails(map[string]any{"argument": "run", "reason": "store_unavailable", "retryable": true}).
		Suggest("Send the same run token and content again in a few seconds; the run is where it was.", "workflow.status")
}

type workflowStatusIn struct {
	Run runToken `json:"run"`
}

func workflowStatusTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{Name: "workflow.status", Description: "Where a run is.",
		When: "To resume a run.", Examples: []string{`workflow.status {"run": "<token>"}`}, Tags: []string{registry.PhasePlanner}}, registry.Plain(d.workflowStatus))
}

func (d *Deps) workflowStatus(ctx context.Context, in workflowStatusIn) (workflowOut, error) {
	st, err := d.openRun(in.Run)
	if err != nil {
		return workflowOut{}, err
	}
	t, err := workflows.Status(st)
	if err != nil {
		return workflowOut{}, runError(err)
	}
	run, err := d.sealed(ctx, t)
	run.Run = string(in.Run) // status changes nothing, so the token stays
	return workflowOut{workflowRun: run}, err
}

func (d *Deps) openRun(token runToken) (workflows.State, error) {
	st, err := d.Runs.Open(string(token))
	switch {
	case errors.Is(err, workflows.ErrExpired):
		return st, registry.Errorf(registry.CodeInvalidInput, "'run': %v", err).WithDetails(map[string]any{"argument": "run", "reason": "expired"}).
			Suggest("Start a new run with workflow.start.", "workflow.start")
	case errors.Is(err, workflows.ErrUnknownKey):
		return st, registry.Errorf(registry.CodeUnknownRunKey, "'run': %v", err).WithDetails(map[string]any{"argument": "run", "reason": "unknown_key"}).
			Suggest("This run cannot go on: the key that signed its token was retired (workflow.previous_keys keeps one accepted during a rotation). Start a new run with workflow.start and submit its stages again.", "workflow.start")
	case err != nil:
		return st, registry.Errorf(registry.CodeInvalidInput, "'run': %v", err).WithDetails(map[string]any{"argument": "run", "reason": "tampered"}).
			Suggest("Send the token the last workflow call returned, unchanged, to a server that shares the workflow key.", "workflow.start")
	}
	return st, nil
}

// sealed signs t's state and reports it, the next stage with the tools
// that produce its content.
func (d *Deps) sealed(ctx context.Context, t workflows.Transition) (workflowRun, error) {
	token, err := d.Runs.Seal(t.State)
	if err != nil {
		return workflowRun{}, err
	}
	var next *gateStage
	if t.Next != nil {
		s := gateStageOf(t.State.Workflow, *t.Next, t.State.Args, mayCall(ctx))
		next = &s
	}
	return workflowRun{Run: token, Workflow: t.State.Workflow, Status: t.Status, Stage: t.Stage, Findings: t.Findings, Remedy: t.Remedy, Warnings: t.Warnings,
		AttemptsLeft: t.State.AttemptsLeft, Next: next, Certified: t.Certified, Outcome: t.Outcome}, nil
}

// runError is the tool error of a refused submission.
func runError(err error) error {
	var re *workflows.RunError
	if !errors.As(err, &re) {
		return err
	}
	details := map[string]any{"reason": re.Reason}
	if re.Expected != "" {
		details["expected_stage"] = re.Expected
	}
	e := registry.Errorf(registry.CodeInvalidInput, "%s", re.Msg).WithDetails(details)
	if re.Expected != "" {
		return e.Suggest("Submit stage "+re.Expected+" with the content it takes (workflow.status shows it).", "workflow.status")
	}
	return e.Suggest("workflow.list names the workflows, their arguments and stages.", "workflow.list")
}

// workflowLoader loads a submission as the tools load inline content,
// over an empty tree: a gate sees only what was sent, which is what its
// content hashes certify. The warnings of the step types sent go to warn.
func (d *Deps) workflowLoader(warn func(...string)) workflows.Loader {
	return func(ctx context.Context, c workflows.Content) (*workflows.Subject, error) {
		call, err := d.sources(ctx, c.Files, stepTypesArg{StepTypes: c.StepTypes})
		if err != nil {
			return nil, err
		}
		warn(call.cat.Warnings...)
		sent, err := workspace.NewOverlay(nil, c.Files)
		if err != nil {
			return nil, err
		}
		call.fs = sent
		s := &workflows.Subject{StepTypes: c.StepTypes, StepName: c.StepName,
			Suite: &verify.Suite{Steps: call.cat.Steps, Config: call.cat.Config, Root: d.Root, Files: sent, Runner: d.Scripts}}
		if c.DAG != nil {
			doc, err := d.loadDAGDocument(call, dagSource{DAG: c.DAG}, false)
			if err != nil {
				return nil, err
			}
			s.DAG, s.DAGName = doc.DAG, compiler.DAGName(doc, "")
		}
		if c.Config != nil {
			if s.Config, _, err = d.configFrom(call, configSource{Config: c.Config}, "config_file"); err != nil {
				return nil, contentProblems(err)
			}
		}
		return s, nil
	}
}

// contentProblems carries the problems a tool error lists in its details
// (config_invalid's "problems") into the gate's findings, one each:
// "<node>.<field>: <message> [<kind>]".
func contentProblems(err error) error {
	var te *registry.ToolError
	if !errors.As(err, &te) {
		return err
	}
	probs, _ := te.Details["problems"].([]config.Problem)
	if len(probs) == 0 {
		return err
	}
	ce := &workflows.ContentError{Err: err}
	for _, p := range probs {
		ce.Problems = append(ce.Problems, fmt.Sprintf("%s [%s]", p, p.Kind))
	}
	if te.Remedy != nil {
		ce.Remedy = te.Remedy.FixAction
	}
	return ce
}

func summarizeBatch(items []workflowRun) *batchSummary {
	s := &batchSummary{Total: len(items), ByStatus: map[string]int{}}
	for i, it := range items {
		s.ByStatus[it.Status]++
		reason := ""
		switch {
		case it.Status == workflows.StatusGreen:
			s.Green++
		case it.Error != "":
			reason = it.Error
		case len(it.Findings) > 0:
			reason = it.Stage + ": " + it.Findings[0]
		case it.Status != workflows.StatusStarted && it.Status != workflows.StatusPassed:
			reason = it.Stage + ": " + it.Status
		}
		if reason != "" {
			s.NotGreen = append(s.NotGreen, notGreen{Item: i, Reason: reason})
		}
	}
	return s
}
