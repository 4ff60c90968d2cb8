package handlers

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/registry"
)

// Argument shapes that several tools share. Each describes its own JSON
// Schema (registry.Schemer); a field's jsonschema tag gives the
// description that fits the tool.

// nodeName is a DAG node name: <StepType> or <StepType>_<job_type>.
type nodeName string

func (nodeName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(256), Pattern: `^[A-Za-z][A-Za-z0-9_]*$`}
}

// dagEdge is [source, destination].
type dagEdge [2]nodeName

// workspacePath is a file or directory path inside the workspace root.
type workspacePath string

func (workspacePath) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(4096)}
}

// stepTypeName is a step type (XGBoostTraining) or a DAG node name.
type stepTypeName string

func (stepTypeName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(200), Pattern: `^[A-Za-z][A-Za-z0-9_-]*$`}
}

// jobTypeName is a job type variant (training, calibration, …).
type jobTypeName string

func (jobTypeName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(64), Pattern: `^[A-Za-z][A-Za-z0-9_]*$`}
}

// phaseArg is a lifecycle phase name.
type phaseArg string

func (phaseArg) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{registry.PhasePlanner, registry.PhaseValidator, registry.PhaseProgrammer}}
}

func ptr[T any](v T) *T { return &v }
