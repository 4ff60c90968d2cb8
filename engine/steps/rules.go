package steps

import (
	"regexp"
	"slices"
	"strings"
)

// RuleTopics are the topics of the authoring rules (author.rules).
var RuleTopics = []string{"naming", "packaging", "sdk_carveout", "reuse_class", "closure"}

// outputPathToken is what contract.output_path_token may be: one S3 key
// segment, so a token can never climb out of the pipeline's base prefix.
var outputPathToken = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// PathKnob is one packaging knob of a .step.yaml that changes where the
// compiled definition writes a step's outputs.
type PathKnob struct {
	Field   string `json:"field"`
	Default any    `json:"default"`
	// Effects says what each setting does to the compiled definition.
	Effects map[string]string `json:"effects"`
	Pattern string            `json:"pattern,omitempty"`
}

// PathKnobs are the .step.yaml knobs over generated output destinations;
// OutputSegments applies them and the validator checks their values.
var PathKnobs = []PathKnob{
	{Field: "contract.output_path_token", Default: nil, Pattern: outputPathToken.String(), Effects: map[string]string{
		"unset": "outputs go under <base>/<step_type lowercased>/[<job_type>/]<logical name>; a Training or Tuning job under <base>/<step_type in snake_case>",
		"set":   "the token replaces the step-type segment: <base>/<token>/[<job_type>/]<logical name>; a Training or Tuning job writes under <base>/<token>",
	}},
	{Field: "patterns.include_job_type_in_path", Default: true, Effects: map[string]string{
		"true":  "the job type is a path segment of Processing and Transform outputs",
		"false": "the job type is left out: job types of the same step share output paths",
	}},
}

// OutputPathToken is the path segment under the pipeline's base prefix a
// step's outputs go to: contract.output_path_token, else the step type in
// snake case for a Training or Tuning job (its S3OutputPath) and
// lower-cased for any other step.
func (i *Interface) OutputPathToken() string {
	switch {
	case i.Contract.OutputPathToken != "":
		return i.Contract.OutputPathToken
	case i.Registry.SageMakerStepType == SMTraining || i.Registry.SageMakerStepType == SMTuning:
		return CanonicalToSnake(i.StepType)
	}
	return strings.ToLower(i.StepType)
}

// OutputSegments are the path segments between the pipeline's base prefix
// and a Processing or Transform output's logical name: the output path
// token, then the job type unless include_job_type_in_path is false.
func (i *Interface) OutputSegments(jobType string) []string {
	token := i.OutputPathToken()
	if jobType == "" || !i.JobTypeInPath() {
		return []string{token}
	}
	return []string{token, jobType}
}

// JobTypeInPath is patterns.include_job_type_in_path, else the contract's
// (older files), else true.
func (i *Interface) JobTypeInPath() bool {
	switch {
	case i.Patterns.IncludeJobTypeInPath != nil:
		return *i.Patterns.IncludeJobTypeInPath
	case i.Contract.IncludeJobTypeInPath != nil:
		return *i.Contract.IncludeJobTypeInPath
	}
	return true
}

// AuthorRules is one topic's rules, nil for an unknown topic. The closed
// sets and patterns are the validator's own, so the rules cannot drift
// from the checks.
func AuthorRules(topic string) map[string]any {
	switch topic {
	case "naming":
		return map[string]any{
			"step_name": map[string]any{"rule": "PascalCase; equals the .step.yaml step_type and the registry name; the file is <snake_case>.step.yaml",
				"pascal_case_regex": stepTypeName.String()},
			"config_class":      map[string]any{"rule": "<StepName>Config unless registry.config_class overrides it", "suffix": "Config"},
			"builder_step_name": map[string]any{"rule": "<StepName>StepBuilder; derived, no file to write", "suffix": "StepBuilder"},
			"sagemaker_step_type": map[string]any{"rule": "registry.sagemaker_step_type picks the builder; Amazon-internal kinds load but are not compiled",
				"valid_values": slices.Clone(SageMakerStepTypes)},
			"dag_node": "a DAG node is <StepName> or <StepName>_<job_type>; the SageMaker step name is <StepName>-<Jobtype>",
		}
	case "packaging":
		out := map[string]any{
			"entry_point": "contract.entry_point names the script; the config's processing_entry_point / training_entry_point default must agree",
			"scripts": "scripts live in the config's source_dir (relative to the workspace), else in the entry script's own directory; " +
				"framework processors, estimators and models upload that directory, other processors only the entry script; code is uploaded content-addressed",
		}
		for _, k := range PathKnobs {
			out[k.Field[strings.IndexByte(k.Field, '.')+1:]] = k
		}
		return out
	case "sdk_carveout":
		return map[string]any{
			"registry_requires": map[string]any{"field": "registry.requires", "valid_values": slices.Clone(RegistryRequires),
				"rule": "only the Amazon-internal SDK steps set it; such steps are not compiled here"},
			"compute_requires": map[string]any{"field": "compute.requires", "valid_values": slices.Clone(ComputeRequires),
				"rule": "mods_workflow_core only with compute.kms_network"},
			"closed_sets": map[string]any{"compute.kind": slices.Clone(ComputeKinds), "compute.sdk_class": slices.Clone(SDKClasses),
				"patterns.step_assembly": slices.Clone(StepAssemblies)},
			"note": "public replacements: DummyDataLoading for Cradle/Redshift loading, Registration for MIMS registration",
		}
	case "reuse_class":
		return map[string]any{
			"shared":          "framework-agnostic steps reused as-is by every pipeline (TabularPreprocessing, DummyDataLoading, …)",
			"model_dependent": "steps tied to one framework (XGBoostTraining, PyTorchModelEval, …); leave the model section of the script open",
			"user_template":   "steps expected to be copied and customised per project",
			"decision":        "prefer reusing a step with new config values, then extending an optional dependency, and only then a new step",
		}
	case "closure":
		return map[string]any{
			"registry_by_construction": "the registry is derived from the .step.yaml files; never hand-edit a registry",
			"contract_spec_alignment":  "every contract.inputs key is a spec.dependencies key; every contract.outputs key is a spec.outputs key (or alias)",
			"compatible_sources":       "exact, case-sensitive step type names",
		}
	}
	return nil
}
