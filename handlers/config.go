package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/registry"
)

// configValues is one config's field name → value.
type configValues map[string]any

func (configValues) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(500), Description: "Field name → value."}
}

// perNodeValues is DAG node → that node's values; its type matches what
// config.BuildDAG takes.
type perNodeValues map[string]map[string]any

func (perNodeValues) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MaxProperties: ptr(500), AdditionalProperties: configValues{}.JSONSchema()}
}

type configMergeSaveIn struct {
	dagSource
	Base       configValues  `json:"base,omitempty"`
	PerNode    perNodeValues `json:"per_node,omitempty" jsonschema:"DAG node → {field: value} for that node only (wins over base). Without a DAG, its keys are the nodes."`
	OutputFile workspacePath `json:"output_file,omitempty" jsonschema:"Write the document here (inside the workspace)."`
	Overwrite  bool          `json:"overwrite,omitempty" jsonschema:"Replace output_file if it exists (default false)."`
	CreatedAt  string        `json:"created_at,omitempty" jsonschema:"metadata.created_at to record (default: now, UTC). Pin it for reproducible bytes." schema:"minLength=1,maxLength=64"`
	stepTypesArg
}

func configNamespace(d *Deps) (registry.Namespace, error) {
	if d.live == nil {
		return registry.Namespace{}, errors.New("config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "config",
		Description: "Work out, fill, validate and save the per-step configuration (config.json) of a DAG.",
		Tools: []registry.ToolDef{
			configRequirementsTool(d),
			configFieldInfoTool(d),
			configLoadTool(d),
			configMergeSaveTool(d),
		},
	}, nil
}

// loadDAG reads the exactly-one-of dag / dag_file input; optional allows
// neither (nil DAG).
func (d *Deps) loadDAG(ctx context.Context, in dagSource, optional bool) (*dag.DAG, error) {
	src, err := d.sources(ctx, nil, stepTypesArg{})
	if err != nil {
		return nil, err
	}
	doc, err := d.loadDAGDocument(src, in, optional)
	if doc == nil || err != nil {
		return nil, err
	}
	return doc.DAG, nil
}

// loadDAGDocument is loadDAG keeping the document's metadata, reading a
// dag_file through the call's sources.
func (d *Deps) loadDAGDocument(src *callSources, in dagSource, optional bool) (*dag.Document, error) {
	hasInline, hasFile := in.DAG != nil, in.DAGFile != ""
	switch {
	case hasInline && hasFile:
		return nil, registry.Errorf(registry.CodeInvalidInput, "give either dag or dag_file, not both")
	case !hasInline && !hasFile:
		if optional {
			return nil, nil
		}
		return nil, registry.Errorf(registry.CodeInvalidInput, "give dag (inline) or dag_file").
			Suggest("Pass the DAG inline as {\"nodes\": [...], \"edges\": [...]} or name a DAG file in the workspace.", "dag.construct")
	case hasFile:
		data, err := src.read("dag_file", string(in.DAGFile))
		if err != nil {
			return nil, err
		}
		doc, err := dag.ParseDocument(data)
		if err != nil {
			return nil, registry.Errorf(registry.CodeInvalidInput, "invalid DAG file '%s': %v", in.DAGFile, err)
		}
		return doc, nil
	}
	data, err := src.document("dag", in.DAG)
	if err != nil {
		return nil, err
	}
	doc, err := dag.ParseDocument(data)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "invalid dag: %v", err)
	}
	return doc, nil
}

// configRequirementsOut is the config.requirements payload. The summary
// (the default) has Required and Optional; the full form has Nodes,
// Shared and Cursus's keys.
type configRequirementsOut struct {
	Detail         string                     `json:"detail"`
	ConfigClassMap map[string]string          `json:"config_class_map"`
	Nodes          *[]config.NodeRequirements `json:"nodes,omitempty"`
	RequiredCount  int                        `json:"required_count"`
	// Required describes each field the template asks for, once
	// (<node>.<field> when a node's differs from the first one's).
	Required map[string]askedField `json:"required,omitempty"`
	// Optional is the default of every other settable field.
	Optional   *optionalFields         `json:"optional,omitempty"`
	Shared     *config.FieldGroups     `json:"shared,omitempty"`
	Template   configTemplate          `json:"template"`
	Unresolved []config.UnresolvedNode `json:"unresolved"`
	More       string                  `json:"more,omitempty"`
	cursusKeys
}

// askedField is what filling one template value takes.
type askedField struct {
	Type        string `json:"type"`
	Items       string `json:"items,omitempty"`
	Description string `json:"description,omitempty"`
	Allowed     []any  `json:"allowed,omitempty"`
	Pattern     string `json:"pattern,omitempty"`
}

// optionalFields are the defaults of the fields the template leaves out
// (null: none, the engine derives or leaves it unset): those every node
// shares, then those several nodes have with one default (a value in
// config.merge_save's base reaches every node that has the field), once
// each; the rest per node.
type optionalFields struct {
	Shared  map[string]any            `json:"shared"`
	Common  map[string]any            `json:"common"`
	PerNode map[string]map[string]any `json:"per_node"`
}

// cursusKeys are cursusRequirements in the full form only.
type cursusKeys struct {
	BaseConfigRequirements           *[]cursusField            `json:"base_config_requirements,omitempty"`
	BaseProcessingConfigRequirements *[]cursusField            `json:"base_processing_config_requirements,omitempty"`
	NeedsProcessingConfig            *bool                     `json:"needs_processing_config,omitempty"`
	StepRequirements                 *map[string][]cursusField `json:"step_requirements,omitempty"`
	PendingSteps                     *[]string                 `json:"pending_steps,omitempty"`
}

func (c cursusRequirements) keys() cursusKeys {
	return cursusKeys{BaseConfigRequirements: &c.BaseConfigRequirements, BaseProcessingConfigRequirements: &c.BaseProcessingConfigRequirements,
		NeedsProcessingConfig: &c.NeedsProcessingConfig, StepRequirements: &c.StepRequirements, PendingSteps: &c.PendingSteps}
}

// summarizeRequirements fills out's summary: each asked-for field once
// and every other settable field's default.
func summarizeRequirements(out *configRequirementsOut, rep *config.RequirementsReport) {
	out.Required = map[string]askedField{}
	ask := func(node string, f *config.Field) {
		a := askedField{Type: f.Type, Items: f.Items, Description: f.Description, Allowed: f.Allowed, Pattern: f.Pattern}
		prev, seen := out.Required[f.Name]
		switch {
		case !seen:
			out.Required[f.Name] = a
		case !reflect.DeepEqual(prev, a):
			out.Required[node+"."+f.Name] = a
		}
	}
	opt := &optionalFields{Shared: map[string]any{}, PerNode: map[string]map[string]any{}}
	settable := func(g config.FieldGroups, node string, into map[string]any) {
		for _, f := range g.Essential {
			if f.Required() {
				ask(node, f)
			} else {
				into[f.Name] = f.Default
			}
		}
		for _, f := range g.System {
			into[f.Name] = f.Default
		}
	}
	settable(rep.Shared, "", opt.Shared)
	for _, n := range rep.Nodes {
		own := map[string]any{}
		settable(n.Fields, n.Node, own)
		opt.PerNode[n.Node] = own
	}
	// A field several nodes have with one default is listed once.
	carriers := map[string][]string{}
	for node, own := range opt.PerNode {
		for name := range own {
			carriers[name] = append(carriers[name], node)
		}
	}
	opt.Common = map[string]any{}
	for name, nodes := range carriers {
		first := opt.PerNode[nodes[0]][name]
		same := len(nodes) > 1
		for _, n := range nodes[1:] {
			same = same && reflect.DeepEqual(opt.PerNode[n][name], first)
		}
		if !same {
			continue
		}
		opt.Common[name] = first
		for _, n := range nodes {
			delete(opt.PerNode[n], name)
		}
	}
	out.Optional = opt
	out.More = `detail "full": every field of every node with tier, description, pattern and range (config.field_info {"config_class"}: one class)`
}

// cursusRequirements are the same requirements under the keys and in the
// shapes Cursus's config.requirements answers with (docs/CURSUS.md).
type cursusRequirements struct {
	// BaseConfigRequirements are the settable fields of the base layer.
	BaseConfigRequirements []cursusField `json:"base_config_requirements"`
	// BaseProcessingConfigRequirements are those of the processing layer.
	BaseProcessingConfigRequirements []cursusField `json:"base_processing_config_requirements"`
	// NeedsProcessingConfig says whether any node has processing fields.
	NeedsProcessingConfig bool `json:"needs_processing_config"`
	// StepRequirements are each node's own fields (neither layer's).
	StepRequirements map[string][]cursusField `json:"step_requirements"`
	// PendingSteps are the nodes still to configure: every mapped node.
	PendingSteps []string `json:"pending_steps"`
}

// cursusField is one settable field as Cursus lists it.
type cursusField struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Default     any    `json:"default"`
}

// cursusRequirementsOf groups rep's settable fields (derived ones are
// computed, not set) by the layer that declares them, as Cursus does.
func cursusRequirementsOf(rep *config.RequirementsReport) cursusRequirements {
	out := cursusRequirements{BaseConfigRequirements: []cursusField{}, BaseProcessingConfigRequirements: []cursusField{},
		StepRequirements: map[string][]cursusField{}, PendingSteps: []string{}}
	seen := map[string]bool{}
	layer := func(f *config.Field, node string) {
		cf := cursusField{Name: f.Name, Type: f.Type, Description: f.Description, Required: f.Required(), Default: f.Default}
		if cf.Description == "" {
			cf.Description = "Configuration for " + f.Name
		}
		switch {
		case f.Source == "base" || f.Source == "processing":
			if seen[f.Name] {
				return
			}
			seen[f.Name] = true
			if f.Source == "base" {
				out.BaseConfigRequirements = append(out.BaseConfigRequirements, cf)
			} else {
				out.BaseProcessingConfigRequirements = append(out.BaseProcessingConfigRequirements, cf)
			}
		case node != "":
			out.StepRequirements[node] = append(out.StepRequirements[node], cf)
		}
	}
	settable := func(g config.FieldGroups, node string) {
		for _, f := range append(append([]*config.Field{}, g.Essential...), g.System...) {
			layer(f, node)
		}
	}
	for _, n := range rep.Nodes {
		out.StepRequirements[n.Node] = []cursusField{}
		// A step-level field every node shares is listed under Shared
		// here; Cursus lists it under each step.
		settable(rep.Shared, n.Node)
		settable(n.Fields, n.Node)
		out.PendingSteps = append(out.PendingSteps, n.Node)
	}
	out.NeedsProcessingConfig = len(out.BaseProcessingConfigRequirements) > 0
	return out
}

// configTemplate is config.merge_save's input with every required field
// null, to fill in.
type configTemplate struct {
	Base    map[string]any            `json:"base"`
	PerNode map[string]map[string]any `json:"per_node"`
}

type configRequirementsIn struct {
	dagSource
	stepTypesArg
	Detail detailArg `json:"detail,omitempty" jsonschema:"summary (default): the template, each asked-for field described once and every other field's default; full: every field of every node with tier, type, description, pattern and range, and Cursus's keys."`
}

func configRequirementsTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "config.requirements",
		Description: "The config fields each DAG node still needs: a fill-in template (config.merge_save's base and per_node, every value to give null), " +
			"each asked-for field described once (type, description, allowed values), and the default of every other settable field, shared ones once. " +
			"detail full lists every field of every node by tier (essential = you must give it, system = has a default, derived = computed) " +
			"with types, defaults, allowed values, patterns, ranges and descriptions, and Cursus's keys.",
		When: "You have a DAG to configure.",
		Examples: []string{
			`config.requirements {"dag": {"nodes": ["TabularPreprocessing_training", "XGBoostTraining"], "edges": [["TabularPreprocessing_training", "XGBoostTraining"]]}}  # inline`,
			`config.requirements {"dag": {"nodes": ["XGBoostTraining"], "edges": []}, "detail": "full"}  # every field in full`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.configRequirements)
}

func (d *Deps) configRequirements(ctx context.Context, in configRequirementsIn) (registry.Reply[configRequirementsOut], error) {
	var reply registry.Reply[configRequirementsOut]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	g, err := d.loadDAG(ctx, in.dagSource, false)
	if err != nil {
		return reply, err
	}
	rep, err := config.Requirements(ctx, g, cv.Config)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return reply, ctxErr
	}
	if err != nil {
		return reply, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	out := configRequirementsOut{Detail: detailSummary, ConfigClassMap: map[string]string{}, Unresolved: nonNilList(rep.Unresolved),
		Template: configTemplate{Base: map[string]any{}, PerNode: map[string]map[string]any{}}}
	if in.Detail == detailFull {
		out.Detail, out.Nodes, out.Shared, out.cursusKeys = detailFull, &rep.Nodes, &rep.Shared, cursusRequirementsOf(rep).keys()
	} else {
		summarizeRequirements(&out, rep)
	}
	for _, n := range rep.Nodes {
		out.ConfigClassMap[n.Node] = n.ConfigClass
		vals := map[string]any{}
		for _, name := range n.Fields.Required() {
			vals[name] = nil
			out.RequiredCount++
		}
		out.Template.PerNode[n.Node] = vals
	}
	for _, name := range rep.Shared.Required() {
		out.Template.Base[name] = nil
		out.RequiredCount++
	}
	reply.WithMeta("node_count", len(g.Nodes))
	reply.WithMeta("mapped_count", len(rep.Nodes))
	for _, u := range rep.Unresolved {
		reply.Warn(fmt.Sprintf("no step type for DAG node %s: %s", u.Node, u.Message))
	}
	reply.Next(registry.NextStep{Tool: "config.merge_save", When: "you have filled the template's null values",
		Why:      "builds and validates every node's config and returns the config.json document",
		ArgsHint: withStepTypesHint(withDAGHint(map[string]any{"base": out.Template.Base, "per_node": out.Template.PerNode}, in.dagSource, g), in.stepTypesArg)})
	reply.Out = out
	return reply, nil
}

func nonNilList[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// configSchemaFor finds a schema by config class, step type or node name.
func (v *catalogView) configSchemaFor(name string) (*config.Schema, error) {
	if sc, err := v.Config.ForStep(name); err == nil {
		return sc, nil
	}
	if sc, err := v.Config.ForConfigClass(name); err == nil {
		return sc, nil
	}
	if n, err := v.Config.ResolveNode(name); err == nil {
		if sc, err := v.Config.ForStep(n.StepType); err == nil {
			return sc, nil
		}
	}
	_, err := v.Config.ForStep(name)
	var ue *config.UnknownStepError
	details := map[string]any{"available": v.Config.Names()}
	if errors.As(err, &ue) && len(ue.Suggestions) > 0 {
		details["suggestions"] = ue.Suggestions
	}
	return nil, registry.Errorf(registry.CodeNotFound, "no config schema for '%s': not a step type or config class", name).
		WithDetails(details).Suggest("Use a step type from catalog.list_steps or its config class (<StepType>Config).", "catalog.list_steps", "catalog.search")
}

type configFieldInfoIn struct {
	ConfigClass string `json:"config_class" jsonschema:"Config class (XGBoostTrainingConfig) or step type (XGBoostTraining)." schema:"minLength=1,maxLength=200"`
	Categorized bool   `json:"categorized,omitempty" jsonschema:"Group fields by tier instead of one list (default false)."`
	stepTypesArg
}

// configFieldInfoOut is the config.field_info payload: all fields in
// requirements, or (categorized) grouped by tier. Each shape's lists are
// present, even empty, only in that shape, hence the pointers.
type configFieldInfoOut struct {
	Chain       []string         `json:"chain"`
	ConfigClass string           `json:"config_class"`
	Derived     *[]*config.Field `json:"derived,omitempty"`
	Essential   *[]*config.Field `json:"essential,omitempty"`
	// Hyperparameters documents the keys of the hyperparameters field
	// for the step's framework (training and tuning steps only).
	Hyperparameters *config.HyperparameterSchema `json:"hyperparameters,omitempty"`
	Required        *[]string                    `json:"required,omitempty"`
	Requirements    *[]*config.Field             `json:"requirements,omitempty"`
	StepType        string                       `json:"step_type"`
	System          *[]*config.Field             `json:"system,omitempty"`
}

func configFieldInfoTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "config.field_info",
		Description: "Every config field of one step type or config class (inherited base fields included): type, tier, default, allowed values, pattern, range, derivation rule and which layer declares it. " +
			"For a training or tuning step, also the documented keys of its hyperparameters (type, range, default) for its framework.",
		When: "You need one step's full field list.",
		Examples: []string{
			`config.field_info {"config_class": "XGBoostTrainingConfig", "categorized": true}  # by class, grouped by tier`,
			`config.field_info {"config_class": "TabularPreprocessing"}  # a step type works too`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.configFieldInfo)
}

func (d *Deps) configFieldInfo(ctx context.Context, in configFieldInfoIn) (registry.Reply[configFieldInfoOut], error) {
	var reply registry.Reply[configFieldInfoOut]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	sc, err := cv.configSchemaFor(in.ConfigClass)
	if err != nil {
		return reply, err
	}
	out := configFieldInfoOut{ConfigClass: sc.ConfigClass, StepType: sc.StepType, Chain: sc.Chain, Hyperparameters: sc.Hyperparameters}
	if in.Categorized {
		var g config.FieldGroups
		for _, f := range sc.Fields {
			switch f.Tier {
			case "essential":
				g.Essential = append(g.Essential, f)
			case "system":
				g.System = append(g.System, f)
			default:
				g.Derived = append(g.Derived, f)
			}
		}
		out.Essential, out.System, out.Derived = nonNilPtr(g.Essential), nonNilPtr(g.System), nonNilPtr(g.Derived)
		out.Required = nonNilPtr(g.Required())
	} else {
		out.Requirements = &sc.Fields
	}
	reply.WithMeta("field_count", len(sc.Fields))
	reply.Out = out
	return reply, nil
}

// nonNilPtr points at l, never nil, for a list that is present only in
// some payloads.
func nonNilPtr[T any](l []T) *[]T {
	l = nonNilList(l)
	return &l
}

type configLoadIn struct {
	configSource
	Path          workspacePath `json:"path,omitempty" jsonschema:"Deprecated alias of config_file (the Cursus argument name); answers with a warning."`
	IncludeValues bool          `json:"include_values,omitempty" jsonschema:"Include each step's values and derived values (default false)."`
	stepTypesArg
}

type configLoadOut struct {
	CreatedAt        string                      `json:"created_at"`
	Path             string                      `json:"path"`
	SharedFieldCount int                         `json:"shared_field_count"`
	SharedFields     []string                    `json:"shared_fields"`
	StepCount        int                         `json:"step_count"`
	Steps            map[string]configLoadedStep `json:"steps"`
}

// configLoadedStep summarises one config of the file; values only on request.
type configLoadedStep struct {
	ConfigClass string          `json:"config_class"`
	Derived     *map[string]any `json:"derived,omitempty"`
	FieldCount  int             `json:"field_count"`
	Fields      []string        `json:"fields"`
	JobType     string          `json:"job_type,omitempty"`
	StepType    string          `json:"step_type"`
	Values      *map[string]any `json:"values,omitempty"`
}

func configLoadTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "config.load",
		Description: "Load and validate a config.json (Cursus layout): merges shared and specific values per step, ignores derived keys, " +
			"reports unknown keys as warnings, and fails with every invalid value listed. Returns the field names per step (values on request).",
		When: "You want to check or inspect an existing config.json.",
		Examples: []string{
			`config.load {` + inlineConfigArg + `}  # summary`,
			`config.load {` + inlineConfigArg + `, "include_values": true}  # with values and derived values`,
		},
		Tags: []string{registry.PhasePlanner},
	}, d.configLoad)
}

func (d *Deps) configLoad(ctx context.Context, in configLoadIn) (registry.Reply[configLoadOut], error) {
	var reply registry.Reply[configLoadOut]
	if err := deprecatedAlias(reply.Warn, &in.ConfigFile, in.Path, "config_file", "path"); err != nil {
		return reply, err
	}
	call, err := d.sources(ctx, nil, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(call.cat.Warnings...)
	f, label, err := d.configFrom(call, in.configSource, "config_file")
	if err != nil {
		return reply, err
	}
	out := configLoadOut{Path: label, CreatedAt: f.CreatedAt, SharedFieldCount: len(f.SharedFields), SharedFields: nonNilList(f.SharedFields),
		StepCount: len(f.Configs), Steps: map[string]configLoadedStep{}}
	for _, c := range f.Configs {
		fields := cfgSortedKeys(c.Values)
		step := configLoadedStep{StepType: c.StepType, ConfigClass: c.ConfigClass, FieldCount: len(fields), Fields: fields, JobType: c.JobType}
		if in.IncludeValues {
			step.Values, step.Derived = &c.Values, &c.Derived
		}
		out.Steps[c.Key] = step
	}
	reply.Warn(f.Warnings...)
	reply.WithMeta("step_count", len(f.Configs))
	reply.Next(registry.NextStep{Tool: "compile.validate", When: "the configs look right", Why: "checks DAG, configs and builders fit together"})
	reply.Out = out
	return reply, nil
}

func cfgSortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func configLoadError(p string, err error) error {
	var le *config.LoadError
	if errors.As(err, &le) {
		if len(le.Problems) > 0 {
			return registry.Errorf(registry.CodeConfigInvalid, "config file '%s' is invalid: %d problem(s)", p, len(le.Problems)).
				WithDetails(map[string]any{"path": p, "problems": le.Problems}).
				Suggest("Fix each listed value (field, kind, message); config.field_info shows a field's type and allowed values.", "config.field_info", "config.requirements")
		}
		return registry.Errorf(registry.CodeInvalidInput, "failed to load configs from '%s': %s", p, le.Msg)
	}
	return registry.Errorf(registry.CodeInvalidInput, "failed to load configs from '%s': %v", p, err)
}

type configMergeSaveOut struct {
	Bytes      int             `json:"bytes"`
	ConfigKeys []string        `json:"config_keys"`
	CreatedAt  string          `json:"created_at"`
	Document   rawJSONDocument `json:"document"`
	SHA256     string          `json:"sha256"`
	Written    *string         `json:"written"` // null unless output_file was written
}

// rawJSONDocument is a JSON document sent as its exact bytes.
type rawJSONDocument struct{ json.RawMessage }

func (rawJSONDocument) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: "The config.json document."}
}

func configMergeSaveTool(d *Deps) registry.ToolDef {
	return registry.Define(registry.ToolDef{
		Name: "config.merge_save",
		Description: "Build every node's config from base values (shared by all nodes) and per-node values, validate them all " +
			"(every problem at once), and return the merged config.json document (sorted keys, 2-space indent; fields equal in " +
			"every config go to shared). Read-only without output_file: pass the document on as the config argument of the compile tools. " +
			"With output_file it also writes the file into the workspace (never overwriting unless overwrite is true): a write, which needs the server's write gate.",
		When: "You have what config.requirements asked for.",
		Examples: []string{
			`config.merge_save {"dag": {"nodes": ["XGBoostModel"], "edges": []}, "base": {"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}}  # returns the document`,
			`config.merge_save {"dag_file": "dag.json", "base": {"region": "EU"}, "per_node": {"XGBoostTraining": {"hyperparameters": {"num_round": 100}}}, "output_file": "config.json", "created_at": "2025-01-01T00:00:00Z"}  # writes it`,
		},
		Tags:        []string{registry.PhasePlanner, registry.PhaseProgrammer},
		WritesWith:  []string{"output_file"},
		Alternative: &registry.Alternative{Tool: "config.merge_save", How: "leave out output_file and it returns the config.json document in data.document, writing nothing."},
	}, d.configMergeSave)
}

func (d *Deps) configMergeSave(ctx context.Context, in configMergeSaveIn) (registry.Reply[configMergeSaveOut], error) {
	var reply registry.Reply[configMergeSaveOut]
	cv, err := d.catalogsFor(ctx, in.stepTypesArg)
	if err != nil {
		return reply, err
	}
	reply.Warn(cv.Warnings...)
	g, err := d.loadDAG(ctx, in.dagSource, true)
	if err != nil {
		return reply, err
	}
	if g == nil {
		if len(in.PerNode) == 0 {
			return reply, registry.Errorf(registry.CodeInvalidInput, "give dag, dag_file or per_node (whose keys are then the nodes)")
		}
		g = dag.New(cfgSortedKeys(cfgAnyMap(in.PerNode)), nil)
	}
	// Resolve the output path before any work so an escape is refused early.
	out := string(in.OutputFile)
	if out != "" {
		if _, err := d.Root.Resolve(out); err != nil {
			return reply, pathError("output_file", err)
		}
	}
	res, doc, warnings, err := configDocument(ctx, cv.Config, g, in)
	if err != nil {
		return reply, err
	}
	reply.Warn(warnings...)
	reply.WithMeta("config_count", len(res.ConfigKeys))
	if out == "" {
		hint := withStepTypesHint(withDAGHint(map[string]any{"config": "<data.document>"}, in.dagSource, g), in.stepTypesArg)
		if len(in.StepTypes) > 0 {
			// The compile tools need the new step types' scripts too.
			hint["files"] = map[string]string{"<script path of each step type sent>": "<its text>"}
		}
		reply.Next(registry.NextStep{Tool: "compile.with_report", When: "the document is the configuration you want",
			Why: "compiles the DAG with it (sent inline as config) and returns the pipeline definition and report", ArgsHint: hint},
			registry.NextStep{Tool: "compile.validate", When: "you want the problems listed before compiling",
				Why: "checks DAG, configs and builders fit together", ArgsHint: hint})
		reply.Out = res
		return reply, nil
	}
	if err := d.Root.WriteFile(out, doc, in.Overwrite); err != nil {
		return reply, pathError("output_file", err)
	}
	res.Written = &out
	reply.Next(registry.NextStep{Tool: "config.load", When: "you want to re-check the saved file", Why: "re-reads and validates it",
		ArgsHint: map[string]any{"config_file": out}})
	reply.Out = res
	return reply, nil
}

// configDocument builds and validates every node's config and renders
// the config.json document; warnings are the configs' non-blocking
// findings, each prefixed by its node.
func configDocument(ctx context.Context, schemas *config.Schemas, g *dag.DAG, in configMergeSaveIn) (configMergeSaveOut, []byte, []string, error) {
	configs, probs, err := schemas.BuildDAG(ctx, g, in.Base, in.PerNode)
	if err != nil {
		return configMergeSaveOut{}, nil, nil, err
	}
	if len(probs) > 0 {
		return configMergeSaveOut{}, nil, nil, registry.Errorf(registry.CodeConfigInvalid, "%d config problem(s); nothing saved", len(probs)).
			WithDetails(map[string]any{"problems": probs, "problem_count": len(probs)}).
			Suggest("Fix every listed problem (node, field, kind, message) and call again; config.requirements lists what each node needs.", "config.requirements", "config.field_info")
	}
	createdAt := in.CreatedAt
	if createdAt == "" {
		createdAt = time.Now().UTC().Format(time.RFC3339)
	}
	doc, err := config.Marshal(configs, createdAt)
	if err != nil {
		return configMergeSaveOut{}, nil, nil, registry.Errorf(registry.CodeConfigInvalid, "%v", err)
	}
	sum := sha256.Sum256(doc)
	res := configMergeSaveOut{Document: rawJSONDocument{doc}, Bytes: len(doc), SHA256: hex.EncodeToString(sum[:]), CreatedAt: createdAt,
		ConfigKeys: make([]string, len(configs))}
	var warnings []string
	for i, c := range configs {
		res.ConfigKeys[i] = c.Key
		for _, w := range c.Warnings {
			warnings = append(warnings, c.Key+": "+w)
		}
	}
	return res, doc, warnings, nil
}

func cfgAnyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withDAGHint adds the DAG to a next step's args hint as the call had
// it: its dag_file, its inline dag, or g (a DAG built from per_node).
func withDAGHint(hint map[string]any, in dagSource, g *dag.DAG) map[string]any {
	switch {
	case in.DAGFile != "":
		hint["dag_file"] = in.DAGFile
	case in.DAG != nil:
		hint["dag"] = in.DAG
	default:
		hint["dag"] = map[string]any{"nodes": g.Nodes, "edges": g.Edges}
	}
	return hint
}

// withStepTypesHint asks the next step for the step_types this call was
// sent: without them it does not know the caller's step types.
func withStepTypesHint(hint map[string]any, in stepTypesArg) map[string]any {
	if len(in.StepTypes) > 0 {
		hint["step_types"] = []string{"<the step_types of this call>"}
	}
	return hint
}
