package steps

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/finding"
)

// Closed value sets of the .step.yaml format: a value outside one is an
// "enum" finding.
var (
	NodeTypes          = []string{NodeSource, NodeInternal, NodeSink, NodeSingular}
	SageMakerStepTypes = []string{SMBase, SMCradleDataLoading, SMCreateModel, SMLambda, SMMimsModelRegistrationProcessing,
		SMProcessing, SMRedshiftDataLoading, SMRegisterModel, SMTraining, SMTransform, SMTuning, SMUtility}
	RegistryRequires  = []string{"none", "secure_ai_sandbox_workflow_python_sdk"}
	ComputeKinds      = []string{"sklearn", "xgboost", "framework", "script", "estimator", "model", "transformer", "byo_container"}
	SDKClasses        = []string{"PyTorch", "SKLearn", "XGBoost", "PyTorchModel", "XGBoostModel"}
	NetworkModes      = []string{"none", "shared", "config"}
	ComputeRequires   = []string{"none", "mods_workflow_core"}
	InstanceSizeModes = []string{"large_or_small", "fixed"}
	StepAssemblies    = []string{"code", "step_args", "delegation"}
	DependencyTypes   = []string{TypeModelArtifacts, TypeProcessingOutput, TypeTrainingData, TypeHyperparameters,
		TypePayloadSamples, TypeCustomProperty}
	ConfigExtends = []string{"base", "processing", "training", "model", "transform", "tuning", "registration"}
	FieldTypes    = []string{"string", "integer", "number", "boolean", "array", "object"}
	FieldTiers    = []string{TierEssential, TierSystem, TierDerived}

	InputPathPrefixes  = []string{"/opt/ml/processing/", "/opt/ml/input/data", "/opt/ml/input/config", "/opt/ml/code"}
	OutputPathPrefixes = []string{"/opt/ml/processing/", "/opt/ml/model", "/opt/ml/output/data", "/opt/ml/checkpoints"}
)

var stepTypeName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// processingOutputPath is the property path of a Processing-family output;
// the quoted name must be the output's own logical name.
var processingOutputPath = regexp.MustCompile(`^properties\.ProcessingOutputConfig\.Outputs\['([^']*)'\]\.S3Output\.S3Uri$`)

// Validate checks one interface against the rules of the .step.yaml format
// (required keys, closed value sets, compute by kind, contract against
// spec, property paths) and its config section. Each variant is
// merged and checked too; its findings carry a "variants.<job_type>: "
// path prefix. Findings are sorted errors first, then by path.
func Validate(iface *Interface) []finding.Finding {
	if iface == nil {
		return []finding.Finding{{Level: finding.Error, Rule: "required", Message: "no interface"}}
	}
	v := &validator{file: iface.Source}
	v.check(iface)
	base := map[string]bool{}
	for _, f := range v.out {
		base[f.Rule+"|"+f.Path] = true
	}
	for _, jt := range iface.JobTypes() {
		merged, _, err := iface.WithJobType(jt)
		if err != nil {
			v.add(finding.Error, "variants."+jt, "variant_merge", "%s", err.Error())
			continue
		}
		sub := &validator{file: iface.Source}
		sub.check(merged)
		for _, f := range sub.out {
			if base[f.Rule+"|"+f.Path] || f.Rule == "unknown_key" || f.Rule == "file_name" {
				continue
			}
			f.Path = "variants." + jt + ": " + f.Path
			v.out = append(v.out, f)
		}
	}
	sort.SliceStable(v.out, func(a, b int) bool {
		if c := finding.CompareLevels(v.out[a].Level, v.out[b].Level); c != 0 {
			return c < 0
		}
		return v.out[a].Path < v.out[b].Path
	})
	return v.out
}

type validator struct {
	file string
	out  []finding.Finding
}

func (v *validator) add(level finding.Level, p, rule, format string, args ...any) {
	v.out = append(v.out, finding.Finding{Level: level, File: v.file, Path: p, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) errorf(p, rule, format string, args ...any) {
	v.add(finding.Error, p, rule, format, args...)
}

func (v *validator) warnf(p, rule, format string, args ...any) {
	v.add(finding.Warning, p, rule, format, args...)
}

func (v *validator) enum(p, value string, allowed []string, rule string) {
	if value != "" && !slices.Contains(allowed, value) {
		v.errorf(p, rule, "%q is not one of %s", value, strings.Join(allowed, ", "))
	}
}

func (v *validator) check(i *Interface) {
	for _, k := range i.missing {
		switch k {
		case "step_type":
			// reported below from the empty value
		case "contract":
			v.errorf("contract", "required", "the contract section is required (it may be empty: contract: {})")
		}
	}
	for _, u := range i.unknown {
		v.warnf(u, "unknown_key", "unknown key; it is ignored")
	}
	switch {
	case i.StepType == "":
		v.errorf("step_type", "required", "step_type is required")
	case !stepTypeName.MatchString(i.StepType):
		v.errorf("step_type", "step_type_format", "%q must be PascalCase letters and digits (no '_' or '-': they separate job types and pipeline step names)", i.StepType)
	}
	v.checkFileName(i)
	v.enum("node_type", i.NodeType, NodeTypes, "enum")
	v.checkRegistry(i)
	v.checkCompute(i.Compute)
	v.checkPatterns(i)
	v.checkContract(i)
	v.checkSpec(i)
	v.checkConfig(i)
}

// InlineSource is the Source of a document sent as text in a call
// (validate.step_interface's yaml): it has no file name to check.
const InlineSource = "inline"

// isFileSource reports whether source names a file, as opposed to a
// document sent in a call (InlineSource, OverlaySource): only a file has
// a stem that lookups by step name depend on.
func isFileSource(source string) bool {
	return source != InlineSource && !strings.HasPrefix(source, "step_types[")
}

func (v *validator) checkFileName(i *Interface) {
	if i.Source == "" || i.StepType == "" || !isFileSource(i.Source) {
		return
	}
	stem := strings.TrimSuffix(path.Base(strings.TrimPrefix(i.Source, "builtin:")), FileSuffix)
	if stem != ConventionStem(i.StepType) && CanonicalKey(stem) != CanonicalKey(i.StepType) {
		v.warnf("step_type", "file_name", "file stem %q does not name step %q; lookups by step name expect %s%s",
			stem, i.StepType, ConventionStem(i.StepType), FileSuffix)
	}
}

func (v *validator) checkRegistry(i *Interface) {
	r := i.Registry
	if r.SageMakerStepType == "" {
		v.errorf("registry.sagemaker_step_type", "required", "cannot determine sagemaker_step_type: registry.sagemaker_step_type is required")
	}
	v.enum("registry.sagemaker_step_type", r.SageMakerStepType, SageMakerStepTypes, "enum")
	v.enum("registry.requires", r.Requires, RegistryRequires, "enum")
	if r.StepAssembly != "" {
		v.warnf("registry.step_assembly", "deprecated", "registry.step_assembly is deprecated; use patterns.step_assembly")
		v.enum("registry.step_assembly", r.StepAssembly, StepAssemblies, "enum")
	}
	if r.Description == "" {
		v.warnf("registry.description", "description", "a one-line description helps catalog search")
	}
	if r.ConfigClass != "" && !stepTypeName.MatchString(r.ConfigClass) {
		v.errorf("registry.config_class", "name_format", "%q is not a class name", r.ConfigClass)
	}
	if r.BuilderStepName != "" && !stepTypeName.MatchString(r.BuilderStepName) {
		v.errorf("registry.builder_step_name", "name_format", "%q is not a class name", r.BuilderStepName)
	}
}

// checkCompute applies the compute rules: enumerations, requires against
// kms_network, what byo_container forbids, and computeKindRules.
func (v *validator) checkCompute(c *Compute) {
	if c == nil {
		return
	}
	const p = "compute."
	v.enum(p+"kind", c.Kind, ComputeKinds, "enum")
	v.enum(p+"sdk_class", c.SDKClass, SDKClasses, "enum")
	v.enum(p+"network_mode", c.NetworkMode, NetworkModes, "enum")
	v.enum(p+"requires", c.Requires, ComputeRequires, "enum")
	v.enum(p+"instance_size_mode", c.InstanceSizeMode, InstanceSizeModes, "enum")
	kind := c.Kind
	if kind == "" {
		if c.Requires != "" && c.Requires != "none" {
			v.errorf(p+"requires", "compute_requires", "without compute.kind, requires must be none")
		}
		return
	}
	if (c.Requires == "mods_workflow_core") != c.KMSNetwork {
		v.errorf(p+"requires", "compute_requires", "requires must be mods_workflow_core exactly when kms_network is true")
	}
	if kind == "byo_container" {
		if c.ImageURIField == "" {
			v.errorf(p+"image_uri_field", "compute_byo_image", "byo_container needs image_uri_field")
		}
		for _, f := range []struct{ name, val string }{
			{"sdk_class", c.SDKClass}, {"framework_version_field", c.FrameworkVersionField},
			{"py_version_field", c.PyVersionField}, {"framework_name", c.FrameworkName},
			{"retrieve_framework", c.RetrieveFramework}, {"retrieve_image", c.RetrieveImage},
		} {
			if f.val != "" {
				v.errorf(p+f.name, "compute_byo_forbidden", "byo_container must not set %s", f.name)
			}
		}
		if c.KMSNetwork {
			v.errorf(p+"kms_network", "compute_byo_forbidden", "byo_container must not set kms_network")
		}
	} else {
		if c.ImageURIField != "" {
			v.errorf(p+"image_uri_field", "compute_image_only_byo", "image_uri_field is only for kind byo_container")
		}
		if len(c.ContainerEntrypoint) > 0 {
			v.errorf(p+"container_entrypoint", "compute_image_only_byo", "container_entrypoint is only for kind byo_container")
		}
	}
	for _, r := range computeKindRules {
		set := r.set(c)
		switch {
		case !set && slices.Contains(r.needs, kind):
			v.errorf(p+r.field, r.rule, "%s", strings.ReplaceAll(r.needsMsg, "{kind}", kind))
		case set && r.only != nil && !slices.Contains(r.only, kind):
			v.errorf(p+r.field, r.rule, "%s", strings.ReplaceAll(r.onlyMsg, "{kind}", kind))
		}
	}
	if c.EnableNetworkIsolationField != "" && c.NetworkMode != "config" {
		v.errorf(p+"enable_network_isolation_field", "compute_network_mode", "enable_network_isolation_field needs network_mode config")
	}
}

// computeKindRule ties a compute field to the kinds that need it and the
// kinds that may set it (nil: any kind).
type computeKindRule struct {
	field, rule string
	set         func(*Compute) bool
	needs       []string
	needsMsg    string // {kind} is the step's kind
	only        []string
	onlyMsg     string
}

// computeKindRules are the compute rules that depend on compute.kind, in
// the order they report.
var computeKindRules = []computeKindRule{
	{field: "sdk_class", rule: "compute_sdk_class", set: func(c *Compute) bool { return c.SDKClass != "" },
		needs: []string{"framework", "estimator", "model"}, needsMsg: "kind {kind} needs sdk_class",
		only: []string{"framework", "estimator", "model", "byo_container"}, onlyMsg: "kind {kind} must not set sdk_class"},
	{field: "framework_version_field", rule: "compute_framework_version", set: func(c *Compute) bool { return c.FrameworkVersionField != "" },
		needs: []string{"sklearn", "xgboost", "framework", "estimator", "model"}, needsMsg: "kind {kind} needs framework_version_field"},
	{field: "py_version_field", rule: "compute_py_version", set: func(c *Compute) bool { return c.PyVersionField != "" },
		only: []string{"framework", "estimator", "model"}, onlyMsg: "py_version_field is only for kinds framework, estimator and model"},
	{field: "framework_name", rule: "compute_framework_name", set: func(c *Compute) bool { return c.FrameworkName != "" },
		needs: []string{"model"}, needsMsg: "kind model needs framework_name",
		only: []string{"model", "byo_container"}, onlyMsg: "framework_name is only for kind model"},
	{field: "kms_network", rule: "compute_kms_network", set: func(c *Compute) bool { return c.KMSNetwork },
		only: []string{"script", "byo_container"}, onlyMsg: "kms_network is only for kind script"},
	{field: "retrieve_framework", rule: "compute_retrieve_framework", set: func(c *Compute) bool { return c.RetrieveFramework != "" },
		only: []string{"estimator", "byo_container"}, onlyMsg: "retrieve_framework is only for kind estimator"},
	{field: "network_mode", rule: "compute_network_mode", set: func(c *Compute) bool { return c.NetworkMode == "config" },
		only: []string{"byo_container", "estimator"}, onlyMsg: "network_mode config is only for kinds byo_container and estimator"},
}

func (v *validator) checkPatterns(i *Interface) {
	v.enum("patterns.step_assembly", i.Patterns.StepAssembly, StepAssemblies, "enum")
	if i.Patterns.StepAssembly != "" && i.Registry.SageMakerStepType != "" && i.Registry.SageMakerStepType != SMProcessing {
		v.warnf("patterns.step_assembly", "step_assembly_processing_only",
			"step_assembly only routes Processing steps; %s steps route by their SageMaker step type", i.Registry.SageMakerStepType)
	}
	for n, k := range i.Patterns.DirectInputKeys {
		if _, ok := i.Spec.Dependencies.Get(k); !ok {
			v.warnf(fmt.Sprintf("patterns.direct_input_keys[%d]", n), "direct_input_key", "%q is not a spec dependency", k)
		}
	}
}

func hasPrefix(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

func (v *validator) checkContract(i *Interface) {
	for _, check := range contractChecks {
		check(v, i)
	}
}

// contractChecks check the contract section, in the order they report.
var contractChecks = []func(v *validator, i *Interface){
	(*validator).checkEntryPoint,
	(*validator).checkContractInputs,
	(*validator).checkContractOutputs,
	func(v *validator, i *Interface) {
		if t := i.Contract.OutputPathToken; t != "" && !outputPathToken.MatchString(t) {
			v.errorf("contract.output_path_token", "output_path_token", "%q must be one S3 key segment matching %s", t, outputPathToken)
		}
	},
	func(v *validator, i *Interface) {
		if p, k := i.Patterns.IncludeJobTypeInPath, i.Contract.IncludeJobTypeInPath; p != nil && k != nil && *p != *k {
			v.warnf("contract.include_job_type_in_path", "include_job_type_in_path", "patterns.include_job_type_in_path (%t) wins over this one", *p)
		}
	},
	(*validator).checkJobArguments,
	func(v *validator, i *Interface) {
		for n, k := range i.Contract.SkipInputs {
			if _, ok := i.Spec.Dependencies.Get(k); !ok {
				v.warnf(fmt.Sprintf("contract.skip_inputs[%d]", n), "skip_input", "%q is not a spec dependency", k)
			}
		}
	},
	func(v *validator, i *Interface) {
		for _, k := range i.Contract.InputSourceOverrides.Keys() {
			if _, ok := i.Spec.Dependencies.Get(k); !ok {
				v.warnf("contract.input_source_overrides."+k, "input_source_override", "%q is not a spec dependency", k)
			}
		}
	},
}

func (v *validator) checkEntryPoint(i *Interface) {
	ep := i.Contract.EntryPoint
	if ep == "" {
		return
	}
	if !strings.HasSuffix(ep, ".py") {
		v.errorf("contract.entry_point", "entry_point_py", "%q must end with .py", ep)
	}
	if strings.HasPrefix(ep, "/") || strings.Contains(ep, "..") {
		v.errorf("contract.entry_point", "entry_point_relative", "%q must be a relative path inside the source directory", ep)
	}
}

func (v *validator) checkContractInputs(i *Interface) {
	c := i.Contract
	for _, name := range c.Inputs.Keys() {
		p := "contract.inputs." + name
		in, _ := c.Inputs.Get(name)
		if _, ok := i.Spec.Dependencies.Get(name); !ok {
			v.errorf(p, "contract_input_in_spec", "contract input %q has no spec dependency of that name", name)
		}
		if in.Path != "" && !hasPrefix(in.Path, InputPathPrefixes) {
			v.errorf(p+".path", "input_path_prefix", "%q must start with one of %s", in.Path, strings.Join(InputPathPrefixes, ", "))
		}
		if len(in.Channels) > 0 && i.Registry.SageMakerStepType != SMTraining && i.Registry.SageMakerStepType != SMTuning {
			v.warnf(p+".channels", "channels_training_only", "channels only apply to Training and Tuning steps")
		}
	}
}

func (v *validator) checkContractOutputs(i *Interface) {
	c := i.Contract
	for _, name := range c.Outputs.Keys() {
		p := "contract.outputs." + name
		out, _ := c.Outputs.Get(name)
		if !specHasOutput(i.Spec, name) {
			v.errorf(p, "contract_output_in_spec", "contract output %q matches no spec output by name or alias", name)
		}
		if out.Path != "" && !hasPrefix(out.Path, OutputPathPrefixes) {
			v.errorf(p+".path", "output_path_prefix", "%q must start with one of %s", out.Path, strings.Join(OutputPathPrefixes, ", "))
		}
		if out.Object != "" && (strings.ContainsAny(out.Object, "/\\") || out.Object == "." || out.Object == "..") {
			v.errorf(p+".object", "output_object_name", "%q must be a file name directly under the output path", out.Object)
		}
	}
}

func (v *validator) checkJobArguments(i *Interface) {
	for n, a := range i.Contract.JobArguments {
		p := fmt.Sprintf("contract.job_arguments[%d]", n)
		if !strings.HasPrefix(a.Flag, "--") {
			v.errorf(p+".flag", "job_argument_flag", "flag %q must start with --", a.Flag)
		}
		if a.Source == "" {
			v.errorf(p+".source", "required", "source (the config field the value comes from) is required")
		}
	}
}

func specHasOutput(s Spec, name string) bool {
	if _, ok := s.Outputs.Get(name); ok {
		return true
	}
	for _, k := range s.Outputs.Keys() {
		o, _ := s.Outputs.Get(k)
		for _, a := range o.Aliases {
			if strings.EqualFold(a, name) {
				return true
			}
		}
	}
	return false
}

func (v *validator) checkSpec(i *Interface) {
	s := i.Spec
	if s.Dependencies.Len() == 0 && s.Outputs.Len() == 0 && i.NodeType != NodeSingular {
		v.errorf("spec", "spec_registration", "a spec needs at least one dependency or output unless node_type is singular")
	}
	if i.NodeType == NodeSource {
		for _, name := range s.Dependencies.Keys() {
			_, fromConfig := i.Contract.InputSourceOverrides.Get(name)
			if !fromConfig && !slices.Contains(i.Contract.SkipInputs, name) {
				v.warnf("spec.dependencies."+name, "source_dependencies",
					"a source node has no parents; feed %q from config with contract.input_source_overrides", name)
			}
		}
	}
	if i.NodeType == NodeSink && s.Outputs.Len() > 0 {
		v.warnf("spec.outputs", "sink_outputs", "a sink node has no children to consume its outputs")
	}
	for _, name := range s.Dependencies.Keys() {
		d, _ := s.Dependencies.Get(name)
		v.enum("spec.dependencies."+name+".type", d.Type, DependencyTypes, "enum")
	}
	aliasOwner := map[string]string{}
	for _, name := range s.Outputs.Keys() {
		o, _ := s.Outputs.Get(name)
		p := "spec.outputs." + name
		v.enum(p+".type", o.Type, DependencyTypes, "enum")
		v.checkPropertyPath(i, p+".property_path", name, o.PropertyPath)
		v.checkJobArtifact(i, p, o)
		for _, a := range o.Aliases {
			if prev, ok := aliasOwner[strings.ToLower(a)]; ok && prev != name {
				v.errorf(p+".aliases", "alias_unique", "alias %q is also used by output %q", a, prev)
			}
			aliasOwner[strings.ToLower(a)] = name
		}
	}
	for _, name := range s.Outputs.Keys() {
		if prev, ok := aliasOwner[strings.ToLower(name)]; ok && prev != name {
			v.errorf("spec.outputs."+prev+".aliases", "alias_unique", "alias %q is the name of another output", name)
		}
	}
}

// tunedModelProperty names the best training job of a tuning step, as the
// SDK's TuningStep.get_top_model_s3_uri(top_k=0) reads it.
const tunedModelProperty = "properties.TrainingJobSummaries[0].TrainingJobName"

// checkPropertyPath checks an output's property_path: it starts with
// "properties.", exists in the response shape of the step's SageMaker type
// (properties.json), and for Processing is
// ProcessingOutputConfig.Outputs['<the output's own name>'].S3Output.S3Uri.
func (v *validator) checkPropertyPath(i *Interface, p, name, pp string) {
	if pp == "" {
		v.warnf(p, "property_path", "no property_path: consumers cannot reference this output at run time")
		return
	}
	if !strings.HasPrefix(pp, "properties.") {
		v.errorf(p, "property_path", "%q must start with properties.", pp)
		return
	}
	smType := i.Registry.SageMakerStepType
	if known, ok, nearest := CheckPropertyPath(smType, pp); known && !ok {
		hint := ""
		if smType == SMTuning && strings.Contains(pp, "ModelArtifacts") {
			hint = "; a tuning job has no model-artifact property: read the best model as property_path " +
				tunedModelProperty + " with job_artifact: output/model.tar.gz"
		}
		v.errorf(p, "property_path_unknown", "%q is not a property of a %s step (%s response); nearest valid paths: %s%s",
			pp, smType, strings.Join(PropertyOperations(smType), " + "), strings.Join(nearest, ", "), hint)
		return
	}
	if m := processingOutputPath.FindStringSubmatch(pp); m != nil && m[1] != name {
		v.errorf(p, "property_path_name", "the output is named %q but its property path names %q", name, m[1])
	}
	if smType == SMProcessing && !processingOutputPath.MatchString(pp) {
		v.warnf(p, "property_path", "Processing outputs are read as properties.ProcessingOutputConfig.Outputs['%s'].S3Output.S3Uri", name)
	}
}

// checkJobArtifact: only a tuning job's outputs name a training job whose
// artifact the compiler can address under the tuning output path.
func (v *validator) checkJobArtifact(i *Interface, p string, o Output) {
	a := o.JobArtifact
	switch {
	case a == "":
	case i.Registry.SageMakerStepType != SMTuning:
		v.errorf(p+".job_artifact", "job_artifact", "job_artifact applies to Tuning steps only (this is %s)", i.Registry.SageMakerStepType)
	case !strings.HasSuffix(o.PropertyPath, ".TrainingJobName"):
		v.errorf(p+".job_artifact", "job_artifact", "job_artifact needs a property_path naming a training job (…TrainingJobName), not %q", o.PropertyPath)
	case path.IsAbs(a) || a != path.Clean(a) || strings.HasPrefix(a, ".."):
		v.errorf(p+".job_artifact", "job_artifact", "%q must be a clean path relative to the training job's folder, e.g. output/model.tar.gz", a)
	}
}

func (v *validator) checkConfig(i *Interface) {
	c := i.Config
	v.enum("config.extends", c.Extends, ConfigExtends, "config_extends")
	for _, name := range c.Fields.Keys() {
		f, _ := c.Fields.Get(name)
		for _, rule := range configFieldRules {
			rule(v, "config.fields."+name, f)
		}
	}
}

// configFieldRules check one config field at path p, in the order they
// report.
var configFieldRules = []func(v *validator, p string, f Field){
	func(v *validator, p string, f Field) {
		v.required(p+".type", f.Type, FieldTypes, "config_field_type", "field type")
	},
	func(v *validator, p string, f Field) {
		v.required(p+".tier", f.Tier, FieldTiers, "config_field_tier", "field tier")
	},
	func(v *validator, p string, f Field) {
		if f.Tier == TierDerived && f.Rule == "" {
			v.warnf(p+".rule", "config_derived_rule", "a derived field should name its derivation rule")
		}
	},
	func(v *validator, p string, f Field) {
		if f.Tier == TierEssential && f.Default != nil {
			v.warnf(p+".default", "config_essential_default", "an essential field is user-supplied; its default is ignored")
		}
	},
	func(v *validator, p string, f Field) {
		if f.Items != "" {
			v.enum(p+".items", f.Items, FieldTypes, "config_field_type")
		}
	},
	func(v *validator, p string, f Field) {
		if f.Default != nil && f.Type != "" && !valueHasType(f.Default, f.Type) {
			v.errorf(p+".default", "config_default_type", "default %v is not of type %s", f.Default, f.Type)
		}
	},
	func(v *validator, p string, f Field) {
		for n, a := range f.Allowed {
			if f.Type != "" && !valueHasType(a, f.Type) {
				v.errorf(fmt.Sprintf("%s.allowed[%d]", p, n), "config_allowed_type", "allowed value %v is not of type %s", a, f.Type)
			}
		}
	},
	func(v *validator, p string, f Field) {
		if f.Default != nil && len(f.Allowed) > 0 && !slices.ContainsFunc(f.Allowed, func(a any) bool { return fmt.Sprint(a) == fmt.Sprint(f.Default) }) {
			v.errorf(p+".default", "config_default_allowed", "default %v is not an allowed value", f.Default)
		}
	},
	checkFieldPattern,
	checkFieldRange,
}

// required reports an empty value as missing and any other as an enum.
func (v *validator) required(p, value string, allowed []string, rule, what string) {
	if value == "" {
		v.errorf(p, "required", "%s is required (%s)", what, strings.Join(allowed, ", "))
		return
	}
	v.enum(p, value, allowed, rule)
}

func checkFieldPattern(v *validator, p string, f Field) {
	if f.Pattern == "" {
		return
	}
	re, err := regexp.Compile(f.Pattern)
	switch {
	case err != nil:
		v.errorf(p+".pattern", "config_pattern", "pattern does not compile: %v", err)
	case f.Type != "" && f.Type != "string":
		v.errorf(p+".pattern", "config_pattern", "pattern only applies to string fields")
	default:
		if s, ok := f.Default.(string); ok && !re.MatchString(s) {
			v.errorf(p+".default", "config_default_pattern", "default %q does not match the pattern", s)
		}
	}
}

func checkFieldRange(v *validator, p string, f Field) {
	if f.Minimum == nil && f.Maximum == nil {
		return
	}
	if f.Type != "integer" && f.Type != "number" {
		v.errorf(p, "config_range", "minimum/maximum only apply to integer and number fields")
	} else if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		v.errorf(p, "config_range", "minimum %v is above maximum %v", *f.Minimum, *f.Maximum)
	} else if d, ok := toFloat(f.Default); ok {
		if (f.Minimum != nil && d < *f.Minimum) || (f.Maximum != nil && d > *f.Maximum) {
			v.errorf(p+".default", "config_default_range", "default %v is outside the range", f.Default)
		}
	}
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// valueHasType reports whether a YAML-decoded value fits a field type.
func valueHasType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		switch n := v.(type) {
		case int, int64, uint64:
			return true
		case float64:
			return n == float64(int64(n))
		}
		return false
	case "number":
		_, ok := toFloat(v)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}
