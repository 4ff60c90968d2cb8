// Package execdoc builds, fills, merges and checks execution documents in
// the Cursus layout:
//
//	{"PIPELINE_STEP_CONFIGS": {<pipeline step name>: {"STEP_TYPE": [...], "STEP_CONFIG": {...}}},
//	 "PIPELINE_ADDITIONAL_PARAMS": {...}}
//
// keyed by the step names the compiler emits (TabularPreprocessing-Training),
// never by DAG node names.
package execdoc

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cursus-dev/cursus/engine/compiler"
	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/sagemaker"
	"github.com/cursus-dev/cursus/engine/steps"
)

// Document keys.
const (
	StepConfigs      = "PIPELINE_STEP_CONFIGS"
	AdditionalParams = "PIPELINE_ADDITIONAL_PARAMS"
	StepType         = "STEP_TYPE"
	StepConfig       = "STEP_CONFIG"
)

// Step type tags.
const (
	TagProcessing    = "PROCESSING_STEP"
	TagTraining      = "TRAINING_STEP"
	TagCreateModel   = "CREATE_MODEL_STEP"
	TagTransform     = "TRANSFORM_STEP"
	TagTuning        = "TUNING_STEP"
	TagRegisterModel = "REGISTER_MODEL_STEP"
	TagWorkflowInput = "WORKFLOW_INPUT"
)

// Template is a document with one empty entry per step name, each tagged
// as a processing step (the Cursus utility's behaviour), and empty
// additional parameters.
func Template(stepNames []string) map[string]any {
	steps := map[string]any{}
	for _, n := range stepNames {
		steps[n] = map[string]any{StepType: []any{TagProcessing}, StepConfig: map[string]any{}}
	}
	return map[string]any{StepConfigs: steps, AdditionalParams: map[string]any{}}
}

// ExpectedStep is what a DAG's compiled pipeline needs in the document.
type ExpectedStep struct {
	Name     string   `json:"name"`
	Node     string   `json:"node"`
	StepType []string `json:"step_type"`
}

// Expected lists the entries the document of a compiled pipeline has, in
// DAG order: data-loading sources are workflow inputs, the rest are tagged
// by their SageMaker step type.
func Expected(bound []compiler.BoundNode, cat compiler.Catalog) []ExpectedStep {
	out := make([]ExpectedStep, 0, len(bound))
	for _, b := range bound {
		out = append(out, ExpectedStep{Name: b.StepName, Node: b.Node, StepType: tags(b, cat)})
	}
	return out
}

func tags(b compiler.BoundNode, cat compiler.Catalog) []string {
	if isDataLoading(b, cat) {
		return []string{TagWorkflowInput, b.StepType + "Step"}
	}
	switch b.SageMakerType {
	case steps.SMTraining:
		return []string{TagTraining}
	case steps.SMCreateModel:
		return []string{TagCreateModel}
	case steps.SMTransform:
		return []string{TagTransform}
	case steps.SMTuning:
		return []string{TagTuning}
	case steps.SMRegisterModel:
		return []string{TagRegisterModel}
	}
	return []string{TagProcessing}
}

func isDataLoading(b compiler.BoundNode, cat compiler.Catalog) bool {
	if iface, ok := cat.Get(b.StepType); ok && iface.NodeType == steps.NodeSource {
		return true
	}
	return strings.HasSuffix(b.StepType, "DataLoading")
}

// TemplateFor is the template of a compiled pipeline: one entry per step,
// keyed by its pipeline step name, with its step type tags.
func TemplateFor(expected []ExpectedStep) map[string]any {
	entries := map[string]any{}
	for _, e := range expected {
		t := make([]any, len(e.StepType))
		for i, s := range e.StepType {
			t[i] = s
		}
		entries[e.Name] = map[string]any{StepType: t, StepConfig: map[string]any{}}
	}
	return map[string]any{StepConfigs: entries, AdditionalParams: map[string]any{}}
}

// Stats describes a generated document.
type Stats struct {
	NodeCount       int      `json:"node_count"`
	ConfigCount     int      `json:"config_count"`
	StepCount       int      `json:"step_count"`
	StepsWithConfig []string `json:"steps_with_config"`
	AutoTemplate    bool     `json:"auto_template"`
}

// Generate fills the STEP_CONFIG of data-loading and registration steps
// from their configs. doc nil means: start from TemplateFor the DAG. Steps
// the document lacks are added (with a warning); other entries are kept as
// they are. The input document is not modified.
func Generate(bound []compiler.BoundNode, cat compiler.Catalog, doc map[string]any, configCount int) (map[string]any, Stats, []string) {
	expected := Expected(bound, cat)
	st := Stats{NodeCount: len(bound), ConfigCount: configCount, StepsWithConfig: []string{}}
	var warns []string
	if doc == nil {
		doc = TemplateFor(expected)
		st.AutoTemplate = true
	} else {
		doc = deepCopy(doc).(map[string]any)
	}
	entries, ok := doc[StepConfigs].(map[string]any)
	if !ok {
		warns = append(warns, "document has no "+StepConfigs+" object; returned unchanged")
		return doc, st, warns
	}
	for i, b := range bound {
		var fill map[string]any
		switch {
		case isDataLoading(b, cat):
			fill = dataLoadingConfig(b.Config)
		case b.SageMakerType == steps.SMRegisterModel:
			fill = registrationConfig(b.Config)
		default:
			continue
		}
		entry, ok := entries[b.StepName].(map[string]any)
		if !ok {
			warns = append(warns, fmt.Sprintf("step %q (node %s) was not in the document; added", b.StepName, b.Node))
			entry = map[string]any{StepType: toAny(expected[i].StepType)}
			entries[b.StepName] = entry
		}
		sc, _ := entry[StepConfig].(map[string]any)
		if sc == nil {
			sc = map[string]any{}
		}
		for k, v := range fill {
			sc[k] = v
		}
		entry[StepConfig] = sc
	}
	st.StepCount = len(entries)
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		if e, ok := entries[k].(map[string]any); ok {
			if sc, ok := e[StepConfig].(map[string]any); ok && len(sc) > 0 {
				st.StepsWithConfig = append(st.StepsWithConfig, k)
			}
		}
	}
	if _, ok := doc[AdditionalParams]; !ok {
		doc[AdditionalParams] = map[string]any{}
	}
	return doc, st, warns
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func pick(c *config.Config, out map[string]any, fields ...string) {
	for _, f := range fields {
		if v, ok := c.Get(f); ok && v != nil {
			out[f] = v
		}
	}
}

// dataLoadingConfig is what a data-loading step needs at run time: where
// the data is and how to write it.
func dataLoadingConfig(c *config.Config) map[string]any {
	out := map[string]any{}
	pick(c, out, "data_source", "job_type", "output_format", "write_data_shards", "shard_size", "aws_region")
	return out
}

// registrationConfig is what the registration step needs: the model
// package group, approval, serving image and formats, and who owns it.
func registrationConfig(c *config.Config) map[string]any {
	out := map[string]any{}
	pick(c, out, "model_package_group_name", "model_approval_status", "inference_instance_types",
		"transform_instance_types", "content_types", "response_types", "aws_region")
	if v, ok := c.Get("author"); ok {
		out["model_owner"] = v
	}
	if v, ok := c.Get("region"); ok {
		out["model_registration_region"] = v
	}
	if s, _ := c.Get("image_uri"); s != nil && s != "" {
		out["source_model_inference_image_arn"] = s
	} else {
		framework, ok := c.Get("framework")
		if !ok || framework == nil {
			framework, _ = c.Get("model_class")
		}
		version, _ := c.Get("framework_version")
		region, _ := c.Get("aws_region")
		fs, _ := framework.(string)
		vs, _ := version.(string)
		rs, _ := region.(string)
		if uri, err := sagemaker.ImageURI(sagemaker.ImageRequest{Framework: fs, Version: vs, Region: rs, Scope: sagemaker.ScopeInference}); err == nil {
			out["source_model_inference_image_arn"] = uri
		}
	}
	return out
}

// Issue is one finding of Validate. It is not a finding.Finding because
// the tools emit it as it is, located by step name alone.
type Issue struct {
	Step    string `json:"step,omitempty"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Validate checks the document's shape and, when expected is given, that
// every expected step is present with its step type. It never fails.
func Validate(doc any, expected []ExpectedStep) []Issue {
	var issues []Issue
	root, ok := doc.(map[string]any)
	if !ok {
		return []Issue{{Rule: "shape", Message: "execution_document must be a JSON object"}}
	}
	raw, present := root[StepConfigs]
	if !present {
		return []Issue{{Rule: "shape", Message: "missing required '" + StepConfigs + "' key"}}
	}
	entries, ok := raw.(map[string]any)
	if !ok {
		return []Issue{{Rule: "shape", Message: "'" + StepConfigs + "' must be an object"}}
	}
	if p, ok := root[AdditionalParams]; ok {
		if _, isObj := p.(map[string]any); !isObj {
			issues = append(issues, Issue{Rule: "shape", Message: "'" + AdditionalParams + "' must be an object"})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		e, ok := entries[name].(map[string]any)
		if !ok {
			issues = append(issues, Issue{Step: name, Rule: "shape", Message: fmt.Sprintf("step %q must be an object", name)})
			continue
		}
		if _, ok := stepTypes(e[StepType]); !ok {
			issues = append(issues, Issue{Step: name, Rule: "step_type", Message: fmt.Sprintf("step %q: STEP_TYPE must be a string or a list of strings", name)})
		}
		if sc, present := e[StepConfig]; present {
			if _, ok := sc.(map[string]any); !ok {
				issues = append(issues, Issue{Step: name, Rule: "shape", Message: fmt.Sprintf("step %q: STEP_CONFIG must be an object", name)})
			}
		}
	}
	known := map[string]bool{}
	for _, x := range expected {
		known[x.Name] = true
		e, ok := entries[x.Name].(map[string]any)
		if !ok {
			if _, present := entries[x.Name]; !present {
				issues = append(issues, Issue{Step: x.Name, Rule: "missing_step",
					Message: fmt.Sprintf("step %q (node %s) is missing from %s", x.Name, x.Node, StepConfigs)})
			}
			continue
		}
		got, ok := stepTypes(e[StepType])
		if ok && !equalStrings(got, x.StepType) {
			issues = append(issues, Issue{Step: x.Name, Rule: "wrong_type",
				Message: fmt.Sprintf("step %q: STEP_TYPE is %v, expected %v", x.Name, got, x.StepType)})
		}
	}
	if len(expected) > 0 {
		for _, name := range slices.Sorted(maps.Keys(entries)) {
			if !known[name] {
				issues = append(issues, Issue{Step: name, Rule: "unknown_step",
					Message: fmt.Sprintf("step %q is not a step of the compiled pipeline", name)})
			}
		}
	}
	return issues
}

func stepTypes(v any) ([]string, bool) {
	switch t := v.(type) {
	case string:
		return []string{t}, true
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, len(out) > 0
	}
	return nil, false
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// StructureError is a document that is not an execution document.
type StructureError struct{ Which, Msg string }

func (e *StructureError) Error() string {
	return "invalid " + e.Which + " execution document: " + e.Msg
}

// Merge returns base with add applied: a new step is inserted; for an
// existing step STEP_CONFIG is updated key by key and every other key is
// replaced. Additional params merge key by key. Neither input is modified.
func Merge(base, add map[string]any) (map[string]any, error) {
	// Only the shape is checked: an additional document may carry partial
	// entries (just a STEP_CONFIG to add).
	for _, which := range []string{"base", "additional"} {
		d := base
		if which == "additional" {
			d = add
		}
		if d == nil {
			return nil, &StructureError{Which: which, Msg: "execution_document must be a JSON object"}
		}
		if _, ok := d[StepConfigs].(map[string]any); !ok {
			return nil, &StructureError{Which: which, Msg: "missing required '" + StepConfigs + "' object"}
		}
	}
	out := deepCopy(base).(map[string]any)
	entries := out[StepConfigs].(map[string]any)
	for name, v := range add[StepConfigs].(map[string]any) {
		v = deepCopy(v)
		cur, exists := entries[name].(map[string]any)
		in, isObj := v.(map[string]any)
		if !exists || !isObj {
			entries[name] = v
			continue
		}
		for k, val := range in {
			if k == StepConfig {
				sc, _ := cur[StepConfig].(map[string]any)
				add, ok := val.(map[string]any)
				if sc != nil && ok {
					for kk, vv := range add {
						sc[kk] = vv
					}
					continue
				}
			}
			cur[k] = val
		}
	}
	if ap, ok := add[AdditionalParams].(map[string]any); ok {
		dst, ok := out[AdditionalParams].(map[string]any)
		if !ok {
			dst = map[string]any{}
			out[AdditionalParams] = dst
		}
		for k, v := range ap {
			dst[k] = deepCopy(v)
		}
	}
	return out, nil
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = deepCopy(e)
		}
		return s
	case []string:
		return append([]string(nil), t...)
	}
	return v // scalars are values
}
