package handlers

import (
	"context"
	"errors"

	"github.com/cursus-dev/cursus/engine/pipelines"
	"github.com/cursus-dev/cursus/registry"
)

var (
	pcDAGIDArg     = map[string]any{"type": "string", "minLength": 1, "maxLength": 200, "pattern": `^[A-Za-z0-9_.-]+$`, "description": "Shared DAG id from pipeline_catalog.list."}
	pcFrameworkArg = map[string]any{"type": "string", "maxLength": 64, "description": "Framework (xgboost, lightgbm, pytorch, or any); a hard filter."}
	pcFeaturesArg  = map[string]any{"type": "array", "maxItems": 50, "items": map[string]any{"type": "string", "maxLength": 64},
		"description": "Wanted features, e.g. training, evaluation, calibration, packaging, payload, registration, batch_inference."}
	pcQueryProps = map[string]any{
		"framework":     pcFrameworkArg,
		"features":      pcFeaturesArg,
		"task_type":     map[string]any{"type": "string", "maxLength": 64, "description": "training, evaluation, calibration, end_to_end, batch_inference or tuning."},
		"complexity":    registry.Enum("Preferred complexity.", "simple", "standard", "advanced", "comprehensive"),
		"use_case":      map[string]any{"type": "string", "maxLength": 1000, "description": `Free text, e.g. "xgboost training with calibration".`},
		"data_type":     registry.Enum("Kind of input data.", "text", "tabular", "mixed"),
		"has_labels":    registry.Boolean("Labelled data is available (default true)."),
		"needs_llm":     registry.Boolean("An LLM step is needed (default false)."),
		"multi_task":    registry.Boolean("Several labels at once (default false)."),
		"incremental":   registry.Boolean("Incremental training (default false)."),
		"gpu_available": registry.Boolean("GPUs may be used (default true)."),
	}
)

func pipelineCatalogNamespace(d *Deps) (registry.Namespace, error) {
	if d.Pipelines == nil {
		return registry.Namespace{}, errors.New("pipeline catalog is not loaded")
	}
	recommendProps := map[string]any{"max_results": map[string]any{"type": "integer", "minimum": 1, "maximum": 50, "description": "How many to return (default 5)."}}
	autoProps := map[string]any{"min_score": map[string]any{"type": "number", "minimum": 0, "maximum": 1, "description": "Lowest acceptable score (default 0.6)."}}
	for k, v := range pcQueryProps {
		recommendProps[k] = v
		autoProps[k] = v
	}
	idOnly := registry.Object(map[string]any{"dag_id": pcDAGIDArg}, "dag_id")
	return registry.Namespace{
		Name:        "pipeline_catalog",
		Description: "Ready-made pipeline DAGs: list, rank for a use case, and load one to start from.",
		Tools: []registry.ToolDef{
			{
				Name:        "pipeline_catalog.list",
				Description: "Every shared DAG with framework, task type, complexity, features and node count, sorted by id.",
				When:        "You want to see which ready-made pipelines exist.",
				Examples:    []string{`pipeline_catalog.list {}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      registry.Object(nil),
				Handler:     d.pcList,
			},
			{
				Name: "pipeline_catalog.recommend",
				Description: "Rank shared DAGs for a request. Score = match × suitability: match is 0.5·features (incl. words of use_case) + " +
					"0.25·framework + 0.15·task type + 0.1·complexity, suitability multiplies penalties (data type, labels, LLM, multi-task, " +
					"incremental, GPU). Each result explains its score component by component.",
				When: "You know what the user wants and need the best starting DAG.",
				Examples: []string{
					`pipeline_catalog.recommend {"framework": "xgboost", "use_case": "xgboost training with calibration"}`,
					`pipeline_catalog.recommend {"data_type": "tabular", "features": ["registration"]}`,
				},
				Tags:    []string{registry.PhasePlanner},
				Schema:  registry.Object(recommendProps),
				Handler: d.pcRecommend,
			},
			{
				Name:        "pipeline_catalog.auto_select",
				Description: "The single best shared DAG for a request (same scoring as recommend; ties go to the simpler, smaller DAG, then the id), or none below min_score.",
				When:        "You want one DAG chosen deterministically without discussing options.",
				Examples:    []string{`pipeline_catalog.auto_select {"framework": "xgboost"}`, `pipeline_catalog.auto_select {"use_case": "pytorch end to end with registration"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      registry.Object(autoProps),
				Handler:     d.pcAutoSelect,
			},
			{
				Name:        "pipeline_catalog.get_dag",
				Description: "One shared DAG with its nodes, edges, requirements, constraints, cost and agent context.",
				When:        "You picked a DAG and want everything known about it.",
				Examples:    []string{`pipeline_catalog.get_dag {"dag_id": "xgboost_training_with_calibration"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      idOnly,
				Handler:     d.pcGetDAG,
			},
			{
				Name:        "pipeline_catalog.load_dag",
				Description: "Nodes and edges of a shared DAG, ready for dag.* and config.* tools.",
				When:        "You want to use a shared DAG as the pipeline.",
				Examples:    []string{`pipeline_catalog.load_dag {"dag_id": "xgboost_complete_e2e"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      idOnly,
				Handler:     d.pcLoadDAG,
			},
			{
				Name:        "pipeline_catalog.config_guidance",
				Description: "What to check and configure before running a shared DAG: prerequisites, fields the user must provide, safe defaults, pitfalls and a decision tree.",
				When:        "Before filling the configuration of a chosen DAG.",
				Examples:    []string{`pipeline_catalog.config_guidance {"dag_id": "xgboost_complete_e2e"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      idOnly,
				Handler:     d.pcConfigGuidance,
			},
		},
	}, nil
}

func (d *Deps) pcEntry(req registry.Request) (*pipelines.Entry, error) {
	id, _ := req.Args["dag_id"].(string)
	e, ok := d.Pipelines.Get(id)
	if !ok {
		return nil, registry.Errorf(registry.CodeNotFound, "DAG '%s' not found", id).
			WithDetails(map[string]any{"dag_id": id, "available": d.Pipelines.IDs()}).
			Suggest("Pick an id from pipeline_catalog.list or pipeline_catalog.recommend.", "pipeline_catalog.list", "pipeline_catalog.recommend")
	}
	return e, nil
}

func (d *Deps) pcList(_ context.Context, _ registry.Request) (*registry.Result, error) {
	var out []map[string]any
	for _, e := range d.Pipelines.List() {
		out = append(out, map[string]any{"dag_id": e.ID, "framework": e.Framework, "description": e.Description, "task_type": e.TaskType,
			"complexity": e.Complexity, "features": e.Features, "node_count": e.NodeCount, "edge_count": e.EdgeCount, "source": e.Source})
	}
	return registry.OK(map[string]any{"dags": out, "count": len(out)}).WithMeta("count", len(out)), nil
}

func queryFrom(req registry.Request) (pipelines.Query, error) {
	var a struct {
		Framework    string   `json:"framework"`
		Features     []string `json:"features"`
		TaskType     string   `json:"task_type"`
		Complexity   string   `json:"complexity"`
		UseCase      string   `json:"use_case"`
		DataType     string   `json:"data_type"`
		HasLabels    *bool    `json:"has_labels"`
		NeedsLLM     bool     `json:"needs_llm"`
		MultiTask    bool     `json:"multi_task"`
		Incremental  bool     `json:"incremental"`
		GPUAvailable *bool    `json:"gpu_available"`
		MaxResults   int      `json:"max_results"`
	}
	if err := req.Bind(&a); err != nil {
		return pipelines.Query{}, err
	}
	return pipelines.Query{Framework: a.Framework, Features: a.Features, TaskType: a.TaskType, Complexity: a.Complexity, UseCase: a.UseCase,
		DataType: a.DataType, HasLabels: a.HasLabels, NeedsLLM: a.NeedsLLM, MultiTask: a.MultiTask, Incremental: a.Incremental,
		GPUAvailable: a.GPUAvailable, MaxResults: a.MaxResults}, nil
}

func recommendation(r pipelines.Recommendation) map[string]any {
	e := r.Entry
	desc := e.Description
	if len(desc) > 160 {
		desc = desc[:157] + "..."
	}
	return map[string]any{
		"dag_id": e.ID, "score": r.Score, "framework": e.Framework, "description": desc, "task_type": e.TaskType,
		"complexity": e.Complexity, "features": e.Features, "node_count": e.NodeCount, "cost": e.Cost,
		"when_to_use": e.AgentContext.WhenToUse, "differentiators": e.AgentContext.Differentiators,
		"reasoning": r.Reasoning, "components": r.Components, "factors": r.Factors, "match": r.Match, "factor": r.Factor,
	}
}

func (d *Deps) pcRecommend(_ context.Context, req registry.Request) (*registry.Result, error) {
	q, err := queryFrom(req)
	if err != nil {
		return nil, err
	}
	recs := d.Pipelines.Recommend(q)
	out := []map[string]any{}
	for _, r := range recs {
		out = append(out, recommendation(r))
	}
	res := registry.OK(map[string]any{"total_matches": len(out), "recommendations": out}).WithMeta("total_matches", len(out))
	if len(out) == 0 {
		return res.Warn("no shared DAG matches; relax the framework or features, or see pipeline_catalog.list"), nil
	}
	hint := map[string]any{"dag_id": recs[0].Entry.ID}
	return res.Next(
		registry.NextStep{Tool: "pipeline_catalog.config_guidance", When: "after choosing", Why: "what to configure", ArgsHint: hint},
		registry.NextStep{Tool: "pipeline_catalog.load_dag", When: "to use it", Why: "nodes and edges for dag.* and config.*", ArgsHint: hint},
	), nil
}

func (d *Deps) pcAutoSelect(_ context.Context, req registry.Request) (*registry.Result, error) {
	q, err := queryFrom(req)
	if err != nil {
		return nil, err
	}
	min := pipelines.DefaultAutoSelectScore
	if v, ok := req.Args["min_score"].(float64); ok {
		min = v
	}
	r, ok := d.Pipelines.AutoSelect(q, min)
	if !ok {
		data := map[string]any{"dag_id": nil, "score": nil, "matched": false}
		if r.Entry != nil {
			data["best_candidate"] = map[string]any{"dag_id": r.Entry.ID, "score": r.Score, "reasoning": r.Reasoning}
		}
		return registry.OK(data).Warn("No DAG met the minimum score threshold."), nil
	}
	return registry.OK(map[string]any{"dag_id": r.Entry.ID, "score": r.Score, "matched": true, "reasoning": r.Reasoning,
		"components": r.Components, "factors": r.Factors}).WithMeta("dag_id", r.Entry.ID).
		Next(registry.NextStep{Tool: "pipeline_catalog.load_dag", When: "next", Why: "get its nodes and edges", ArgsHint: map[string]any{"dag_id": r.Entry.ID}}), nil
}

func (d *Deps) pcGetDAG(_ context.Context, req registry.Request) (*registry.Result, error) {
	e, err := d.pcEntry(req)
	if err != nil {
		return nil, err
	}
	g := e.DAG()
	return registry.OK(map[string]any{
		"dag_id": e.ID, "description": e.Description, "framework": e.Framework, "task_type": e.TaskType, "complexity": e.Complexity,
		"features": e.Features, "nodes": g.Nodes, "edges": g.Edges, "node_count": e.NodeCount, "edge_count": e.EdgeCount,
		"input_requirements": e.InputRequirements, "constraints": e.Constraints, "cost": e.Cost, "agent_context": e.AgentContext,
		"path": e.Path, "source": e.Source,
	}).WithMeta("dag_id", e.ID), nil
}

func (d *Deps) pcLoadDAG(_ context.Context, req registry.Request) (*registry.Result, error) {
	e, err := d.pcEntry(req)
	if err != nil {
		return nil, err
	}
	g := e.DAG()
	return registry.OK(map[string]any{"dag_id": e.ID, "nodes": g.Nodes, "edges": g.Edges, "node_count": e.NodeCount, "edge_count": e.EdgeCount}).
		WithMeta("dag_id", e.ID).
		Next(registry.NextStep{Tool: "dag.resolve_plan", When: "next", Why: "see how the steps are wired", ArgsHint: map[string]any{"nodes": g.Nodes, "edges": g.Edges}},
			registry.NextStep{Tool: "config.requirements", When: "then", Why: "the configuration it needs", ArgsHint: map[string]any{"dag": map[string]any{"nodes": g.Nodes, "edges": g.Edges}}}), nil
}

func (d *Deps) pcConfigGuidance(_ context.Context, req registry.Request) (*registry.Result, error) {
	e, err := d.pcEntry(req)
	if err != nil {
		return nil, err
	}
	ac := e.AgentContext
	return registry.OK(map[string]any{
		"dag_id": e.ID, "prerequisites": ac.Prerequisites, "config_guidance": ac.ConfigGuidance,
		"common_pitfalls": ac.ConfigGuidance.CommonPitfalls, "decision_tree": ac.DecisionTree,
	}).WithMeta("dag_id", e.ID).
		Next(registry.NextStep{Tool: "config.requirements", When: "next", Why: "exact fields per node", ArgsHint: map[string]any{"dag": map[string]any{"nodes": e.DAG().Nodes, "edges": e.DAG().Edges}}}), nil
}
