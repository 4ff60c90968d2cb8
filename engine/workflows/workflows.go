// Package workflows describes the four guided workflows (init project,
// configure pipeline, author step, new project) as data: their stages, the
// tools each stage calls and the gate a stage must pass before the next
// one starts (mcp-core-spec §8). Front ends render them (MCP prompts,
// tools.help); nothing here runs a tool.
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
	Name    string   `json:"name"`
	Purpose string   `json:"purpose"`
	Tools   []string `json:"tools"`
	// Gate is the condition that must hold before moving on; a stage whose
	// gate fails stops the workflow (or loops for a bounded number of fix
	// attempts where FixAttempts > 0).
	Gate        string `json:"gate"`
	FixAttempts int    `json:"fix_attempts,omitempty"`
	// Workflow names a nested workflow this stage runs.
	Workflow string `json:"workflow,omitempty"`
}

// Workflow is a named, staged procedure.
type Workflow struct {
	Name        string     `json:"name"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Arguments   []Argument `json:"arguments"`
	Stages      []Stage    `json:"stages"`
	// Outcome says how the final status is decided.
	Outcome string `json:"outcome"`
}

// Tools lists every tool the workflow's stages name, in first-use order.
func (w Workflow) Tools() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range w.Stages {
		for _, t := range s.Tools {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
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
				{Name: "Consult", Purpose: "Check the arguments and preview the plan without writing anything.",
					Tools: []string{"project.bring_up", "pipeline_catalog.recommend"},
					Gate:  "project.bring_up returns ok (name and framework valid)"},
				{Name: "Scaffold", Purpose: "Produce the project files: project.init returns them (data.files) without target_dir, or writes them with it.",
					Tools: []string{"project.init"},
					Gate:  "project.init returns ok with ready=true; already_exists means choose another name or pass overwrite"},
				{Name: "Verify", Purpose: "Check the DAG and every script stub against its contract.",
					Tools: []string{"dag.deserialize", "dag.validate_integrity", "author.check_script", "validate.alignment"},
					Gate:  "the DAG is valid, every script step's script exists and has no critical or error finding"},
				{Name: "Ledger", Purpose: "Report the README's remaining action items to the user.",
					Gate: "the README lists the remaining items as an unchecked checklist"},
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
				{Name: "Constrain", Purpose: "List the fields, tiers, defaults and allowed values per node.",
					Tools: []string{"config.requirements", "author.config_constraints", "catalog.config_fields"},
					Gate:  "every node resolves to a step type (no unresolved nodes)"},
				{Name: "Validate", Purpose: "Check each node's values before writing anything.",
					Tools: []string{"author.preflight_config"}, FixAttempts: 2,
					Gate: "author.preflight_config returns valid=true for every node"},
				{Name: "Generate", Purpose: "Write config.json in the Cursus layout and read it back.",
					Tools: []string{"config.load"},
					Gate:  "config.load reads the file back without problems"},
				{Name: "DagCheck", Purpose: "Check the DAG, the configs and the wiring together.",
					Tools: []string{"dag.validate_integrity", "compile.validate", "compile.preview", "validate.deps_resolve"},
					Gate:  "the DAG is valid with no undeclared edge nodes, compile.validate passes, compile.preview has no low-confidence or ambiguous node, every required dependency resolves"},
				{Name: "Synthesize", Purpose: "Summarise what is ready and what is not.",
					Gate: "shippable only when every earlier gate passed; a missing result never counts as a pass"},
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
					Tools: []string{"catalog.search", "catalog.step_info", "author.checklist", "strategies.for_step_type"},
					Gate:  "a rung is chosen; anything but new_step stops here with that recommendation"},
				{Name: "AlignEdges", Purpose: "Check the new step's ports against its producer and consumer.",
					Tools: []string{"steps.io", "validate.deps_explain"},
					Gate:  "both edges score at least 0.5"},
				{Name: "Guide", Purpose: "Collect the rules, knobs and config fields to follow.",
					Tools: []string{"author.rules", "strategies.knobs", "author.config_constraints", "catalog.config_fields"},
					Gate:  "naming, packaging and closure rules are known"},
				{Name: "Author", Purpose: "Write <snake>.step.yaml and the script (copy shapes from the exemplar step).",
					Gate: "the files exist in a step directory the server loads"},
				{Name: "Validate", Purpose: "Check the interface and the script against each other.",
					Tools: []string{"validate.step_interface", "author.check_script", "validate.alignment"}, FixAttempts: 2,
					Gate: "validate.step_interface passes and author.check_script has no critical or error issue (skipped counts as pass)"},
				{Name: "Preflight", Purpose: "Prove the step can be built and compiled.",
					Tools: []string{"author.preflight_step", "validate.builder", "compile.preview", "compile.validate"},
					Gate:  "author.preflight_step returns constructible=true"},
				{Name: "Gaps", Purpose: "Re-resolve the whole DAG when one was given.",
					Tools: []string{"validate.deps_resolve"},
					Gate:  "no unresolved required dependency (open gaps are reported, not hidden)"},
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
				{Name: "Scaffold", Purpose: "Run the init-project workflow. For dag_source=catalog pick a shared DAG first " +
					"and pass it as the scaffold's dag argument; project.init without target_dir returns the files.",
					Workflow: InitProject,
					Tools:    []string{"project.init", "pipeline_catalog.recommend", "pipeline_catalog.load_dag"},
					Gate:     "project.init returns ok with ready=true and every script step's script is in its files; otherwise stop"},
				{Name: "GateDAG", Purpose: "Check the project's DAG (the seeded one, or for dag_source=manual the starter, edited).",
					Tools: []string{"dag.validate_integrity"},
					Gate:  "the DAG is valid and non-empty"},
				{Name: "Configure", Purpose: "Run the configure-pipeline workflow on the DAG.", Workflow: ConfigurePipeline,
					Tools: []string{"config.requirements", "author.preflight_config", "compile.validate"},
					Gate:  "the configure-pipeline workflow ends shippable"},
			},
			Outcome: "done when Configure is shippable; stops at the first failed gate",
		},
	}
}
