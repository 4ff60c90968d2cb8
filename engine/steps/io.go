package steps

import "strings"

// IOView is the container-level view of a step, as steps.io reports it: where
// each logical input lands, where each output is read from, and how a
// downstream step references it at run time.
type IOView struct {
	StepName          string     `json:"step_name"`
	StepType          string     `json:"step_type"`
	SageMakerStepType string     `json:"sagemaker_step_type"`
	JobType           string     `json:"job_type"`
	PipelineStepName  string     `json:"pipeline_step_name"`
	Inputs            []IOInput  `json:"inputs"`
	Outputs           []IOOutput `json:"outputs"`
	DependencyCount   int        `json:"dependency_count"`
	OutputCount       int        `json:"output_count"`
}

// IOInput is one dependency joined with its contract path.
type IOInput struct {
	LogicalName string `json:"logical_name"`
	// ContainerPath is empty for spec-only inputs (CreateModel, Transform,
	// RegisterModel read them as request fields, not files).
	ContainerPath     string   `json:"container_path"`
	Required          bool     `json:"required"`
	Type              string   `json:"type"`
	DataType          string   `json:"data_type"`
	CompatibleSources []string `json:"compatible_sources"`
	SemanticKeywords  []string `json:"semantic_keywords"`
	// Channels are the SageMaker training channels (Training/Tuning only).
	Channels []string `json:"channels,omitempty"`
	// Source says where the value comes from: "upstream" (dependency
	// resolution), "config:<field>" (contract.input_source_overrides) or
	// "skipped" (contract.skip_inputs).
	Source string `json:"source"`
}

// IOOutput is one output joined with its contract path.
type IOOutput struct {
	LogicalName   string `json:"logical_name"`
	ContainerPath string `json:"container_path"`
	PropertyPath  string `json:"property_path"`
	// PropertyReference is the runtime reference a consumer gets, e.g.
	// {"Get": "Steps.XGBoostTraining.ModelArtifacts.S3ModelArtifacts"}.
	PropertyReference map[string]string `json:"property_reference,omitempty"`
	// JobArtifact, when set, makes the value a consumer gets the object
	// <output path>/<the referenced job's name>/<job_artifact> (a Std:Join).
	JobArtifact string   `json:"job_artifact,omitempty"`
	Type        string   `json:"type"`
	Aliases     []string `json:"aliases"`
	DataType    string   `json:"data_type"`
}

// PropertyRef converts a spec property path to the definition's Get string
// for the named pipeline step: the leading "properties." is dropped
// (SageMaker references carry no Properties segment).
func PropertyRef(pipelineStepName, propertyPath string) string {
	return "Steps." + pipelineStepName + "." + strings.TrimPrefix(propertyPath, "properties.")
}

// Channels gives the training channels an input feeds: declared channels,
// else train/val/test for input_path, else the segment after
// /opt/ml/input/data/, else the logical name.
func Channels(logicalName string, port InputPort) []string {
	if len(port.Channels) > 0 {
		return append([]string(nil), port.Channels...)
	}
	if logicalName == "input_path" {
		return []string{"train", "val", "test"}
	}
	if rest, ok := strings.CutPrefix(port.Path, "/opt/ml/input/data/"); ok && rest != "" {
		return []string{strings.SplitN(rest, "/", 2)[0]}
	}
	return []string{logicalName}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// IO builds the I/O view of an interface (apply the job-type variant first
// with WithJobType or Catalog.ForJobType).
func IO(iface *Interface) IOView {
	sm := iface.Registry.SageMakerStepType
	psn := PipelineStepName(iface.StepType, iface.JobType)
	v := IOView{
		StepName: iface.StepType, StepType: iface.StepType, SageMakerStepType: sm, JobType: iface.JobType,
		PipelineStepName: psn, Inputs: []IOInput{}, Outputs: []IOOutput{},
		DependencyCount: iface.Spec.Dependencies.Len(), OutputCount: iface.Spec.Outputs.Len(),
	}
	for _, name := range iface.Spec.Dependencies.Keys() {
		d, _ := iface.Spec.Dependencies.Get(name)
		port, hasPort := iface.Contract.Inputs.Get(name)
		in := IOInput{
			LogicalName: name, ContainerPath: port.Path, Required: d.IsRequired(),
			Type: orDefault(d.Type, TypeProcessingOutput), DataType: orDefault(d.DataType, "S3Uri"),
			CompatibleSources: nonNil(d.CompatibleSources), SemanticKeywords: nonNil(d.SemanticKeywords),
			Source: "upstream",
		}
		if attr, ok := iface.Contract.InputSourceOverrides.Get(name); ok {
			in.Source = "config:" + attr
		}
		for _, s := range iface.Contract.SkipInputs {
			if s == name {
				in.Source = "skipped"
			}
		}
		if (sm == SMTraining || sm == SMTuning) && hasPort {
			in.Channels = Channels(name, port)
		}
		v.Inputs = append(v.Inputs, in)
	}
	for _, name := range iface.Spec.Outputs.Keys() {
		o, _ := iface.Spec.Outputs.Get(name)
		port, _ := iface.Contract.Outputs.Get(name)
		if port.Path == "" {
			// a contract output may be keyed by an alias of the spec output
			for _, a := range o.Aliases {
				if p, ok := iface.Contract.Outputs.Get(a); ok {
					port = p
					break
				}
			}
		}
		out := IOOutput{
			LogicalName: name, ContainerPath: port.Path, PropertyPath: o.PropertyPath, JobArtifact: o.JobArtifact,
			Type: orDefault(o.Type, TypeProcessingOutput), Aliases: nonNil(o.Aliases), DataType: orDefault(o.DataType, "S3Uri"),
		}
		if o.PropertyPath != "" {
			out.PropertyReference = map[string]string{"Get": PropertyRef(psn, o.PropertyPath)}
		}
		v.Outputs = append(v.Outputs, out)
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
