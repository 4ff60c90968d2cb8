package strategies

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cursus-dev/cursus/engine/steps"
)

// PatternsView is the per-axis description of how a step is built, as
// steps.patterns reports it. Builders are synthesized from the
// interface here, so no axis is ever customised by code: custom_override
// is always false.
type PatternsView struct {
	StepName          string         `json:"step_name"`
	StepType          string         `json:"step_type"`
	SageMakerStepType string         `json:"sagemaker_step_type"`
	JobType           string         `json:"job_type"`
	Patterns          PatternAxes    `json:"patterns"`
	Knobs             map[string]any `json:"knobs"`
	Dependencies      Dependencies   `json:"dependencies"`
	Note              string         `json:"note,omitempty"`
}

// PatternAxes holds one entry per construction axis.
type PatternAxes struct {
	CreateStep   CreateStepAxis   `json:"create_step"`
	Compute      ComputeAxis      `json:"compute"`
	EnvVars      EnvVarsAxis      `json:"env_vars"`
	JobArguments JobArgumentsAxis `json:"job_arguments"`
	Inputs       InputsAxis       `json:"inputs"`
	Outputs      OutputsAxis      `json:"outputs"`
}

// CreateStepAxis is the routing result.
type CreateStepAxis struct {
	Handler           string `json:"handler"`
	Verb              string `json:"verb"`
	Axis              string `json:"axis"`
	Name              string `json:"name"`
	SageMakerStepType string `json:"sagemaker_step_type"`
	StepAssembly      string `json:"step_assembly"`
	Requires          string `json:"requires"`
	Routable          bool   `json:"routable"`
	Implemented       bool   `json:"implemented"`
	CustomOverride    bool   `json:"custom_override"`
}

// ComputeAxis is how the processor / estimator / model is made.
type ComputeAxis struct {
	Kind string `json:"kind"`
	// SDKClass is compute.sdk_class as the step declares it, so it can be
	// copied into a new step; Builds is the SDK class the kind makes.
	SDKClass              string `json:"sdk_class"`
	Builds                string `json:"builds"`
	FrameworkVersionField string `json:"framework_version_field"`
	LockTrainingRegion    bool   `json:"lock_training_region"`
	Requires              string `json:"requires"`
	Source                string `json:"source"`
	CustomOverride        bool   `json:"custom_override"`
}

// EnvVarsAxis is where the container environment comes from.
type EnvVarsAxis struct {
	Source           string   `json:"source"`
	DeclaredRequired []string `json:"declared_required"`
	DeclaredOptional []string `json:"declared_optional"`
	CustomOverride   bool     `json:"custom_override"`
}

// JobArgumentsAxis is where the script's command line comes from.
type JobArgumentsAxis struct {
	Source         string              `json:"source"`
	Declared       []steps.JobArgument `json:"declared"`
	CustomOverride bool                `json:"custom_override"`
}

// InputsAxis describes input wiring and its deviations from the standard
// loop.
type InputsAxis struct {
	Pattern        string   `json:"pattern"`
	Deviations     []string `json:"deviations"`
	CustomOverride bool     `json:"custom_override"`
}

// OutputsAxis describes where outputs are written.
type OutputsAxis struct {
	Pattern               string `json:"pattern"`
	OutputPathToken       string `json:"output_path_token"`
	OutputPathTokenSource string `json:"output_path_token_source"`
	IncludeJobTypeInPath  bool   `json:"include_job_type_in_path"`
	Sink                  bool   `json:"sink"`
	CustomOverride        bool   `json:"custom_override"`
}

// Dependencies lists what building and running the step needs.
type Dependencies struct {
	BuildTime map[string]string `json:"build_time"`
	Runtime   []string          `json:"runtime"`
	Native    bool              `json:"native"`
}

// processorClass names the SDK class a compute kind builds.
func processorClass(c *steps.Compute) string {
	if c == nil {
		return ""
	}
	switch c.Kind {
	case "sklearn":
		return "SKLearnProcessor"
	case "xgboost":
		return "XGBoostProcessor"
	case "script", "byo_container":
		return "ScriptProcessor"
	case "framework":
		return "FrameworkProcessor"
	case "transformer":
		return "Transformer"
	case "estimator", "model":
		return c.SDKClass
	}
	return ""
}

// Describe builds the patterns view of an interface (apply the job-type
// variant first).
func (l *Library) Describe(iface *steps.Interface) PatternsView {
	sm := iface.Registry.SageMakerStepType
	asm := StepAssembly(iface)
	s, axis, name, err := l.ForStepType(sm, asm)
	v := PatternsView{
		StepName: iface.StepType, StepType: iface.StepType, SageMakerStepType: sm, JobType: iface.JobType,
		Knobs: EffectiveKnobs(s, iface),
		Dependencies: Dependencies{BuildTime: map[string]string{}, Runtime: append([]string{}, iface.Contract.RuntimeRequires...),
			Native: iface.Registry.Requires == "" || iface.Registry.Requires == "none"},
	}
	if err != nil {
		v.Note = err.Error()
	} else if !s.Implemented {
		v.Note = s.Note
	}
	req := orNone(iface.Registry.Requires)
	v.Patterns.CreateStep = CreateStepAxis{Handler: s.Handler, Verb: s.Verb, Axis: axis, Name: name,
		SageMakerStepType: sm, StepAssembly: asm, Requires: req, Routable: err == nil, Implemented: err == nil && s.Implemented}
	if req != "none" {
		v.Dependencies.BuildTime["create_step"] = req
	}
	if c := iface.Compute; c != nil {
		v.Patterns.Compute = ComputeAxis{Kind: c.Kind, SDKClass: c.SDKClass, Builds: processorClass(c), FrameworkVersionField: c.FrameworkVersionField,
			LockTrainingRegion: c.LockTrainingRegion, Requires: orNone(c.Requires), Source: "compute section"}
		if r := orNone(c.Requires); r != "none" {
			v.Dependencies.BuildTime["compute"] = r
		}
	} else {
		v.Patterns.Compute = ComputeAxis{Requires: "none", Source: "none (no compute section)"}
	}
	optional := append([]string{}, iface.Contract.EnvVars.Optional.Keys()...)
	sort.Strings(optional)
	v.Patterns.EnvVars = EnvVarsAxis{Source: "contract.env_vars resolved from config fields (NAME → name), then hyperparameters, then the declared default",
		DeclaredRequired: append([]string{}, iface.Contract.EnvVars.Required...), DeclaredOptional: optional}
	v.Patterns.JobArguments = JobArgumentsAxis{Source: "contract.job_arguments (flag ← config field)",
		Declared: append([]steps.JobArgument{}, iface.Contract.JobArguments...)}
	v.Patterns.Inputs = InputsAxis{Pattern: "standard spec×contract loop", Deviations: inputDeviations(iface)}
	if len(v.Patterns.Inputs.Deviations) > 0 {
		v.Patterns.Inputs.Pattern += " with " + strings.Join(v.Patterns.Inputs.Deviations, "; ")
	}
	out := OutputsAxis{IncludeJobTypeInPath: iface.JobTypeInPath(), Sink: iface.Contract.Sink}
	out.OutputPathToken = iface.OutputPathToken()
	switch {
	case iface.Contract.Sink || iface.Spec.Outputs.Len() == 0:
		out.Pattern = "sink (no outputs)"
	case iface.Contract.OutputPathToken != "":
		out.OutputPathTokenSource = "override: contract.output_path_token"
	default:
		out.OutputPathTokenSource = "derived: step_type in snake_case (Training, Tuning) or lower-cased (other steps)"
	}
	if out.Pattern == "" {
		out.Pattern = "generated destination Join(base, <token>, logical_name)"
		if out.IncludeJobTypeInPath {
			out.Pattern = "generated destination Join(base, <token>[, job_type], logical_name)"
		}
	}
	v.Patterns.Outputs = out
	return v
}

func inputDeviations(iface *steps.Interface) []string {
	d := []string{}
	c := iface.Contract
	if c.CircularRefCheck {
		d = append(d, "circular_ref_check")
	}
	if len(c.SkipInputs) > 0 {
		d = append(d, "skip_inputs="+strings.Join(c.SkipInputs, ","))
	}
	if c.InputSourceOverrides.Len() > 0 {
		var parts []string
		for _, k := range c.InputSourceOverrides.Keys() {
			v, _ := c.InputSourceOverrides.Get(k)
			parts = append(parts, fmt.Sprintf("%s←config.%s", k, v))
		}
		d = append(d, "input_source_overrides="+strings.Join(parts, ","))
	}
	if c.SourceDir != "" {
		d = append(d, "source_dir (script path split into source_dir + file)")
	}
	return d
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
