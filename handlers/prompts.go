package handlers

import (
	"fmt"
	"strings"

	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

// Prompts lists the four workflows served as MCP prompts. Each prompt's
// text names the stages in order, the tools of each stage and the gate a
// stage must pass before the next one starts.
func Prompts() []registry.Prompt {
	var out []registry.Prompt
	for _, w := range workflows.All() {
		p := registry.Prompt{Name: w.Name, Description: w.Title + ": " + w.Description}
		for _, a := range w.Arguments {
			p.Arguments = append(p.Arguments, registry.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		p.Render = func(args map[string]string) string { return RenderWorkflow(w, args) }
		out = append(out, p)
	}
	return out
}

// RenderWorkflow is the prompt text of a workflow for the given arguments.
func RenderWorkflow(w workflows.Workflow, args map[string]string) string {
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
