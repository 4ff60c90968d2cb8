// Package compiler turns a DAG and its step configs into a SageMaker
// Pipelines definition: it binds every node to a config, selects the
// builder of the node's SageMaker step type, wires inputs from upstream
// outputs through property references, packs code into content-addressed
// artifacts and emits a deterministic definition. Upsert deploys it.
package compiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/dag"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/steps"
)

// Catalog is the part of the step catalog the compiler reads;
// *steps.Catalog satisfies it.
type Catalog interface {
	Names() []string
	Get(stepType string) (*steps.Interface, bool)
}

// PrefixParameter is the pipeline parameter every output location starts
// with. Its default is the pipeline_s3_loc of the configs, so a run needs
// no parameters; a run may point outputs elsewhere by setting it.
const PrefixParameter = "EXECUTION_S3_PREFIX"

// Input is what a compile reads.
type Input struct {
	DAG     *dag.DAG
	Configs []config.Config
	// Unloaded are configs of the file that could not be built (an unknown
	// config class): the nodes they belong to fail, naming the class.
	Unloaded []config.Unloaded
	Catalog  Catalog
	// Sources is the workspace the configs' source_dir paths are relative
	// to (with the call's inline files over it). nil: no caller files; the
	// built-in step code serves the built-in step types.
	Sources fs.FS
	// PipelineName overrides the generated name.
	PipelineName string
	// DAGName is the DAG's name or id (a shared DAG's id, a DAG file's
	// metadata.name); the generated name carries it (see pipelineName).
	DAGName string
}

// pipelineName is the generated name: "<base>-<dag>-<version>-pipeline",
// base being the config's pipeline_name. dag is in.DAGName, or for an
// unnamed DAG "dag-" and 8 hex digits of a hash of its nodes and edges, so
// that different DAGs compiled with one base config get different
// pipelines. A pipeline_name_override is the user's choice of name and is
// taken without a DAG part.
func pipelineName(in Input, cfg *config.Config) string {
	base := orDefault(getString(cfg, "pipeline_name"), "cursus")
	version := orDefault(getString(cfg, "pipeline_version"), "0.0.0")
	if getString(cfg, "pipeline_name_override") != "" {
		return sagemaker.GeneratePipelineName(base, version)
	}
	name := in.DAGName
	if name == "" {
		name = dagID(in.DAG)
	}
	return sagemaker.DAGPipelineName(base, name, version)
}

// DAGName is the one naming rule for a DAG in its pipeline's name, for
// every path that compiles (the compile tools and the workflows): its
// metadata.name (a shared DAG's id), else its file's workspace path
// without the extension and with "/" as "-" (unique within the workspace;
// a file named dag.json is named by its folder). An unnamed inline DAG
// gets "", which the compiler replaces with a content hash. The pipeline
// name prefixes every S3 code key, so one name means one set of paths.
func DAGName(doc *dag.Document, file string) string {
	if doc != nil {
		if name, ok := doc.Metadata["name"].(string); ok && strings.TrimSpace(name) != "" {
			return name
		}
	}
	if file == "" {
		return ""
	}
	file = strings.TrimSuffix(strings.TrimSuffix(file, ".json"), ".dag")
	if path.Base(file) == "dag" && path.Dir(file) != "." {
		file = path.Dir(file) // examples/xgboost-tabular/dag.json names the project
	}
	return strings.ReplaceAll(file, "/", "-")
}

// dagID names an unnamed DAG by its content.
func dagID(d *dag.DAG) string {
	h := sha256.New()
	for _, n := range d.Nodes {
		fmt.Fprintf(h, "n %q\n", n)
	}
	for _, e := range d.Edges {
		fmt.Fprintf(h, "e %q %q\n", e[0], e[1])
	}
	return "dag-" + hex.EncodeToString(h.Sum(nil))[:8]
}

// Progress receives (done, total, message) as a compile or upsert advances.
type Progress func(done, total int, msg string)

type options struct {
	progress Progress
}

// Option tunes a compile or an upsert.
type Option func(*options)

// WithProgress reports progress after each step is built (or artifact
// uploaded).
func WithProgress(p Progress) Option { return func(o *options) { o.progress = p } }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.progress == nil {
		o.progress = func(int, int, string) {}
	}
	return o
}

// StepReport is what the compiler did with one node.
type StepReport struct {
	Node          string            `json:"node"`
	StepName      string            `json:"step_name"`
	SageMakerType string            `json:"sagemaker_type"`
	StepType      string            `json:"step_type"`
	JobType       string            `json:"job_type,omitempty"`
	ConfigKey     string            `json:"config_key"`
	ConfigClass   string            `json:"config_class"`
	Builder       string            `json:"builder"`
	Handler       string            `json:"handler"`
	Confidence    float64           `json:"confidence"`
	Method        string            `json:"method"`
	Reasons       []string          `json:"reasons"`
	Inputs        map[string]string `json:"inputs"`
	DependsOn     []string          `json:"depends_on,omitempty"`
	// AddedSteps are steps the compiler added for this node, as the SDK
	// would: a model repack (a Training step named <step>-RepackModel)
	// that puts the inference code into model.tar.gz.
	AddedSteps []string `json:"added_steps,omitempty"`
	// UnusedFields are the node's config fields no SageMaker request reads,
	// as "<field>: <reason>" (UnusedConfigFields).
	UnusedFields []string `json:"unused_fields,omitempty"`
}

// Result is a compiled pipeline.
type Result struct {
	PipelineName string                `json:"pipeline_name"`
	Definition   *sagemaker.Definition `json:"-"`
	// JSON is the encoded definition (compact, deterministic).
	JSON      []byte       `json:"-"`
	Steps     []StepReport `json:"steps"`
	Artifacts []Artifact   `json:"artifacts"`
	Plan      *deps.Plan   `json:"-"`
	// Role and Region come from the configs; Upsert uses them.
	Role     string   `json:"role"`
	Region   string   `json:"region"`
	Bucket   string   `json:"bucket"`
	Warnings []string `json:"warnings,omitempty"`
	// StandIns are the steps built with built-in code in place of a
	// script their config names (each has a warning too).
	StandIns []StandIn `json:"-"`
	// Tags are the config's tags; Upsert attaches them to the pipeline
	// (each step's request carries its own config's tags).
	Tags []sagemaker.Tag `json:"tags,omitempty"`
}

// Manifest maps each local file or directory to its S3 URI; the files of
// an uploaded input folder are listed one by one. A directory packed
// differently for several steps (a training step adds its hyperparameters)
// and generated files are keyed "<local>@<steps>".
func (r *Result) Manifest() map[string]string {
	count := map[string]int{}
	for _, a := range r.Artifacts {
		count[a.Local]++
	}
	m := map[string]string{}
	for _, a := range r.Artifacts {
		key := a.Local
		if key == "" {
			key = "generated:" + a.Key[strings.LastIndex(a.Key, "/")+1:]
		}
		if a.Local == "" || count[a.Local] > 1 {
			key += "@" + strings.Join(a.Steps, ",")
		}
		if _, taken := m[key]; taken {
			// The same file shipped two ways for the same steps (a script
			// that is also in an input folder).
			key += "#" + a.Kind
		}
		m[key] = a.S3URI
	}
	return m
}

// UnsupportedError is a node whose step kind the compiler does not build:
// an Amazon-internal kind, or one with no public builder. Replacement names
// the public step to use instead, when there is one.
type UnsupportedError struct {
	Node          string
	StepType      string
	SageMakerType string
	Replacement   string
	Advice        string
}

func (e *UnsupportedError) Error() string {
	kind := e.StepType
	if e.SageMakerType != "" && e.SageMakerType != e.StepType {
		kind += " (" + e.SageMakerType + ")"
	}
	msg := fmt.Sprintf("node %q: %s cannot be compiled to a public SageMaker step", e.Node, kind)
	if e.Replacement != "" {
		msg += "; use " + e.Replacement + " instead"
	}
	if e.Advice != "" {
		msg += ". " + e.Advice
	}
	return msg
}

// internalNodes reports DAG nodes that name Amazon-internal kinds; they
// are not in the catalog, so they are caught by name before resolution.
func internalNodes(d *dag.DAG) []error {
	var out []error
	for _, name := range d.Nodes {
		if k, ok := steps.LookupInternal(name); ok {
			out = append(out, &UnsupportedError{Node: name, StepType: k.Name, Replacement: k.Replacement, Advice: k.Advice})
		}
	}
	return out
}

// BuildError is a node whose step could not be built from its config.
type BuildError struct {
	Node     string
	StepName string
	Err      error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("node %q (step %s): %v", e.Node, e.StepName, e.Err)
}

func (e *BuildError) Unwrap() error { return e.Err }

// UnresolvedError lists required dependencies no upstream output feeds.
type UnresolvedError struct {
	Unresolved []deps.Unresolved
}

func (e *UnresolvedError) Error() string {
	parts := make([]string, len(e.Unresolved))
	for i, u := range e.Unresolved {
		parts[i] = fmt.Sprintf("%s.%s (%s)", u.Node, u.Dependency, u.Reason)
	}
	return "required input(s) not provided by any upstream step: " + strings.Join(parts, "; ")
}

// node is one DAG node bound to its config, interface and builder.
type node struct {
	name     string
	res      NodeResolution
	cfg      *config.Config
	iface    *steps.Interface // job-type variant applied
	smType   string
	handler  string
	stepName string
	// trainer is the nearest upstream training or tuning node (nil if
	// none): the models this node packages, creates or registers come from
	// it, so their framework defaults follow it.
	trainer *node
}

func isTrainer(n *node) bool {
	return n != nil && (n.handler == HandlerTraining || n.handler == HandlerTuning)
}

// linkTrainers sets every node's trainer: breadth first over its
// ancestors, nearest first, in edge order (deterministic).
func linkTrainers(ctx context.Context, parentsOf map[string][]string, nodes map[string]*node) error {
	for name, n := range nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		seen := map[string]bool{name: true}
		queue := slices.Clone(parentsOf[name])
		for len(queue) > 0 && n.trainer == nil {
			p := queue[0]
			queue = queue[1:]
			if seen[p] {
				continue
			}
			seen[p] = true
			if isTrainer(nodes[p]) {
				n.trainer = nodes[p]
				break
			}
			queue = append(queue, parentsOf[p]...)
		}
	}
	return nil
}

// namingConfig is the config the pipeline's name and S3 prefix come from:
// the first training or tuning step's (its model_class follows the model it
// trains), else the first step's.
func namingConfig(nodes map[string]*node, order []string) *config.Config {
	for _, name := range order {
		if isTrainer(nodes[name]) {
			return nodes[name].cfg
		}
	}
	return nodes[order[0]].cfg
}

// bind resolves every node to its config (resolveNode), loads its interface
// with the config's job type and routes it to a handler. Failures of all
// nodes are collected. A node that is not named after a config is matched
// against every config, so bind stops with ctx's error when ctx ends.
func bind(ctx context.Context, in Input) (map[string]*node, []NodeError, []error, []string, error) {
	configs := indexConfigs(in.Configs)
	known := map[string]string{}
	for _, n := range in.Catalog.Names() {
		known[steps.CanonicalKey(n)] = n
	}
	nodes := map[string]*node{}
	variants := variantCache{}
	var failures []NodeError
	var routeErrs []error
	var warnings []string
	for _, name := range in.DAG.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, nil, err
		}
		nodeStep, nodeJob := "", ""
		if prefix, suffix, ok := steps.SplitJobType(name, func(p string) bool { _, ok := known[steps.CanonicalKey(p)]; return ok }); ok {
			nodeStep, nodeJob = known[steps.CanonicalKey(prefix)], suffix
		}
		if u, ok := unloadedFor(name, in.Unloaded); ok {
			failures = append(failures, NodeError{Node: name, Message: fmt.Sprintf("node %q: its config %s was not loaded: %s", name, u.Key, u.Message)})
			continue
		}
		res, err := resolveNode(name, nodeStep, nodeJob, configs)
		if err != nil {
			var ne *NodeError
			if errors.As(err, &ne) {
				failures = append(failures, *ne)
			} else {
				failures = append(failures, NodeError{Node: name, Message: err.Error()})
			}
			continue
		}
		if res.Confidence < AcceptedConfidence {
			warnings = append(warnings, fmt.Sprintf("low confidence resolution for node %q: %.2f (config %q)", name, res.Confidence, res.ConfigKey))
		}
		cfg := configs.get(res.ConfigKey)
		base, ok := in.Catalog.Get(cfg.StepType)
		if !ok {
			failures = append(failures, NodeError{Node: name, Message: fmt.Sprintf("node %q: config %q has step type %s, which is not in the step catalog", name, cfg.Key, cfg.StepType)})
			continue
		}
		iface, warns, err := variants.get(base, cfg.JobType)
		if err != nil {
			failures = append(failures, NodeError{Node: name, Message: fmt.Sprintf("node %q: %v", name, err)})
			continue
		}
		for _, w := range append(warns, cfg.Warnings...) {
			warnings = append(warnings, fmt.Sprintf("node %q: %s", name, w))
		}
		n := &node{name: name, res: res, cfg: cfg, iface: iface, smType: iface.Registry.SageMakerStepType,
			stepName: sagemaker.BoundName(steps.PipelineStepName(cfg.StepType, cfg.JobType), sagemaker.MaxStepNameLength)}
		n.handler, err = route(name, iface)
		if err != nil {
			routeErrs = append(routeErrs, err)
		}
		nodes[name] = n
	}
	return nodes, failures, routeErrs, warnings, nil
}

// unloadedFor finds the unloaded config saved under the node's name, so
// the node fails rather than binding to a sibling's config.
func unloadedFor(node string, unloaded []config.Unloaded) (config.Unloaded, bool) {
	for _, u := range unloaded {
		if strings.EqualFold(u.Key, node) {
			return u, true
		}
	}
	return config.Unloaded{}, false
}

// variantCache shares one merged interface between nodes of the same step
// type whose job type selects the same variant (merging is the costliest
// part of binding). Interfaces are read-only here.
type variantCache map[string]*steps.Interface

func (vc variantCache) get(base *steps.Interface, jobType string) (*steps.Interface, []string, error) {
	key := jobType
	exact := false
	for _, k := range base.Variants.Keys() {
		if k == jobType {
			exact = true
		}
	}
	if !exact {
		folded := false
		for _, k := range base.Variants.Keys() {
			if strings.EqualFold(k, jobType) {
				folded = true
			}
		}
		if !folded {
			key = "" // the base interface, whatever the job type
		}
	}
	var warns []string
	if key == "" && jobType != "" && base.Variants.Len() > 0 {
		warns = append(warns, fmt.Sprintf("%s has no variant for job type %q; the base interface is used", base.StepType, jobType))
	}
	ck := base.StepType + "\x00" + key
	if iface, ok := vc[ck]; ok {
		return iface, warns, nil
	}
	iface, w, err := base.SharedJobType(key) // read only, shared by every node and compile
	if err != nil {
		return nil, nil, err
	}
	vc[ck] = iface
	return iface, append(warns, w...), nil
}

// Handlers, by SageMaker step type and (for Processing) step assembly.
const (
	HandlerProcessing    = "ProcessingHandler"
	HandlerTraining      = "TrainingHandler"
	HandlerTuning        = "TuningHandler"
	HandlerModel         = "ModelCreationHandler"
	HandlerTransform     = "TransformHandler"
	HandlerRegisterModel = "RegisterModelHandler"
)

// Compilable reports whether a node of iface's step type compiles here:
// nil, or the *UnsupportedError Compile answers for such a node.
func Compilable(iface *steps.Interface) error {
	_, err := route(iface.StepType, iface)
	return err
}

// route picks the construction handler from the SageMaker step type. Processing
// routes on patterns.step_assembly (code and step_args emit the same
// request; delegation is the Amazon-internal SDK path).
func route(nodeName string, iface *steps.Interface) (string, error) {
	unsupported := func() error {
		e := &UnsupportedError{Node: nodeName, StepType: iface.StepType, SageMakerType: iface.Registry.SageMakerStepType}
		k, ok := steps.LookupInternal(iface.StepType)
		if !ok {
			k, ok = steps.LookupInternal(iface.Registry.SageMakerStepType)
		}
		if ok {
			e.Replacement, e.Advice = k.Replacement, k.Advice
		}
		return e
	}
	if _, internal := steps.LookupInternal(iface.StepType); internal {
		return "", unsupported()
	}
	if _, internal := steps.LookupInternal(iface.Registry.SageMakerStepType); internal {
		return "", unsupported()
	}
	switch iface.Registry.SageMakerStepType {
	case steps.SMProcessing:
		if iface.Patterns.StepAssembly == "delegation" {
			return "", unsupported()
		}
		return HandlerProcessing, nil
	case steps.SMTraining:
		return HandlerTraining, nil
	case steps.SMTuning:
		return HandlerTuning, nil
	case steps.SMCreateModel:
		return HandlerModel, nil
	case steps.SMTransform:
		return HandlerTransform, nil
	case steps.SMRegisterModel:
		return HandlerRegisterModel, nil
	}
	return "", unsupported()
}

// bindAll binds every node of in.DAG to its config and interface, the
// step both compiles share: the first internal node, binding error,
// unresolved node (ResolutionError) or routing error stops it.
func bindAll(ctx context.Context, in Input) (map[string]*node, []string, error) {
	if errs := internalNodes(in.DAG); len(errs) > 0 {
		return nil, nil, errs[0]
	}
	nodes, failures, routeErrs, warnings, err := bind(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	if len(failures) > 0 {
		return nil, nil, &ResolutionError{Failures: failures}
	}
	if len(routeErrs) > 0 {
		return nil, nil, routeErrs[0]
	}
	return nodes, warnings, nil
}

// Compile builds the definition.
func Compile(ctx context.Context, in Input, opts ...Option) (*Result, error) {
	o := collect(opts)
	if in.DAG == nil || len(in.DAG.Nodes) == 0 {
		return nil, errors.New("the DAG has no nodes")
	}
	nodes, warnings, err := bindAll(ctx, in)
	if err != nil {
		return nil, err
	}
	if coll := collisions(in.DAG.Nodes, nodes); len(coll) > 0 {
		return nil, &ResolutionError{Collisions: coll}
	}
	plan, err := deps.ResolveWith(ctx, in.DAG, func(name string) (deps.NodeSpec, error) {
		n := nodes[name]
		return deps.NodeSpec{StepType: n.cfg.StepType, JobType: n.cfg.JobType, PipelineStepName: n.stepName, Spec: &n.iface.Spec}, nil
	})
	if err != nil {
		return nil, err
	}
	for _, w := range plan.Warnings {
		warnings = append(warnings, w.Message)
	}
	plan.Unresolved = slices.DeleteFunc(plan.Unresolved, func(u deps.Unresolved) bool { return configSourced(nodes[u.Node], u.Dependency) })
	for i, u := range plan.Unresolved {
		if method, ok := unknownConfigMethod(nodes[u.Node], u.Dependency); ok {
			plan.Unresolved[i].Reason = fmt.Sprintf("the interface takes it from the Cursus config method %s(), whose result is not known here; wire an upstream step that produces it, or name a config field in contract.input_source_overrides", method)
		}
	}
	if len(plan.Unresolved) > 0 {
		return nil, &UnresolvedError{Unresolved: plan.Unresolved}
	}
	root := outputRoot(executionScoped(namingConfig(nodes, plan.Order)))
	inputs := map[string]map[string]any{}
	producers := map[string]map[string]*node{}
	for name, bs := range plan.Bindings {
		m := map[string]any{}
		from := map[string]*node{}
		for _, b := range bs {
			v, err := bindingValue(b, nodes[name], nodes[b.FromNode], root)
			if err != nil {
				return nil, &BuildError{Node: name, StepName: nodes[name].stepName, Err: err}
			}
			m[b.Dependency] = v
			from[b.Dependency] = nodes[b.FromNode]
		}
		inputs[name] = m
		producers[name] = from
	}
	return assemble(ctx, in, nodes, plan.Order, inputs, producers, plan, true, warnings, o)
}

// bindingValue is what a consumer reads for a binding: the producer's
// property, which must exist in the response shape of the producer's
// SageMaker step type (SageMaker fails the execution otherwise), or, for an
// output with a job_artifact, the object that training job wrote under the
// producer's output path, as the SDK's TuningStep.get_top_model_s3_uri.
// A consumer that needs an object (a model's or model package's
// ModelDataUrl, a SamplePayloadUrl) gets the property joined with the file
// the producer's contract says it writes there
// (contract.outputs.<name>.object), since those APIs want the object and
// not the output prefix.
func bindingValue(b deps.Binding, consumer, producer *node, root []any) (any, error) {
	if known, ok, nearest := steps.CheckPropertyPath(producer.smType, b.Property); known && !ok {
		return nil, fmt.Errorf("input %s reads %s, which is not a property of a %s step (%s); nearest valid paths: %s",
			b.Dependency, b.Reference, producer.smType, strings.Join(steps.PropertyOperations(producer.smType), " + "), strings.Join(nearest, ", "))
	}
	ref := sagemaker.Get{Path: b.Reference}
	out, _ := producer.iface.Spec.Outputs.Get(b.FromOutput)
	if out.JobArtifact != "" {
		prefix := trainingOutput(root, producer)
		if s, ok := prefix.(string); ok {
			prefix = strings.TrimSuffix(s, "/")
		}
		return sagemaker.JoinPath(prefix, ref, out.JobArtifact), nil
	}
	if consumer == nil || (consumer.handler != HandlerRegisterModel && consumer.handler != HandlerModel) {
		return ref, nil
	}
	if port, ok := producer.iface.Contract.Outputs.Get(b.FromOutput); ok && port.Object != "" {
		return sagemaker.JoinPath(ref, port.Object), nil
	}
	return ref, nil
}

// configSourced: the dependency takes its value from a config field
// (contract.input_source_overrides) that is set, so no upstream step needs
// to feed it; the builder resolves the value or says why it cannot.
func configSourced(n *node, dep string) bool {
	if n == nil {
		return false
	}
	field, ok := n.iface.Contract.InputSourceOverrides.Get(dep)
	return ok && getString(n.cfg, field) != ""
}

// unknownConfigMethod reports an input_source_overrides entry that names a
// Cursus config method (get_…) rather than a field. Cursus calls it; the
// reference states what none of the methods an input could name returns
// (get_data_source_uri and the like are project code), so it is reported.
func unknownConfigMethod(n *node, dep string) (string, bool) {
	if n == nil {
		return "", false
	}
	field, ok := n.iface.Contract.InputSourceOverrides.Get(dep)
	field = strings.TrimSuffix(field, "()")
	if !ok || !strings.HasPrefix(field, "get_") {
		return "", false
	}
	if _, isField := n.cfg.Get(field); isField {
		return "", false
	}
	return field, true
}

func collisions(order []string, nodes map[string]*node) []string {
	byStep := map[string][]string{}
	for _, name := range order {
		if n := nodes[name]; n != nil {
			byStep[n.stepName] = append(byStep[n.stepName], name)
		}
	}
	var out []string
	for _, step := range slices.Sorted(maps.Keys(byStep)) {
		if ns := byStep[step]; len(ns) > 1 {
			out = append(out, fmt.Sprintf("%s ← nodes %s", step, strings.Join(ns, ", ")))
		}
	}
	return out
}

// assemble builds every step in order.
func assemble(ctx context.Context, in Input, nodes map[string]*node, order []string, inputs map[string]map[string]any,
	producers map[string]map[string]*node, plan *deps.Plan, dependsOn bool, warnings []string, o options) (*Result, error) {
	parentsOf := in.DAG.ParentsByNode()
	if err := linkTrainers(ctx, parentsOf, nodes); err != nil {
		return nil, err
	}
	first := namingConfig(nodes, order)
	name := in.PipelineName
	if name == "" {
		name = pipelineName(in, first)
	}
	if !sagemaker.ValidPipelineName(name) {
		return nil, fmt.Errorf("pipeline name %q is not valid: use 1-255 letters, digits and single hyphens, starting and ending with a letter or digit", name)
	}
	if len(name) > sagemaker.MaxExperimentNameLength {
		return nil, fmt.Errorf("pipeline name %q has %d characters: the definition's PipelineExperimentConfig names the execution's experiment after the pipeline, and SageMaker experiment names allow %d; "+
			"shorten pipeline_name_override (or the pipeline name given) to at most %d characters", name, len(name), sagemaker.MaxExperimentNameLength, sagemaker.MaxExperimentNameLength)
	}
	def := sagemaker.NewDefinition()
	def.Parameters = append(def.Parameters, sagemaker.Parameter{Name: PrefixParameter, Type: sagemaker.ParamString,
		DefaultValue: getString(first, "pipeline_s3_loc")})
	res := &Result{PipelineName: name, Definition: def, Plan: plan, Warnings: warnings,
		Role: getString(first, "role"), Region: getString(first, "aws_region"), Bucket: getString(first, "bucket"), Tags: configTags(first)}
	arts := newArtifactSet(getString(first, "bucket"), name)
	b := &builder{ctx: ctx, sources: in.Sources, arts: arts, prefix: sagemaker.Param(PrefixParameter), pipeline: name,
		root: outputRoot(executionScoped(first)), producers: producers, children: childrenOf(in.DAG.Nodes, parentsOf, nodes)}
	for i, nodeName := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := nodes[nodeName]
		var parents []string
		if dependsOn {
			for _, p := range parentsOf[nodeName] {
				parents = append(parents, nodes[p].stepName)
			}
		}
		step, report, warns, err := b.build(n, inputs[nodeName], parents)
		if err != nil {
			return nil, &BuildError{Node: nodeName, StepName: n.stepName, Err: err}
		}
		res.Warnings = append(res.Warnings, warns...)
		// Steps the builder added for the node (a model repack) run before it.
		for _, added := range b.added {
			def.Steps = append(def.Steps, added)
			report.AddedSteps = append(report.AddedSteps, added.Name)
		}
		b.added = nil
		def.Steps = append(def.Steps, step)
		res.Steps = append(res.Steps, report)
		o.progress(i+1, len(order), "built "+n.stepName)
	}
	if len(b.missing) > 0 {
		return nil, &MissingCodeError{Steps: b.missing}
	}
	res.StandIns = b.standIns
	res.Artifacts = arts.list()
	var err error
	if res.JSON, err = sagemaker.Encode(def); err != nil {
		return nil, fmt.Errorf("encode definition: %w", err)
	}
	return res, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
