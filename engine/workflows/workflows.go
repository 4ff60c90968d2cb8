// Package workflows is the four guided workflows (init project, configure
// pipeline, author step, new project) as one model: each workflow's
// stages in order, what each is for, the condition it must meet before
// the next one starts and, for a stage the server decides, the engine
// check its gate runs and the content that check reads.
//
// Submit runs those gates on submitted content (the same engine checks
// the validate, author and compile front ends call); a stage without a
// check is guidance a front end renders and the caller judges. The model
// names engine checks, never front-end tools: a front end maps each stage
// to the tools that produce its content.
package workflows

import (
	"strings"

	"github.com/cursus-dev/cursus/engine/scaffold"
)

// frameworkArg describes the framework argument: one of the model
// families the step catalog trains.
func frameworkArg() string { return "One of " + strings.Join(scaffold.Frameworks(), ", ") }

// Argument is one workflow argument.
type Argument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// Stage is one step of a workflow.
type Stage struct {
	Name    string
	Purpose string
	// Check is the engine check the stage's gate runs; empty for a stage
	// the server does not decide (reading guidance, writing files).
	Check Check
	// Condition is what must hold before the next stage, for a stage
	// without a check; a checked stage's condition is its check's (Gate).
	Condition string
	// FixAttempts is how many times a failed gate may be fixed and
	// resubmitted before the run is blocked.
	FixAttempts int
	// Workflow names a nested workflow this stage runs.
	Workflow string
}

// Gate is the condition that must hold before the next stage starts: the
// check's own description when the server runs one.
func (s Stage) Gate() string {
	if s.Check != "" {
		return checks[s.Check].condition
	}
	return s.Condition
}

// Takes are the content fields a submission of s sends (nil for a stage
// without a check): exactly those its check reads.
func (s Stage) Takes() []string { return checks[s.Check].takes }

// Requires are the fields of Takes a submission must send.
func (s Stage) Requires() []string { return checks[s.Check].requires }

// Workflow is a named, staged procedure.
type Workflow struct {
	Name        string
	Title       string
	Description string
	Arguments   []Argument
	Stages      []Stage
	// Outcome says how the final status is decided.
	Outcome string
}

// Checked are the stages whose gate the server runs, in order: the
// stages a run submits.
func (w Workflow) Checked() []Stage {
	var out []Stage
	for _, s := range w.Stages {
		if s.Check != "" {
			out = append(out, s)
		}
	}
	return out
}

// Get returns the workflow with the given name.
func Get(name string) (Workflow, bool) {
	for _, w := range All() {
		if w.Name == name {
			return w, true
		}
	}
	return Workflow{}, false
}

// Names of the four workflows.
const (
	InitProject       = "cursus-init-project"
	ConfigurePipeline = "cursus-configure-pipeline"
	AuthorStep        = "cursus-author-step"
	NewProject        = "cursus-new-project"
)

// All returns the four workflows in a fixed order.
func All() []Workflow {
	return []Workflow{
		{
			Name:  InitProject,
			Title: "Scaffold a new pipeline project",
			Description: "Create a project inside the workspace root: dag.json, a config template, " +
				"contract-aligned script stubs and a README action-item ledger; then verify what was written.",
			Arguments: []Argument{
				{"name", "Project name (letters, digits, '_', '-', '.'; no path separators)", true},
				{"framework", frameworkArg(), true},
				{"target_dir", "Directory under the workspace root (default: projects)", false},
			},
			Stages: []Stage{
				{Name: "Consult", Purpose: "Check the project name, framework and target directory, and preview the plan without writing anything.",
					Check: CheckArguments},
				{Name: "Scaffold", Purpose: "Produce the project files: without a target directory they come back as content (files), with one they are written.",
					Condition: "the project is produced with ready=true; already_exists means choose another name or pass overwrite"},
				{Name: "Verify", Purpose: "Check the project's DAG and every script stub against its contract.",
					Check: CheckProject, FixAttempts: 2},
				{Name: "Ledger", Purpose: "Report the README's remaining action items to the user.",
					Condition: "the README lists the remaining items as an unchecked checklist"},
			},
			Outcome: "ready when Scaffold and Verify pass",
		},
		{
			Name:  ConfigurePipeline,
			Title: "Configure a pipeline DAG",
			Description: "Find the config fields every DAG node needs, fill and check them, write config.json " +
				"and check the DAG, configs and wiring together before compiling.",
			Arguments: []Argument{
				{"dag_file", "Workspace path of the DAG JSON (or give dag_nodes)", false},
				{"dag_nodes", "Comma-separated node names when there is no DAG file", false},
				{"config_file", "Where config.json is (or will be) written", false},
				{"region", "NA, EU, FE or an AWS region name (default NA)", false},
			},
			Stages: []Stage{
				{Name: "Constrain", Purpose: "Find the fields, tiers, defaults and allowed values every node needs.",
					Check: CheckRequirements},
				{Name: "Validate", Purpose: "Check the config.json document against the DAG's nodes before writing anything.",
					Check: CheckConfigs, FixAttempts: 2},
				{Name: "Generate", Purpose: "Write config.json in the Cursus layout and read it back.",
					Condition: "the file reads back without problems"},
				{Name: "DagCheck", Purpose: "Check the DAG, the configs and the wiring together.",
					Check: CheckCompile},
				{Name: "Synthesize", Purpose: "Summarise what is ready and what is not.",
					Condition: "shippable only when every earlier gate passed; a missing result never counts as a pass"},
			},
			Outcome: "shippable when Validate, Generate and DagCheck all pass",
		},
		{
			Name:  AuthorStep,
			Title: "Author a new step type",
			Description: "Decide whether a new step is really needed, write its .step.yaml interface and script, " +
				"and prove it is constructible and wires into its neighbours.",
			Arguments: []Argument{
				{"intent", "What the step should do", true},
				{"name", "PascalCase step type name, if already chosen", false},
				{"producer_node", "The node feeding the new step", false},
				{"consumer_node", "The node consuming its output", false},
				{"dag_file", "A DAG to re-check once the step exists", false},
			},
			Stages: []Stage{
				{Name: "Resolve", Purpose: "Pick the smallest change: reuse a step with a new config, extend an optional dependency, or author a new step.",
					Condition: "a rung is chosen; anything but new_step stops here with that recommendation"},
				{Name: "AlignEdges", Purpose: "Check the new step's ports against its producer and consumer.",
					Condition: "both edges score at least 0.5"},
				{Name: "Guide", Purpose: "Collect the rules, knobs and config fields to follow.",
					Condition: "naming, packaging and closure rules are known"},
				{Name: "Author", Purpose: "Write <snake>.step.yaml and the script (copy shapes from the exemplar step).",
					Condition: "the .step.yaml and the script are written, to send as content or in a step directory the server loads"},
				{Name: "Validate", Purpose: "Check the new step's .step.yaml (sent as step_types); check its script (in files) against it too.",
					Check: CheckInterface, FixAttempts: 2},
				{Name: "Preflight", Purpose: "Prove the step can be built and compiled.",
					Check: CheckPreflight, FixAttempts: 2},
				{Name: "Gaps", Purpose: "Re-resolve the whole DAG when one was given.",
					Condition: "no unresolved required dependency (open gaps are reported, not hidden)"},
			},
			Outcome: "green if every gate passed; green_with_open_gaps if only Gaps found issues; otherwise blocked",
		},
		{
			Name:  NewProject,
			Title: "Bring up a new project end to end",
			Description: "Scaffold a project, seed its DAG from the pipeline catalog (or let the user author it), " +
				"gate the DAG, then configure the pipeline.",
			Arguments: []Argument{
				{"name", "Project name", true},
				{"framework", frameworkArg(), true},
				{"target_dir", "Directory under the workspace root (default: projects)", false},
				{"region", "NA, EU, FE or an AWS region name (default NA)", false},
				{"dag_source", "catalog (seed from the pipeline catalog) or manual (default catalog)", false},
			},
			Stages: []Stage{
				{Name: "Scaffold", Purpose: "Run the init-project workflow: check the arguments, then the project's files and DAG. " +
					"For dag_source=catalog pick a shared DAG first and pass it as the scaffold's dag argument; " +
					"without a target directory the files come back as content.",
					Workflow: InitProject, Check: CheckScaffold, FixAttempts: 2},
				{Name: "GateDAG", Purpose: "Check the project's DAG (seeded from the pipeline catalog or written by hand).",
					Check: CheckDAG},
				{Name: "Configure", Purpose: "Run the configure-pipeline workflow on the DAG, then compile the pipeline.",
					Workflow: ConfigurePipeline, Check: CheckCompileDefinition},
			},
			Outcome: "done when Configure is shippable; stops at the first failed gate",
		},
	}
}
