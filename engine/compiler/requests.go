package compiler

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/stepcode"
	"github.com/cursus-dev/cursus/engine/steps"
)

// This file holds what makes a request behave on SageMaker as the SDK's
// would: execution-scoped output paths, tags, job environments, the model
// repack step, transform data processing and the checks that refuse what
// SageMaker would reject.

// ExecutionScopedField is the config switch of the output layout: true
// (the default) puts the execution id after the prefix, as the SDK does,
// so repeated or concurrent runs never read each other's files; false
// keeps the fixed <prefix>/<step>/… layout.
const ExecutionScopedField = "execution_scoped_outputs"

func executionScoped(c *config.Config) bool {
	if v, ok := c.Get(ExecutionScopedField); ok {
		if b, ok := v.(bool); ok {
			return b
		}
	}
	return true
}

// outputRoot is where every generated output path starts.
func outputRoot(scoped bool) []any {
	root := []any{sagemaker.Param(PrefixParameter)}
	if scoped {
		root = append(root, sagemaker.Execution("PipelineExecutionId"))
	}
	return root
}

// configTags are the config's tags as request tags, sorted by key.
func configTags(c *config.Config) []sagemaker.Tag {
	m := getMap(c, "tags")
	var out []sagemaker.Tag
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, _ := formatEnv(m[k])
		out = append(out, sagemaker.Tag{Key: k, Value: v})
	}
	return out
}

// childrenOf lists each node's children in DAG order.
func childrenOf(order []string, parentsOf map[string][]string, nodes map[string]*node) map[string][]*node {
	out := map[string][]*node{}
	for _, name := range order {
		for _, p := range parentsOf[name] {
			if nodes[name] != nil {
				out[p] = append(out[p], nodes[name])
			}
		}
	}
	return out
}

// jobEnvironment is a training or tuning job's Environment: the contract's
// variables (as a processing job gets them) and the region, so scripts
// that read it run as the configured region.
func jobEnvironment(n *node) (map[string]any, []string) {
	env, _, warns := ContainerFor(n.iface, n.cfg).definitionParts()
	if region := getString(n.cfg, "aws_region"); region != "" {
		env["AWS_REGION"] = region
		env["AWS_DEFAULT_REGION"] = region
	}
	return env, warns
}

// ---- images: the instance type that runs the image ----

// runtimeInstanceType is the instance type a model step's image runs on:
// the transform's that uses the model (a model created for batch
// transform runs on the transform's instances), else the model's own
// instance_type. Transforms that disagree on the processor are reported.
func (b *builder) runtimeInstanceType(n *node) (string, []string) {
	own := getString(n.cfg, "instance_type")
	var chosen string
	var warns []string
	for _, c := range b.children[n.name] {
		if c.handler != HandlerTransform {
			continue
		}
		it := orDefault(getString(c.cfg, "transform_instance_type"), "ml.m5.large")
		if !sagemaker.ValidTransformInstanceType(it) {
			continue // the transform refuses it, naming the valid types
		}
		switch {
		case chosen == "":
			chosen = it
		case sagemaker.Processor(it) != sagemaker.Processor(chosen):
			warns = append(warns, fmt.Sprintf("transforms using this model run on %s and %s, which need different images; the image follows %s (create one model step per transform instance kind)", chosen, it, chosen))
		}
	}
	if chosen == "" {
		return own, nil
	}
	if n.cfg.Explicit["instance_type"] && own != chosen {
		warns = append(warns, fmt.Sprintf("config field instance_type %s is not used for the image: the transform that runs the model uses %s", own, chosen))
	}
	return chosen, warns
}

// ---- transform ----

// checkTransformInstance refuses an instance type batch transform does not
// run on, listing the valid ones of its family (or all).
func checkTransformInstance(field, it string) error {
	if sagemaker.ValidTransformInstanceType(it) {
		return nil
	}
	valid := sagemaker.TransformInstanceTypes(sagemaker.InstanceFamily(it))
	hint := "valid types of that family: " + strings.Join(valid, ", ")
	if len(valid) == 0 {
		hint = "batch transform runs on none of its family (no Graviton, t or r5 instances); valid families: m4, m5, m6i, m7i, c4, c5, c6i, c7i, r6i, r7i, p2, p3, g4dn, g5, g6, inf2, trn1"
	}
	return fmt.Errorf("config field %s: %q is not a batch transform instance type; %s", field, it, hint)
}

// dataProcessing is the transform's DataProcessing block from the config's
// join_source, input_filter and output_filter (nil when none is set).
func dataProcessing(c *config.Config) *sagemaker.DataProcessing {
	dp := sagemaker.DataProcessing{InputFilter: getString(c, "input_filter"), JoinSource: getString(c, "join_source"),
		OutputFilter: getString(c, "output_filter")}
	if dp == (sagemaker.DataProcessing{}) {
		return nil
	}
	return &dp
}

// ---- tuning ----

// checkTuning refuses tuning settings SageMaker rejects, naming the field,
// its value and the fix.
func checkTuning(strategy, earlyStopping, objective string, ranges sagemaker.ParameterRanges, metrics []sagemaker.MetricDefinition) error {
	if strategy == "Hyperband" && earlyStopping != "Off" {
		return fmt.Errorf("early_stopping_type %q with tuning_strategy Hyperband: SageMaker requires Off (Hyperband stops trials itself); set early_stopping_type: \"Off\"", earlyStopping)
	}
	if strategy == "Grid" {
		var numeric []string
		for _, r := range ranges.ContinuousParameterRanges {
			numeric = append(numeric, r.Name+" (continuous)")
		}
		for _, r := range ranges.IntegerParameterRanges {
			numeric = append(numeric, r.Name+" (integer)")
		}
		if len(numeric) > 0 {
			return fmt.Errorf("search_space has %s with tuning_strategy Grid: Grid search takes categorical ranges only; list the values as search_space.categorical or use tuning_strategy Bayesian or Random",
				strings.Join(numeric, ", "))
		}
	}
	if len(metrics) == 0 {
		return fmt.Errorf("objective_metric_name %q: no metric_definitions, so SageMaker cannot read the metric from the training log; add metric_definitions [{Name: %q, Regex: <regex whose first group is the value>}]", objective, objective)
	}
	var names []string
	for _, m := range metrics {
		if m.Name == objective {
			return nil
		}
		names = append(names, m.Name)
	}
	return fmt.Errorf("objective_metric_name %q is produced by no metric definition (metric_definitions name %s); set objective_metric_name to one of them or add a definition named %q",
		objective, strings.Join(names, ", "), objective)
}

// ---- framework requirements ----

// imagePackages are the Python packages the framework images ship; a
// declared framework requirement outside them needs a requirements.txt in
// the source directory, which script mode installs before the job runs.
var imagePackages = map[string][]string{
	"sklearn": {"pandas", "numpy", "scikit-learn", "scipy", "joblib"},
	"xgboost": {"xgboost", "pandas", "numpy", "scikit-learn", "scipy"},
	"pytorch": {"torch", "torchvision", "pandas", "numpy", "scikit-learn", "scipy"},
}

// requirementsFinding reports a caller's source directory that lacks the
// requirements.txt its interface's framework requirements need.
func (b *builder) requirementsFinding(n *node, loc codeLocation) []string {
	framework := imageFramework(n.iface.Compute)
	have, known := imagePackages[framework]
	if !known || getString(n.cfg, "image_uri") != "" || b.sources == nil || isS3(loc.dir) {
		return nil
	}
	var missing []string
	for _, pkg := range n.iface.Contract.FrameworkRequirements.Keys() {
		if !slices.Contains(have, strings.ToLower(pkg)) {
			spec, _ := n.iface.Contract.FrameworkRequirements.Get(pkg)
			missing = append(missing, pkg+spec)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	dir := loc.dir
	if loc.scriptOnly {
		dir = "."
	}
	if _, err := fs.Stat(b.sources, path.Join(dir, loc.entry)); err != nil {
		return nil // not the caller's code (missing, or built-in code is used)
	}
	if _, err := fs.Stat(b.sources, path.Join(dir, "requirements.txt")); err == nil {
		return nil
	}
	return []string{fmt.Sprintf("framework_requirements %s are not in the %s image and %s has no requirements.txt: the job fails on import; add requirements.txt listing %s to the source directory",
		strings.Join(missing, ", "), framework, path.Join(dir), strings.Join(missing, ", "))}
}

// ---- model repack ----

//go:embed repack/_repack_model.py
var repackScript []byte

// Repack constants, as the SDK's model repack uses them.
const (
	RepackScript        = "_repack_model.py"
	repackFramework     = "sklearn"
	repackVersion       = "1.2-1"
	repackInstanceType  = "ml.m5.large"
	repackStepSuffix    = "-RepackModel"
	modelCodeDir        = "/opt/ml/model/code"
	defaultModelArchive = "model.tar.gz"
)

// repack adds a Training step that unpacks modelData, puts the step's
// inference code under code/ and writes the new archive, as the SDK's
// _RepackModelStep does for a framework model with an entry point. It
// returns the repacked archive's property reference.
func (b *builder) repack(n *node, modelData any, loc codeLocation, codeURI string, parents []string) (any, error) {
	region := getString(n.cfg, "aws_region")
	image, err := sagemaker.ImageURI(sagemaker.ImageRequest{Framework: repackFramework, Version: repackVersion, Region: region,
		Scope: sagemaker.ScopeTraining, InstanceType: repackInstanceType})
	if err != nil {
		return nil, fmt.Errorf("model repack: %w", err)
	}
	name := sagemaker.BoundName(n.stepName+repackStepSuffix, sagemaker.MaxStepNameLength)
	scriptTar, err := packFiles(map[string][]byte{RepackScript: repackScript}, nil)
	if err != nil {
		return nil, err
	}
	submit := b.arts.add(KindGenerated, "", sagemaker.SourceDirTarball, scriptTar, name)
	archive := defaultModelArchive
	if s, ok := modelData.(string); ok && strings.HasSuffix(s, ".tar.gz") {
		archive = path.Base(s)
	}
	output := sagemaker.JoinPath(append(slices.Clone(b.root), n.iface.OutputPathToken(), "repack")...)
	args := sagemaker.TrainingArgs{
		AlgorithmSpecification: sagemaker.AlgorithmSpecification{TrainingImage: image, TrainingInputMode: "File"},
		OutputDataConfig:       sagemaker.OutputDataConfig{S3OutputPath: output},
		StoppingCondition:      sagemaker.StoppingCondition{MaxRuntimeInSeconds: sagemaker.DefaultTrainingRuntime},
		ResourceConfig:         sagemaker.ResourceConfig{InstanceCount: 1, InstanceType: repackInstanceType, VolumeSizeInGB: sagemaker.DefaultTrainingVolumeGB},
		RoleArn:                getString(n.cfg, "role"),
		InputDataConfig:        []sagemaker.Channel{sagemaker.NewChannel("training", modelData), sagemaker.NewChannel("code", codeURI)},
		HyperParameters: map[string]any{
			"inference_script":              jsonString(path.Base(loc.entry)),
			"model_archive":                 jsonString(archive),
			"sagemaker_program":             jsonString(RepackScript),
			"sagemaker_submit_directory":    jsonString(submit),
			"sagemaker_container_log_level": "20",
			"sagemaker_region":              jsonString(region),
		},
		// The SDK's repack keeps the debugger hook and turns the profiler off.
		DebugHookConfig: &sagemaker.DebugHookConfig{S3OutputPath: output, CollectionConfigurations: []any{}},
		ProfilerConfig:  &sagemaker.ProfilerConfig{DisableProfiler: true},
		Tags:            configTags(n.cfg),
	}
	step := sagemaker.Step{Name: name, Type: sagemaker.TypeTraining, DependsOn: parents, Arguments: args,
		CacheConfig: &sagemaker.CacheConfig{Enabled: getBool(n.cfg, "enable_caching"), ExpireAfter: sagemaker.DefaultCacheExpiry}}
	b.added = append(b.added, step)
	return sagemaker.StepProperty(name, "ModelArtifacts.S3ModelArtifacts"), nil
}

// needsRepack: the model archive comes straight from a training or tuning
// job (not from a Package step, whose archive already holds code/), so the
// serving container would find no code inside it.
func (b *builder) needsRepack(n *node, dep string) bool {
	p := b.producers[n.name][dep]
	return p != nil && isTrainer(p)
}

// servingEnvironment is the model container's environment when the code
// is inside the archive: what the SDK sets on a repacked model.
func servingEnvironment(entry, region string) map[string]any {
	return map[string]any{
		"SAGEMAKER_PROGRAM":             path.Base(entry),
		"SAGEMAKER_SUBMIT_DIRECTORY":    modelCodeDir,
		"SAGEMAKER_CONTAINER_LOG_LEVEL": "20",
		"SAGEMAKER_REGION":              region,
	}
}

// modelDependency names the dependency a model step reads its archive from.
func modelDependency(inputs []boundInput) (boundInput, bool) {
	for _, bi := range inputs {
		if bi.spec.Type == steps.TypeModelArtifacts {
			return bi, true
		}
	}
	if len(inputs) > 0 {
		return inputs[0], true
	}
	return boundInput{}, false
}

var errNoModelData = errors.New("required input model_data not provided: wire a training step's model artifacts")

// UnusedConfigFields are config fields the interface declares that no
// SageMaker request reads, keyed "<step type>.<field>" (or "<field>" for
// every step type), with the reason; the compile report lists them per
// step (StepReport.UnusedFields).
var UnusedConfigFields = map[string]string{
	"skip_hyperparameters_s3_uri":          "hyperparameters ship inside sourcedir.tar.gz (hyperparams/hyperparameters.json), never as an S3 channel, so there is no channel to skip",
	"Payload.expected_tps":                 "a load-test setting of the Amazon-internal deployment flow; no SageMaker Pipelines request takes it",
	"Payload.load_test_instance_type_list": "a load-test setting of the Amazon-internal deployment flow; no SageMaker Pipelines request takes it",
	"Payload.max_acceptable_error_rate":    "a load-test setting of the Amazon-internal deployment flow; no SageMaker Pipelines request takes it",
	"Payload.max_latency_in_millisecond":   "a load-test setting of the Amazon-internal deployment flow; no SageMaker Pipelines request takes it",
	"XGBoostModel.initial_instance_count":  modelDeployOnly, "PyTorchModel.initial_instance_count": modelDeployOnly,
	"XGBoostModel.max_concurrent_invocations": modelDeployOnly, "PyTorchModel.max_concurrent_invocations": modelDeployOnly,
	"XGBoostModel.max_payload_size": modelDeployOnly, "PyTorchModel.max_payload_size": modelDeployOnly,
	"XGBoostTuning.disable_debugger": tuningNoDebug, "PyTorchTuning.disable_debugger": tuningNoDebug, "LightGBMTuning.disable_debugger": tuningNoDebug,
	"XGBoostTuning.disable_profiler": tuningNoDebug, "PyTorchTuning.disable_profiler": tuningNoDebug, "LightGBMTuning.disable_profiler": tuningNoDebug,
	"DummyTraining.framework_version": "the step runs on the scikit-learn processing image, whose version is processing_framework_version",
}

const (
	modelDeployOnly = "an endpoint deployment setting: CreateModel takes none (a batch transform's own fields size its jobs)"
	tuningNoDebug   = "tuning jobs take no debugger or profiler configuration"
	noPython        = "the step's image tag carries no Python version (the image has one Python), so no request takes it"
)

func init() {
	for _, st := range []string{"CurrencyConversion", "FeatureSelection", "MissingValueImputation", "PercentileModelCalibration", "RiskTableMapping",
		"StratifiedSampling", "XGBoostModel", "XGBoostModelEval", "XGBoostModelInference", "XGBoostTraining", "XGBoostTuning", "DummyTraining"} {
		UnusedConfigFields[st+".py_version"] = noPython
	}
	for k := range UnusedConfigFields {
		st, field, ok := strings.Cut(k, ".")
		if !ok {
			st, field = "", k
		}
		unusedByStep[st] = append(unusedByStep[st], field)
	}
}

// unusedFields lists, as "<field>: <reason>", the fields of a node's
// config that no request reads; compile.with_report shows them per step.
// It looks up the few listed fields in the config rather than every config
// field in the list: sorting and looking up every field name of every node
// was a tenth of a compile's allocations.
func unusedFields(n *node) []string {
	var fields []string
	for _, f := range unusedByStep[""] {
		if _, ok := n.cfg.Values[f]; ok {
			fields = append(fields, f)
		}
	}
	for _, f := range unusedByStep[n.cfg.StepType] {
		if _, ok := n.cfg.Values[f]; ok && !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	slices.Sort(fields)
	out := make([]string, len(fields))
	for i, f := range fields {
		reason, ok := UnusedConfigFields[n.cfg.StepType+"."+f]
		if !ok {
			reason = UnusedConfigFields[f]
		}
		out[i] = f + ": " + reason
	}
	return out
}

// unusedByStep holds the field names of UnusedConfigFields by step type
// ("" for the fields listed for every step type).
var unusedByStep = map[string][]string{}

// modelStepOfFamily is the model step type whose built-in inference code
// serves a model family.
var modelStepOfFamily = map[string]string{"xgboost": "XGBoostModel", "pytorch": "PyTorchModel", "lightgbm": "LightGBMModel"}

// inferenceCode is the inference code a registration repacks into the
// model: the config's (source_dir, inference_entry_point) when the caller
// has it, else the built-in inference code of the model family the
// training step upstream makes.
func (b *builder) inferenceCode(n *node) (codeSource, error) {
	loc := codeFor(n)
	if isS3(loc.dir) {
		return codeSource{loc: loc}, nil
	}
	script := loc.entry
	if !loc.scriptOnly {
		script = path.Join(loc.dir, loc.entry)
	}
	has, err := isFile(b.sources, script)
	if err != nil {
		return codeSource{}, err
	}
	if has {
		return codeSource{fsys: b.sources, loc: loc}, nil
	}
	family := ""
	if n.trainer != nil && n.trainer.iface.Compute != nil {
		family = n.trainer.iface.Compute.ModelFamily
	}
	if dir, ok := stepcode.Dir(modelStepOfFamily[family]); ok {
		entry := path.Base(loc.entry)
		if has, _ := isFile(stepcode.FS, path.Join(dir, entry)); has {
			return codeSource{fsys: stepcode.FS, loc: codeLocation{dir: dir, entry: entry}, builtin: dir}, nil
		}
	}
	return codeSource{}, fmt.Errorf("the model comes straight from %s and must be repacked with its inference code, but %s is not in the call's files or the workspace "+
		"and the built-in inference code of model family %q has no %s; set source_dir and inference_entry_point to your inference code, or register a Package step's model",
		trainerName(n), cleanRel(script), family, path.Base(loc.entry))
}

func trainerName(n *node) string {
	if n.trainer != nil {
		return n.trainer.stepName
	}
	return "a training job"
}
