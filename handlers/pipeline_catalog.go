package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/registry"
)

type pcDAGIDIn struct {
	DAGID string `json:"dag_id" jsonschema:"Shared DAG id from pipeline_catalog.list." schema:"minLength=1,maxLength=200" pattern:"^[A-Za-z0-9_.-]+$"`
}

// pcFeature is one wanted feature of a shared DAG.
type pcFeature string

func (pcFeature) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MaxLength: ptr(64)}
}

// pcQueryIn is what recommend and auto_select rank the shared DAGs by.
type pcQueryIn struct {
	Framework    string      `json:"framework,omitempty" jsonschema:"Framework (xgboost, lightgbm, pytorch, or any); a hard filter." schema:"maxLength=64"`
	Features     []pcFeature `json:"features,omitempty" jsonschema:"Wanted features, e.g. training, evaluation, calibration, packaging, payload, registration, batch_inference." schema:"maxItems=50"`
	TaskType     string      `json:"task_type,omitempty" jsonschema:"training, evaluation, calibration, end_to_end, batch_inference or tuning." schema:"maxLength=64"`
	Complexity   string      `json:"complexity,omitempty" jsonschema:"Preferred complexity." schema:"enum=simple|standard|advanced|comprehensive"`
	UseCase      string      `json:"use_case,omitempty" jsonschema:"Free text, e.g. \"xgboost training with calibration\"." schema:"maxLength=1000"`
	DataType     string      `json:"data_type,omitempty" jsonschema:"Kind of input data." schema:"enum=text|tabular|mixed"`
	HasLabels    *bool       `json:"has_labels,omitempty" jsonschema:"Labelled data is available (default true)."`
	NeedsLLM     bool        `json:"needs_llm,omitempty" jsonschema:"An LLM step is needed (default false)."`
	MultiTask    bool        `json:"multi_task,omitempty" jsonschema:"Several labels at once (default false)."`
	Incremental  bool        `json:"incremental,omitempty" jsonschema:"Incremental training (default false)."`
	GPUAvailable *bool       `json:"gpu_available,omitempty" jsonschema:"GPUs may be used (default true)."`
}

func (in pcQueryIn) query() pipelines.Query {
	features := make([]string, len(in.Features))
	for i, f := range in.Features {
		features[i] = string(f)
	}
	return pipelines.Query{Framework: in.Framework, Features: features, TaskType: in.TaskType, Complexity: in.Complexity,
		UseCase: in.UseCase, DataType: in.DataType, HasLabels: in.HasLabels, NeedsLLM: in.NeedsLLM, MultiTask: in.MultiTask,
		Incremental: in.Incremental, GPUAvailable: in.GPUAvailable}
}

func pipelineCatalogNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("pipeline catalog is not loaded")
	}
	return registry.Namespace{
		Name:        "pipeline_catalog",
		Description: "Ready-made pipeline DAGs: list, rank for a use case, and load one to start from.",
		Tools: []registry.ToolDef{
			pcListTool(d),
			pcRecommendTool(d),
			pcAutoSelectTool(d),
			pcGetDAGTool(d),
			pcLoadDAGTool(d),
			pcConfigGuidanceTool(d),
		},
	}, nil
}

// dags is the shared-DAG catalog as loaded now.
func (d *Deps) dags(ctx context.Context) *pipelines.Catalog { return d.catalogs(ctx).DAGs }

func (d *Deps) pcEntry(ctx context.Context, id string) (*pipelines.Entry, error) {
	dags := d.dags(ctx)
	e, ok := dags.Get(id)
	if !ok {
		return nil, registry.Errorf(registry.CodeNotFound, "DAG '%s' not found", id).
			WithDetails(map[string]any{"dag_id": id, "available": dags.IDs()}).
			Suggest("Pick an id from pipeline_catalog.list or pipeline_catalog.recommend.", "pipeline_catalog.list", "pipeline_catalog.recommend")
	}
	return e, nil
}

// pcReply answers a pipeline_catalog tool about one shared DAG: it finds
// the DAG (not_found naming the ids there are), names it in meta and lets
// answer fill in the rest of the reply.
func pcReply[Out any](ctx context.Context, d *Deps, id string, answer func(*pipelines.Entry, *registry.Reply[Out])) (registry.Reply[Out], error) {
	var reply registry.Reply[Out]
	e, err := d.pcEntry(ctx, id)
	if err != nil {
		return reply, err
	}
	reply.WithMeta("dag_id", e.ID)
	answer(e, &reply)
	return reply, nil
}

// pcNodesEdges is a shared DAG's nodes and edges as lists: a DAG without
// edges answers [], not null.
func pcNodesEdges(e *pipelines.Entry) ([]string, [][2]string) {
	g := e.DAG()
	return nonNilStrings(g.Nodes), nonNilList(g.Edges)
}

// maxListedProblems bounds the problems pipeline_catalog.list names in
// its warnings.
const maxListedProblems = 20

type pcListOut struct {
	DAGs  []pcSummary `json:"dags"`
	Count int         `json:"count"`
}

// pcSummary is one shared DAG in pipeline_catalog.list.
type pcSummary struct {
	DAGID       string   `json:"dag_id"`
	Framework   string   `json:"framework"`
	Description string   `json:"description"`
	TaskType    string   `json:"task_type"`
	Complexity  string   `json:"complexity"`
	Features    []string `json:"features"`
	NodeCount   int      `json:"node_count"`
	EdgeCount   int      `json:"edge_count"`
	Source      string   `json:"source"`
}

func pcListTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "pipeline_catalog.list",
		Description: "Every shared DAG (framework, task type, complexity, features and node count), sorted by id.",
		When:        "You want to see which ready-made pipelines exist.",
		Examples:    []string{`pipeline_catalog.list {}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.pcList)
}

func (d *Deps) pcList(ctx context.Context, _ struct{}) (registry.Reply[pcListOut], error) {
	var reply registry.Reply[pcListOut]
	view := d.catalogs(ctx)
	var out []pcSummary
	for _, e := range view.DAGs.List() {
		out = append(out, pcSummary{DAGID: e.ID, Framework: e.Framework, Description: e.Description, TaskType: e.TaskType,
			Complexity: e.Complexity, Features: e.Features, NodeCount: e.NodeCount, EdgeCount: e.EdgeCount, Source: e.Source})
	}
	reply.WithMeta("count", len(out))
	if n := len(view.DAGProblems); n > 0 {
		warnings := []string{fmt.Sprintf("%d problem(s) in the pipeline directories: a DAG whose file failed to load is not listed", n)}
		for _, p := range view.DAGProblems[:min(n, maxListedProblems)] {
			warnings = append(warnings, p.String())
		}
		reply.Warn(warnings...)
	}
	reply.Out = pcListOut{DAGs: out, Count: len(out)}
	return reply, nil
}

// pcStatus is the status and action of the Python project's
// pipeline_catalog results, kept for the scripts that read them. A failure
// is a failed envelope here, so status is always "success".
type pcStatus struct {
	Status string `json:"status"`
	Action string `json:"action"`
}

func pcSuccess(action string) pcStatus { return pcStatus{Status: "success", Action: action} }

// pcRecommendation is one ranked shared DAG with its explained score.
type pcRecommendation struct {
	DAGID           string                `json:"dag_id"`
	Score           float64               `json:"score"`
	Framework       string                `json:"framework"`
	Description     string                `json:"description"` // at most 160 bytes
	TaskType        string                `json:"task_type"`
	Complexity      string                `json:"complexity"`
	Features        []string              `json:"features"`
	NodeCount       int                   `json:"node_count"`
	Cost            map[string]any        `json:"cost"`
	WhenToUse       string                `json:"when_to_use"`
	Differentiators []string              `json:"differentiators"`
	Reasoning       string                `json:"reasoning"`
	Components      []pipelines.Component `json:"components"`
	Factors         []pipelines.Component `json:"factors"`
	Match           float64               `json:"match"`
	Factor          float64               `json:"factor"`
}

func newRecommendation(r pipelines.Recommendation) pcRecommendation {
	e := r.Entry
	desc := e.Description
	if len(desc) > 160 {
		desc = desc[:157] + "..."
	}
	return pcRecommendation{
		DAGID: e.ID, Score: r.Score, Framework: e.Framework, Description: desc, TaskType: e.TaskType,
		Complexity: e.Complexity, Features: e.Features, NodeCount: e.NodeCount, Cost: e.Cost,
		WhenToUse: e.AgentContext.WhenToUse, Differentiators: e.AgentContext.Differentiators,
		Reasoning: r.Reasoning, Components: r.Components, Factors: r.Factors, Match: r.Match, Factor: r.Factor,
	}
}

type pcRecommendIn struct {
	pcQueryIn
	MaxResults int `json:"max_results,omitempty" jsonschema:"How many to return (default 5)." schema:"minimum=1,maximum=50"`
}

type pcRecommendOut struct {
	pcStatus
	TotalMatches    int                `json:"total_matches"`
	Recommendations []pcRecommendation `json:"recommendations"`
	NextStep        string             `json:"next_step"` // the Python project's one-line hint; next_steps has the calls
}

func pcRecommendTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "pipeline_catalog.recommend",
		Description: "Rank shared DAGs for a request. Score = match × suitability: match is 0.5·features (incl. words of use_case) + " +
			"0.25·framework + 0.15·task type + 0.1·complexity, suitability multiplies penalties (data type, labels, LLM, multi-task, " +
			"incremental, GPU). Each result explains its score component by component.",
		When: "To pick a starting DAG.",
		Examples: []string{
			`pipeline_catalog.recommend {"framework": "xgboost", "use_case": "xgboost training with calibration"}`,
			`pipeline_catalog.recommend {"data_type": "tabular", "features": ["registration"]}`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.pcRecommend)
}

func (d *Deps) pcRecommend(ctx context.Context, in pcRecommendIn) (registry.Reply[pcRecommendOut], error) {
	var reply registry.Reply[pcRecommendOut]
	q := in.query()
	q.MaxResults = in.MaxResults
	recs := d.dags(ctx).Recommend(q)
	out := []pcRecommendation{}
	for _, r := range recs {
		out = append(out, newRecommendation(r))
	}
	reply.WithMeta("total_matches", len(out))
	next := "Pick a dag_id, then read pipeline_catalog.config_guidance and load it with pipeline_catalog.load_dag."
	if len(out) == 0 {
		next = "Relax the framework or features, or pick a DAG from pipeline_catalog.list."
		reply.Warn("no shared DAG matches; relax the framework or features, or see pipeline_catalog.list")
	} else {
		hint := map[string]any{"dag_id": recs[0].Entry.ID}
		reply.Next(registry.NextStep{Tool: "pipeline_catalog.config_guidance", When: "after choosing", Why: "what to configure", ArgsHint: hint},
			registry.NextStep{Tool: "pipeline_catalog.load_dag", When: "to use it", Why: "nodes and edges for dag.* and config.*", ArgsHint: hint},
		)
	}
	reply.Out = pcRecommendOut{pcStatus: pcSuccess("recommend"), TotalMatches: len(out), Recommendations: out, NextStep: next}
	return reply, nil
}

type pcAutoSelectIn struct {
	pcQueryIn
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"Lowest acceptable score (default 0.6)." schema:"minimum=0,maximum=1"`
}

// pcAutoSelected is the pipeline_catalog.auto_select payload. A match has
// dag_id, score, reasoning, components and factors (which may be null, so
// it is a pointer: present exactly when matched); no match has null dag_id
// and score, and the best candidate when there was one.
type pcAutoSelected struct {
	DAGID         *string                `json:"dag_id"`
	Score         *float64               `json:"score"`
	Matched       bool                   `json:"matched"`
	Reasoning     string                 `json:"reasoning,omitempty"`
	Components    []pipelines.Component  `json:"components,omitempty"`
	Factors       *[]pipelines.Component `json:"factors,omitempty"`
	BestCandidate *pcCandidate           `json:"best_candidate,omitempty"`
	// Lacks maps each requested feature the DAG does not have to the step
	// types the catalog search finds for it, best first: the nodes to add.
	Lacks map[string][]string `json:"lacks,omitempty"`
}

type pcCandidate struct {
	DAGID     string  `json:"dag_id"`
	Score     float64 `json:"score"`
	Reasoning string  `json:"reasoning"`
}

func pcAutoSelectTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "pipeline_catalog.auto_select",
		Description: "The best shared DAG for a request (same scoring as recommend; ties go to the simpler, smaller DAG, then the id), or none below min_score.",
		When:        "To have one DAG picked.",
		Examples:    []string{`pipeline_catalog.auto_select {"framework": "xgboost"}`, `pipeline_catalog.auto_select {"use_case": "pytorch end to end with registration"}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.pcAutoSelect)
}

func (d *Deps) pcAutoSelect(ctx context.Context, in pcAutoSelectIn) (registry.Reply[pcAutoSelected], error) {
	var reply registry.Reply[pcAutoSelected]
	min := pipelines.DefaultAutoSelectScore
	if in.MinScore != nil {
		min = *in.MinScore
	}
	r, ok := d.dags(ctx).AutoSelect(in.query(), min)
	if !ok {
		out := pcAutoSelected{}
		if r.Entry != nil {
			out.BestCandidate = &pcCandidate{DAGID: r.Entry.ID, Score: r.Score, Reasoning: r.Reasoning}
		}
		reply.Warn("No DAG met the minimum score threshold.")
		reply.Out = out
		return reply, nil
	}
	reply.WithMeta("dag_id", r.Entry.ID)
	nodes, edges := pcNodesEdges(r.Entry)
	dagHint := map[string]any{"nodes": nodes, "edges": edges, "metadata": pcDAGMetadata{Name: r.Entry.ID}}
	reply.Next(
		registry.NextStep{Tool: "config.requirements", When: "next (add nodes to dag first if it lacks a feature)", Why: "the configuration this DAG needs", ArgsHint: map[string]any{"dag": dagHint}},
		registry.NextStep{Tool: "pipeline_catalog.get_dag", When: "you want its description and constraints", Why: "everything known about it", ArgsHint: map[string]any{"dag_id": r.Entry.ID}})
	reply.Out = pcAutoSelected{DAGID: &r.Entry.ID, Score: &r.Score, Matched: true, Reasoning: r.Reasoning,
		Components: r.Components, Factors: &r.Factors, Lacks: d.stepTypesFor(ctx, r.Lacks)}
	return reply, nil
}

// maxLackingHits bounds the step types named for one lacking feature.
const maxLackingHits = 3

// stepTypesFor maps each feature to the step types a catalog search for
// it finds, best first; nil when there is no feature.
func (d *Deps) stepTypesFor(ctx context.Context, features []string) map[string][]string {
	if len(features) == 0 {
		return nil
	}
	cv, err := d.catalogsFor(ctx, stepTypesArg{})
	if err != nil {
		return nil
	}
	out := make(map[string][]string, len(features))
	for _, f := range features {
		types := []string{}
		for _, h := range cv.Steps.Search(strings.ReplaceAll(f, "_", " ")) {
			if len(types) == maxLackingHits {
				break
			}
			types = append(types, h.StepType)
		}
		out[f] = types
	}
	return out
}

// pcDAG is everything known about one shared DAG.
type pcDAG struct {
	pcStatus
	DAGID             string                 `json:"dag_id"`
	Description       string                 `json:"description"`
	Framework         string                 `json:"framework"`
	TaskType          string                 `json:"task_type"`
	Complexity        string                 `json:"complexity"`
	Features          []string               `json:"features"`
	Nodes             []string               `json:"nodes"`
	Edges             [][2]string            `json:"edges"`
	NodeCount         int                    `json:"node_count"`
	EdgeCount         int                    `json:"edge_count"`
	InputRequirements map[string]any         `json:"input_requirements"`
	Constraints       map[string]any         `json:"constraints"`
	Cost              map[string]any         `json:"cost"`
	AgentContext      pipelines.AgentContext `json:"agent_context"`
	Path              string                 `json:"path"`
	Source            string                 `json:"source"`
}

func pcGetDAGTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "pipeline_catalog.get_dag",
		Description: "One shared DAG in full (nodes, edges, requirements, constraints, cost and agent context).",
		When:        "You picked a DAG and want everything known about it.",
		Examples:    []string{`pipeline_catalog.get_dag {"dag_id": "xgboost_training_with_calibration"}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.pcGetDAG)
}

func (d *Deps) pcGetDAG(ctx context.Context, in pcDAGIDIn) (registry.Reply[pcDAG], error) {
	return pcReply(ctx, d, in.DAGID, func(e *pipelines.Entry, reply *registry.Reply[pcDAG]) {
		reply.Out = newPCDAG(e)
	})
}

// newPCDAG is a shared DAG as pipeline_catalog.get_dag and the
// cursus://dags resources serve it.
func newPCDAG(e *pipelines.Entry) pcDAG {
	nodes, edges := pcNodesEdges(e)
	return pcDAG{
		pcStatus: pcSuccess("get_dag"), DAGID: e.ID, Description: e.Description, Framework: e.Framework, TaskType: e.TaskType, Complexity: e.Complexity,
		Features: e.Features, Nodes: nodes, Edges: edges, NodeCount: e.NodeCount, EdgeCount: e.EdgeCount,
		InputRequirements: e.InputRequirements, Constraints: e.Constraints, Cost: e.Cost, AgentContext: e.AgentContext,
		Path: e.Path, Source: e.Source,
	}
}

type pcLoadedDAG struct {
	DAGID     string      `json:"dag_id"`
	Nodes     []string    `json:"nodes"`
	Edges     [][2]string `json:"edges"`
	NodeCount int         `json:"node_count"`
	EdgeCount int         `json:"edge_count"`
	// Metadata names the DAG as a dag.json does, so the data passed on as
	// a tool's dag compiles into a pipeline named after the shared DAG.
	Metadata pcDAGMetadata `json:"metadata"`
}

type pcDAGMetadata struct {
	Name string `json:"name"`
}

func pcLoadDAGTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "pipeline_catalog.load_dag",
		Description: "Nodes and edges of a shared DAG (ready for dag.* and config.* tools).",
		When:        "You want to use a shared DAG as the pipeline.",
		Examples:    []string{`pipeline_catalog.load_dag {"dag_id": "xgboost_complete_e2e"}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.pcLoadDAG)
}

func (d *Deps) pcLoadDAG(ctx context.Context, in pcDAGIDIn) (registry.Reply[pcLoadedDAG], error) {
	return pcReply(ctx, d, in.DAGID, func(e *pipelines.Entry, reply *registry.Reply[pcLoadedDAG]) {
		nodes, edges := pcNodesEdges(e)
		reply.Next(registry.NextStep{Tool: "dag.resolve_plan", When: "next", Why: "see how the steps are wired", ArgsHint: map[string]any{"nodes": nodes, "edges": edges}},
			registry.NextStep{Tool: "config.requirements", When: "then", Why: "the configuration it needs", ArgsHint: map[string]any{"dag": map[string]any{"nodes": nodes, "edges": edges}}})
		reply.Out = pcLoadedDAG{DAGID: e.ID, Nodes: nodes, Edges: edges, NodeCount: e.NodeCount, EdgeCount: e.EdgeCount,
			Metadata: pcDAGMetadata{Name: e.ID}}
	})
}

type pcGuidance struct {
	pcStatus
	DAGID          string                       `json:"dag_id"`
	Prerequisites  []pipelines.Prerequisite     `json:"prerequisites"`
	ConfigGuidance pipelines.ConfigGuidance     `json:"config_guidance"`
	CommonPitfalls []string                     `json:"common_pitfalls"`
	DecisionTree   map[string]map[string]string `json:"decision_tree"`
	NextStep       string                       `json:"next_step"` // the Python project's one-line hint; next_steps has the call
}

func pcConfigGuidanceTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "pipeline_catalog.config_guidance",
		Description: "What to check and configure before running a shared DAG: prerequisites, fields the user must provide, safe defaults, pitfalls and a decision tree.",
		When:        "Before configuring a chosen DAG.",
		Examples:    []string{`pipeline_catalog.config_guidance {"dag_id": "xgboost_complete_e2e"}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.pcConfigGuidance)
}

func (d *Deps) pcConfigGuidance(ctx context.Context, in pcDAGIDIn) (registry.Reply[pcGuidance], error) {
	return pcReply(ctx, d, in.DAGID, func(e *pipelines.Entry, reply *registry.Reply[pcGuidance]) {
		ac := e.AgentContext
		nodes, edges := pcNodesEdges(e)
		reply.Next(registry.NextStep{Tool: "config.requirements", When: "next", Why: "exact fields per node", ArgsHint: map[string]any{"dag": map[string]any{"nodes": nodes, "edges": edges}}})
		reply.Out = pcGuidance{pcStatus: pcSuccess("get_config_guidance"), NextStep: "Fill the fields config.requirements lists for this DAG's nodes.", DAGID: e.ID, Prerequisites: ac.Prerequisites, ConfigGuidance: ac.ConfigGuidance,
			CommonPitfalls: ac.ConfigGuidance.CommonPitfalls, DecisionTree: ac.DecisionTree}
	})
}
