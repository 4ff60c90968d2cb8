package compiler

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/steps"
)

type builder struct {
	// ctx is the compile's: a builder lives for one Compile call, and
	// reading a large source folder stops when the call ends.
	ctx      context.Context
	sources  fs.FS
	arts     *artifactSet
	prefix   sagemaker.Get
	pipeline string
	// root starts every generated output path (outputRoot).
	root []any
	// producers maps a node's dependency to the node that feeds it;
	// children lists each node's children in DAG order.
	producers map[string]map[string]*node
	children  map[string][]*node
	// added collects steps the node being built needs before it (a model
	// repack); assemble takes them after each build.
	added []sagemaker.Step
	// missing collects the steps with no code, standIns those built with
	// built-in code in place of a named script (see code).
	missing  []MissingCode
	standIns []StandIn
	// scripts holds each script file read so far, by its manifest name,
	// with its digest: nodes of one step type share their script, and a
	// large DAG read and hashed it once per node.
	scripts map[string]scriptFile
	// images holds each framework image URI looked up so far: nodes of one
	// step type ask for the same image, and the lookup builds a tag
	// template replacer each time.
	images map[sagemaker.ImageRequest]string
}

type scriptFile struct {
	data   []byte
	digest string
}

// boundInput is one dependency with its value: a property reference, a
// config-supplied URI or a manual input.
type boundInput struct {
	dep   string
	spec  steps.Dependency
	port  steps.InputPort
	hasPt bool
	value any
}

// build makes one step.
func (b *builder) build(n *node, in map[string]any, parents []string) (sagemaker.Step, StepReport, []string, error) {
	report := StepReport{Node: n.name, StepName: n.stepName, StepType: n.cfg.StepType, JobType: n.cfg.JobType,
		ConfigKey: n.cfg.Key, ConfigClass: n.cfg.ConfigClass, Builder: n.iface.BuilderName(), Handler: n.handler,
		Confidence: n.res.Confidence, Method: n.res.Method, Reasons: n.res.Reasons, Inputs: map[string]string{},
		DependsOn: parents}
	inputs, inputWarns, err := b.inputs(n, in)
	if err != nil {
		return sagemaker.Step{}, report, nil, err
	}
	for _, bi := range inputs {
		report.Inputs[bi.dep] = describe(bi.value)
	}
	step := sagemaker.Step{Name: n.stepName, DependsOn: parents}
	cache := &sagemaker.CacheConfig{Enabled: getBool(n.cfg, "enable_caching"), ExpireAfter: sagemaker.DefaultCacheExpiry}
	var warns []string
	switch n.handler {
	case HandlerProcessing:
		step.Type, step.CacheConfig = sagemaker.TypeProcessing, cache
		step.Arguments, warns, err = b.processing(n, inputs)
	case HandlerTraining:
		step.Type, step.CacheConfig = sagemaker.TypeTraining, cache
		step.Arguments, warns, err = b.training(n, inputs)
	case HandlerTuning:
		step.Type, step.CacheConfig = sagemaker.TypeTuning, cache
		step.Arguments, warns, err = b.tuning(n, inputs)
	case HandlerModel:
		// CreateModel steps take no cache config.
		step.Type = sagemaker.TypeModel
		step.Arguments, warns, err = b.model(n, inputs, parents)
		if len(b.added) > 0 {
			step.DependsOn = append(slices.Clone(parents), b.added[0].Name)
		}
	case HandlerTransform:
		step.Type = sagemaker.TypeTransform
		if cache.Enabled { // the SDK writes a transform's cache config only when caching is on
			step.CacheConfig = cache
		}
		step.Arguments, err = b.transform(n, inputs)
	case HandlerRegisterModel:
		step.Type = sagemaker.TypeRegisterModel
		step.Arguments, warns, err = b.register(n, inputs, parents)
		if len(b.added) > 0 {
			step.DependsOn = append(slices.Clone(parents), b.added[0].Name)
		}
	default:
		err = fmt.Errorf("no handler %q", n.handler)
	}
	report.SageMakerType = step.Type
	if err != nil {
		return sagemaker.Step{}, report, nil, err
	}
	warns = append(append(inputWarns, trainerConflicts(n)...), warns...)
	report.UnusedFields = unusedFields(n)
	for i, w := range warns {
		warns[i] = fmt.Sprintf("node %q: %s", n.name, w)
	}
	return step, report, warns, nil
}

func describe(v any) string {
	switch t := v.(type) {
	case sagemaker.Get:
		return t.Path
	case string:
		return t
	}
	s, _ := formatEnv(v)
	return s
}

// inputs lists the step's dependencies that have a value, in spec order.
// A dependency named in contract.input_source_overrides takes its value
// from that config field unless an upstream output or manual input feeds
// it (see configInput). Missing required inputs are errors; an optional
// input whose local path does not exist is dropped with a warning.
func (b *builder) inputs(n *node, in map[string]any) ([]boundInput, []string, error) {
	skip := map[string]bool{}
	for _, s := range n.iface.Contract.SkipInputs {
		skip[s] = true
	}
	var out []boundInput
	var missing, warns []string
	for _, dep := range n.iface.Spec.Dependencies.Keys() {
		if skip[dep] {
			continue
		}
		spec, _ := n.iface.Spec.Dependencies.Get(dep)
		port, hasPt := n.iface.Contract.Inputs.Get(dep)
		value, ok := in[dep]
		if !ok {
			if field, has := n.iface.Contract.InputSourceOverrides.Get(dep); has {
				if s := getString(n.cfg, field); s != "" {
					uri, absent, err := b.configInput(n, field, s)
					switch {
					case err != nil:
						return nil, nil, err
					case uri != "":
						value, ok = uri, true
					case spec.IsRequired():
						return nil, nil, fmt.Errorf("required input %s: config field %s names %q, but %s", dep, field, s, absent)
					default:
						warns = append(warns, fmt.Sprintf("optional input %s left out: config field %s names %q, but %s", dep, field, s, absent))
					}
				}
			}
		}
		if !ok {
			if spec.IsRequired() {
				missing = append(missing, dep)
			} else if method, unknown := unknownConfigMethod(n, dep); unknown {
				warns = append(warns, fmt.Sprintf("optional input %s left out: the interface takes it from the Cursus config method %s(), whose result is not known here", dep, method))
			}
			continue
		}
		out = append(out, boundInput{dep: dep, spec: spec, port: port, hasPt: hasPt, value: value})
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("required input(s) %s not provided (no upstream output matched and no config source)", strings.Join(missing, ", "))
	}
	return out, warns, nil
}

// configInput resolves the value of a config field that feeds an input.
// An s3:// URI is used as is. Anything else is a file or folder relative
// to the step's source directory (as scripts are): a file is uploaded as
// one content-addressed object, a folder as its files under one
// content-addressed prefix (so the container sees the files, not an
// archive), and the input reads that object or prefix. The reference
// passes the value through literally, which SageMaker rejects for a local
// path. When there is nothing to upload, uri is "" and absent says why.
func (b *builder) configInput(n *node, field, value string) (uri, absent string, err error) {
	if isS3(value) {
		return value, "", nil
	}
	if path.IsAbs(value) {
		return "", "", fmt.Errorf("config field %s: %q must be an s3:// URI or a path relative to the step's source directory", field, value)
	}
	dir := codeDir(n)
	if isS3(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + strings.TrimPrefix(value, "./"), "", nil
	}
	local := path.Join(dir, value)
	if local == ".." || strings.HasPrefix(local, "../") {
		return "", "", fmt.Errorf("config field %s: %q leaves the workspace (resolved against source directory %s)", field, value, dir)
	}
	if b.sources == nil {
		return "", "there is no workspace to read " + local + " from", nil
	}
	st, err := fs.Stat(b.sources, local)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", local + " does not exist in the workspace", nil
	case err != nil:
		return "", "", fmt.Errorf("config field %s: %w", field, err)
	case st.IsDir():
		files, missing, err := collectDir(b.ctx, b.sources, local)
		if errors.Is(err, errTooLarge) {
			return "", "", fmt.Errorf("config field %s: folder %w; upload it to S3 and set the field to its s3:// URI", field, err)
		}
		if err != nil {
			return "", "", fmt.Errorf("config field %s: %w", field, err)
		}
		// An empty prefix would fail the job when SageMaker downloads it.
		if missing || len(files) == 0 {
			return "", "folder " + local + " has no files to upload (hidden files, __pycache__ and symlinks are left out)", nil
		}
		name := path.Base(local)
		if name == "." {
			name = "input"
		}
		return b.arts.addDir(local, name, files, n.stepName), "", nil
	case !st.Mode().IsRegular():
		return "", "", fmt.Errorf("config field %s: %s is not a regular file or a folder", field, local)
	case st.Size() > MaxSourceDirBytes:
		return "", "", fmt.Errorf("config field %s: %s is %v; upload it to S3 and set the field to its s3:// URI", field, local, errTooLarge)
	}
	data, missing, err := readSource(b.sources, local)
	if err != nil {
		return "", "", fmt.Errorf("config field %s: %w", field, err)
	}
	if missing {
		return "", local + " does not exist in the workspace", nil
	}
	return b.arts.add(KindInput, local, path.Base(local), data, n.stepName), "", nil
}

// outputPath is where a step output goes: <prefix>/<token>[/<job_type>]/<output>
// (steps.Interface.OutputSegments).
func (b *builder) outputPath(n *node, output string) sagemaker.Join {
	parts := slices.Clone(b.root)
	for _, seg := range n.iface.OutputSegments(n.cfg.JobType) {
		parts = append(parts, seg)
	}
	return sagemaker.JoinPath(append(parts, output)...)
}

// ---- images ----

var frameworkOfClass = map[string]string{
	"SKLearn": "sklearn", "XGBoost": "xgboost", "PyTorch": "pytorch",
	"SKLearnModel": "sklearn", "XGBoostModel": "xgboost", "PyTorchModel": "pytorch",
}

// imageFramework is the framework of the public image a compute section
// runs on ("" for custom images or when it cannot be told).
func imageFramework(c *steps.Compute) string {
	if c == nil {
		return ""
	}
	switch c.Kind {
	case "sklearn", "xgboost":
		return c.Kind
	case "framework", "estimator", "model":
		if c.FrameworkName != "" {
			return strings.ToLower(c.FrameworkName)
		}
		return frameworkOfClass[c.SDKClass]
	}
	return ""
}

// frameworkVersion is the framework version a node's config gives its
// image.
func frameworkVersion(n *node) string {
	c := n.iface.Compute
	version := ""
	if c != nil && c.FrameworkVersionField != "" {
		version = getString(n.cfg, c.FrameworkVersionField)
	}
	if version == "" && c != nil {
		version = c.FrameworkVersionDefault
	}
	if version == "" {
		version = getString(n.cfg, "framework_version")
	}
	return version
}

// trainerConflicts reports where a node's own framework or model family
// disagrees with the training step its model comes from. A mismatch is
// said, never silently resolved: the node's explicit choice stands.
func trainerConflicts(n *node) []string {
	var out []string
	if isTrainer(n) && n.iface.Compute != nil && n.iface.Compute.ModelFamily != "" {
		if mc := getString(n.cfg, "model_class"); mc != "" && !strings.EqualFold(mc, n.iface.Compute.ModelFamily) {
			out = append(out, fmt.Sprintf("model_class %q differs from the model family %s trains (%s); the pipeline name and description use %q",
				mc, n.cfg.StepType, n.iface.Compute.ModelFamily, mc))
		}
	}
	t := n.trainer
	if t == nil || n.handler != HandlerModel {
		return out
	}
	if own, theirs := imageFramework(n.iface.Compute), imageFramework(t.iface.Compute); own != "" && theirs != "" && own != theirs &&
		getString(n.cfg, "image_uri") == "" {
		out = append(out, fmt.Sprintf("%s serves the model with the %s image, but it was trained by %s on the %s image; use the model step of that framework or set image_uri",
			n.cfg.StepType, own, t.stepName, theirs))
	}
	return out
}

// image picks the container: the config's image_uri (or the field the
// interface names) wins; otherwise the public framework image.
func (b *builder) image(n *node, scope, instanceType string) (string, error) {
	c := n.iface.Compute
	field := "image_uri"
	if c != nil && c.ImageURIField != "" {
		field = c.ImageURIField
	}
	if uri := getString(n.cfg, field); uri != "" {
		return uri, nil
	}
	if field != "image_uri" {
		if uri := getString(n.cfg, "image_uri"); uri != "" {
			return uri, nil
		}
	}
	if c == nil {
		return "", fmt.Errorf("the step interface has no compute section; set %s in the config", field)
	}
	if c.Kind == "byo_container" || c.Kind == "script" {
		return "", fmt.Errorf("compute kind %s runs a custom image: set %s in the config", c.Kind, field)
	}
	framework := imageFramework(c)
	if framework == "" {
		return "", fmt.Errorf("cannot tell the framework image of compute kind %q (sdk_class %q): set %s in the config", c.Kind, c.SDKClass, field)
	}
	version := frameworkVersion(n)
	py := ""
	if c.PyVersionField != "" {
		py = getString(n.cfg, c.PyVersionField)
	}
	region := getString(n.cfg, "aws_region")
	if c.LockTrainingRegion {
		region = "us-east-1"
	}
	req := sagemaker.ImageRequest{Framework: framework, Version: version, Region: region,
		Scope: scope, PyVersion: py, InstanceType: instanceType}
	if uri, ok := b.images[req]; ok {
		return uri, nil
	}
	uri, err := sagemaker.ImageURI(req)
	if err != nil {
		return "", err
	}
	if b.images == nil {
		b.images = map[sagemaker.ImageRequest]string{}
	}
	b.images[req] = uri
	return uri, nil
}

// ---- code ----

func sourceDir(c *config.Config, fields ...string) string {
	for _, f := range fields {
		if s := getString(c, f); s != "" {
			return s
		}
	}
	return ""
}

// codeLocation is where a step's code is read from.
type codeLocation struct {
	dir   string // source directory: workspace-relative, or an s3:// prefix
	entry string // entry script, relative to dir
	// scriptOnly: no source directory is configured and the script sits
	// at the workspace root, so the script alone is shipped — never the
	// whole workspace.
	scriptOnly bool
}

// codeFor is the step's source directory: the configured one, else the
// directory of its entry script.
func codeFor(n *node) codeLocation {
	field := "training_entry_point"
	switch n.handler {
	case HandlerProcessing:
		field = "processing_entry_point"
	case HandlerModel:
		field = "entry_point"
	case HandlerRegisterModel:
		field = "inference_entry_point"
	}
	entry := entryPoint(n, field)
	dir := sourceDir(n.cfg, "effective_source_dir", "source_dir")
	if n.handler == HandlerProcessing {
		dir = sourceDir(n.cfg, "effective_source_dir", "processing_source_dir", "source_dir")
	}
	if dir != "" {
		return codeLocation{dir: dir, entry: entry}
	}
	entry = cleanRel(entry)
	dir = path.Dir(entry)
	return codeLocation{dir: dir, entry: path.Base(entry), scriptOnly: dir == "."}
}

// codeDir is the directory local paths a step's config names for inputs
// are read relative to (as its scripts are).
func codeDir(n *node) string { return codeFor(n).dir }

func isS3(p string) bool { return strings.HasPrefix(p, "s3://") }

// code resolves a node's code (resolveCode). A step with no code anywhere
// is recorded, and the compile fails with a *MissingCodeError naming every
// such step once all are built.
func (b *builder) code(n *node) (codeSource, []string, error) {
	src, standIn, miss, err := resolveCode(b.sources, n)
	if err != nil {
		return codeSource{}, nil, err
	}
	if miss != nil {
		b.missing = append(b.missing, *miss)
		return codeSource{loc: codeFor(n), missing: true}, nil, nil
	}
	if standIn != nil {
		b.standIns = append(b.standIns, *standIn)
		return src, []string{standIn.String()}, nil
	}
	return src, nil, nil
}

// scriptArtifact registers the step's script file and returns its S3 URI.
func (b *builder) scriptArtifact(n *node, src codeSource) (string, error) {
	switch {
	case src.missing:
		return "", nil
	case isS3(src.loc.dir):
		return strings.TrimSuffix(src.loc.dir, "/") + "/" + src.loc.entry, nil
	}
	local := path.Join(src.loc.dir, src.loc.entry)
	name := src.local(local)
	f, ok := b.scripts[name]
	if !ok {
		data, err := fs.ReadFile(src.fsys, cleanRel(local))
		if err != nil {
			return "", err
		}
		f = scriptFile{data, digestOf(data)}
		if b.scripts == nil {
			b.scripts = map[string]scriptFile{}
		}
		b.scripts[name] = f
	}
	return b.arts.put(KindScript, name, f.digest, path.Base(src.loc.entry), f.data, n.stepName), nil
}

// sourceDirArtifact packs the step's source directory (plus extra
// generated files) and returns the tarball's S3 URI.
func (b *builder) sourceDirArtifact(n *node, src codeSource, extra map[string][]byte) (string, error) {
	loc := src.loc
	switch {
	case src.missing:
		return "", nil
	case isS3(loc.dir):
		return loc.dir, nil // already packed by the user
	case loc.scriptOnly:
		data, err := packScript(src.fsys, loc.entry, extra)
		if err != nil {
			return "", err
		}
		return b.arts.add(KindSourceDir, src.local(loc.entry), sagemaker.SourceDirTarball, data, n.stepName), nil
	}
	pack := packSourceDir
	if src.builtin != "" {
		pack = packBuiltinDir
	}
	data, err := pack(b.ctx, src.fsys, loc.dir, extra)
	if err != nil {
		return "", err
	}
	return b.arts.add(KindSourceDir, src.local(loc.dir), sagemaker.SourceDirTarball, data, n.stepName), nil
}

func entryPoint(n *node, field string) string {
	if s := getString(n.cfg, field); s != "" {
		return s
	}
	if n.iface.Contract.EntryPoint != "" {
		return n.iface.Contract.EntryPoint
	}
	return steps.CanonicalToSnake(n.cfg.StepType) + ".py"
}

// ---- Processing ----

func (b *builder) processing(n *node, inputs []boundInput) (sagemaker.ProcessingArgs, []string, error) {
	c := n.iface.Compute
	instanceType := getString(n.cfg, "effective_instance_type")
	if instanceType == "" {
		instanceType = getString(n.cfg, "processing_instance_type_small")
	}
	if c != nil && c.InstanceSizeMode == "fixed" {
		if s := getString(n.cfg, "processing_instance_type"); s != "" {
			instanceType = s
		}
	}
	image, err := b.image(n, sagemaker.ScopeTraining, instanceType)
	if err != nil {
		return sagemaker.ProcessingArgs{}, nil, err
	}
	env, jobArgs, warns := ContainerFor(n.iface, n.cfg).definitionParts()
	for _, a := range getStrings(n.cfg, "processing_script_arguments") {
		jobArgs = append(jobArgs, a) // after the contract's arguments, as Cursus passes them
	}
	args := sagemaker.ProcessingArgs{
		ProcessingResources: sagemaker.ProcessingResources{ClusterConfig: sagemaker.ClusterConfig{
			InstanceType: instanceType, InstanceCount: getInt(n.cfg, "processing_instance_count", 1),
			VolumeSizeInGB: getInt(n.cfg, "processing_volume_size", 30),
		}},
		AppSpecification: sagemaker.AppSpecification{ImageURI: image, ContainerArguments: jobArgs},
		RoleArn:          getString(n.cfg, "role"),
		Environment:      env,
		Tags:             configTags(n.cfg),
	}
	// Cursus leaves max_runtime_seconds unwired; a user who sets it expects
	// the job to be bounded by it.
	if secs := getInt(n.cfg, "max_runtime_seconds", 0); secs > 0 {
		args.StoppingCondition = &sagemaker.StoppingCondition{MaxRuntimeInSeconds: secs}
	}
	for _, bi := range inputs {
		if !bi.hasPt || bi.port.Path == "" {
			return args, nil, fmt.Errorf("no container path for input %q in the contract", bi.dep)
		}
		args.ProcessingInputs = append(args.ProcessingInputs, sagemaker.NewProcessingInput(bi.dep, bi.value, bi.port.Path))
	}
	var outs []sagemaker.ProcessingOutput
	for _, name := range n.iface.Spec.Outputs.Keys() {
		port, ok := n.iface.Contract.Outputs.Get(name)
		if !ok || port.Path == "" {
			continue // SDK-managed output without a container path
		}
		outs = append(outs, sagemaker.NewProcessingOutput(name, port.Path, b.outputPath(n, name)))
	}
	if len(outs) > 0 {
		args.ProcessingOutputConfig = &sagemaker.ProcessingOutputConfig{Outputs: outs}
	}
	kind := ""
	if c != nil {
		kind = c.Kind
	}
	var src codeSource
	if kind != "byo_container" || c == nil || len(c.ContainerEntrypoint) == 0 {
		var codeWarns []string
		if src, codeWarns, err = b.code(n); err != nil {
			return args, nil, err
		}
		warns = append(warns, codeWarns...)
	}
	loc := src.loc
	switch {
	case kind == "byo_container" && c != nil && len(c.ContainerEntrypoint) > 0:
		for _, e := range c.ContainerEntrypoint {
			args.AppSpecification.ContainerEntrypoint = append(args.AppSpecification.ContainerEntrypoint, e)
		}
	case kind == "xgboost" || kind == "framework":
		// A framework processor ships the whole source directory and a
		// runproc.sh that unpacks it and runs the script.
		tarURI, err := b.sourceDirArtifact(n, src, nil)
		if err != nil {
			return args, nil, err
		}
		runproc := runProc(loc.entry)
		procURI := b.arts.add(KindGenerated, "", sagemaker.RunProcScript, runproc, n.stepName)
		args.ProcessingInputs = append(args.ProcessingInputs,
			sagemaker.NewProcessingInput("code", tarURI, sagemaker.ProcessingCodeDir+"/"),
			sagemaker.NewProcessingInput("entrypoint", procURI, sagemaker.ProcessingEntrypointDir))
		args.AppSpecification.ContainerEntrypoint = []any{"/bin/bash", sagemaker.ProcessingEntrypointDir + "/" + sagemaker.RunProcScript}
	default:
		// A script processor ships the one script.
		uri, err := b.scriptArtifact(n, src)
		if err != nil {
			return args, nil, err
		}
		args.ProcessingInputs = append(args.ProcessingInputs, sagemaker.NewProcessingInput("code", uri, sagemaker.ProcessingCodeDir))
		args.AppSpecification.ContainerEntrypoint = []any{"python3", sagemaker.ProcessingCodeDir + "/" + path.Base(loc.entry)}
	}
	return args, warns, nil
}

// ---- Training ----

// channels turns the inputs into training channels. A port with declared
// channels (or the conventional input_path) fans out into one channel per
// split, each reading <value>/<split>/.
func channels(inputs []boundInput) ([]sagemaker.Channel, error) {
	var out []sagemaker.Channel
	for _, bi := range inputs {
		split := bi.port.Channels
		if len(split) == 0 && bi.dep == "input_path" {
			split = []string{"train", "val", "test"}
		}
		if len(split) > 0 {
			for _, ch := range split {
				out = append(out, sagemaker.NewChannel(ch, sagemaker.JoinPath(bi.value, ch+"/")))
			}
			continue
		}
		name := bi.dep
		if parts := strings.Split(bi.port.Path, "/"); strings.HasPrefix(bi.port.Path, "/opt/ml/input/data/") && len(parts) > 5 && parts[5] != "" {
			name = parts[5]
		}
		out = append(out, sagemaker.NewChannel(name, bi.value))
	}
	if len(out) == 0 {
		return nil, errors.New("no training inputs available: wire an upstream output to one of the step's dependencies")
	}
	return out, nil
}

type trainingParts struct {
	env       map[string]any
	image     string
	channels  []sagemaker.Channel
	static    map[string]any
	output    any
	resources sagemaker.ResourceConfig
	stopping  sagemaker.StoppingCondition
	warns     []string
}

func (b *builder) trainingParts(n *node, inputs []boundInput) (trainingParts, error) {
	var p trainingParts
	instanceType := getString(n.cfg, "training_instance_type")
	var err error
	if p.image, err = b.image(n, sagemaker.ScopeTraining, instanceType); err != nil {
		return p, err
	}
	if p.channels, err = channels(inputs); err != nil {
		return p, err
	}
	var envWarns []string
	p.env, envWarns = jobEnvironment(n)
	p.warns = append(p.warns, envWarns...)
	p.resources = sagemaker.ResourceConfig{InstanceCount: getInt(n.cfg, "training_instance_count", 1), InstanceType: instanceType,
		VolumeSizeInGB: getInt(n.cfg, "training_volume_size", sagemaker.DefaultTrainingVolumeGB)}
	p.stopping = sagemaker.StoppingCondition{MaxRuntimeInSeconds: getInt(n.cfg, "max_runtime_seconds", sagemaker.DefaultTrainingRuntime)}
	p.output = trainingOutput(b.root, n)
	c := n.iface.Compute
	if c != nil && c.Kind == "byo_container" && len(c.ContainerEntrypoint) > 0 {
		return p, nil // the image runs itself; no script mode
	}
	// Script mode: the source directory ships as sourcedir.tar.gz with the
	// hyperparameters at hyperparams/hyperparameters.json (where the
	// contract's hyperparameters input expects them under /opt/ml/code);
	// they are not passed as SageMaker hyperparameters, which script mode
	// would turn into command-line flags the script does not declare.
	var extra map[string][]byte
	if hp := getMap(n.cfg, "hyperparameters"); hp != nil {
		extra = map[string][]byte{"hyperparams/hyperparameters.json": []byte(jsonString(hp) + "\n")}
	}
	src, codeWarns, err := b.code(n)
	if err != nil {
		return p, err
	}
	p.warns = append(p.warns, codeWarns...)
	loc := src.loc
	if src.builtin == "" {
		p.warns = append(p.warns, b.requirementsFinding(n, loc)...)
	}
	// Built-in code reads its defaults from the data when no
	// hyperparameters reach it; a caller's script may need its own.
	if extra == nil && src.fsys != nil && src.builtin == "" && !loc.scriptOnly {
		if _, err := fs.Stat(src.fsys, path.Join(loc.dir, "hyperparams")); err != nil {
			p.warns = append(p.warns, fmt.Sprintf("no hyperparameters: the config has none and %s has no hyperparams/ folder for the script to read", loc.dir))
		}
	}
	tarURI, err := b.sourceDirArtifact(n, src, extra)
	if err != nil {
		return p, err
	}
	p.static = map[string]any{
		"sagemaker_program":             jsonString(path.Base(loc.entry)),
		"sagemaker_submit_directory":    jsonString(tarURI),
		"sagemaker_container_log_level": "20",
		"sagemaker_region":              jsonString(getString(n.cfg, "aws_region")),
	}
	return p, nil
}

// trainingOutput is the S3OutputPath of a training or tuning job: the
// config's output_path when set, else <prefix>/<output path token>
// (steps.Interface.OutputPathToken).
func trainingOutput(root []any, n *node) any {
	if s := getString(n.cfg, "output_path"); s != "" && n.cfg.Explicit["output_path"] {
		return s
	}
	return sagemaker.JoinPath(append(slices.Clone(root), n.iface.OutputPathToken())...)
}

func (b *builder) training(n *node, inputs []boundInput) (sagemaker.TrainingArgs, []string, error) {
	p, err := b.trainingParts(n, inputs)
	if err != nil {
		return sagemaker.TrainingArgs{}, nil, err
	}
	args := sagemaker.TrainingArgs{
		AlgorithmSpecification: sagemaker.AlgorithmSpecification{TrainingImage: p.image, TrainingInputMode: "File"},
		OutputDataConfig:       sagemaker.OutputDataConfig{S3OutputPath: p.output},
		StoppingCondition:      p.stopping,
		ResourceConfig:         p.resources,
		RoleArn:                getString(n.cfg, "role"),
		InputDataConfig:        p.channels,
		HyperParameters:        p.static,
		Environment:            p.env,
		Tags:                   configTags(n.cfg),
	}
	// The SDK's defaults: debugger hook and profiler on, both writing under
	// the job's output path.
	if !getBool(n.cfg, "disable_debugger") {
		args.DebugHookConfig = &sagemaker.DebugHookConfig{S3OutputPath: p.output, CollectionConfigurations: []any{}}
	}
	if !getBool(n.cfg, "disable_profiler") {
		args.ProfilerConfig = &sagemaker.ProfilerConfig{S3OutputPath: p.output}
	}
	return args, p.warns, nil
}

// ---- Tuning ----

func (b *builder) tuning(n *node, inputs []boundInput) (sagemaker.TuningArgs, []string, error) {
	p, err := b.trainingParts(n, inputs)
	if err != nil {
		return sagemaker.TuningArgs{}, nil, err
	}
	ranges, err := parameterRanges(getMap(n.cfg, "search_space"))
	if err != nil {
		return sagemaker.TuningArgs{}, nil, err
	}
	metric := getString(n.cfg, "objective_metric_name")
	if metric == "" {
		return sagemaker.TuningArgs{}, nil, errors.New("objective_metric_name is required for a tuning step")
	}
	static := p.static
	if static == nil {
		static = map[string]any{}
	}
	var metrics []sagemaker.MetricDefinition
	if v, ok := n.cfg.Get("metric_definitions"); ok {
		list, _ := v.([]any)
		for i, el := range list {
			m, _ := el.(map[string]any)
			name, _ := firstOf(m, "Name", "name").(string)
			regex, _ := firstOf(m, "Regex", "regex").(string)
			if name == "" || regex == "" {
				return sagemaker.TuningArgs{}, nil, fmt.Errorf("metric_definitions[%d] needs a name and a regex", i)
			}
			metrics = append(metrics, sagemaker.MetricDefinition{Name: name, Regex: regex})
		}
	}
	strategy := orDefault(getString(n.cfg, "tuning_strategy"), "Bayesian")
	earlyStopping := orDefault(getString(n.cfg, "early_stopping_type"), "Off")
	if err := checkTuning(strategy, earlyStopping, metric, ranges, metrics); err != nil {
		return sagemaker.TuningArgs{}, nil, err
	}
	limits := sagemaker.ResourceLimits{MaxNumberOfTrainingJobs: getInt(n.cfg, "max_jobs", 20), MaxParallelTrainingJobs: getInt(n.cfg, "max_parallel_jobs", 1)}
	if strategy == "Grid" {
		// Grid runs one trial per combination; the SDK leaves the limit out.
		limits.MaxNumberOfTrainingJobs = 0
		if n.cfg.Explicit["max_jobs"] {
			p.warns = append(p.warns, "config field max_jobs is not sent with tuning_strategy Grid: Grid runs one training job per combination of the categorical values")
		}
	}
	return sagemaker.TuningArgs{
		HyperParameterTuningJobConfig: sagemaker.TuningJobConfig{
			Strategy:                         strategy,
			HyperParameterTuningJobObjective: sagemaker.TuningObjective{Type: orDefault(getString(n.cfg, "objective_type"), "Maximize"), MetricName: metric},
			ResourceLimits:                   limits,
			ParameterRanges:                  ranges,
			TrainingJobEarlyStoppingType:     earlyStopping,
		},
		TrainingJobDefinition: sagemaker.TrainingJobDefinition{
			StaticHyperParameters:  static,
			RoleArn:                getString(n.cfg, "role"),
			OutputDataConfig:       sagemaker.OutputDataConfig{S3OutputPath: p.output},
			StoppingCondition:      p.stopping,
			ResourceConfig:         p.resources,
			AlgorithmSpecification: sagemaker.AlgorithmSpecification{TrainingImage: p.image, TrainingInputMode: "File", MetricDefinitions: metrics},
			InputDataConfig:        p.channels,
			Environment:            p.env,
		},
		Tags: configTags(n.cfg),
	}, p.warns, nil
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

// parameterRanges converts search_space {continuous: [{name, min, max,
// scaling}], integer: [...], categorical: [{name, values}]}. Bounds are
// strings in the request.
func parameterRanges(ss map[string]any) (sagemaker.ParameterRanges, error) {
	r := sagemaker.ParameterRanges{ContinuousParameterRanges: []sagemaker.NumericRange{},
		CategoricalParameterRanges: []sagemaker.CategoricalRange{}, IntegerParameterRanges: []sagemaker.NumericRange{}}
	if len(ss) == 0 {
		return r, errors.New("search_space needs at least one range")
	}
	numeric := func(kind string) ([]sagemaker.NumericRange, error) {
		list, _ := ss[kind].([]any)
		out := []sagemaker.NumericRange{}
		for i, el := range list {
			m, _ := el.(map[string]any)
			name, _ := m["name"].(string)
			lo, okLo := formatEnv(m["min"])
			hi, okHi := formatEnv(m["max"])
			if name == "" || !okLo || !okHi {
				return nil, fmt.Errorf("search_space.%s[%d] needs name, min and max", kind, i)
			}
			scaling, _ := m["scaling"].(string)
			out = append(out, sagemaker.NumericRange{Name: name, MinValue: lo, MaxValue: hi, ScalingType: orDefault(scaling, "Auto")})
		}
		return out, nil
	}
	var err error
	if r.ContinuousParameterRanges, err = numeric("continuous"); err != nil {
		return r, err
	}
	if r.IntegerParameterRanges, err = numeric("integer"); err != nil {
		return r, err
	}
	list, _ := ss["categorical"].([]any)
	for i, el := range list {
		m, _ := el.(map[string]any)
		name, _ := m["name"].(string)
		vals, _ := m["values"].([]any)
		if name == "" || len(vals) == 0 {
			return r, fmt.Errorf("search_space.categorical[%d] needs name and values", i)
		}
		cr := sagemaker.CategoricalRange{Name: name}
		for _, v := range vals {
			s, _ := formatEnv(v)
			cr.Values = append(cr.Values, s)
		}
		r.CategoricalParameterRanges = append(r.CategoricalParameterRanges, cr)
	}
	return r, nil
}

// ---- Model ----

func (b *builder) model(n *node, inputs []boundInput, parents []string) (sagemaker.ModelArgs, []string, error) {
	dep, ok := modelDependency(inputs)
	if !ok {
		return sagemaker.ModelArgs{}, nil, errNoModelData
	}
	modelData := dep.value
	instanceType, warns := b.runtimeInstanceType(n)
	image, err := b.image(n, sagemaker.ScopeInference, instanceType)
	if err != nil {
		return sagemaker.ModelArgs{}, nil, err
	}
	env := map[string]any{}
	for k, v := range getMap(n.cfg, "model_environment") {
		if s, ok := formatEnv(v); ok {
			env[k] = s
		}
	}
	src, codeWarns, err := b.code(n)
	if err != nil {
		return sagemaker.ModelArgs{}, nil, err
	}
	warns = append(warns, codeWarns...)
	loc := src.loc
	tarURI, err := b.sourceDirArtifact(n, src, nil)
	if err != nil {
		return sagemaker.ModelArgs{}, nil, err
	}
	region := getString(n.cfg, "aws_region")
	switch {
	case imageFramework(n.iface.Compute) != "pytorch" || getString(n.cfg, "image_uri") != "":
		// The XGBoost and scikit-learn images fetch the code from S3.
		env["SAGEMAKER_PROGRAM"] = path.Base(loc.entry)
		env["SAGEMAKER_SUBMIT_DIRECTORY"] = tarURI
		env["SAGEMAKER_CONTAINER_LOG_LEVEL"] = "20"
		env["SAGEMAKER_REGION"] = region
	default:
		// The PyTorch serving container loads handlers only from code/
		// inside the model archive: repack the trained model with the code,
		// as the SDK does, unless a Package step already did.
		if b.needsRepack(n, dep.dep) {
			if modelData, err = b.repack(n, modelData, loc, tarURI, parents); err != nil {
				return sagemaker.ModelArgs{}, nil, err
			}
		}
		maps.Copy(env, servingEnvironment(loc.entry, region))
	}
	return sagemaker.ModelArgs{
		ExecutionRoleArn: getString(n.cfg, "role"),
		PrimaryContainer: sagemaker.ContainerDefinition{Image: image, Environment: env, ModelDataURL: modelData},
		Tags:             configTags(n.cfg),
	}, warns, nil
}

// ---- Transform ----

func (b *builder) transform(n *node, inputs []boundInput) (sagemaker.TransformArgs, error) {
	var modelName, data any
	for _, bi := range inputs {
		isModel := strings.Contains(strings.ToLower(bi.dep), "model")
		if g, ok := bi.value.(sagemaker.Get); ok && strings.HasSuffix(g.Path, ".ModelName") {
			isModel = true
		}
		if isModel && modelName == nil {
			modelName = bi.value
		} else if data == nil {
			data = bi.value
		}
	}
	if modelName == nil {
		return sagemaker.TransformArgs{}, errors.New("required input model_name not provided: wire a model (CreateModel) step")
	}
	if data == nil {
		return sagemaker.TransformArgs{}, errors.New("required input processed_data not provided: wire a preprocessing step's output")
	}
	out := "transform_output"
	if keys := n.iface.Spec.Outputs.Keys(); len(keys) > 0 {
		out = keys[0]
	}
	instanceType := orDefault(getString(n.cfg, "transform_instance_type"), "ml.m5.large")
	if err := checkTransformInstance("transform_instance_type", instanceType); err != nil {
		return sagemaker.TransformArgs{}, err
	}
	return sagemaker.TransformArgs{
		ModelName: modelName,
		TransformInput: sagemaker.TransformInput{
			DataSource:  sagemaker.TransformDataSource{S3DataSource: sagemaker.TransformS3DataSource{S3DataType: "S3Prefix", S3URI: data}},
			ContentType: getString(n.cfg, "content_type"), SplitType: getString(n.cfg, "split_type"),
		},
		TransformOutput: sagemaker.TransformOutput{S3OutputPath: b.outputPath(n, out),
			Accept: getString(n.cfg, "accept"), AssembleWith: getString(n.cfg, "assemble_with")},
		TransformResources: sagemaker.TransformResources{InstanceCount: getInt(n.cfg, "transform_instance_count", 1),
			InstanceType: instanceType},
		DataProcessing: dataProcessing(n.cfg),
		Tags:           configTags(n.cfg),
	}, nil
}

// ---- RegisterModel ----

func (b *builder) register(n *node, inputs []boundInput, parents []string) (sagemaker.RegisterModelArgs, []string, error) {
	var modelData, payload any
	var metrics *sagemaker.ModelMetrics
	modelDep := ""
	for _, bi := range inputs {
		switch {
		case bi.spec.Type == steps.TypePayloadSamples || strings.Contains(strings.ToLower(bi.dep), "payload"):
			if payload == nil {
				payload = bi.value
			}
		case bi.dep == "model_metrics":
			// The evaluation writes metrics.json into its metrics output.
			metrics = &sagemaker.ModelMetrics{ModelQuality: sagemaker.MetricsReports{Statistics: sagemaker.MetricsSource{
				ContentType: "application/json", S3URI: sagemaker.JoinPath(bi.value, "metrics.json")}}}
		case modelData == nil:
			modelData, modelDep = bi.value, bi.dep
		}
	}
	if modelData == nil {
		return sagemaker.RegisterModelArgs{}, nil, errors.New("required input model not provided: wire a packaged model or training artifacts")
	}
	group := getString(n.cfg, "model_package_group_name")
	if group == "" {
		return sagemaker.RegisterModelArgs{}, nil, errors.New("model_package_group_name is required for a registration step")
	}
	instances := getStrings(n.cfg, "inference_instance_types")
	itype := "ml.m5.large"
	if len(instances) > 0 {
		itype = instances[0]
	}
	image, warns, err := b.registrationImage(n, itype)
	if err != nil {
		return sagemaker.RegisterModelArgs{}, nil, err
	}
	for _, it := range getStrings(n.cfg, "transform_instance_types") {
		if err := checkTransformInstance("transform_instance_types", it); err != nil {
			return sagemaker.RegisterModelArgs{}, nil, err
		}
	}
	// The container serves the code inside the archive: a Package step's
	// archive has code/; a model straight from a training or tuning job is
	// repacked with the inference code first, as the SDK does.
	loc := codeFor(n)
	if b.needsRepack(n, modelDep) {
		src, err := b.inferenceCode(n)
		if err != nil {
			return sagemaker.RegisterModelArgs{}, nil, err
		}
		codeURI, err := b.sourceDirArtifact(n, src, nil)
		if err != nil {
			return sagemaker.RegisterModelArgs{}, nil, err
		}
		if modelData, err = b.repack(n, modelData, src.loc, codeURI, parents); err != nil {
			return sagemaker.RegisterModelArgs{}, nil, err
		}
	}
	env := ContainerFor(n.iface, n.cfg).Environment
	container := servingEnvironment(loc.entry, getString(n.cfg, "aws_region"))
	for k, v := range env {
		if _, set := container[k]; !set {
			container[k] = v
		}
	}
	return sagemaker.RegisterModelArgs{
		ModelPackageGroupName:   group,
		ModelPackageDescription: orDefault(getString(n.cfg, "model_description"), getString(descriptionConfig(n), "pipeline_description")),
		InferenceSpecification: sagemaker.InferenceSpecification{
			Containers:                              []sagemaker.PackageContainer{{Image: image, Environment: container, ModelDataURL: modelData}},
			SupportedContentTypes:                   getStrings(n.cfg, "content_types"),
			SupportedResponseMIMETypes:              getStrings(n.cfg, "response_types"),
			SupportedRealtimeInferenceInstanceTypes: instances,
			SupportedTransformInstanceTypes:         getStrings(n.cfg, "transform_instance_types"),
		},
		ModelApprovalStatus: orDefault(getString(n.cfg, "model_approval_status"), "PendingManualApproval"),
		SamplePayloadURL:    payload,
		SkipModelValidation: "None",
		ModelMetrics:        metrics,
		Tags:                configTags(n.cfg),
	}, warns, nil
}

// descriptionConfig is the config a model package's description comes
// from: the training step's, whose model_class names the model registered.
func descriptionConfig(n *node) *config.Config {
	if n.trainer != nil {
		return n.trainer.cfg
	}
	return n.cfg
}

// registrationImage is the inference image of the training step the
// model comes from (its framework, version and Python version), unless the
// interface's compute section, image_uri or the config's framework says
// otherwise; an explicit framework that differs from the training step's
// is used and reported. Without a training step upstream, framework or
// model_class picks it.
func (b *builder) registrationImage(n *node, instanceType string) (string, []string, error) {
	if n.iface.Compute != nil && n.iface.Compute.Kind != "" {
		uri, err := b.image(n, sagemaker.ScopeInference, instanceType)
		return uri, nil, err
	}
	if uri := getString(n.cfg, "image_uri"); uri != "" {
		return uri, nil, nil
	}
	var warns []string
	framework := strings.ToLower(getString(n.cfg, "framework"))
	version, py := getString(n.cfg, "framework_version"), ""
	t := n.trainer
	trained := ""
	if t != nil {
		trained = imageFramework(t.iface.Compute)
	}
	switch {
	case framework == "" && trained != "":
		framework, version = trained, frameworkVersion(t)
		if f := t.iface.Compute.PyVersionField; f != "" {
			py = getString(t.cfg, f)
		}
	case framework != "" && trained != "" && framework != trained:
		warns = append(warns, fmt.Sprintf("framework %q registers the model with the %s inference image, but %s trained it on the %s image; "+
			"leave framework unset to follow the training step", framework, framework, t.stepName, trained))
	case framework == "":
		framework = strings.ToLower(orDefault(getString(n.cfg, "model_class"), "xgboost"))
	}
	uri, err := sagemaker.ImageURI(sagemaker.ImageRequest{Framework: framework, Version: version, PyVersion: py,
		Region: getString(n.cfg, "aws_region"), Scope: sagemaker.ScopeInference, InstanceType: instanceType})
	if err != nil {
		return "", nil, fmt.Errorf("inference image of framework %q: %w", framework, err)
	}
	return uri, warns, nil
}
