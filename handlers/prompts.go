package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/scaffold"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

// Prompts lists the four workflows served as MCP prompts. Each prompt's
// text names the stages in order, the tools of each stage and the gate a
// stage must pass before the next one starts, rendered for the caller
// (workflowFor). Arguments that pick from a known set complete from it
// (promptArgumentValues).
func Prompts(d *Deps) []registry.Prompt {
	values := promptArgumentValues(d)
	var out []registry.Prompt
	for _, w := range workflows.All() {
		p := registry.Prompt{Name: w.Name, Description: w.Title + ": " + w.Description}
		for _, a := range w.Arguments {
			p.Arguments = append(p.Arguments, registry.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required,
				Values: values[a.Name]})
		}
		p.Render = func(args map[string]string, open func(string) bool) string {
			return renderWorkflow(workflowFor(guideOf(w), open), args, open("workflow.start") && open("workflow.submit"))
		}
		out = append(out, p)
	}
	return out
}

// promptArgumentValues are the completion values of the workflow
// arguments that pick from a known set, by argument name. The nodes an
// author-step names are step types (a DAG node is a step type, with an
// optional job-type suffix). Paths (dag_file, config_file, target_dir)
// and free text are not completed.
func promptArgumentValues(d *Deps) map[string]func(context.Context) []string {
	fixed := func(values ...string) func(context.Context) []string {
		return func(context.Context) []string { return values }
	}
	stepTypes := func(ctx context.Context) []string { return d.catalogs(ctx).Steps.Names() }
	return map[string]func(context.Context) []string{
		"framework":     fixed(scaffold.Frameworks()...),
		"region":        fixed(config.RegionCodes()...),
		"dag_source":    fixed("catalog", "manual"),
		"producer_node": stepTypes,
		"consumer_node": stepTypes,
	}
}

// closedStageGate replaces the gate of a stage whose tools this caller
// may not call.
const closedStageGate = "this stage needs tools this server does not open to you (only the operator can enable them), " +
	"so its gate cannot hold here: stop and report that"

// workflowFor is w as a caller that may call the tools open admits sees
// it: each stage lists only those tools, and a stage left with none, or
// whose gate is judged on a tool it lost, is closed (closedStageGate).
func workflowFor(w guide, open func(string) bool) guide {
	stages := make([]guideStage, len(w.Stages))
	for i, s := range w.Stages {
		var kept, lost []string
		for _, tool := range s.Tools {
			if open(tool) {
				kept = append(kept, tool)
			} else {
				lost = append(lost, tool)
			}
		}
		s.Tools = kept
		namesLost := slices.ContainsFunc(lost, func(tool string) bool { return slices.Contains(s.decides, tool) })
		if len(lost) > 0 && (len(kept) == 0 || namesLost) {
			s.Tools, s.Gate, s.FixAttempts, s.decides = nil, closedStageGate, 0, nil
		}
		stages[i] = s
	}
	w.Stages = stages
	return w
}

// renderWorkflow is the prompt text of a workflow for the given arguments;
// served says the caller may drive it with workflow.start and
// workflow.submit, which run the gates on the server.
func renderWorkflow(w guide, args map[string]string, served bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s)\n\n%s\n\n", w.Title, w.Name, w.Description)
	var given []string
	for _, a := range w.Arguments {
		if v := strings.TrimSpace(args[a.Name]); v != "" {
			given = append(given, fmt.Sprintf("- %s: %s", a.Name, v))
		} else if a.Required {
			given = append(given, fmt.Sprintf("- %s: (required — ask the user)", a.Name))
		}
	}
	if len(given) > 0 {
		fmt.Fprintf(&b, "Arguments:\n%s\n\n", strings.Join(given, "\n"))
	}
	if served {
		fmt.Fprintf(&b, "%s\n\n", HowToRun(w.Name))
	}
	b.WriteString("Run the stages in order with the cursus tools. Do not start a stage until the previous stage's gate holds; ")
	b.WriteString("if a gate fails, stop and report why (a missing or failed tool result never counts as a pass).\n\n")
	for i, s := range w.Stages {
		fmt.Fprintf(&b, "## Stage %d — %s\n%s\n", i+1, s.Name, s.Purpose)
		if s.Workflow != "" {
			fmt.Fprintf(&b, "Runs the %s workflow.\n", s.Workflow)
		}
		if len(s.Tools) > 0 {
			fmt.Fprintf(&b, "Tools: %s\n", strings.Join(s.Tools, ", "))
		}
		fmt.Fprintf(&b, "Gate: %s\n", s.Gate)
		if s.FixAttempts > 0 {
			fmt.Fprintf(&b, "If the gate fails, fix and retry at most %d time(s).\n", s.FixAttempts)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Outcome: %s\n", w.Outcome)
	return b.String()
}

// HowToRun says how a caller drives the named workflow with the server
// checking its gates.
func HowToRun(name string) string {
	return fmt.Sprintf("The server checks this workflow's gates itself: call workflow.start {\"workflow\": %q, \"args\": {…}} for a run token "+
		"and the first gate stage, then for each stage workflow.submit {\"run\": <token>, \"stage\": <name>, \"content\": {…the fields its takes lists}}; "+
		"go on only when it answers passed, fix and resubmit on failed, and the outcome comes with green. "+
		"The tools below produce the content.", name)
}
