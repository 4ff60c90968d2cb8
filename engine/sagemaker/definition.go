// Package sagemaker models a SageMaker Pipelines definition (Version
// 2020-12-01): the document, its steps, the expressions that wire them
// (Get, Std:Join), the request shapes of each step type, the public framework
// image URIs, pipeline naming rules and the AWS calls that deploy a pipeline.
// It knows nothing about step interfaces or configs: callers hand it plain
// values.
package sagemaker

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/cursus-dev/cursus/internal/verbatim"
)

// Version is the only definition version SageMaker accepts.
const Version = "2020-12-01"

// Step type values as they appear in a definition's "Type" field.
const (
	TypeProcessing    = "Processing"
	TypeTraining      = "Training"
	TypeModel         = "Model" // a CreateModel step
	TypeTransform     = "Transform"
	TypeTuning        = "Tuning"
	TypeRegisterModel = "RegisterModel"
)

// Definition is a whole pipeline definition. Field order is the order the
// SageMaker Python SDK writes.
type Definition struct {
	Version                  string            `json:"Version"`
	Metadata                 map[string]string `json:"Metadata"`
	Parameters               []Parameter       `json:"Parameters"`
	PipelineExperimentConfig *ExperimentConfig `json:"PipelineExperimentConfig,omitempty"`
	Steps                    []Step            `json:"Steps"`
}

// NewDefinition returns an empty definition with the SDK's defaults: empty
// metadata and the experiment config that names the experiment after the
// pipeline and the trial after the execution.
func NewDefinition() *Definition {
	return &Definition{
		Version:    Version,
		Metadata:   map[string]string{},
		Parameters: []Parameter{},
		PipelineExperimentConfig: &ExperimentConfig{
			ExperimentName: Execution("PipelineName"),
			TrialName:      Execution("PipelineExecutionId"),
		},
		Steps: []Step{},
	}
}

// ExperimentConfig is the top-level PipelineExperimentConfig.
type ExperimentConfig struct {
	ExperimentName any `json:"ExperimentName"`
	TrialName      any `json:"TrialName"`
}

// Parameter types.
const (
	ParamString  = "String"
	ParamInteger = "Integer"
	ParamFloat   = "Float"
	ParamBoolean = "Boolean"
)

// Parameter is one pipeline parameter. DefaultValue is omitted when nil.
type Parameter struct {
	Name         string `json:"Name"`
	Type         string `json:"Type"`
	DefaultValue any    `json:"DefaultValue,omitempty"`
}

// Step is one entry of Steps. Arguments holds one of the request shapes in
// this package (ProcessingArgs, TrainingArgs, …).
type Step struct {
	Name        string       `json:"Name"`
	Type        string       `json:"Type"`
	Arguments   any          `json:"Arguments"`
	DependsOn   []string     `json:"DependsOn,omitempty"`
	DisplayName string       `json:"DisplayName,omitempty"`
	Description string       `json:"Description,omitempty"`
	CacheConfig *CacheConfig `json:"CacheConfig,omitempty"`
}

// CacheConfig controls step caching. ExpireAfter is an ISO 8601 duration.
type CacheConfig struct {
	Enabled     bool   `json:"Enabled"`
	ExpireAfter string `json:"ExpireAfter"`
}

// DefaultCacheExpiry is the expiry Cursus always writes.
const DefaultCacheExpiry = "P30D"

// Get is a runtime reference: {"Get": "Parameters.X"}, {"Get":
// "Steps.<name>.<path>"} or {"Get": "Execution.<var>"}.
type Get struct {
	Path string
}

// MarshalJSON writes {"Get": path}.
func (g Get) MarshalJSON() ([]byte, error) {
	p, err := verbatim.Marshal(g.Path)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(p)+8)
	out = append(out, `{"Get":`...)
	out = append(out, p...)
	return append(out, '}'), nil
}

// Param references a pipeline parameter.
func Param(name string) Get { return Get{Path: "Parameters." + name} }

// Execution references an execution variable (PipelineExecutionId,
// PipelineName, …).
func Execution(variable string) Get { return Get{Path: "Execution." + variable} }

// StepProperty references a property of an earlier step. propertyPath is the
// path below the step, e.g. "ModelArtifacts.S3ModelArtifacts"; a leading
// "properties." (the Cursus spec form) is dropped because definitions have
// no Properties segment.
func StepProperty(stepName, propertyPath string) Get {
	return Get{Path: "Steps." + stepName + "." + TrimPropertiesPrefix(propertyPath)}
}

// TrimPropertiesPrefix strips the Cursus "properties." prefix of an output
// property path.
func TrimPropertiesPrefix(p string) string {
	const prefix = "properties."
	if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
		return p[len(prefix):]
	}
	return p
}

// Join is {"Std:Join": {"On": sep, "Values": [...]}}. Values may hold
// strings, numbers, booleans and Get references.
type Join struct {
	On     string
	Values []any
}

// MarshalJSON writes the Std:Join function form.
func (j Join) MarshalJSON() ([]byte, error) {
	values := j.Values
	if values == nil {
		values = []any{}
	}
	inner := struct {
		On     string `json:"On"`
		Values []any  `json:"Values"`
	}{j.On, values}
	b, err := verbatim.Marshal(inner)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+14)
	out = append(out, `{"Std:Join":`...)
	out = append(out, b...)
	return append(out, '}'), nil
}

// JoinPath joins values with "/". A Join among the values is flattened into
// this one (Std:Join cannot nest), so JoinPath(JoinPath(a, b), c) equals
// JoinPath(a, b, c).
func JoinPath(values ...any) Join {
	flat := make([]any, 0, len(values))
	for _, v := range values {
		if j, ok := v.(Join); ok && j.On == "/" {
			flat = append(flat, j.Values...)
			continue
		}
		flat = append(flat, v)
	}
	return Join{On: "/", Values: flat}
}

// Encode writes the definition as compact JSON. Equal definitions give equal
// bytes: structs keep field order and maps are written with sorted keys.
// HTML characters are not escaped (definitions are not HTML).
//
// The steps are encoded one at a time into one buffer sized from the first
// step, with the same bytes as encoding the whole definition at once:
// encoding/json builds a whole value in a buffer of its own that grows by
// doubling from nothing and is then copied out, and for a pipeline of
// thousands of steps clearing and copying that buffer cost more per step
// than the steps' own encoding.
func Encode(d *Definition) ([]byte, error) {
	if len(d.Steps) == 0 {
		return verbatim.Marshal(d)
	}
	head := *d
	head.Steps = nil
	b, err := verbatim.Marshal(&head)
	if err != nil {
		return nil, err
	}
	const nullSteps = `"Steps":null}`
	if !bytes.HasSuffix(b, []byte(nullSteps)) { // Steps is the last field
		return verbatim.Marshal(d)
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-len("null}")])
	buf.WriteByte('[')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range d.Steps {
		if i > 0 {
			buf.WriteByte(',')
		}
		start := buf.Len()
		if err := enc.Encode(&d.Steps[i]); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if i == 0 {
			buf.Grow((buf.Len() - start + 1) * (len(d.Steps) - 1) * 5 / 4)
		}
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

// References returns every Get path in an encoded definition (or any JSON
// document), in document order with object keys sorted.
func References(data []byte) ([]string, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var out []string
	walkRefs(doc, &out)
	return out, nil
}

func walkRefs(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		if p, ok := t["Get"].(string); ok && len(t) == 1 {
			*out = append(*out, p)
			return
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkRefs(t[k], out)
		}
	case []any:
		for _, e := range t {
			walkRefs(e, out)
		}
	}
}
