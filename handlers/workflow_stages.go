package handlers

import (
	"context"
	"slices"

	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/registry"
)

// The engine's workflow model names stages and engine checks, never
// tools; this file maps each stage to the tools that produce (or check
// before submitting) its content, with args hints. The prompts, the
// workflow resources, project.bring_up, workflow.list and a run's next
// stage all render stages from the model and this map.

// stageTool is a tool that produces or checks a workflow stage's content.
type stageTool struct {
	Tool     string         `json:"tool"`
	Why      string         `json:"why"`
	ArgsHint map[string]any `json:"args_hint,omitempty"`
}

// stageTools are a stage's tools; decides names those whose answer is the
// stage's gate when the caller judges it (a caller who may not call one
// cannot pass the stage).
type stageTools struct {
	tools   []stageTool
	decides []string
}

// runArg in an args hint stands for the run's argument of that name.
type runArg string

// Placeholders for the content a stage's submission sends, so a hint
// carries it to the tool that checks it.
const (
	sentDAG       = "<content.dag>"
	sentConfig    = "<content.config>"
	sentFiles     = "<content.files>"
	sentStepTypes = "<content.step_types>"
)

// workflowStageTools maps every stage of every workflow (a test holds it
// to the engine's model) to its tools.
var workflowStageTools = map[string]map[string]stageTools{
	workflows.InitProject: {
		"Consult": {tools: []stageTool{
			{"project.bring_up", "checks the arguments and previews the plan without writing", map[string]any{"name": runArg("name"), "framework": runArg("framework"), "target_dir": runArg("target_dir")}},
			{"pipeline_catalog.recommend", "ranks the shared DAGs for the framework", map[string]any{"framework": runArg("framework")}},
		}, decides: []string{"project.bring_up"}},
		"Scaffold": {tools: []stageTool{
			{"project.init", "returns the project's files as content (add target_dir to write them)", map[string]any{"name": runArg("name"), "framework": runArg("framework")}},
		}, decides: []string{"project.init"}},
		"Verify": {tools: []stageTool{
			{"project.init", "produces the DAG and files this stage takes", map[string]any{"name": runArg("name"), "framework": runArg("framework")}},
			{"dag.validate_integrity", "checks the DAG", map[string]any{"dag": sentDAG}},
			{"author.check_script", "checks one script against its contract", map[string]any{"step_name": "<step type>", "files": sentFiles}},
			{"validate.alignment", "checks every script against its contract", map[string]any{"files": sentFiles}},
		}},
		"Ledger": {},
	},
	workflows.ConfigurePipeline: {
		"Constrain": {tools: []stageTool{
			{"config.requirements", "lists the fields every node needs", map[string]any{"dag": sentDAG}},
			{"author.config_constraints", "explains one step type's fields", map[string]any{"step_name": "<step type>"}},
			{"catalog.config_fields", "lists one step type's config fields", map[string]any{"step_name": "<step type>"}},
		}},
		"Validate": {tools: []stageTool{
			{"author.preflight_config", "checks one node's values", map[string]any{"step_name": "<step type>", "values": "<the node's values>"}},
			{"config.merge_save", "produces the config.json document from per-node values", map[string]any{"dag": sentDAG, "per_node": "<node → values>"}},
			{"config.load", "reads the config document the way the gate does", map[string]any{"config": sentConfig}},
		}, decides: []string{"author.preflight_config"}},
		"Generate": {tools: []stageTool{
			{"config.load", "reads the written config.json back", map[string]any{"config_file": runArg("config_file")}},
		}, decides: []string{"config.load"}},
		"DagCheck": {tools: []stageTool{
			{"dag.validate_integrity", "checks the DAG", map[string]any{"dag": sentDAG}},
			{"compile.validate", "checks the DAG, configs and wiring together", map[string]any{"dag": sentDAG, "config": sentConfig}},
			{"compile.preview", "shows how each node resolves", map[string]any{"dag": sentDAG, "config": sentConfig}},
			{"validate.deps_resolve", "resolves every dependency", map[string]any{"dag": sentDAG}},
		}, decides: []string{"compile.validate", "compile.preview"}},
		"Synthesize": {},
	},
	workflows.AuthorStep: {
		"Resolve": {tools: []stageTool{
			{"catalog.search", "finds a step that may already do it", map[string]any{"query": runArg("intent")}},
			{"catalog.step_info", "shows a candidate step", map[string]any{"step_name": "<step type>"}},
			{"author.checklist", "lists the authoring steps for a SageMaker step type", map[string]any{"sagemaker_step_type": "<SageMaker step type>"}},
			{"strategies.for_step_type", "shows the knobs of that SageMaker step type", map[string]any{"sagemaker_step_type": "<SageMaker step type>"}},
		}},
		"AlignEdges": {tools: []stageTool{
			{"steps.io", "lists a neighbour's ports", map[string]any{"step_name": runArg("producer_node")}},
			{"validate.deps_explain", "scores an edge", map[string]any{"producer": runArg("producer_node"), "consumer": runArg("consumer_node"), "step_types": sentStepTypes}},
		}},
		"Guide": {tools: []stageTool{
			{"author.rules", "the naming, packaging and closure rules", map[string]any{"topic": "naming"}},
			{"strategies.knobs", "one knob's values", map[string]any{"axis": "<axis>", "name": "<knob>"}},
			{"author.config_constraints", "an exemplar's config fields", map[string]any{"step_name": "<exemplar step type>"}},
			{"catalog.config_fields", "an exemplar's config fields", map[string]any{"step_name": "<exemplar step type>"}},
		}},
		"Author": {tools: []stageTool{
			{"steps.format", "the JSON Schema of a .step.yaml", map[string]any{"format": formatStepYAML}},
			{"steps.source", "an exemplar's .step.yaml to copy shapes from", map[string]any{"step_name": "<exemplar step type>"}},
		}},
		"Validate": {tools: []stageTool{
			{"validate.step_interface", "checks the .step.yaml sent as step_types", map[string]any{"step_types": sentStepTypes}},
			{"author.check_script", "checks the script against the interface", map[string]any{"step_name": runArg("name"), "step_types": sentStepTypes, "files": sentFiles}},
			{"validate.alignment", "checks script, contract and config together", map[string]any{"step_types": sentStepTypes, "files": sentFiles}},
		}, decides: []string{"validate.step_interface", "author.check_script"}},
		"Preflight": {tools: []stageTool{
			{"author.preflight_step", "proves the step is constructible", map[string]any{"step_name": runArg("name"), "step_types": sentStepTypes, "files": sentFiles}},
			{"validate.builder", "checks the step's builder", map[string]any{"step_name": runArg("name"), "step_types": sentStepTypes}},
			{"compile.preview", "shows the step in a DAG", map[string]any{"dag": "<a DAG with the step>", "step_types": sentStepTypes}},
			{"compile.validate", "checks the step in a DAG", map[string]any{"dag": "<a DAG with the step>", "step_types": sentStepTypes}},
		}, decides: []string{"author.preflight_step"}},
		"Gaps": {tools: []stageTool{
			{"validate.deps_resolve", "re-resolves the whole DAG", map[string]any{"dag": "<a DAG with the step>", "step_types": sentStepTypes}},
		}},
	},
	workflows.NewProject: {
		"Scaffold": {tools: []stageTool{
			{"project.init", "returns the project's files (data.files) as the content this stage takes; with dag_source=catalog pass the chosen shared DAG as dag", map[string]any{"name": runArg("name"), "framework": runArg("framework")}},
			{"pipeline_catalog.recommend", "ranks the shared DAGs for the framework", map[string]any{"framework": runArg("framework")}},
			{"pipeline_catalog.load_dag", "returns a shared DAG to seed the project with", map[string]any{"dag_id": "<id from pipeline_catalog.recommend>"}},
		}, decides: []string{"project.init"}},
		"GateDAG": {tools: []stageTool{
			{"dag.validate_integrity", "checks the DAG", map[string]any{"dag": sentDAG}},
		}},
		"Configure": {tools: []stageTool{
			{"config.requirements", "lists the fields every node needs", map[string]any{"dag": sentDAG}},
			{"author.preflight_config", "checks one node's values", map[string]any{"step_name": "<step type>", "values": "<the node's values>"}},
			{"compile.validate", "checks the DAG, configs and wiring together", map[string]any{"dag": sentDAG, "config": sentConfig, "files": sentFiles}},
		}},
	},
}

// toolsOf are the tools of a workflow's stage a caller may call (open),
// their args hints with the run's arguments filled in (args; an argument
// not given stays a placeholder).
func toolsOf(workflow, stage string, args map[string]string, open func(string) bool) []stageTool {
	var out []stageTool
	for _, t := range workflowStageTools[workflow][stage].tools {
		if !open(t.Tool) {
			continue
		}
		hint := make(map[string]any, len(t.ArgsHint))
		for k, v := range t.ArgsHint {
			if a, ok := v.(runArg); ok {
				v = "<" + string(a) + ">"
				if args[string(a)] != "" {
					v = args[string(a)]
				}
			}
			hint[k] = v
		}
		t.ArgsHint = hint
		out = append(out, t)
	}
	return out
}

// gateStage is a stage the server checks, as workflow.list and a run's
// next stage show it: the content its gate takes and the tools that
// produce that content.
type gateStage struct {
	Name    string `json:"name"`
	Purpose string `json:"purpose"`
	// Takes are the content fields to send (required ones in Requires).
	Takes       []string    `json:"takes"`
	Requires    []string    `json:"requires"`
	Gate        string      `json:"gate"`
	FixAttempts int         `json:"fix_attempts"`
	Tools       []stageTool `json:"tools,omitempty"`
}

func gateStageOf(workflow string, s workflows.Stage, args map[string]string, open func(string) bool) gateStage {
	return gateStage{Name: s.Name, Purpose: s.Purpose, Takes: s.Takes(), Requires: s.Requires(), Gate: s.Gate(), FixAttempts: s.FixAttempts,
		Tools: toolsOf(workflow, s.Name, args, open)}
}

// guide is a workflow as its prompt, its resource and project.bring_up
// describe it: every stage, with the names of its tools.
type guide struct {
	Name        string
	Title       string
	Description string
	Arguments   []workflows.Argument
	Stages      []guideStage
	Outcome     string
}

// guideStage is one stage of a guide.
type guideStage struct {
	Name        string   `json:"name"`
	Purpose     string   `json:"purpose"`
	Tools       []string `json:"tools"`
	Gate        string   `json:"gate"`
	FixAttempts int      `json:"fix_attempts,omitempty"`
	Workflow    string   `json:"workflow,omitempty"`
	// decides are the tools whose answer is the gate (stageTools.decides).
	decides []string
}

// guideOf is w's guide with every stage's tools.
func guideOf(w workflows.Workflow) guide {
	g := guide{Name: w.Name, Title: w.Title, Description: w.Description, Arguments: w.Arguments, Outcome: w.Outcome}
	for _, s := range w.Stages {
		st := workflowStageTools[w.Name][s.Name]
		gs := guideStage{Name: s.Name, Purpose: s.Purpose, Gate: s.Gate(), FixAttempts: s.FixAttempts, Workflow: s.Workflow,
			decides: slices.Clone(st.decides)}
		for _, t := range st.tools {
			if !slices.Contains(gs.Tools, t.Tool) {
				gs.Tools = append(gs.Tools, t.Tool)
			}
		}
		g.Stages = append(g.Stages, gs)
	}
	return g
}

// mayCall says which tools the calling client may call (all of them
// outside a registry call).
func mayCall(ctx context.Context) func(string) bool {
	reg := registry.RegistryFrom(ctx)
	if reg == nil {
		return func(string) bool { return true }
	}
	caller := registry.CallerFrom(ctx)
	return func(tool string) bool { return reg.MayCall(caller, tool) }
}
