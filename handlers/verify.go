package handlers

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/verify"
	"github.com/cursus-dev/cursus/registry"
)

// verifyStepName is a step type or node name as the validate and author
// tools take it: blanks around it are allowed (the engine trims them).
type verifyStepName string

func (verifyStepName) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(256), Pattern: `^\s*[A-Za-z][A-Za-z0-9_\-]*\s*$`,
		Description: "Step type (XGBoostTraining) or DAG node name (TabularPreprocessing_training)."}
}

// stepJobIn names one step and the job type variant to apply.
type stepJobIn struct {
	StepName verifyStepName `json:"step_name"`
	JobType  jobTypeName    `json:"job_type,omitempty" jsonschema:"Job type variant to apply (training, calibration, …)."`
}

// scriptDirsIn says where to search for step scripts; a tool that reads
// them through its inline files embeds filesIn beside it.
type scriptDirsIn struct {
	SourceDir     workspacePath   `json:"source_dir,omitempty" jsonschema:"Directory inside the workspace holding the step scripts (searched for the contract's entry point)."`
	WorkspaceDirs []workspacePath `json:"workspace_dirs,omitempty" jsonschema:"Directories inside the workspace searched for scripts (default: scripts, ., dockers/scripts)." schema:"maxItems=20"`
}

// scriptSearchIn is scriptDirsIn plus a script given by path.
type scriptSearchIn struct {
	ScriptPath workspacePath `json:"script_path,omitempty" jsonschema:"The step's script inside the workspace (overrides the search)."`
	scriptDirsIn
}

func (in scriptDirsIn) search() verify.ScriptSearch {
	return verify.ScriptSearch{SourceDir: string(in.SourceDir), WorkspaceDirs: strs(in.WorkspaceDirs)}
}

func (in scriptSearchIn) search() verify.ScriptSearch {
	s := in.scriptDirsIn.search()
	s.ScriptPath = string(in.ScriptPath)
	return s
}

// strs turns a list of named strings into plain strings; nil stays nil
// (the engine reads nil as "not given").
func strs[T ~string](in []T) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

// verifier is the validation use-cases over the shared catalogs and the
// workspace.
func (d *Deps) verifier(ctx context.Context) *verify.Suite {
	cv := d.catalogs(ctx)
	return &verify.Suite{Steps: cv.Steps, Config: cv.Config, Root: d.Root, Runner: d.Scripts}
}

// verifierFor is the validation use-cases over what one call reads: its
// files over the workspace and its step types over the catalogs. The
// warnings are those of the step types sent.
func (d *Deps) verifierFor(ctx context.Context, files inlineFiles, types stepTypesArg) (*verify.Suite, []string, error) {
	call, err := d.sources(ctx, files, types)
	if err != nil {
		return nil, nil, err
	}
	return &verify.Suite{Steps: call.cat.Steps, Config: call.cat.Config, Root: d.Root, Runner: d.Scripts, Files: call.fs}, call.cat.Warnings, nil
}

// verifyError maps a use-case error to the tool error a caller sees;
// errors of other kinds pass through.
func verifyError(err error) error {
	var (
		nf      *steps.NotFoundError
		jt      *verify.JobTypeError
		in      *verify.InputError
		pe      *verify.PathError
		ce      *verify.ConfigError
		ns      *verify.NoScriptError
		ne      *verify.NodeError
		missing *verify.NotFoundError
		runtime *scriptrun.RuntimeUnavailableError
		copied  *scriptrun.CopyError
	)
	switch {
	case errors.As(err, &nf):
		return unknownStep(nf)
	case errors.As(err, &jt):
		return registry.Errorf(registry.CodeInvalidInput, "%s", jt.Error())
	case errors.Is(err, verify.ErrNoNodes):
		return registry.Errorf(registry.CodeInvalidInput, "%s", err.Error()).
			Suggest("Name the DAG nodes to run, or a DAG file in the workspace.", "dag.construct")
	case errors.As(err, &in):
		return registry.Errorf(registry.CodeInvalidInput, "%s", in.Msg)
	case errors.As(err, &pe):
		return pathError(pe.Arg, pe.Err)
	case errors.As(err, &ce):
		return registry.Errorf(registry.CodeConfigInvalid, "%s", ce.Error()).Suggest("Fix the config values (config.load shows every problem).", "config.load")
	case errors.As(err, &missing):
		return registry.Errorf(registry.CodeNotFound, "%s", missing.Msg)
	case errors.As(err, &ns):
		return registry.Errorf(registry.CodeNotFound, "%s", ns.Error()).
			Suggest("Send the scripts in files (path → text) and name their directory in source_dir, or give config or config_file, whose source_dir names it.", "steps.io")
	case errors.As(err, &runtime) && runtime.Sandbox:
		return registry.Errorf(registry.CodeRuntimeUnavailable, "cannot run scripts: %v", err).
			Suggest("Run the server on a kernel with Landlock ABI 6+ (Linux 6.12+) and seccomp, or run validate.alignment, which needs no interpreter.", "validate.alignment", "author.check_script")
	case errors.As(err, &runtime):
		return registry.Errorf(registry.CodeRuntimeUnavailable, "cannot run scripts: %v", err).
			Suggest("Install python3 on the server (or run validate.alignment, which needs no interpreter).", "validate.alignment", "author.check_script")
	case errors.As(err, &copied) && copied.Limit > 0:
		return registry.Errorf(registry.CodeInvalidInput, "%s", err.Error()).
			WithDetails(map[string]any{"path": copied.Path, "limit_bytes": copied.Limit}).
			Suggest("Pass a smaller sample input: one workspace file may be at most limits.max_file_bytes, and all files copied into one run share max_input_bytes (validate.info).", "validate.info")
	case errors.As(err, &copied):
		return registry.Errorf(registry.CodeInvalidInput, "%s", err.Error()).WithDetails(map[string]any{"path": copied.Path})
	case errors.As(err, &ne):
		return registry.Errorf(registry.CodeToolError, "%s", ne.Error())
	}
	return err
}

// unknownStep is the tool error validate and author give for a name the
// catalog does not know.
func unknownStep(nf *steps.NotFoundError) error {
	if nf.Internal != nil {
		return registry.Errorf(registry.CodeUnsupported, "%s", nf.Error()).
			WithDetails(map[string]any{"step_name": nf.Name, "replacement": nf.Internal.Replacement}).
			Suggest(nf.Internal.Advice, "catalog.step_info")
	}
	return registry.Errorf(registry.CodeNotFound, "%s", nf.Error()).WithDetails(map[string]any{"step_name": nf.Name, "suggestions": nonNilList(nf.Suggestions)}).
		Suggest("Use a step type from catalog.list_steps or catalog.search.", "catalog.list_steps", "catalog.search")
}

// toMap turns an engine report into plain JSON data for meta.details.
func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}
