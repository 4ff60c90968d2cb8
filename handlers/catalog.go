package handlers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/strategies"
	"github.com/cursus-dev/cursus/registry"
)

// Argument schemas shared by the catalog, steps and strategies tools. Step
// names are identifiers: the pattern keeps paths ("../etc/passwd") and
// other junk out before any lookup runs.
var (
	stepNameSchema = map[string]any{
		"type": "string", "minLength": 1, "maxLength": 200, "pattern": `^[A-Za-z][A-Za-z0-9_-]*$`,
		"description": "Step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training).",
	}
	jobTypeSchema = map[string]any{
		"type": "string", "minLength": 1, "maxLength": 64, "pattern": `^[A-Za-z][A-Za-z0-9_]*$`,
		"description": "Job type variant (training, validation, testing, calibration, or any custom job type).",
	}
	sagemakerStepTypeSchema = map[string]any{
		"type": "string", "minLength": 1, "maxLength": 64, "pattern": `^[A-Za-z]+$`,
		"description": "SageMaker step type: Processing, Training, CreateModel, Transform, Tuning, RegisterModel, …",
	}
)

func catalogNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil {
		return registry.Namespace{}, errors.New("step catalog is not loaded")
	}
	stepOnly := stepOnlySchema()
	return registry.Namespace{
		Name:        "catalog",
		Description: "Discover and search step types, their specs, configs and builders.",
		Tools: []registry.ToolDef{
			{
				Name:        "catalog.list_steps",
				Description: "List every known step type (built-in plus extra catalog directories), sorted, with SageMaker step type, node type, job-type variants and a one-line description.",
				When:        "You start planning a pipeline and want to see which steps exist.",
				Examples: []string{
					`catalog.list_steps {}  # everything`,
					`catalog.list_steps {"sagemaker_step_type": "Training"}  # only training steps`,
					`catalog.list_steps {"job_type": "calibration"}  # steps that take a calibration job type`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"workspace_id":        map[string]any{"type": "string", "maxLength": 200, "description": "Accepted for compatibility; steps come from the built-in catalog and the configured extra directories."},
					"job_type":            jobTypeSchema,
					"sagemaker_step_type": sagemakerStepTypeSchema,
				}),
				Handler: d.catalogListSteps,
			},
			{
				Name: "catalog.search",
				Description: "Search step types by free text. Ranked and explainable: each match has a score and the reasons it matched " +
					"(name, description, SageMaker step type, framework, port names and keywords). Deterministic order.",
				When: "You know roughly what a step does (\"xgboost\", \"calibrat\", \"batch transform\") but not its name.",
				Examples: []string{
					`catalog.search {"query": "xgboost"}  # XGBoostTraining first`,
					`catalog.search {"query": "calibrat", "limit": 5}`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"query":    map[string]any{"type": "string", "minLength": 1, "maxLength": steps.MaxQueryLen, "description": "Words to look for (case-insensitive)."},
					"job_type": jobTypeSchema,
					"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "Most matches to return (default 20)."},
				}, "query"),
				Handler: d.catalogSearch,
			},
			{
				Name:        "catalog.step_info",
				Description: "Registry facts of one step: SageMaker step type, node type, config class, builder name, framework, job-type variants, routing strategy and where its interface file comes from.",
				When:        "You picked a step and want its identity card.",
				Examples:    []string{`catalog.step_info {"step_name": "TabularPreprocessing"}`, `catalog.step_info {"step_name": "XGBoostModelEval_calibration"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      stepOnly,
				Handler:     d.catalogStepInfo,
			},
			{
				Name:        "catalog.step_spec",
				Description: "The logical ports of a step (job-type variant applied): dependencies with type, required flag, compatible sources and keywords; outputs with type, property path and aliases.",
				When:        "You want to know what a step consumes and produces before wiring it.",
				Examples:    []string{`catalog.step_spec {"step_name": "XGBoostTraining"}`, `catalog.step_spec {"step_name": "TabularPreprocessing", "job_type": "calibration"}`},
				Tags:        []string{registry.PhasePlanner},
				Schema:      stepOnly,
				Handler:     d.catalogStepSpec,
			},
			{
				Name: "catalog.resolve_step",
				Description: "Interpret any spelling of a step: step type, DAG node (<StepType>_<job_type>), pipeline step name (<StepType>-<Jobtype>), " +
					"config class, builder name, snake-case file stem or file-style words. Returns step type, job type, variant, config key, pipeline step name, config class and builder.",
				When: "You have a node, file or class name and need the canonical step it means.",
				Examples: []string{
					`catalog.resolve_step {"step_name": "TabularPreprocessing_training"}  # job type training, variant applied`,
					`catalog.resolve_step {"step_name": "model_evaluation_xgb"}  # file-style name`,
				},
				Tags:    []string{registry.PhaseProgrammer},
				Schema:  registry.Object(map[string]any{"step_name": stepNameSchema}, "step_name"),
				Handler: d.catalogResolveStep,
			},
			{
				Name:        "catalog.config_fields",
				Description: "Every config field of a step type, inherited base fields included: type, tier (essential/system/derived), required flag, default, allowed values, pattern, range, description and the layer that declares it.",
				When:        "You need to know what to configure for a step.",
				Examples:    []string{`catalog.config_fields {"step_name": "TabularPreprocessing"}`},
				Tags:        []string{registry.PhasePlanner, registry.PhaseProgrammer},
				Schema:      registry.Object(map[string]any{"step_name": stepNameSchema}, "step_name"),
				Handler:     d.catalogConfigFields,
			},
			{
				Name:        "catalog.list_builders",
				Description: "Builder names of every step that routes to a construction strategy, with the strategy and whether this service can compile it.",
				When:        "You want to know which steps can be built, optionally for one SageMaker step type.",
				Examples:    []string{`catalog.list_builders {}`, `catalog.list_builders {"sagemaker_step_type": "Training"}`},
				Tags:        []string{registry.PhaseProgrammer},
				Schema:      registry.Object(map[string]any{"sagemaker_step_type": sagemakerStepTypeSchema}),
				Handler:     d.catalogListBuilders,
			},
		},
	}, nil
}

// lookupStep resolves a step name (any spelling) and applies the job type:
// an explicit jobType wins over a suffix in the name.
// stepOnlySchema is the argument schema of tools that take one step:
// step_name and an optional job_type. requestedStep reads it.
func stepOnlySchema() map[string]any {
	return registry.Object(map[string]any{"step_name": stepNameSchema, "job_type": jobTypeSchema}, "step_name")
}

// requestedStep resolves the step named by a tool's step_name and optional
// job_type arguments (the stepOnlySchema shape).
func (d *Deps) requestedStep(req registry.Request) (*steps.Interface, steps.Resolution, []string, error) {
	var args struct {
		StepName string `json:"step_name"`
		JobType  string `json:"job_type"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, steps.Resolution{}, nil, err
	}
	return d.lookupStep(args.StepName, args.JobType)
}

func (d *Deps) lookupStep(name, jobType string) (*steps.Interface, steps.Resolution, []string, error) {
	r, err := d.Steps.Resolve(name)
	if err != nil {
		return nil, r, nil, stepNotFound(name, err)
	}
	if jobType == "" {
		jobType = r.JobType
	} else if r.JobType != "" && r.JobType != jobType {
		return nil, r, nil, registry.Errorf(registry.CodeInvalidInput,
			"step_name '%s' carries job type '%s' but job_type is '%s'; give one of them", name, r.JobType, jobType)
	}
	iface, warnings, err := d.Steps.ForJobType(r.StepType, jobType)
	if err != nil {
		return nil, r, nil, err
	}
	return iface, r, warnings, nil
}

// stepNotFound turns a catalog miss into not_found with close matches, or
// unsupported for an Amazon-internal kind with its public replacement.
func stepNotFound(name string, err error) error {
	var nf *steps.NotFoundError
	if !errors.As(err, &nf) {
		return err
	}
	if nf.Internal != nil {
		e := registry.Errorf(registry.CodeUnsupported, "%s", nf.Error()).
			WithDetails(map[string]any{"step_name": name, "internal_kind": nf.Internal.Name, "replacement": nf.Internal.Replacement})
		if nf.Internal.Replacement != "" {
			return e.Suggest(fmt.Sprintf("Use the public step %s instead.", nf.Internal.Replacement), "catalog.step_info")
		}
		return e.Suggest(nf.Internal.Advice, "catalog.list_steps")
	}
	fix := "Check the name with catalog.search or pick one from catalog.list_steps."
	if len(nf.Suggestions) > 0 {
		fix = "Did you mean " + strings.Join(nf.Suggestions, ", ") + "? " + fix
	}
	return registry.Errorf(registry.CodeNotFound, "unknown step '%s'", name).
		WithDetails(map[string]any{"step_name": name, "suggestions": nonNilStrings(nf.Suggestions)}).
		Suggest(fix, "catalog.search", "catalog.list_steps")
}

// detectFramework names the ML framework a step runs, if any.
func detectFramework(iface *steps.Interface) any {
	if c := iface.Compute; c != nil && c.FrameworkName != "" {
		return c.FrameworkName
	}
	hay := strings.ToLower(iface.StepType)
	if c := iface.Compute; c != nil {
		hay = strings.ToLower(c.SDKClass+" "+c.Kind) + " " + hay
	}
	for _, f := range []string{"xgboost", "lightgbm", "pytorch", "sklearn"} {
		if strings.Contains(hay, f) {
			return f
		}
	}
	return nil
}

func componentsAvailable(iface *steps.Interface) []string {
	out := []string{"interface"}
	if iface.Config.Fields.Len() > 0 || iface.Config.Extends != "" {
		out = append(out, "config")
	}
	if iface.Contract.EntryPoint != "" {
		out = append(out, "script")
	}
	return out
}

func (d *Deps) catalogListSteps(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		WorkspaceID string `json:"workspace_id"`
		JobType     string `json:"job_type"`
		SMType      string `json:"sagemaker_step_type"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	var warnings []string
	names := d.Steps.Names()
	if args.SMType != "" {
		var kept []string
		for _, n := range names {
			if iface, _ := d.Steps.Get(n); strings.EqualFold(iface.Registry.SageMakerStepType, args.SMType) {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	// The reference's job_type filter returned nothing for every real job
	// type; here it keeps the steps that take that job type, and never
	// empties a non-empty list.
	if args.JobType != "" && args.JobType != "default" {
		var kept []string
		for _, n := range names {
			if d.Steps.SupportsJobType(n, args.JobType) {
				kept = append(kept, n)
			}
		}
		if len(kept) == 0 && len(names) > 0 {
			warnings = append(warnings, fmt.Sprintf("no step declares job type '%s'; showing all steps (job types are open: any step with a job_type field accepts it)", args.JobType))
		} else {
			names = kept
		}
	}
	if args.WorkspaceID != "" {
		warnings = append(warnings, "workspace_id is not used: steps come from the built-in catalog and the configured extra directories")
	}
	details := make([]map[string]any, 0, len(names))
	for _, n := range names {
		iface, _ := d.Steps.Get(n)
		details = append(details, map[string]any{
			"step_name": n, "sagemaker_step_type": iface.Registry.SageMakerStepType, "node_type": nodeType(iface),
			"job_types": nonNilStrings(iface.JobTypes()), "description": iface.Registry.Description,
		})
	}
	res := registry.OK(map[string]any{"steps": nonNilStrings(names), "count": len(names), "step_details": details}).
		WithMeta("workspace_id", nullable(args.WorkspaceID)).WithMeta("job_type", nullable(args.JobType)).
		Next(registry.NextStep{Tool: "catalog.step_info", When: "You picked a step.", Why: "See its SageMaker type, config class and variants.",
			ArgsHint: map[string]any{"step_name": "XGBoostTraining"}})
	return res.Warn(warnings...), nil
}

func nodeType(iface *steps.Interface) string {
	if iface.NodeType == "" {
		return steps.NodeInternal
	}
	return iface.NodeType
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (d *Deps) catalogSearch(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Query   string `json:"query"`
		JobType string `json:"job_type"`
		Limit   int    `json:"limit"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	if steps.CanonicalKey(args.Query) == "" {
		return nil, registry.Errorf(registry.CodeInvalidInput, "query must contain letters or digits")
	}
	if args.Limit == 0 {
		args.Limit = 20
	}
	hits := d.Steps.Search(args.Query)
	var warnings []string
	if args.JobType != "" {
		var kept []steps.SearchHit
		for _, h := range hits {
			if d.Steps.SupportsJobType(h.StepType, args.JobType) {
				kept = append(kept, h)
			}
		}
		if len(kept) == 0 && len(hits) > 0 {
			warnings = append(warnings, fmt.Sprintf("no match declares job type '%s'; showing all matches", args.JobType))
		} else {
			hits = kept
		}
	}
	total := len(hits)
	if len(hits) > args.Limit {
		hits = hits[:args.Limit]
	}
	matches := make([]map[string]any, 0, len(hits))
	for _, h := range hits {
		iface, _ := d.Steps.Get(h.StepType)
		matches = append(matches, map[string]any{
			"step_name": h.StepType, "workspace_id": nil, "score": h.Score, "match_reason": h.MatchReason, "reasons": h.Reasons,
			"sagemaker_step_type": h.SageMakerStepType, "description": h.Description, "components_available": componentsAvailable(iface),
		})
	}
	res := registry.OK(map[string]any{"matches": matches, "count": len(matches), "total_matches": total}).WithMeta("query", args.Query)
	if len(matches) > 0 {
		res.Next(registry.NextStep{Tool: "catalog.step_info", When: "The first match looks right.", Why: "Check its identity card.",
			ArgsHint: map[string]any{"step_name": matches[0]["step_name"]}})
	} else {
		res.Next(registry.NextStep{Tool: "catalog.list_steps", When: "Nothing matched.", Why: "Browse every step type."})
	}
	return res.Warn(warnings...), nil
}

func (d *Deps) catalogStepInfo(_ context.Context, req registry.Request) (*registry.Result, error) {
	iface, r, warnings, err := d.requestedStep(req)
	if err != nil {
		return nil, err
	}
	strat, _, _, serr := strategies.Default().ForStepType(iface.Registry.SageMakerStepType, strategies.StepAssembly(iface))
	strategy := map[string]any{"axis": strat.Axis, "name": strat.Name, "handler": strat.Handler, "implemented": strat.Implemented}
	if serr != nil {
		strategy = map[string]any{"error": serr.Error()}
	}
	files := map[string]any{"interface": iface.Source}
	if iface.Contract.EntryPoint != "" {
		files["script"] = iface.Contract.EntryPoint
	}
	data := map[string]any{
		"step_name": iface.StepType, "workspace_id": nil, "job_type": nullable(iface.JobType),
		"registry_data": map[string]any{
			"config_class": iface.ConfigClass(), "builder_step_name": iface.BuilderName(), "spec_type": iface.StepType,
			"sagemaker_step_type": iface.Registry.SageMakerStepType, "description": iface.Registry.Description,
			"requires": nullable(iface.Registry.Requires),
		},
		"config_class": iface.ConfigClass(), "builder_step_name": iface.BuilderName(),
		"sagemaker_step_type": iface.Registry.SageMakerStepType, "description": nullable(iface.Registry.Description),
		"node_type": nodeType(iface), "job_types": nonNilStrings(iface.JobTypes()), "pipeline_step_name": r.PipelineStepName,
		"components_available": componentsAvailable(iface), "file_components": files, "framework": detectFramework(iface),
		"config_extends": nullable(iface.Config.Extends), "strategy": strategy,
	}
	return registry.OK(data).WithMeta("step_name", r.Node).Warn(warnings...).Next(
		registry.NextStep{Tool: "catalog.step_spec", When: "Next, its ports.", Why: "See what it consumes and produces.", ArgsHint: map[string]any{"step_name": iface.StepType}},
		registry.NextStep{Tool: "catalog.config_fields", When: "Next, its configuration.", Why: "See what you must configure.", ArgsHint: map[string]any{"step_name": iface.StepType}},
	), nil
}

func (d *Deps) catalogStepSpec(_ context.Context, req registry.Request) (*registry.Result, error) {
	iface, r, warnings, err := d.requestedStep(req)
	if err != nil {
		return nil, err
	}
	deps := make([]map[string]any, 0, iface.Spec.Dependencies.Len())
	for _, n := range iface.Spec.Dependencies.Keys() {
		dep, _ := iface.Spec.Dependencies.Get(n)
		deps = append(deps, map[string]any{
			"logical_name": n, "dependency_type": orDefault(dep.Type, steps.TypeProcessingOutput), "required": dep.IsRequired(),
			"compatible_sources": nonNilStrings(dep.CompatibleSources), "data_type": orDefault(dep.DataType, "S3Uri"),
			"description": dep.Description, "semantic_keywords": nonNilStrings(dep.SemanticKeywords),
		})
	}
	outs := make([]map[string]any, 0, iface.Spec.Outputs.Len())
	for _, n := range iface.Spec.Outputs.Keys() {
		o, _ := iface.Spec.Outputs.Get(n)
		outs = append(outs, map[string]any{
			"logical_name": n, "output_type": orDefault(o.Type, steps.TypeProcessingOutput), "property_path": o.PropertyPath,
			"data_type": orDefault(o.DataType, "S3Uri"), "description": o.Description, "aliases": nonNilStrings(o.Aliases),
			"semantic_keywords": nonNilStrings(o.SemanticKeywords),
		})
	}
	data := map[string]any{
		"step_type": iface.StepType, "node_type": nodeType(iface), "job_type": nullable(iface.JobType),
		"job_types": nonNilStrings(iface.JobTypes()), "dependencies": deps, "outputs": outs,
		"dependency_count": len(deps), "output_count": len(outs),
	}
	return registry.OK(data).WithMeta("step_name", r.Node).Warn(warnings...).Next(
		registry.NextStep{Tool: "steps.io", When: "You need container paths or property references.", Why: "Joins these ports with the script contract.",
			ArgsHint: map[string]any{"step_name": iface.StepType}}), nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (d *Deps) catalogResolveStep(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string `json:"step_name"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	r, err := d.Steps.Resolve(args.StepName)
	if err != nil {
		return nil, stepNotFound(args.StepName, err)
	}
	iface, _ := d.Steps.Get(r.StepType)
	variant := ""
	var warnings []string
	if r.JobType != "" {
		if _, ok := iface.Variants.Get(r.JobType); ok {
			variant = r.JobType
		} else if iface.Variants.Len() > 0 {
			_, warnings, _ = d.Steps.ForJobType(r.StepType, r.JobType)
		}
	}
	source := "canonical"
	if r.Via != "step_type" {
		source = "file_name"
	}
	data := map[string]any{
		"input": args.StepName, "canonical_name": r.StepType, "config_class": r.ConfigClass, "builder_class": r.BuilderName,
		"spec_type": r.StepType, "sagemaker_step_type": iface.Registry.SageMakerStepType, "source": source, "matched_by": r.Via,
		"job_type": nullable(r.JobType), "variant_applied": variant != "", "variant": nullable(variant),
		"config_key": r.ConfigKey, "pipeline_step_name": r.PipelineStepName,
	}
	return registry.OK(data).Warn(warnings...).Next(registry.NextStep{Tool: "catalog.step_spec", When: "Next, its ports.",
		Why: "See the ports with this job type applied.", ArgsHint: map[string]any{"step_name": r.StepType, "job_type": r.JobType}}), nil
}

func (d *Deps) catalogConfigFields(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		StepName string `json:"step_name"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	iface, _, _, err := d.lookupStep(args.StepName, "")
	if err != nil {
		return nil, err
	}
	data := map[string]any{"step_name": iface.StepType, "config_class": iface.ConfigClass()}
	if d.Config == nil {
		// Without the config engine only the step's own section is known.
		fields := make([]map[string]any, 0, iface.Config.Fields.Len())
		for _, n := range iface.Config.Fields.Keys() {
			f, _ := iface.Config.Fields.Get(n)
			fields = append(fields, fieldRecord(n, f, "step", f.Tier == steps.TierEssential && f.Default == nil))
		}
		data["fields"], data["count"], data["chain"] = fields, len(fields), []string{iface.Config.Extends}
		return registry.OK(data).Warn("base config schemas are not loaded; only the step's own fields are listed"), nil
	}
	sc, err := d.Config.ForStep(iface.StepType)
	if err != nil {
		return nil, registry.Errorf(registry.CodeNotFound, "no config schema for step '%s': %v", iface.StepType, err).
			WithDetails(map[string]any{"step_name": iface.StepType, "config_class": iface.ConfigClass()}).
			Suggest("Check the step's config section with validate.step_interface.", "validate.step_interface")
	}
	fields := make([]map[string]any, 0, len(sc.Fields))
	counts := map[string]int{}
	for _, f := range sc.Fields {
		rec := fieldRecord(f.Name, f.Field, f.Source, f.Required())
		rec["origin"] = f.Origin
		fields = append(fields, rec)
		counts[f.Tier]++
	}
	data["config_class"], data["chain"], data["fields"], data["count"], data["tier_counts"] = sc.ConfigClass, sc.Chain, fields, len(fields), counts
	return registry.OK(data).WithMeta("step_name", args.StepName).Next(registry.NextStep{Tool: "config.requirements",
		When: "You have a DAG using this step.", Why: "Lists what is still missing for every node at once."}), nil
}

func fieldRecord(name string, f steps.Field, source string, required bool) map[string]any {
	rec := map[string]any{
		"name": name, "type": f.Type, "tier": f.Tier, "required": required, "default": f.Default,
		"description": f.Description, "source": source,
	}
	if len(f.Allowed) > 0 {
		rec["allowed_values"] = f.Allowed
	}
	if f.Pattern != "" {
		rec["pattern"] = f.Pattern
	}
	if f.Minimum != nil {
		rec["minimum"] = *f.Minimum
	}
	if f.Maximum != nil {
		rec["maximum"] = *f.Maximum
	}
	if f.Items != "" {
		rec["items"] = f.Items
	}
	if f.Rule != "" {
		rec["rule"] = f.Rule
	}
	return rec
}

func (d *Deps) catalogListBuilders(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		SMType string `json:"sagemaker_step_type"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	lib := strategies.Default()
	builders := []map[string]any{}
	var unroutable []string
	for _, n := range d.Steps.Names() {
		iface, _ := d.Steps.Get(n)
		if args.SMType != "" && !strings.EqualFold(iface.Registry.SageMakerStepType, args.SMType) {
			continue
		}
		s, err := lib.ForInterface(iface)
		if err != nil {
			unroutable = append(unroutable, n)
			continue
		}
		builders = append(builders, map[string]any{
			"step_name": n, "builder_class": iface.BuilderName(), "sagemaker_step_type": iface.Registry.SageMakerStepType,
			"strategy": s.Axis + "/" + s.Name, "handler": s.Handler, "implemented": s.Implemented,
		})
	}
	sort.Strings(unroutable)
	res := registry.OK(map[string]any{"builders": builders, "count": len(builders)}).WithMeta("sagemaker_step_type", nullable(args.SMType))
	if len(unroutable) > 0 {
		res.Warn(fmt.Sprintf("no construction strategy for: %s", strings.Join(unroutable, ", ")))
	}
	return res, nil
}
