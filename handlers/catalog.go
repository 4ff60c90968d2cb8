package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/strategies"
	"github.com/cursus-dev/cursus/registry"
)

// sagemakerStepType is a SageMaker step type name (Processing, Training, …),
// taken by catalog and strategies tools.
type sagemakerStepType string

func (sagemakerStepType) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(64), Pattern: `^[A-Za-z]+$`}
}

// searchQuery is catalog.search's free text, bounded by what the engine
// reads of it.
type searchQuery string

func (searchQuery) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(steps.MaxQueryLen)}
}

// stepIn is the argument of the catalog and steps tools that take one step
// and an optional job type (lookupStep applies both). Step names are
// identifiers: stepTypeName's pattern keeps paths ("../etc/passwd") and
// other junk out before any lookup runs.
type stepIn struct {
	StepName stepTypeName `json:"step_name" jsonschema:"Step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training)."`
	JobType  jobTypeName  `json:"job_type,omitempty" jsonschema:"Job type variant (training, validation, testing, calibration, or any custom job type)."`
	stepTypesArg
}

// stepNameIn is the argument of tools that take one step, no job type.
type stepNameIn struct {
	StepName stepTypeName `json:"step_name" jsonschema:"Step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training)."`
	stepTypesArg
}

func catalogNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("step catalog is not loaded")
	}
	return registry.Namespace{
		Name:        "catalog",
		Description: "Discover and search step types, their specs, configs and builders.",
		Tools: []registry.ToolDef{
			catalogListStepsTool(d),
			catalogSearchTool(d),
			catalogStepInfoTool(d),
			catalogStepSpecTool(d),
			catalogResolveStepTool(d),
			catalogConfigFieldsTool(d),
			catalogListBuildersTool(d),
		},
	}, nil
}

// lookupStep resolves a step name (any spelling) and applies the job type:
// an explicit jobType wins over a suffix in the name.
func (v *catalogView) lookupStep(name, jobType string) (*steps.Interface, steps.Resolution, []string, error) {
	r, err := v.Steps.Resolve(name)
	if err != nil {
		return nil, r, nil, stepNotFound(name, err)
	}
	if jobType == "" {
		jobType = r.JobType
	} else if r.JobType != "" && r.JobType != jobType {
		return nil, r, nil, registry.Errorf(registry.CodeInvalidInput,
			"step_name '%s' carries job type '%s' but job_type is '%s'; give one of them", name, r.JobType, jobType)
	}
	iface, warnings, err := v.Steps.ForJobType(r.StepType, jobType)
	if err != nil {
		return nil, r, nil, err
	}
	return iface, r, warnings, nil
}

// requestedStep resolves a stepIn argument in the catalogs of the call;
// its warnings are those of the step types sent, then the lookup's.
func (d *Deps) requestedStep(ctx context.Context, in stepIn) (*steps.Interface, steps.Resolution, []string, error) {
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return nil, steps.Resolution{}, nil, err
	}
	iface, r, warnings, err := cv.lookupStep(string(in.StepName), string(in.JobType))
	return iface, r, slices.Concat(cv.Warnings, warnings), err
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
func detectFramework(iface *steps.Interface) *string {
	if c := iface.Compute; c != nil && c.FrameworkName != "" {
		return nullable(c.FrameworkName)
	}
	hay := strings.ToLower(iface.StepType)
	if c := iface.Compute; c != nil {
		hay = strings.ToLower(c.SDKClass+" "+c.Kind) + " " + hay
	}
	for _, f := range []string{"xgboost", "lightgbm", "pytorch", "sklearn"} {
		if strings.Contains(hay, f) {
			return &f
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

type listStepsIn struct {
	WorkspaceID string            `json:"workspace_id,omitempty" jsonschema:"Accepted for compatibility; steps come from the built-in catalog and the configured extra directories." schema:"maxLength=200"`
	JobType     jobTypeName       `json:"job_type,omitempty" jsonschema:"Job type variant (training, validation, testing, calibration, or any custom job type)."`
	SMType      sagemakerStepType `json:"sagemaker_step_type,omitempty" jsonschema:"SageMaker step type: Processing, Training, CreateModel, Transform, Tuning, RegisterModel, …"`
	stepTypesArg
}

type listStepsOut struct {
	Steps       []string     `json:"steps"`
	Count       int          `json:"count"`
	StepDetails []stepDetail `json:"step_details"`
	// StepDirs are the operator's step directories: how many step types
	// each gives, and which of its files failed to load and why.
	StepDirs []stepDirStatus `json:"step_dirs"`
	// ReloadError says why the last reload of the step directories
	// failed; the step types loaded before are still served.
	ReloadError string `json:"reload_error,omitempty"`
}

type stepDetail struct {
	StepName          string   `json:"step_name"`
	SageMakerStepType string   `json:"sagemaker_step_type"`
	NodeType          string   `json:"node_type"`
	JobTypes          []string `json:"job_types"`
	Description       string   `json:"description"`
}

func catalogListStepsTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "catalog.list_steps",
		Description: "List every known step type (built-in plus extra catalog directories, plus any sent in step_types), sorted, with SageMaker step type, node type, job-type variants and a one-line description; step_dirs says which operator directories are loaded and which of their files failed, and why.",
		When:        "You want to see which steps exist.",
		Examples: []string{
			`catalog.list_steps {}  # everything`,
			`catalog.list_steps {"sagemaker_step_type": "Training"}  # only training steps`,
			`catalog.list_steps {"job_type": "calibration"}  # steps that take a calibration job type`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.catalogListSteps)
}

func (d *Deps) catalogListSteps(ctx context.Context, in listStepsIn) (registry.Reply[listStepsOut], error) {
	var reply registry.Reply[listStepsOut]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	names := stepsOfSMType(cv.Steps, cv.Steps.Names(), string(in.SMType))
	// The reference's job_type filter returned nothing for every real job
	// type; here it keeps the steps that take that job type, and never
	// empties a non-empty list.
	if jt := string(in.JobType); jt != "" && jt != "default" {
		var filtered bool
		if names, filtered = keepJobType(cv.Steps, names, func(n string) string { return n }, jt); !filtered {
			reply.Warn(fmt.Sprintf("no step declares job type '%s'; showing all steps (job types are open: any step with a job_type field accepts it)", jt))
		}
	}
	if in.WorkspaceID != "" {
		reply.Warn("workspace_id is not used: steps come from the built-in catalog and the configured extra directories")
	}
	details := make([]stepDetail, 0, len(names))
	for _, n := range names {
		iface, _ := cv.Steps.Get(n)
		details = append(details, stepDetail{StepName: n, SageMakerStepType: iface.Registry.SageMakerStepType, NodeType: nodeType(iface),
			JobTypes: nonNilStrings(iface.JobTypes()), Description: iface.Registry.Description})
	}
	reply.WithMeta("workspace_id", nullable(in.WorkspaceID))
	reply.WithMeta("job_type", nullable(string(in.JobType)))
	reply.Next(registry.NextStep{Tool: "catalog.step_info", When: "You picked a step.", Why: "See its SageMaker type, config class and variants.",
		ArgsHint: map[string]any{"step_name": "XGBoostTraining"}})
	dirs := cv.stepDirsStatus()
	for _, dir := range dirs {
		if n := len(dir.Problems); n > 0 {
			reply.Warn(fmt.Sprintf("%d problem(s) in step directory %s: files that failed to load are not listed (see step_dirs)", n, dir.Dir))
		}
	}
	if cv.ReloadError != "" {
		reply.Warn("the step directories could not be reloaded: " + cv.ReloadError)
	}
	reply.Out = listStepsOut{Steps: nonNilStrings(names), Count: len(names), StepDetails: details, StepDirs: dirs, ReloadError: cv.ReloadError}
	return reply, nil
}

// keepJobType keeps the items whose step takes jobType. Rather than empty
// a non-empty list it keeps them all, and reports false.
func keepJobType[T any](cat *steps.Catalog, items []T, stepOf func(T) string, jobType string) ([]T, bool) {
	var kept []T
	for _, it := range items {
		if cat.SupportsJobType(stepOf(it), jobType) {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 && len(items) > 0 {
		return items, false
	}
	return kept, true
}

// stepsOfSMType keeps the steps of one SageMaker step type (all for "").
func stepsOfSMType(cat *steps.Catalog, names []string, smType string) []string {
	if smType == "" {
		return names
	}
	var kept []string
	for _, n := range names {
		if iface, _ := cat.Get(n); strings.EqualFold(iface.Registry.SageMakerStepType, smType) {
			kept = append(kept, n)
		}
	}
	return kept
}

func nodeType(iface *steps.Interface) string {
	if iface.NodeType == "" {
		return steps.NodeInternal
	}
	return iface.NodeType
}

// nullable is s, or null when empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type searchIn struct {
	Query   searchQuery `json:"query" jsonschema:"Words to look for (case-insensitive)."`
	JobType jobTypeName `json:"job_type,omitempty" jsonschema:"Job type variant (training, validation, testing, calibration, or any custom job type)."`
	Limit   int         `json:"limit,omitempty" jsonschema:"Most matches to return (default 20)." schema:"minimum=1,maximum=100"`
	stepTypesArg
}

type searchOut struct {
	Matches      []searchMatch `json:"matches"`
	Count        int           `json:"count"`
	TotalMatches int           `json:"total_matches"`
}

type searchMatch struct {
	StepName            string   `json:"step_name"`
	WorkspaceID         *string  `json:"workspace_id"` // always null: steps have no workspace
	Score               float64  `json:"score"`
	MatchReason         string   `json:"match_reason"`
	Reasons             []string `json:"reasons"`
	SageMakerStepType   string   `json:"sagemaker_step_type"`
	Description         string   `json:"description"`
	ComponentsAvailable []string `json:"components_available"`
}

func catalogSearchTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "catalog.search",
		Description: "Search step types by free text. Ranked and explainable: each match has a score and the reasons it matched " +
			"(name, description, SageMaker step type, framework, port names and keywords). Deterministic order.",
		When: "You know what a step does but not its name.",
		Examples: []string{
			`catalog.search {"query": "xgboost"}  # XGBoostTraining first`,
			`catalog.search {"query": "calibrat", "limit": 5}`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.catalogSearch)
}

func (d *Deps) catalogSearch(ctx context.Context, in searchIn) (registry.Reply[searchOut], error) {
	var reply registry.Reply[searchOut]
	query := string(in.Query)
	if steps.CanonicalKey(query) == "" {
		return reply, registry.Errorf(registry.CodeInvalidInput, "query must contain letters or digits")
	}
	limit := in.Limit
	if limit == 0 {
		limit = 20
	}
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	hits := cv.Steps.Search(query)
	if jt := string(in.JobType); jt != "" {
		var filtered bool
		if hits, filtered = keepJobType(cv.Steps, hits, func(h steps.SearchHit) string { return h.StepType }, jt); !filtered {
			reply.Warn(fmt.Sprintf("no match declares job type '%s'; showing all matches", jt))
		}
	}
	out := searchOut{TotalMatches: len(hits), Matches: make([]searchMatch, 0, min(len(hits), limit))}
	for _, h := range hits[:min(len(hits), limit)] {
		iface, _ := cv.Steps.Get(h.StepType)
		out.Matches = append(out.Matches, searchMatch{StepName: h.StepType, Score: h.Score, MatchReason: h.MatchReason, Reasons: h.Reasons,
			SageMakerStepType: h.SageMakerStepType, Description: h.Description, ComponentsAvailable: componentsAvailable(iface)})
	}
	out.Count = len(out.Matches)
	reply.WithMeta("query", query)
	if out.Count > 0 {
		reply.Next(registry.NextStep{Tool: "catalog.step_info", When: "The first match looks right.", Why: "Check its identity card.",
			ArgsHint: map[string]any{"step_name": out.Matches[0].StepName}})
	} else {
		reply.Next(registry.NextStep{Tool: "catalog.list_steps", When: "Nothing matched.", Why: "Browse every step type."})
	}
	reply.Out = out
	return reply, nil
}

// stepInfoOut is a step's identity card. Empty strings of the registry
// answer as null, as the reference does.
type stepInfoOut struct {
	StepName            string         `json:"step_name"`
	WorkspaceID         *string        `json:"workspace_id"` // always null: steps have no workspace
	JobType             *string        `json:"job_type"`
	RegistryData        registryData   `json:"registry_data"`
	ConfigClass         string         `json:"config_class"`
	BuilderStepName     string         `json:"builder_step_name"`
	SageMakerStepType   string         `json:"sagemaker_step_type"`
	Description         *string        `json:"description"`
	NodeType            string         `json:"node_type"`
	JobTypes            []string       `json:"job_types"`
	PipelineStepName    string         `json:"pipeline_step_name"`
	ComponentsAvailable []string       `json:"components_available"`
	FileComponents      fileComponents `json:"file_components"`
	Framework           *string        `json:"framework"`
	ConfigExtends       *string        `json:"config_extends"`
	Strategy            stepStrategy   `json:"strategy"`
}

type registryData struct {
	ConfigClass       string  `json:"config_class"`
	BuilderStepName   string  `json:"builder_step_name"`
	SpecType          string  `json:"spec_type"`
	SageMakerStepType string  `json:"sagemaker_step_type"`
	Description       string  `json:"description"`
	Requires          *string `json:"requires"`
}

type fileComponents struct {
	Interface string `json:"interface"`
	Script    string `json:"script,omitempty"`
}

// stepStrategy is the strategy a step routes to, or only the error that
// says why it routes nowhere.
type stepStrategy struct {
	Axis        string `json:"axis,omitempty"`
	Name        string `json:"name,omitempty"`
	Handler     string `json:"handler,omitempty"`
	Implemented *bool  `json:"implemented,omitempty"`
	Error       string `json:"error,omitempty"`
}

func catalogStepInfoTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "catalog.step_info",
		Description: "Registry facts of one step: SageMaker step type, node type, config class, builder name, framework, job-type variants, routing strategy and where its interface file comes from.",
		When:        "You picked a step and want its identity card.",
		Examples:    []string{`catalog.step_info {"step_name": "TabularPreprocessing"}`, `catalog.step_info {"step_name": "XGBoostModelEval_calibration"}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.catalogStepInfo)
}

func (d *Deps) catalogStepInfo(ctx context.Context, in stepIn) (registry.Reply[stepInfoOut], error) {
	var reply registry.Reply[stepInfoOut]
	iface, r, warnings, err := d.requestedStep(ctx, in)
	if err != nil {
		return reply, err
	}
	reply.WithMeta("step_name", r.Node)
	reply.Warn(warnings...)
	reply.Next(registry.NextStep{Tool: "catalog.step_spec", When: "Next, its ports.", Why: "See what it consumes and produces.", ArgsHint: map[string]any{"step_name": iface.StepType}},
		registry.NextStep{Tool: "catalog.config_fields", When: "Next, its configuration.", Why: "See what you must configure.", ArgsHint: map[string]any{"step_name": iface.StepType}},
	)
	reply.Out = stepInfo(iface, r)
	return reply, nil
}

func stepInfo(iface *steps.Interface, r steps.Resolution) stepInfoOut {
	reg := iface.Registry
	return stepInfoOut{
		StepName: iface.StepType, JobType: nullable(iface.JobType),
		RegistryData: registryData{ConfigClass: iface.ConfigClass(), BuilderStepName: iface.BuilderName(), SpecType: iface.StepType,
			SageMakerStepType: reg.SageMakerStepType, Description: reg.Description, Requires: nullable(reg.Requires)},
		ConfigClass: iface.ConfigClass(), BuilderStepName: iface.BuilderName(),
		SageMakerStepType: reg.SageMakerStepType, Description: nullable(reg.Description),
		NodeType: nodeType(iface), JobTypes: nonNilStrings(iface.JobTypes()), PipelineStepName: r.PipelineStepName,
		ComponentsAvailable: componentsAvailable(iface), FileComponents: fileComponents{Interface: iface.Source, Script: iface.Contract.EntryPoint},
		Framework: detectFramework(iface), ConfigExtends: nullable(iface.Config.Extends), Strategy: strategyOf(iface),
	}
}

func strategyOf(iface *steps.Interface) stepStrategy {
	s, _, _, err := strategies.Default().ForStepType(iface.Registry.SageMakerStepType, strategies.StepAssembly(iface))
	if err != nil {
		return stepStrategy{Error: err.Error()}
	}
	return stepStrategy{Axis: s.Axis, Name: s.Name, Handler: s.Handler, Implemented: &s.Implemented}
}

type stepSpecOut struct {
	StepType        string       `json:"step_type"`
	NodeType        string       `json:"node_type"`
	JobType         *string      `json:"job_type"`
	JobTypes        []string     `json:"job_types"`
	Dependencies    []specDep    `json:"dependencies"`
	Outputs         []specOutput `json:"outputs"`
	DependencyCount int          `json:"dependency_count"`
	OutputCount     int          `json:"output_count"`
}

// specDep is one dependency. Type is the YAML key's name
// (spec.dependencies.<name>.type); dependency_type repeats it because the
// reference's payload names it so.
type specDep struct {
	LogicalName       string   `json:"logical_name"`
	Type              string   `json:"type"`
	DependencyType    string   `json:"dependency_type"`
	Required          bool     `json:"required"`
	CompatibleSources []string `json:"compatible_sources"`
	DataType          string   `json:"data_type"`
	Description       string   `json:"description"`
	SemanticKeywords  []string `json:"semantic_keywords"`
}

// specOutput is one output; output_type repeats type for the reference,
// as dependency_type does.
type specOutput struct {
	LogicalName      string   `json:"logical_name"`
	Type             string   `json:"type"`
	OutputType       string   `json:"output_type"`
	PropertyPath     string   `json:"property_path"`
	JobArtifact      string   `json:"job_artifact,omitempty" jsonschema:"Set on a tuning step's best model: consumers read <tuning output path>/<job named by property_path>/<job_artifact>."`
	DataType         string   `json:"data_type"`
	Description      string   `json:"description"`
	Aliases          []string `json:"aliases"`
	SemanticKeywords []string `json:"semantic_keywords"`
}

func catalogStepSpecTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "catalog.step_spec",
		Description: "The logical ports of a step (job-type variant applied): dependencies with type, required flag, compatible sources and keywords; outputs with type, property path and aliases. Keys are those of the .step.yaml (type; dependency_type and output_type repeat it under the reference's names).",
		When:        "Before wiring a step: what it consumes and produces.",
		Examples:    []string{`catalog.step_spec {"step_name": "XGBoostTraining"}`, `catalog.step_spec {"step_name": "TabularPreprocessing", "job_type": "calibration"}`},
		Tags:        []string{registry.PhasePlanner},
	}, d.catalogStepSpec)
}

func (d *Deps) catalogStepSpec(ctx context.Context, in stepIn) (registry.Reply[stepSpecOut], error) {
	var reply registry.Reply[stepSpecOut]
	iface, r, warnings, err := d.requestedStep(ctx, in)
	if err != nil {
		return reply, err
	}
	out := stepSpecOut{StepType: iface.StepType, NodeType: nodeType(iface), JobType: nullable(iface.JobType), JobTypes: nonNilStrings(iface.JobTypes()),
		Dependencies: make([]specDep, 0, iface.Spec.Dependencies.Len()), Outputs: make([]specOutput, 0, iface.Spec.Outputs.Len())}
	for _, n := range iface.Spec.Dependencies.Keys() {
		dep, _ := iface.Spec.Dependencies.Get(n)
		depType := orDefault(dep.Type, steps.TypeProcessingOutput)
		out.Dependencies = append(out.Dependencies, specDep{LogicalName: n, Type: depType, DependencyType: depType,
			Required: dep.IsRequired(), CompatibleSources: nonNilStrings(dep.CompatibleSources), DataType: orDefault(dep.DataType, "S3Uri"),
			Description: dep.Description, SemanticKeywords: nonNilStrings(dep.SemanticKeywords)})
	}
	for _, n := range iface.Spec.Outputs.Keys() {
		o, _ := iface.Spec.Outputs.Get(n)
		outType := orDefault(o.Type, steps.TypeProcessingOutput)
		out.Outputs = append(out.Outputs, specOutput{LogicalName: n, Type: outType, OutputType: outType,
			PropertyPath: o.PropertyPath, JobArtifact: o.JobArtifact, DataType: orDefault(o.DataType, "S3Uri"), Description: o.Description,
			Aliases: nonNilStrings(o.Aliases), SemanticKeywords: nonNilStrings(o.SemanticKeywords)})
	}
	out.DependencyCount, out.OutputCount = len(out.Dependencies), len(out.Outputs)
	reply.WithMeta("step_name", r.Node)
	reply.Warn(warnings...)
	reply.Next(registry.NextStep{Tool: "steps.io", When: "You need container paths or property references.", Why: "Joins these ports with the script contract.",
		ArgsHint: map[string]any{"step_name": iface.StepType}})
	reply.Out = out
	return reply, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

type resolveStepOut struct {
	Input             string  `json:"input"`
	CanonicalName     string  `json:"canonical_name"`
	ConfigClass       string  `json:"config_class"`
	BuilderClass      string  `json:"builder_class"`
	SpecType          string  `json:"spec_type"`
	SageMakerStepType string  `json:"sagemaker_step_type"`
	Source            string  `json:"source"` // canonical or file_name
	MatchedBy         string  `json:"matched_by"`
	JobType           *string `json:"job_type"`
	VariantApplied    bool    `json:"variant_applied"`
	Variant           *string `json:"variant"`
	ConfigKey         string  `json:"config_key"`
	PipelineStepName  string  `json:"pipeline_step_name"`
}

func catalogResolveStepTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "catalog.resolve_step",
		Description: "Interpret any spelling of a step: step type, DAG node (<StepType>_<job_type>), pipeline step name (<StepType>-<Jobtype>), " +
			"config class, builder name, snake-case file stem or file-style words. Returns step type, job type, variant, config key, pipeline step name, config class and builder.",
		When: "You have a name and need the step it means.",
		Examples: []string{
			`catalog.resolve_step {"step_name": "TabularPreprocessing_training"}  # job type training, variant applied`,
			`catalog.resolve_step {"step_name": "model_evaluation_xgb"}  # file-style name`,
		},
		Tags: []string{registry.PhaseProgrammer},
	}, d.catalogResolveStep)
}

func (d *Deps) catalogResolveStep(ctx context.Context, in stepNameIn) (registry.Reply[resolveStepOut], error) {
	var reply registry.Reply[resolveStepOut]
	name := string(in.StepName)
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	r, err := cv.Steps.Resolve(name)
	if err != nil {
		return reply, stepNotFound(name, err)
	}
	iface, _ := cv.Steps.Get(r.StepType)
	variant := ""
	if r.JobType != "" {
		if _, ok := iface.Variants.Get(r.JobType); ok {
			variant = r.JobType
		} else if iface.Variants.Len() > 0 {
			_, warnings, _ := cv.Steps.ForJobType(r.StepType, r.JobType)
			reply.Warn(warnings...)
		}
	}
	source := "canonical"
	if r.Via != "step_type" {
		source = "file_name"
	}
	reply.Next(registry.NextStep{Tool: "catalog.step_spec", When: "Next, its ports.",
		Why: "See the ports with this job type applied.", ArgsHint: map[string]any{"step_name": r.StepType, "job_type": r.JobType}})
	reply.Out = resolveStepOut{
		Input: name, CanonicalName: r.StepType, ConfigClass: r.ConfigClass, BuilderClass: r.BuilderName,
		SpecType: r.StepType, SageMakerStepType: iface.Registry.SageMakerStepType, Source: source, MatchedBy: r.Via,
		JobType: nullable(r.JobType), VariantApplied: variant != "", Variant: nullable(variant),
		ConfigKey: r.ConfigKey, PipelineStepName: r.PipelineStepName,
	}
	return reply, nil
}

// configField is one field; the constraint keys appear only when set, and
// origin only from the config engine.
type configField struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Tier          string   `json:"tier"`
	Required      bool     `json:"required"`
	Default       any      `json:"default"`
	Description   string   `json:"description"`
	Source        string   `json:"source"`
	Origin        string   `json:"origin,omitempty"`
	AllowedValues []any    `json:"allowed_values,omitempty"`
	Pattern       string   `json:"pattern,omitempty"`
	Minimum       *float64 `json:"minimum,omitempty"`
	Maximum       *float64 `json:"maximum,omitempty"`
	Items         string   `json:"items,omitempty"`
	Rule          string   `json:"rule,omitempty"`
}

// configFieldsOut lists a step's config fields. tier_counts needs the
// config engine; without it only the step's own section is known.
type configFieldsOut struct {
	StepName    string         `json:"step_name"`
	ConfigClass string         `json:"config_class"`
	Chain       []string       `json:"chain"`
	Fields      []configField  `json:"fields"`
	Count       int            `json:"count"`
	TierCounts  map[string]int `json:"tier_counts,omitzero"`
}

func catalogConfigFieldsTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "catalog.config_fields",
		Description: "Every config field of a step type (inherited base fields included): type, tier (essential/system/derived), required flag, default, allowed values, pattern, range, description and the layer that declares it.",
		When:        "You need to know what to configure for a step.",
		Examples:    []string{`catalog.config_fields {"step_name": "TabularPreprocessing"}`},
		Tags:        []string{registry.PhasePlanner, registry.PhaseProgrammer},
	}, d.catalogConfigFields)
}

func (d *Deps) catalogConfigFields(ctx context.Context, in stepNameIn) (registry.Reply[configFieldsOut], error) {
	var reply registry.Reply[configFieldsOut]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	iface, _, _, err := cv.lookupStep(string(in.StepName), "")
	if err != nil {
		return reply, err
	}
	if cv.Config == nil {
		fields := make([]configField, 0, iface.Config.Fields.Len())
		for _, n := range iface.Config.Fields.Keys() {
			f, _ := iface.Config.Fields.Get(n)
			fields = append(fields, fieldRecord(n, f, "step", f.Tier == steps.TierEssential && f.Default == nil))
		}
		reply.Warn("base config schemas are not loaded; only the step's own fields are listed")
		reply.Out = configFieldsOut{StepName: iface.StepType, ConfigClass: iface.ConfigClass(), Chain: []string{iface.Config.Extends},
			Fields: fields, Count: len(fields)}
		return reply, nil
	}
	sc, err := cv.Config.ForStep(iface.StepType)
	if err != nil {
		return reply, registry.Errorf(registry.CodeNotFound, "no config schema for step '%s': %v", iface.StepType, err).
			WithDetails(map[string]any{"step_name": iface.StepType, "config_class": iface.ConfigClass()}).
			Suggest("Check the step's config section with validate.step_interface.", "validate.step_interface")
	}
	out := configFieldsOut{StepName: iface.StepType, ConfigClass: sc.ConfigClass, Chain: sc.Chain,
		Fields: make([]configField, 0, len(sc.Fields)), TierCounts: map[string]int{}}
	for _, f := range sc.Fields {
		rec := fieldRecord(f.Name, f.Field, f.Source, f.Required())
		rec.Origin = f.Origin
		out.Fields = append(out.Fields, rec)
		out.TierCounts[f.Tier]++
	}
	out.Count = len(out.Fields)
	reply.WithMeta("step_name", string(in.StepName))
	reply.Next(registry.NextStep{Tool: "config.requirements",
		When: "You have a DAG using this step.", Why: "Lists what is still missing for every node at once."})
	reply.Out = out
	return reply, nil
}

func fieldRecord(name string, f steps.Field, source string, required bool) configField {
	return configField{
		Name: name, Type: f.Type, Tier: f.Tier, Required: required, Default: f.Default, Description: f.Description, Source: source,
		AllowedValues: f.Allowed, Pattern: f.Pattern, Minimum: f.Minimum, Maximum: f.Maximum, Items: f.Items, Rule: f.Rule,
	}
}

type listBuildersIn struct {
	SMType sagemakerStepType `json:"sagemaker_step_type,omitempty" jsonschema:"SageMaker step type: Processing, Training, CreateModel, Transform, Tuning, RegisterModel, …"`
	stepTypesArg
}

type listBuildersOut struct {
	Builders []builderRow `json:"builders"`
	Count    int          `json:"count"`
}

type builderRow struct {
	StepName          string `json:"step_name"`
	BuilderClass      string `json:"builder_class"`
	SageMakerStepType string `json:"sagemaker_step_type"`
	Strategy          string `json:"strategy"` // <axis>/<name>
	Handler           string `json:"handler"`
	Implemented       bool   `json:"implemented"`
}

func catalogListBuildersTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name:        "catalog.list_builders",
		Description: "Builder names of every step type (with the construction strategy it routes to and whether this service can compile it).",
		When:        "Which steps can be built.",
		Examples:    []string{`catalog.list_builders {}`, `catalog.list_builders {"sagemaker_step_type": "Training"}`},
		Tags:        []string{registry.PhaseProgrammer},
	}, d.catalogListBuilders)
}

func (d *Deps) catalogListBuilders(ctx context.Context, in listBuildersIn) (registry.Reply[listBuildersOut], error) {
	var reply registry.Reply[listBuildersOut]
	lib := strategies.Default()
	builders := []builderRow{}
	var unroutable, refused []string
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	for _, n := range stepsOfSMType(cv.Steps, cv.Steps.Names(), string(in.SMType)) {
		iface, _ := cv.Steps.Get(n)
		s, err := lib.ForInterface(iface)
		if err != nil {
			unroutable = append(unroutable, n)
			continue
		}
		// A strategy may route a kind compile refuses (an Amazon-internal
		// step of a public SageMaker type): compile has the last word.
		implemented := s.Implemented
		if err := compiler.Compilable(iface); err != nil {
			implemented = false
			refused = append(refused, n)
		}
		builders = append(builders, builderRow{StepName: n, BuilderClass: iface.BuilderName(), SageMakerStepType: iface.Registry.SageMakerStepType,
			Strategy: s.Axis + "/" + s.Name, Handler: s.Handler, Implemented: implemented})
	}
	sort.Strings(unroutable)
	reply.WithMeta("sagemaker_step_type", nullable(string(in.SMType)))
	if len(unroutable) > 0 {
		reply.Warn(fmt.Sprintf("no construction strategy for: %s", strings.Join(unroutable, ", ")))
	}
	if len(refused) > 0 {
		reply.Warn(fmt.Sprintf("not compiled here (Amazon-internal; compile.validate says what to use instead): %s", strings.Join(refused, ", ")))
	}
	reply.Out = listBuildersOut{Builders: builders, Count: len(builders)}
	return reply, nil
}
