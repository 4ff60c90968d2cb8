package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/registry"
)

// Argument schemas shared by the config tools.
var (
	configDAGSchema = map[string]any{
		"type":        "object",
		"description": `Inline DAG: flat {"nodes": [...], "edges": [[src, dst], ...]} or wrapped {"dag": {...}}. Give this or dag_file.`,
	}
	configDAGFileSchema = map[string]any{
		"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "DAG JSON file inside the workspace. Give this or dag.",
	}
	configFileSchema = map[string]any{
		"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "config.json file inside the workspace (Cursus layout).",
	}
	configValuesSchema = map[string]any{
		"type": "object", "maxProperties": 500,
		"description": "Field name → value.",
	}
)

func configNamespace(d *Deps) (registry.Namespace, error) {
	if d.Config == nil {
		return registry.Namespace{}, errors.New("config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "config",
		Description: "Work out, fill, validate and save the per-step configuration (config.json) of a DAG.",
		Tools: []registry.ToolDef{
			{
				Name: "config.requirements",
				Description: "For every node of a DAG, the config fields still needed, grouped by tier (essential = you must give it, " +
					"system = has a default, derived = computed), with types, defaults, allowed values and descriptions. Fields every node " +
					"shares are listed once under shared. Also returns a fill-in template for config.merge_save.",
				When: "You have a DAG and need to know what configuration to provide.",
				Examples: []string{
					`config.requirements {"dag": {"nodes": ["TabularPreprocessing_training", "XGBoostTraining"], "edges": [["TabularPreprocessing_training", "XGBoostTraining"]]}}  # inline`,
					`config.requirements {"dag_file": "pipeline_config/dag.json"}  # from a file in the workspace`,
				},
				Tags:    []string{registry.PhasePlanner},
				Schema:  registry.Object(map[string]any{"dag": configDAGSchema, "dag_file": configDAGFileSchema}),
				Handler: d.configRequirements,
			},
			{
				Name:        "config.field_info",
				Description: "Every config field of one step type or config class (inherited base fields included): type, tier, default, allowed values, pattern, range, derivation rule and which layer declares it.",
				When:        "You need the full field list of one step's config.",
				Examples: []string{
					`config.field_info {"config_class": "XGBoostTrainingConfig", "categorized": true}  # by class, grouped by tier`,
					`config.field_info {"config_class": "TabularPreprocessing"}  # a step type works too`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"config_class": map[string]any{"type": "string", "minLength": 1, "maxLength": 200, "description": "Config class (XGBoostTrainingConfig) or step type (XGBoostTraining)."},
					"categorized":  registry.Boolean("Group fields by tier instead of one list (default false)."),
				}, "config_class"),
				Handler: d.configFieldInfo,
			},
			{
				Name: "config.load",
				Description: "Load and validate a config.json (Cursus layout): merges shared and specific values per step, ignores derived keys, " +
					"reports unknown keys as warnings, and fails with every invalid value listed. Returns the field names per step (values on request).",
				When: "You want to check or inspect an existing config.json.",
				Examples: []string{
					`config.load {"config_file": "pipeline_config/config_NA.json"}  # summary`,
					`config.load {"config_file": "config.json", "include_values": true}  # with values and derived values`,
				},
				Tags: []string{registry.PhasePlanner},
				Schema: registry.Object(map[string]any{
					"config_file":    configFileSchema,
					"path":           map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "Alias of config_file (the Cursus argument name)."},
					"include_values": registry.Boolean("Include each step's values and derived values (default false)."),
				}),
				Handler: d.configLoad,
			},
			{
				Name: "config.merge_save",
				Description: "Build every node's config from base values (shared by all nodes) and per-node values, validate them all " +
					"(every problem at once), and return the merged config.json document (sorted keys, 2-space indent; fields equal in " +
					"every config go to shared). Writes the file only when output_file is given, never overwriting unless overwrite is true.",
				When: "You have the values config.requirements asked for and want the config.json.",
				Examples: []string{
					`config.merge_save {"dag": {"nodes": ["XGBoostModel"], "edges": []}, "base": {"author": "jdoe", "bucket": "my-bucket", "role": "arn:aws:iam::123456789012:role/SageMakerRole", "region": "NA", "service_name": "fraud", "pipeline_version": "1.0.0"}}  # returns the document`,
					`config.merge_save {"dag_file": "dag.json", "base": {"region": "EU"}, "per_node": {"XGBoostTraining": {"hyperparameters": {"num_round": 100}}}, "output_file": "config.json", "created_at": "2025-01-01T00:00:00Z"}  # writes it`,
				},
				Tags: []string{registry.PhasePlanner, registry.PhaseProgrammer},
				Schema: registry.Object(map[string]any{
					"dag":      configDAGSchema,
					"dag_file": configDAGFileSchema,
					"base":     configValuesSchema,
					"per_node": map[string]any{
						"type": "object", "maxProperties": 500,
						"additionalProperties": configValuesSchema,
						"description":          "DAG node → {field: value} for that node only (wins over base). Without a DAG, its keys are the nodes.",
					},
					"output_file": map[string]any{"type": "string", "minLength": 1, "maxLength": 4096, "description": "Write the document here (inside the workspace)."},
					"overwrite":   registry.Boolean("Replace output_file if it exists (default false)."),
					"created_at":  map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "description": "metadata.created_at to record (default: now, UTC). Pin it for reproducible bytes."},
				}),
				Writes:  true,
				Handler: d.configMergeSave,
			},
		},
	}, nil
}

// configDAG reads the exactly-one-of dag / dag_file input.
func (d *Deps) configDAG(args map[string]any, optional bool) (*dag.DAG, error) {
	inline, hasInline := args["dag"]
	file, hasFile := args["dag_file"].(string)
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
		data, err := d.Root.ReadFile(file)
		if err != nil {
			return nil, pathError("dag_file", err)
		}
		g, err := dag.Parse(data)
		if err != nil {
			return nil, registry.Errorf(registry.CodeInvalidInput, "invalid DAG file '%s': %v", file, err)
		}
		return g, nil
	}
	data, err := json.Marshal(inline)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "dag: %v", err)
	}
	g, err := dag.Parse(data)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "invalid dag: %v", err)
	}
	return g, nil
}

func (d *Deps) configRequirements(_ context.Context, req registry.Request) (*registry.Result, error) {
	g, err := d.configDAG(req.Args, false)
	if err != nil {
		return nil, err
	}
	rep, err := config.Requirements(g, d.Config)
	if err != nil {
		return nil, registry.Errorf(registry.CodeInvalidInput, "%v", err)
	}
	classMap := map[string]string{}
	perNode := map[string]any{}
	required := 0
	for _, n := range rep.Nodes {
		classMap[n.Node] = n.ConfigClass
		vals := map[string]any{}
		for _, name := range n.Fields.Required() {
			vals[name] = nil
			required++
		}
		perNode[n.Node] = vals
	}
	base := map[string]any{}
	for _, name := range rep.Shared.Required() {
		base[name] = nil
		required++
	}
	data := map[string]any{
		"shared":           rep.Shared,
		"nodes":            rep.Nodes,
		"unresolved":       nonNilList(rep.Unresolved),
		"config_class_map": classMap,
		"required_count":   required,
		"template":         map[string]any{"base": base, "per_node": perNode},
	}
	res := registry.OK(data).WithMeta("node_count", len(g.Nodes)).WithMeta("mapped_count", len(rep.Nodes))
	for _, u := range rep.Unresolved {
		res.Warn(fmt.Sprintf("no step type for DAG node %s: %s", u.Node, u.Message))
	}
	return res.Next(registry.NextStep{Tool: "config.merge_save", When: "you have filled the template's null values",
		Why: "builds, validates and saves every node's config", ArgsHint: map[string]any{"base": base, "per_node": perNode}}), nil
}

func nonNilList[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// configSchemaFor finds a schema by config class, step type or node name.
func (d *Deps) configSchemaFor(name string) (*config.Schema, error) {
	if sc, err := d.Config.ForStep(name); err == nil {
		return sc, nil
	}
	if sc, err := d.Config.ForConfigClass(name); err == nil {
		return sc, nil
	}
	if n, err := d.Config.ResolveNode(name); err == nil {
		if sc, err := d.Config.ForStep(n.StepType); err == nil {
			return sc, nil
		}
	}
	_, err := d.Config.ForStep(name)
	var ue *config.UnknownStepError
	details := map[string]any{"available": d.Config.Names()}
	if errors.As(err, &ue) && len(ue.Suggestions) > 0 {
		details["suggestions"] = ue.Suggestions
	}
	return nil, registry.Errorf(registry.CodeNotFound, "no config schema for '%s': not a step type or config class", name).
		WithDetails(details).Suggest("Use a step type from catalog.list_steps or its config class (<StepType>Config).", "catalog.list_steps", "catalog.search")
}

func (d *Deps) configFieldInfo(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		ConfigClass string `json:"config_class"`
		Categorized bool   `json:"categorized"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	sc, err := d.configSchemaFor(args.ConfigClass)
	if err != nil {
		return nil, err
	}
	data := map[string]any{"config_class": sc.ConfigClass, "step_type": sc.StepType, "chain": sc.Chain}
	if args.Categorized {
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
		data["essential"], data["system"], data["derived"] = nonNilList(g.Essential), nonNilList(g.System), nonNilList(g.Derived)
		data["required"] = nonNilList(g.Required())
	} else {
		data["requirements"] = sc.Fields
	}
	return registry.OK(data).WithMeta("field_count", len(sc.Fields)), nil
}

func (d *Deps) configLoad(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		ConfigFile    string `json:"config_file"`
		Path          string `json:"path"`
		IncludeValues bool   `json:"include_values"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	arg, p := "config_file", args.ConfigFile
	switch {
	case p != "" && args.Path != "":
		return nil, registry.Errorf(registry.CodeInvalidInput, "give config_file or path, not both")
	case p == "" && args.Path == "":
		return nil, registry.Errorf(registry.CodeInvalidInput, "config_file is required")
	case p == "":
		arg, p = "path", args.Path
	}
	info, err := d.Root.Stat(p)
	if err != nil {
		return nil, pathError(arg, err)
	}
	if info.IsDir() {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'%s': %s is a directory", arg, p)
	}
	if info.Size() > config.MaxFileSize {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'%s': file is larger than %d bytes", arg, config.MaxFileSize)
	}
	raw, err := d.Root.ReadFile(p)
	if err != nil {
		return nil, pathError(arg, err)
	}
	f, err := config.Parse(raw, d.Config)
	if err != nil {
		return nil, configLoadError(p, err)
	}
	stepsOut := map[string]any{}
	for _, c := range f.Configs {
		fields := cfgSortedKeys(c.Values)
		entry := map[string]any{"step_type": c.StepType, "config_class": c.ConfigClass, "field_count": len(fields), "fields": fields}
		if c.JobType != "" {
			entry["job_type"] = c.JobType
		}
		if args.IncludeValues {
			entry["values"], entry["derived"] = c.Values, c.Derived
		}
		stepsOut[c.Key] = entry
	}
	data := map[string]any{
		"path": p, "created_at": f.CreatedAt,
		"shared_field_count": len(f.SharedFields), "shared_fields": nonNilList(f.SharedFields),
		"step_count": len(f.Configs), "steps": stepsOut,
	}
	return registry.OK(data).Warn(f.Warnings...).WithMeta("step_count", len(f.Configs)).
		Next(registry.NextStep{Tool: "compile.validate", When: "the configs look right", Why: "checks DAG, configs and builders fit together"}), nil
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

func (d *Deps) configMergeSave(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Base       map[string]any            `json:"base"`
		PerNode    map[string]map[string]any `json:"per_node"`
		OutputFile string                    `json:"output_file"`
		Overwrite  bool                      `json:"overwrite"`
		CreatedAt  string                    `json:"created_at"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	g, err := d.configDAG(req.Args, true)
	if err != nil {
		return nil, err
	}
	if g == nil {
		if len(args.PerNode) == 0 {
			return nil, registry.Errorf(registry.CodeInvalidInput, "give dag, dag_file or per_node (whose keys are then the nodes)")
		}
		g = dag.New(cfgSortedKeys(cfgAnyMap(args.PerNode)), nil)
	}
	// Resolve the output path before any work so an escape is refused early.
	if args.OutputFile != "" {
		if _, err := d.Root.Resolve(args.OutputFile); err != nil {
			return nil, pathError("output_file", err)
		}
	}
	configs, probs := d.Config.BuildDAG(g, args.Base, args.PerNode)
	if len(probs) > 0 {
		return nil, registry.Errorf(registry.CodeConfigInvalid, "%d config problem(s); nothing saved", len(probs)).
			WithDetails(map[string]any{"problems": probs, "problem_count": len(probs)}).
			Suggest("Fix every listed problem (node, field, kind, message) and call again; config.requirements lists what each node needs.", "config.requirements", "config.field_info")
	}
	createdAt := args.CreatedAt
	if createdAt == "" {
		createdAt = time.Now().UTC().Format(time.RFC3339)
	}
	doc, err := config.Marshal(configs, createdAt)
	if err != nil {
		return nil, registry.Errorf(registry.CodeConfigInvalid, "%v", err)
	}
	sum := sha256.Sum256(doc)
	keys := make([]string, len(configs))
	for i, c := range configs {
		keys[i] = c.Key
	}
	data := map[string]any{
		"document": json.RawMessage(doc), "bytes": len(doc), "sha256": hex.EncodeToString(sum[:]),
		"config_keys": keys, "created_at": createdAt, "written": nil,
	}
	if args.OutputFile != "" {
		if err := d.Root.WriteFile(args.OutputFile, doc, args.Overwrite); err != nil {
			return nil, pathError("output_file", err)
		}
		data["written"] = args.OutputFile
	}
	res := registry.OK(data).WithMeta("config_count", len(configs))
	if args.OutputFile != "" {
		return res.Next(registry.NextStep{Tool: "config.load", When: "you want to re-check the saved file", Why: "re-reads and validates it",
			ArgsHint: map[string]any{"config_file": args.OutputFile}}), nil
	}
	return res.Next(registry.NextStep{Tool: "compile.validate", When: "the document is saved where the compiler reads it",
		Why: "checks DAG, configs and builders fit together"}), nil
}

func cfgAnyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
