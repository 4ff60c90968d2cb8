package handlers

import (
	"fmt"

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

// detailArg picks an answer's size: "summary" (the default) or "full".
type detailArg string

const (
	detailSummary = "summary"
	detailFull    = "full"
)

func (detailArg) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{detailSummary, detailFull}}
}

func ptr[T any](v T) *T { return &v }

// dagSource is the shared DAG input: exactly one of an inline DAG or a DAG
// file (loadDAG checks which).
type dagSource struct {
	DAG     map[string]any `json:"dag,omitempty" jsonschema:"Inline DAG: flat {\"nodes\": [...], \"edges\": [[src, dst], ...]} or wrapped {\"dag\": {...}}. Give this or dag_file."`
	DAGFile workspacePath  `json:"dag_file,omitempty" jsonschema:"DAG JSON file inside the workspace. Give this or dag."`
}

// configDoc is a config.json document sent in the call.
type configDoc map[string]any

func (configDoc) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", MinProperties: ptr(1),
		Description: `Inline config.json document in the Cursus layout: {"configuration": {"shared": {field: value}, "specific": {node: {field: value}}}, "metadata": {"config_types": {node: class}}}. ` +
			"Give this or config_file."}
}

// configSource is a config.json: exactly one of the document in the call
// or a workspace file (readConfig checks which).
type configSource struct {
	Config     configDoc     `json:"config,omitempty"`
	ConfigFile workspacePath `json:"config_file,omitempty" jsonschema:"config.json file inside the workspace (Cursus layout). Give this or config."`
}

// inlineFiles is relative slash path → UTF-8 text.
type inlineFiles map[string]string

func (inlineFiles) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"},
		PropertyNames: &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(4096)},
		Description: "Files sent with the call, relative path → UTF-8 text (scripts, a config's source_dir). For this call they " +
			"overlay the workspace: a path given here hides the workspace file of that path, and directories holding them exist."}
}

// filesIn is embedded by every tool that reads scripts or source
// directories.
type filesIn struct {
	Files inlineFiles `json:"files,omitempty"`
}

// deprecatedAlias folds an old argument name into its current one: both
// given is invalid_input naming both; the old one alone is used, with a
// warning (given to warn: the reply's Warn) so callers move to the
// current name.
func deprecatedAlias[T comparable](warn func(...string), current *T, old T, currentName, oldName string) error {
	var zero T
	if old == zero {
		return nil
	}
	if *current != zero {
		return registry.Errorf(registry.CodeInvalidInput, "give %s or its deprecated alias %s, not both", currentName, oldName)
	}
	*current = old
	warn(fmt.Sprintf("'%s' is deprecated; call with '%s' instead", oldName, currentName))
	return nil
}

// Arguments the Python project's tool takes that mean nothing here. They
// are in the schema so a script written for Cursus is not refused as
// passing an unknown argument, and a call that passes one is told why it
// is not used (docs/CURSUS.md lists them).

// unusedRoleArg is Cursus's role on a tool that deploys nothing: each
// step's role comes from its config, and only compile.dag's upsert takes
// a role of its own.
type unusedRoleArg struct {
	Role string `json:"role,omitempty" jsonschema:"Accepted for Cursus; unused (steps run as their config's role)." schema:"maxLength=2048"`
}

func (a unusedRoleArg) warn(warn func(...string)) {
	warnUnused(warn, "role", a.Role != "", "steps run as the role of their config; compile.dag takes role to upsert")
}

// unusedWorkspaceDirsArg is Cursus's workspace_dirs on a tool that reads
// no script: step types come from the catalog and step_types.
type unusedWorkspaceDirsArg struct {
	WorkspaceDirs []string `json:"workspace_dirs,omitempty" jsonschema:"Accepted for Cursus; unused (steps come from the catalog and step_types)." schema:"maxItems=20"`
}

func (a unusedWorkspaceDirsArg) warn(warn func(...string)) {
	warnUnused(warn, "workspace_dirs", a.WorkspaceDirs != nil, "this tool reads no script; step types come from the catalog and step_types")
}

// warnUnused answers a call that passed an argument accepted only for
// Cursus with a warning saying why it changed nothing.
func warnUnused(warn func(...string), arg string, given bool, why string) {
	if given {
		warn(fmt.Sprintf("'%s' is accepted for Cursus compatibility and not used: %s", arg, why))
	}
}
