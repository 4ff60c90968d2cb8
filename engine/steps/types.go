// Package steps holds the step interface model: one YAML file per step type
// in the Cursus .step.yaml format (step_type, node_type, registry, compute,
// patterns, contract, spec, variants) plus this project's config section.
// It knows nothing about HTTP, MCP or tool envelopes.
package steps

import (
	"crypto/sha256"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Node types: where a step may stand in a DAG (a source has no parents, a
// sink no children, a singular step neither).
const (
	NodeSource   = "source"
	NodeInternal = "internal"
	NodeSink     = "sink"
	NodeSingular = "singular"
)

// SageMaker step types a registry block may name.
const (
	SMProcessing    = "Processing"
	SMTraining      = "Training"
	SMCreateModel   = "CreateModel"
	SMTransform     = "Transform"
	SMTuning        = "Tuning"
	SMRegisterModel = "RegisterModel"
	SMLambda        = "Lambda"
	SMBase          = "Base"
	SMUtility       = "Utility"
	// Amazon-internal kinds: loadable, never compiled.
	SMCradleDataLoading               = "CradleDataLoading"
	SMRedshiftDataLoading             = "RedshiftDataLoading"
	SMMimsModelRegistrationProcessing = "MimsModelRegistrationProcessing"
)

// Dependency / output types (DependencyType).
const (
	TypeModelArtifacts   = "model_artifacts"
	TypeProcessingOutput = "processing_output"
	TypeTrainingData     = "training_data"
	TypeHyperparameters  = "hyperparameters"
	TypePayloadSamples   = "payload_samples"
	TypeCustomProperty   = "custom_property"
)

// Config field tiers.
const (
	TierEssential = "essential"
	TierSystem    = "system"
	TierDerived   = "derived"
)

// Interface is one step type: everything the engine knows about it.
type Interface struct {
	StepType string           `yaml:"step_type" json:"step_type"`
	NodeType string           `yaml:"node_type" json:"node_type"`
	Registry Registry         `yaml:"registry" json:"registry"`
	Compute  *Compute         `yaml:"compute,omitempty" json:"compute,omitempty"`
	Patterns Patterns         `yaml:"patterns" json:"patterns"`
	Contract Contract         `yaml:"contract" json:"contract"`
	Spec     Spec             `yaml:"spec" json:"spec"`
	Variants Ordered[Variant] `yaml:"variants,omitempty" json:"variants,omitempty"`
	Config   ConfigSection    `yaml:"config,omitempty" json:"config,omitempty"`

	// Source is where the file came from ("builtin:<stem>.step.yaml" or a
	// filesystem path). Not read from YAML.
	Source string `yaml:"-" json:"source,omitempty"`
	// JobType is the variant applied to this copy ("" for the base).
	JobType string `yaml:"-" json:"job_type,omitempty"`

	// raw is the decoded document, kept for variant merges and unknown-key
	// reports; nil for interfaces built in code.
	raw *yaml.Node
	// text is the file as written, for callers who want an exemplar; nil
	// for interfaces built in code.
	text []byte
	// digest is the SHA-256 of text, which keys the decoded variants.
	digest [sha256.Size]byte
	// unknown lists key paths the loader ignored.
	unknown []string
	// missing lists required top-level keys absent from the file.
	missing []string
}

// Registry is the registry row authored in the file.
type Registry struct {
	SageMakerStepType string `yaml:"sagemaker_step_type" json:"sagemaker_step_type"`
	Description       string `yaml:"description" json:"description"`
	Requires          string `yaml:"requires,omitempty" json:"requires,omitempty"`
	ConfigClass       string `yaml:"config_class,omitempty" json:"config_class,omitempty"`
	BuilderStepName   string `yaml:"builder_step_name,omitempty" json:"builder_step_name,omitempty"`
	// StepAssembly is deprecated here; patterns.step_assembly wins.
	StepAssembly string `yaml:"step_assembly,omitempty" json:"step_assembly,omitempty"`
}

// Compute describes how SageMaker runs the step (framework, SDK class, …).
type Compute struct {
	Kind                    string `yaml:"kind,omitempty" json:"kind,omitempty"`
	SDKClass                string `yaml:"sdk_class,omitempty" json:"sdk_class,omitempty"`
	FrameworkVersionField   string `yaml:"framework_version_field,omitempty" json:"framework_version_field,omitempty"`
	FrameworkVersionDefault string `yaml:"framework_version_default,omitempty" json:"framework_version_default,omitempty"`
	PyVersionField          string `yaml:"py_version_field,omitempty" json:"py_version_field,omitempty"`
	FrameworkName           string `yaml:"framework_name,omitempty" json:"framework_name,omitempty"`
	// ModelFamily is the kind of model a training or tuning step makes
	// (xgboost, lightgbm, pytorch); it may differ from the image's framework
	// (LightGBM trains on the PyTorch image). Downstream model_class checks
	// compare against it.
	ModelFamily                 string   `yaml:"model_family,omitempty" json:"model_family,omitempty"`
	ImageURIField               string   `yaml:"image_uri_field,omitempty" json:"image_uri_field,omitempty"`
	ContainerEntrypoint         []string `yaml:"container_entrypoint,omitempty" json:"container_entrypoint,omitempty"`
	LockTrainingRegion          bool     `yaml:"lock_training_region,omitempty" json:"lock_training_region,omitempty"`
	RetrieveImage               string   `yaml:"retrieve_image,omitempty" json:"retrieve_image,omitempty"`
	RetrieveFramework           string   `yaml:"retrieve_framework,omitempty" json:"retrieve_framework,omitempty"`
	KMSNetwork                  bool     `yaml:"kms_network,omitempty" json:"kms_network,omitempty"`
	NetworkMode                 string   `yaml:"network_mode,omitempty" json:"network_mode,omitempty"`
	Requires                    string   `yaml:"requires,omitempty" json:"requires,omitempty"`
	SubnetsField                string   `yaml:"subnets_field,omitempty" json:"subnets_field,omitempty"`
	SecurityGroupIDsField       string   `yaml:"security_group_ids_field,omitempty" json:"security_group_ids_field,omitempty"`
	EnableNetworkIsolationField string   `yaml:"enable_network_isolation_field,omitempty" json:"enable_network_isolation_field,omitempty"`
	InstanceSizeMode            string   `yaml:"instance_size_mode,omitempty" json:"instance_size_mode,omitempty"`
	LockedRegion                string   `yaml:"locked_region,omitempty" json:"locked_region,omitempty"`
}

// Patterns are wiring knobs for the builder.
type Patterns struct {
	StepAssembly         string   `yaml:"step_assembly,omitempty" json:"step_assembly,omitempty"`
	DirectInputKeys      []string `yaml:"direct_input_keys,omitempty" json:"direct_input_keys,omitempty"`
	IncludeJobTypeInPath *bool    `yaml:"include_job_type_in_path,omitempty" json:"include_job_type_in_path,omitempty"`
}

// Contract is the script's view of the container: paths, env vars, args.
type Contract struct {
	EntryPoint            string              `yaml:"entry_point,omitempty" json:"entry_point,omitempty"`
	Description           string              `yaml:"description,omitempty" json:"description,omitempty"`
	Inputs                Ordered[InputPort]  `yaml:"inputs,omitempty" json:"inputs"`
	Outputs               Ordered[OutputPort] `yaml:"outputs,omitempty" json:"outputs"`
	EnvVars               EnvVars             `yaml:"env_vars,omitempty" json:"env_vars"`
	JobArguments          []JobArgument       `yaml:"job_arguments,omitempty" json:"job_arguments"`
	Arguments             Ordered[string]     `yaml:"arguments,omitempty" json:"arguments,omitempty"`
	FrameworkRequirements Ordered[string]     `yaml:"framework_requirements,omitempty" json:"framework_requirements,omitempty"`
	SourceDir             string              `yaml:"source_dir,omitempty" json:"source_dir,omitempty"`
	IncludeJobTypeInPath  *bool               `yaml:"include_job_type_in_path,omitempty" json:"include_job_type_in_path,omitempty"`
	SkipInputs            []string            `yaml:"skip_inputs,omitempty" json:"skip_inputs,omitempty"`
	InputSourceOverrides  Ordered[string]     `yaml:"input_source_overrides,omitempty" json:"input_source_overrides,omitempty"`
	CircularRefCheck      bool                `yaml:"circular_ref_check,omitempty" json:"circular_ref_check,omitempty"`
	RuntimeRequires       []string            `yaml:"runtime_requires,omitempty" json:"runtime_requires,omitempty"`
	ComputedEnvPaths      Ordered[[]string]   `yaml:"computed_env_paths,omitempty" json:"computed_env_paths,omitempty"`
	// OutputPathToken replaces the per-output destinations with one flat
	// token under the pipeline base.
	OutputPathToken string `yaml:"output_path_token,omitempty" json:"output_path_token,omitempty"`
	// Sink steps emit no processing outputs.
	Sink bool `yaml:"sink,omitempty" json:"sink,omitempty"`
}

// InputPort is a container input path. Channels split a training input into
// several SageMaker channels (train/val/test).
type InputPort struct {
	Path     string   `yaml:"path" json:"path"`
	Required *bool    `yaml:"required,omitempty" json:"required,omitempty"`
	Channels []string `yaml:"channels,omitempty" json:"channels,omitempty"`
}

// IsRequired applies the default (true) when required is unset.
func (p InputPort) IsRequired() bool { return p.Required == nil || *p.Required }

// OutputPort is a container output path.
type OutputPort struct {
	Path string `yaml:"path" json:"path"`
	// Object is the file the script writes under Path (model.tar.gz) when
	// consumers need that object rather than the output prefix; the
	// compiler joins it to the output's S3 URI for them.
	Object string `yaml:"object,omitempty" json:"object,omitempty"`
}

// EnvVars lists required variable names and optional ones with defaults.
type EnvVars struct {
	Required []string        `yaml:"required,omitempty" json:"required"`
	Optional Ordered[string] `yaml:"optional,omitempty" json:"optional"`
}

// JobArgument is one command-line flag and the config field it comes from.
type JobArgument struct {
	Flag   string `yaml:"flag" json:"flag"`
	Source string `yaml:"source" json:"source"`
}

// NormalizeFlag strips leading dashes and maps '-' to '_' so that
// "--job-type", "--job_type" and "job_type" compare equal.
func NormalizeFlag(flag string) string {
	return strings.ReplaceAll(strings.TrimLeft(flag, "-"), "-", "_")
}

// Spec declares the step's logical dependencies and outputs.
type Spec struct {
	Dependencies Ordered[Dependency] `yaml:"dependencies,omitempty" json:"dependencies"`
	Outputs      Ordered[Output]     `yaml:"outputs,omitempty" json:"outputs"`
}

// Dependency is one logical input the step consumes.
type Dependency struct {
	Type              string   `yaml:"type,omitempty" json:"type"`
	Required          *bool    `yaml:"required,omitempty" json:"required"`
	DataType          string   `yaml:"data_type,omitempty" json:"data_type"`
	CompatibleSources []string `yaml:"compatible_sources,omitempty" json:"compatible_sources"`
	SemanticKeywords  []string `yaml:"semantic_keywords,omitempty" json:"semantic_keywords"`
	Description       string   `yaml:"description,omitempty" json:"description,omitempty"`
}

// IsRequired applies the default (true) when required is unset.
func (d Dependency) IsRequired() bool { return d.Required == nil || *d.Required }

// Output is one logical output the step produces.
type Output struct {
	Type         string `yaml:"type,omitempty" json:"type"`
	PropertyPath string `yaml:"property_path,omitempty" json:"property_path"`
	// JobArtifact, on a Tuning step's output whose property path names a
	// training job, makes the output the object <tuning output path>/<job
	// name>/<JobArtifact> (a trial's model is output/model.tar.gz): a tuning
	// job has no model-artifact property of its own.
	JobArtifact      string   `yaml:"job_artifact,omitempty" json:"job_artifact,omitempty"`
	DataType         string   `yaml:"data_type,omitempty" json:"data_type"`
	Aliases          []string `yaml:"aliases,omitempty" json:"aliases"`
	SemanticKeywords []string `yaml:"semantic_keywords,omitempty" json:"semantic_keywords"`
	Description      string   `yaml:"description,omitempty" json:"description,omitempty"`
}

// Variant overrides parts of the base sections for one job type. Maps merge
// key by key; any other value replaces the base value.
type Variant struct {
	Spec     map[string]any `yaml:"spec,omitempty" json:"spec,omitempty"`
	Contract map[string]any `yaml:"contract,omitempty" json:"contract,omitempty"`
	Patterns map[string]any `yaml:"patterns,omitempty" json:"patterns,omitempty"`
}

// ConfigSection is this project's addition: the step's configuration
// schema. Fields add to (or refine) the fields of the base chain named by
// Extends (base → processing|training|model|transform|tuning|registration).
type ConfigSection struct {
	Extends string         `yaml:"extends,omitempty" json:"extends,omitempty"`
	Fields  Ordered[Field] `yaml:"fields,omitempty" json:"fields,omitempty"`
}

// Field declares one configuration field.
type Field struct {
	Type        string   `yaml:"type" json:"type"` // string|integer|number|boolean|array|object
	Tier        string   `yaml:"tier" json:"tier"` // essential|system|derived
	Default     any      `yaml:"default,omitempty" json:"default,omitempty"`
	Description string   `yaml:"description,omitempty" json:"description,omitempty"`
	Allowed     []any    `yaml:"allowed,omitempty" json:"allowed,omitempty"`
	Pattern     string   `yaml:"pattern,omitempty" json:"pattern,omitempty"`
	Minimum     *float64 `yaml:"minimum,omitempty" json:"minimum,omitempty"`
	Maximum     *float64 `yaml:"maximum,omitempty" json:"maximum,omitempty"`
	Items       string   `yaml:"items,omitempty" json:"items,omitempty"` // element type of an array
	// Rule names the derivation of a derived field, e.g.
	// `s3_join(pipeline_s3_loc, "xgboost_training", "model")`.
	Rule string `yaml:"rule,omitempty" json:"rule,omitempty"`
}
