package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/registry"
)

var (
	compilePipelineNameSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 255,
		"pattern": `^[a-zA-Z0-9](-*[a-zA-Z0-9])*$`, "description": "Pipeline name to use instead of the generated one."}
	compileRoleSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 2048,
		"pattern": `^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$`, "description": "IAM role ARN for SageMaker (default: the configs' role)."}
)

func compileProps(extra map[string]any) map[string]any {
	p := map[string]any{"config_file": configFileSchema, "dag": configDAGSchema, "dag_file": configDAGFileSchema}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func compileNamespace(d *Deps) (registry.Namespace, error) {
	if d.Steps == nil || d.Config == nil {
		return registry.Namespace{}, errors.New("step catalog or config schemas are not loaded")
	}
	return registry.Namespace{
		Name:        "compile",
		Description: "Compile a DAG and its config.json into a SageMaker Pipelines definition; check, preview, name and deploy it.",
		Tools: []registry.ToolDef{
			{
				Name: "compile.validate",
				Description: "Check that a DAG and its config.json fit together without deploying anything: every node has a config " +
					"(matched with a confidence), an interface and a builder; required inputs are wired; every step builds. Never fails: problems are in the result.",
				When:     "Before compiling, to see what is missing or mismatched.",
				Examples: []string{`compile.validate {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json"}`},
				Tags:     []string{registry.PhaseValidator},
				Schema:   registry.Object(compileProps(map[string]any{"role": compileRoleSchema}), "config_file"),
				Handler:  d.compileValidate,
			},
			{
				Name: "compile.preview",
				Description: "Show how each DAG node resolves to a config (class, method, confidence, reasons) and which builder " +
					"builds it, with renaming recommendations for weak matches. Builds nothing.",
				When:     "You want to see node → config → builder before compiling.",
				Examples: []string{`compile.preview {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json"}`},
				Tags:     []string{registry.PhasePlanner, registry.PhaseValidator},
				Schema:   registry.Object(compileProps(nil), "config_file"),
				Handler:  d.compilePreview,
			},
			{
				Name: "compile.with_report",
				Description: "Compile without deploying and return the report (per step: node, config, builder, confidence, wired inputs), " +
					"the full pipeline definition JSON and the manifest of code artifacts (local file → content-addressed S3 URI).",
				When:     "You want the compiled pipeline (definition and report) on a read-only server.",
				Examples: []string{`compile.with_report {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json"}`},
				Tags:     []string{registry.PhaseProgrammer},
				Schema:   registry.Object(compileProps(map[string]any{"pipeline_name": compilePipelineNameSchema}), "config_file"),
				Handler:  d.compileWithReport,
			},
			{
				Name: "compile.name",
				Description: "Generate a pipeline name (sanitised \"<base>-<version>-pipeline\") and/or sanitise a name: \".\" and \"_\" become \"-\", " +
					"other characters outside [a-zA-Z0-9-] are dropped, at most 255 characters; reports whether each result is valid.",
				When: "You need a valid SageMaker pipeline name.",
				Examples: []string{`compile.name {"base": "xgboost-training", "version": "1.0"}  # xgboost-training-1-0-pipeline`,
					`compile.name {"sanitize": "My Pipeline!! v3"}  # MyPipelinev3`},
				Tags: []string{registry.PhaseProgrammer},
				Schema: registry.Object(map[string]any{
					"base":     map[string]any{"type": "string", "minLength": 1, "maxLength": 512, "description": "Name base, e.g. the config's pipeline_name."},
					"version":  map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "description": "Version (default 1.0)."},
					"sanitize": map[string]any{"type": "string", "minLength": 1, "maxLength": 1024, "description": "A name to sanitise."},
				}),
				Handler: d.compileName,
			},
			{
				Name: "compile.single_node",
				Description: "Compile one node of the DAG as its own pipeline, its inputs given as S3 URIs (dependency → s3://bucket/key). " +
					"Returns the definition; deploys nothing.",
				When: "You want to run or debug one step in isolation on existing data.",
				Examples: []string{`compile.single_node {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json", ` +
					`"target_node": "XGBoostTraining", "manual_inputs": {"input_path": "s3://my-bucket/run/processed"}}`},
				Tags: []string{registry.PhaseProgrammer},
				Schema: registry.Object(compileProps(map[string]any{
					"target_node": map[string]any{"type": "string", "minLength": 1, "maxLength": 256, "description": "DAG node to compile."},
					"manual_inputs": map[string]any{"type": "object", "maxProperties": 50,
						"additionalProperties": map[string]any{"type": "string", "maxLength": 2048},
						"description":          "Dependency name → s3:// URI."},
					"pipeline_name":   compilePipelineNameSchema,
					"validate_inputs": registry.Boolean("Check the node and every URI first (default true)."),
				}), "config_file", "target_node", "manual_inputs"),
				Handler: d.compileSingleNode,
			},
			{
				Name: "compile.dag",
				Description: "Compile the DAG into a SageMaker pipeline definition and return it. With upsert: true, uploads each code " +
					"artifact to S3 (once: keys are content hashes) and creates the pipeline in SageMaker, or updates it when it exists.",
				When: "You want to deploy the pipeline to SageMaker (upsert) or get its definition.",
				Examples: []string{`compile.dag {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json"}  # build only`,
					`compile.dag {"config_file": "examples/xgboost-tabular/config.json", "dag_file": "examples/xgboost-tabular/dag.json", "upsert": true}  # deploy`},
				Tags: []string{registry.PhaseProgrammer},
				Schema: registry.Object(compileProps(map[string]any{
					"pipeline_name": compilePipelineNameSchema,
					"role":          compileRoleSchema,
					"upsert":        registry.Boolean("Upload artifacts and create/update the pipeline in SageMaker (default false)."),
				}), "config_file"),
				Destructive: true,
				Network:     true,
				Handler:     d.compileDAG,
			},
		},
	}, nil
}

// compileInput loads the config file (checked first, as the reference
// does) and the DAG.
func (d *Deps) compileInput(args map[string]any) (compiler.Input, *config.File, error) {
	p, _ := args["config_file"].(string)
	info, err := d.Root.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return compiler.Input{}, nil, registry.Errorf(registry.CodeNotFound, "config_file not found: %s", p)
		}
		return compiler.Input{}, nil, pathError("config_file", err)
	}
	if info.IsDir() || info.Size() > config.MaxFileSize {
		return compiler.Input{}, nil, registry.Errorf(registry.CodeInvalidInput, "'config_file': %s is a directory or larger than %d bytes", p, config.MaxFileSize)
	}
	raw, err := d.Root.ReadFile(p)
	if err != nil {
		return compiler.Input{}, nil, pathError("config_file", err)
	}
	f, err := config.Parse(raw, d.Config)
	if err != nil {
		return compiler.Input{}, nil, configLoadError(p, err)
	}
	g, err := d.configDAG(args, false)
	if err != nil {
		return compiler.Input{}, nil, err
	}
	name, _ := args["pipeline_name"].(string)
	return compiler.Input{DAG: g, Configs: f.Configs, Catalog: d.Steps, Sources: d.Root.FS(), PipelineName: name}, f, nil
}

// compileError maps engine errors to tool errors.
func compileError(err error) error {
	var ue *compiler.UnsupportedError
	var re *compiler.ResolutionError
	var ur *compiler.UnresolvedError
	var be *compiler.BuildError
	var ie *compiler.InputError
	var ae *sagemaker.AWSError
	var ma *compiler.MissingArtifactsError
	switch {
	case errors.As(err, &ue):
		fix := "Replace the node with a public step type."
		if ue.Replacement != "" {
			fix = fmt.Sprintf("Replace node %s with %s.", ue.Node, ue.Replacement)
		}
		if ue.Advice != "" {
			fix += " " + ue.Advice
		}
		return registry.Errorf(registry.CodeUnsupported, "%s", ue.Error()).
			WithDetails(map[string]any{"node": ue.Node, "step_type": ue.StepType, "replacement": ue.Replacement}).
			Suggest(fix, "catalog.step_info", "pipeline_catalog.recommend")
	case errors.As(err, &re):
		return registry.Errorf(registry.CodeValidationFailed, "%s", re.Error()).
			WithDetails(map[string]any{"failures": re.Failures, "collisions": re.Collisions}).
			Suggest("Add a config for each listed node (key = node name) or rename the nodes.", "compile.preview", "config.requirements")
	case errors.As(err, &ur):
		return registry.Errorf(registry.CodeValidationFailed, "%s", ur.Error()).
			WithDetails(map[string]any{"unresolved": ur.Unresolved}).
			Suggest("Add an edge from a step that produces the input, or check the producers' outputs.", "dag.resolve_plan", "validate.deps_explain")
	case errors.As(err, &ie):
		return registry.Errorf(registry.CodeInvalidInput, "%s", ie.Error())
	case errors.As(err, &ae):
		return registry.Errorf(registry.CodeUpsertFailed, "%s", ae.Error()).
			WithDetails(map[string]any{"aws_error_code": ae.Code, "operation": ae.Op}).
			Suggest("Check the role, bucket and region and the caller's AWS permissions.")
	case errors.As(err, &ma):
		return registry.Errorf(registry.CodeUpsertFailed, "%s", ma.Error()).
			WithDetails(map[string]any{"missing": ma.Local}).
			Suggest("Create the listed scripts (or fix source_dir / entry points) before deploying.", "project.init", "author.check_script")
	case errors.As(err, &be):
		return registry.Errorf(registry.CodeConfigInvalid, "%s", be.Error()).
			WithDetails(map[string]any{"node": be.Node, "step": be.StepName}).
			Suggest("Fix the node's config; config.field_info lists its fields.", "config.field_info", "compile.validate")
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return err
	}
	return registry.Errorf(registry.CodeToolError, "compile failed: %v", err)
}

// progress forwards engine progress to the registry's reporter.
func progress(ctx context.Context) compiler.Option {
	return compiler.WithProgress(func(done, total int, msg string) {
		registry.Progress(ctx, float64(done), float64(total), msg)
	})
}

// toMap turns an engine value into plain JSON data (objects, arrays,
// strings, numbers), the shape every tool result carries.
func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func definitionValue(res *compiler.Result) any {
	var def any
	dec := json.NewDecoder(bytes.NewReader(res.JSON))
	dec.UseNumber()
	_ = dec.Decode(&def)
	return def
}

func artifactList(res *compiler.Result) []any {
	out := make([]any, 0, len(res.Artifacts))
	for _, a := range res.Artifacts {
		out = append(out, toMap(a))
	}
	return out
}

func (d *Deps) compileValidate(ctx context.Context, req registry.Request) (*registry.Result, error) {
	in, _, err := d.compileInput(req.Args)
	if err != nil {
		return nil, err
	}
	v := compiler.Validate(ctx, in)
	r := registry.OK(toMap(v)).Warn(v.Warnings...)
	if v.IsValid {
		return r.Next(registry.NextStep{Tool: "compile.with_report", When: "validation passed", Why: "get the definition and report"}), nil
	}
	return r.Next(registry.NextStep{Tool: "compile.preview", When: "nodes did not resolve", Why: "see node → config matching"},
		registry.NextStep{Tool: "catalog.search", When: "a step type is unknown", Why: "find the right step type"}), nil
}

func (d *Deps) compilePreview(_ context.Context, req registry.Request) (*registry.Result, error) {
	in, _, err := d.compileInput(req.Args)
	if err != nil {
		return nil, err
	}
	p := compiler.PreviewResolution(in)
	return registry.OK(toMap(p)).Warn(p.Recommendations...).
		Next(registry.NextStep{Tool: "compile.validate", When: "the mapping looks right", Why: "check inputs and builds"}), nil
}

func (d *Deps) compileWithReport(ctx context.Context, req registry.Request) (*registry.Result, error) {
	in, _, err := d.compileInput(req.Args)
	if err != nil {
		return nil, err
	}
	res, err := compiler.Compile(ctx, in, progress(ctx))
	if err != nil {
		return nil, compileError(err)
	}
	details := map[string]any{}
	sum := 0.0
	var warns []string
	for _, s := range res.Steps {
		details[s.Node] = map[string]any{"config_type": s.ConfigClass, "builder_type": s.Builder, "confidence": s.Confidence, "method": s.Method}
		sum += s.Confidence
		if s.Confidence < compiler.LowConfidence {
			warns = append(warns, fmt.Sprintf("Low confidence resolution for node '%s': %.2f", s.Node, s.Confidence))
		}
	}
	avg := sum / float64(len(res.Steps))
	warns = append(warns, res.Warnings...)
	stepsOut := make([]any, 0, len(res.Steps))
	for _, s := range res.Steps {
		stepsOut = append(stepsOut, toMap(s))
	}
	data := map[string]any{
		"pipeline_name":      res.PipelineName,
		"step_count":         len(res.Steps),
		"steps":              stepsOut,
		"resolution_details": details,
		"avg_confidence":     avg,
		"warnings":           nonNilList(warns),
		"metadata": map[string]any{"dag_nodes": len(in.DAG.Nodes), "dag_edges": len(in.DAG.Edges),
			"config_path": req.Args["config_file"], "step_catalog_stats": map[string]any{"supported_step_types": len(d.Steps.Names())}},
		"summary":    fmt.Sprintf("Pipeline '%s' compiled with %d steps (avg confidence: %.2f)", res.PipelineName, len(res.Steps), avg),
		"definition": definitionValue(res),
		"artifacts":  artifactList(res),
		"manifest":   toMap(res.Manifest()),
	}
	return registry.OK(data).Warn(warns...).WithMeta("step_count", len(res.Steps)).
		Next(registry.NextStep{Tool: "compile.dag", When: "the definition is right and deploying is allowed", Why: "upsert it to SageMaker",
			ArgsHint: map[string]any{"upsert": true}},
			registry.NextStep{Tool: "execdoc.generate", When: "you run it with an execution document", Why: "fill the per-step configs"}), nil
}

func (d *Deps) compileName(_ context.Context, req registry.Request) (*registry.Result, error) {
	var args struct {
		Base     string `json:"base"`
		Version  string `json:"version"`
		Sanitize string `json:"sanitize"`
	}
	if err := req.Bind(&args); err != nil {
		return nil, err
	}
	if args.Base == "" && args.Sanitize == "" {
		return nil, registry.Errorf(registry.CodeInvalidInput, "give base (to generate a name) or sanitize (to clean one)")
	}
	data := map[string]any{}
	if args.Base != "" {
		v := args.Version
		if v == "" {
			v = "1.0"
		}
		g := sagemaker.GeneratePipelineName(args.Base, v)
		data["generated"], data["generated_is_valid"] = g, sagemaker.ValidPipelineName(g)
	}
	if args.Sanitize != "" {
		s := sagemaker.SanitizePipelineName(args.Sanitize)
		data["sanitized"], data["sanitized_is_valid"] = s, sagemaker.ValidPipelineName(s)
	}
	return registry.OK(data), nil
}

func (d *Deps) compileSingleNode(ctx context.Context, req registry.Request) (*registry.Result, error) {
	in, _, err := d.compileInput(req.Args)
	if err != nil {
		return nil, err
	}
	target, _ := req.Args["target_node"].(string)
	manual := map[string]string{}
	if m, ok := req.Args["manual_inputs"].(map[string]any); ok {
		for k, v := range m {
			s, _ := v.(string)
			manual[k] = s
		}
	}
	validate := true
	if v, ok := req.Args["validate_inputs"].(bool); ok {
		validate = v
	}
	res, err := compiler.CompileSingleNode(ctx, in, target, manual, validate, progress(ctx))
	if err != nil {
		return nil, compileError(err)
	}
	data := map[string]any{"pipeline_name": res.PipelineName, "target_node": target, "step_count": len(res.Steps),
		"definition": definitionValue(res), "artifacts": artifactList(res)}
	return registry.OK(data).Warn("build-only: single-node pipeline compiled but not started/upserted").Warn(res.Warnings...), nil
}

func (d *Deps) compileDAG(ctx context.Context, req registry.Request) (*registry.Result, error) {
	in, _, err := d.compileInput(req.Args)
	if err != nil {
		return nil, err
	}
	res, err := compiler.Compile(ctx, in, progress(ctx))
	if err != nil {
		return nil, compileError(err)
	}
	data := map[string]any{"pipeline_name": res.PipelineName, "step_count": len(res.Steps), "upserted": false,
		"definition": definitionValue(res), "artifacts": artifactList(res)}
	upsert, _ := req.Args["upsert"].(bool)
	if !upsert {
		return registry.OK(data).Warn("build-only: pipeline definition compiled but not upserted to SageMaker").
			Warn(res.Warnings...).WithMeta("upserted", false), nil
	}
	role, _ := req.Args["role"].(string)
	if role == "" && res.Role == "" {
		return nil, registry.Errorf(registry.CodeInvalidInput, "'role' is required to upsert a pipeline to SageMaker")
	}
	region := d.Opts.AWSRegion
	if region == "" {
		region = res.Region
	}
	client, err := sagemaker.NewClient(ctx, sagemaker.ClientOptions{Region: region,
		S3Endpoint: d.Opts.AWSEndpoint, SageMakerEndpoint: d.Opts.AWSEndpoint})
	if err != nil {
		return nil, registry.Errorf(registry.CodeUpsertFailed, "AWS client: %v", err)
	}
	rep, err := compiler.Upsert(ctx, client, res, role, progress(ctx))
	if err != nil {
		return nil, compileError(err)
	}
	data["upserted"] = true
	for k, v := range toMap(rep) {
		data[k] = v
	}
	return registry.OK(data).Warn(res.Warnings...).WithMeta("upserted", true), nil
}
