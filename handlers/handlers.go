// Package handlers holds the tool namespaces: thin adapters from JSON
// arguments to engine calls and back to envelopes. One file per namespace.
package handlers

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cursus-dev/cursus/engine/finding"
	"github.com/cursus-dev/cursus/engine/localrun"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/workflows"
	"github.com/cursus-dev/cursus/engine/workspace"
	"github.com/cursus-dev/cursus/registry"
)

// Deps is what the namespaces need from the outside world. Build it with
// NewDeps; it is shared by concurrent calls, and only its catalogs change
// afterwards (swapped whole when a step or pipeline directory changes).
type Deps struct {
	Root *workspace.Root // every file argument is resolved inside it
	Opts Options
	// live holds the built-in step types plus Opts.StepDirs and their
	// config schemas, and the shared DAGs (built-ins plus
	// Opts.PipelineDirs), reloaded when a directory changes: read it with
	// catalogs, or catalogsFor in a tool that takes step_types.
	live *liveCatalogs
	// Scripts runs step scripts for validate.run_scripts; its concurrency
	// cap is shared by all calls.
	Scripts *scriptrun.Runner
	// LocalRun runs compiled definitions for validate.run_pipeline.
	LocalRun *localrun.Runner
	// Runs signs and opens workflow run tokens.
	Runs *workflows.Signer
	// spent remembers the run tokens submissions have used up:
	// Opts.SpentStore, else this process's memory.
	spent workflows.SpentStore
	// DevelopmentWorkflowKey is true when no workflow key was configured:
	// run tokens then die with the process (the server logs a warning).
	DevelopmentWorkflowKey bool
	// digest caches CatalogDigest.
	digest catalogDigest
}

// Options are the operator's settings the engine needs.
type Options struct {
	WorkspaceRoot string   // default: the working directory
	StepDirs      []string // extra step-interface directories
	PipelineDirs  []string // extra shared-DAG directories
	Python        string   // interpreter for validate.run_scripts and validate.run_pipeline (default: python3 on PATH)
	// LocalRun bounds validate.run_pipeline (its Python is Python).
	LocalRun localrun.Settings
	// RunPipelineS3 backs validate.run_pipeline's object store with the
	// S3 the AWS* options configure: inputs the run did not produce are
	// read from it and job outputs written through to it.
	RunPipelineS3 bool
	// AllowUnisolatedScripts runs scripts without the OS sandbox where the
	// kernel cannot provide one (unsafe; see scriptrun.Runner.AllowUnisolated).
	AllowUnisolatedScripts bool
	// ScriptMaxProcesses, ScriptMemoryBytes and ScriptCPUWeight bound the
	// whole process tree of each script run (0: scriptrun.DefaultTreeLimits).
	ScriptMaxProcesses   int
	ScriptMemoryBytes    int64
	ScriptCPUWeight      int
	AWSEndpoint          string // override for S3 and SageMaker (tests use a local fake)
	AWSS3Endpoint        string // override for S3 alone; wins over AWSEndpoint
	AWSSageMakerEndpoint string // override for SageMaker alone; wins over AWSEndpoint
	AWSRegion            string
	// MaxFileBytes caps every file read from the workspace (0: the
	// workspace default, 16 MiB).
	MaxFileBytes int64
	// MaxStepTypes and MaxStepTypeBytes cap the step_types a call may send:
	// how many documents, and the size of each (0: 16 and 256 KiB).
	MaxStepTypes     int
	MaxStepTypeBytes int64
	// StepReloadInterval is the least time between two looks at StepDirs
	// and PipelineDirs for changed files (0: 2s; negative: look on every
	// call).
	StepReloadInterval time.Duration
	// Inline caps the content a call sends instead of workspace files.
	Inline InlineLimits
	// WorkflowKey signs workflow run tokens (workflow.key); every replica
	// that continues a run needs the same one. Empty: a random key.
	WorkflowKey []byte
	// WorkflowPreviousKeys still open run tokens they signed
	// (workflow.previous_keys) while a key rotation rolls out; new tokens
	// are signed with WorkflowKey.
	WorkflowPreviousKeys [][]byte
	// WorkflowTTL is how long a run token lives (0: 24h).
	WorkflowTTL time.Duration
	// SpentStore remembers spent run tokens; one shared by every replica
	// refuses a token replayed on another. nil: this process's memory.
	SpentStore workflows.SpentStore
}

// NewDeps is StartDeps that returns once the operator's step and
// pipeline directories have loaded (the built-in catalogs load on first
// use).
func NewDeps(opts Options) (*Deps, error) {
	d, loaded, err := StartDeps(opts)
	if err != nil {
		return nil, err
	}
	if err := loaded(); err != nil {
		return nil, err
	}
	return d, nil
}

// StartDeps is NewDeps that returns while the catalogs load: Namespaces
// can be built from d meanwhile (building them reads no catalog), and
// every tool, prompt and resource waits for the load. loaded waits for the
// load of the operator's step and pipeline directories and says why it
// failed; d must not be used after a failed load. Without such
// directories there is nothing to wait for: the built-in catalogs are
// parsed on first use (see startCatalogs).
func StartDeps(opts Options) (d *Deps, loaded func() error, err error) {
	root, err := workspace.New(opts.WorkspaceRoot, workspace.WithMaxFileBytes(opts.MaxFileBytes))
	if err != nil {
		return nil, nil, fmt.Errorf("workspace root: %w", err)
	}
	key, devKey := opts.WorkflowKey, len(opts.WorkflowKey) == 0
	if devKey {
		key = workflows.DevelopmentKey()
	}
	runs, err := workflows.NewSigner(key, opts.WorkflowTTL, nil, opts.WorkflowPreviousKeys...)
	if err != nil {
		return nil, nil, fmt.Errorf("workflow.key: %w", err)
	}
	var spent workflows.SpentStore = workflows.NewSpent(0, nil)
	if opts.SpentStore != nil {
		spent = opts.SpentStore
	}
	live := startCatalogs(opts.StepDirs, opts.PipelineDirs, opts.stepReloadInterval())
	d = &Deps{Root: root, Opts: opts, live: live,
		Scripts: newScriptRunner(opts), LocalRun: newLocalRunner(opts), Runs: runs, spent: spent, DevelopmentWorkflowKey: devKey}
	return d, live.startupLoad, nil
}

// LoadProblem is a file of an operator's step or pipeline directory that
// is not in its catalog as loaded now, or a remark about one that is.
type LoadProblem struct {
	Catalog string // "steps" or "pipelines"
	finding.Finding
}

// LoadProblems are the problems of the catalogs as loaded now, and the
// step files' warnings (a built-in step type overridden, …), for the
// server to log at start-up; calls see them in catalog.list_steps,
// tools.help and pipeline_catalog.list. Only the operator's directories
// have any (tests keep the built-in catalogs clean), so without them
// LoadProblems is empty and loads nothing.
func (d *Deps) LoadProblems() []LoadProblem {
	if !d.live.operatorDirs() {
		return nil
	}
	var out []LoadProblem
	view := d.live.loaded()
	for _, p := range view.Problems {
		out = append(out, LoadProblem{Catalog: "steps", Finding: p})
	}
	for _, p := range view.Steps.Warnings() {
		out = append(out, LoadProblem{Catalog: "steps", Finding: p})
	}
	for _, p := range view.DAGProblems {
		out = append(out, LoadProblem{Catalog: "pipelines", Finding: p})
	}
	return out
}

// Namespaces lists the namespaces in their fixed registration order, each
// with its <ns>.help tool.
func Namespaces(d *Deps) []registry.NamespaceFunc {
	prompts := Prompts(d)
	workflows := make([]workflowInfo, 0, len(prompts))
	for _, p := range prompts {
		workflows = append(workflows, workflowInfo{Name: p.Name, Description: p.Description})
	}
	helped := func(build func() (registry.Namespace, error)) registry.NamespaceFunc {
		return func() (registry.Namespace, error) {
			ns, err := build()
			if err != nil {
				return ns, err
			}
			return withHelp(ns, workflows, d.stepCatalogStatus), nil
		}
	}
	return []registry.NamespaceFunc{
		helped(func() (registry.Namespace, error) { return catalogNamespace(d) }),
		helped(func() (registry.Namespace, error) { return dagNamespace(d) }),
		helped(func() (registry.Namespace, error) { return configNamespace(d) }),
		helped(func() (registry.Namespace, error) { return compileNamespace(d) }),
		helped(func() (registry.Namespace, error) { return validateNamespace(d) }),
		helped(func() (registry.Namespace, error) { return execdocNamespace(d) }),
		helped(func() (registry.Namespace, error) { return pipelineCatalogNamespace(d) }),
		helped(func() (registry.Namespace, error) { return projectNamespace(d) }),
		helped(strategiesNamespace),
		helped(func() (registry.Namespace, error) { return stepsNamespace(d) }),
		helped(func() (registry.Namespace, error) { return authorNamespace(d) }),
		helped(func() (registry.Namespace, error) { return workflowNamespace(d) }),
		func() (registry.Namespace, error) { return toolsNamespace(workflows, d.stepCatalogStatus), nil },
	}
}

// pathError converts a workspace error into the tool error a caller sees.
// For an absolute path the answer is the same whatever is wrong with it
// (outside the workspace, not there, a directory, too large): a remote
// caller does not see the server's layout, and telling these apart would
// confirm its guesses of where the workspace lies.
func pathError(arg string, err error) error {
	if p := refusedPath(err); absolutePath(p) {
		return opaquePathError(arg, p)
	}
	var esc *workspace.EscapeError
	if errors.As(err, &esc) {
		return registry.Errorf(registry.CodeInvalidInput, "'%s': %s", arg, esc.Error()).
			WithDetails(map[string]any{"argument": arg, "path": esc.Path})
	}
	var exists *workspace.ExistsError
	if errors.As(err, &exists) {
		return registry.Errorf(registry.CodeAlreadyExists, "'%s': %s", arg, exists.Error()).
			Suggest("Pass overwrite: true to replace it, or choose another path.")
	}
	var fe *workspace.FileError
	if errors.As(err, &fe) {
		return registry.Errorf(registry.CodeInvalidInput, "'%s': %s", arg, fe.Error()).
			WithDetails(map[string]any{"argument": arg, "path": fe.Path})
	}
	var le *workspace.LimitError
	if errors.As(err, &le) {
		setting := "limits.max_file_bytes"
		if !le.ReadCap {
			setting = "a fixed cap on what cursus analyses"
		}
		return registry.Errorf(registry.CodeInvalidInput, "'%s': %s (%s)", arg, le.Error(), setting).
			WithDetails(map[string]any{"argument": arg, "path": le.Path, "limit_bytes": le.Limit})
	}
	var se *workspace.StorageError
	if errors.As(err, &se) {
		return registry.Errorf(registry.CodeStorageError, "'%s': %s; nothing was written", arg, se.Error()).
			WithDetails(map[string]any{"argument": arg, "path": se.Path, "reason": se.Err.Error()}).
			Suggest("Free space or make the workspace writable for the server, then retry; or write to another path.")
	}
	if errors.Is(err, fs.ErrNotExist) {
		return registry.Errorf(registry.CodeNotFound, "'%s': file not found", arg)
	}
	return err
}

// refusedPath is the path, as the caller gave it, of a workspace refusal
// ("" for other errors).
func refusedPath(err error) string {
	var (
		esc *workspace.EscapeError
		fe  *workspace.FileError
		le  *workspace.LimitError
	)
	switch {
	case errors.As(err, &esc):
		return esc.Path
	case errors.As(err, &fe):
		return fe.Path
	case errors.As(err, &le):
		return le.Path
	}
	return ""
}

// absolutePath reports whether a caller's path is absolute.
func absolutePath(p string) bool { return strings.HasPrefix(p, "/") }

// opaquePathError is the one answer to an absolute path the call cannot
// use, whatever the reason.
func opaquePathError(arg, p string) error {
	return registry.Errorf(registry.CodeInvalidInput, "'%s': path %q is not a file or directory of the workspace this call can use", arg, p).
		WithDetails(map[string]any{"argument": arg, "path": p}).
		Suggest("Name the path relative to the workspace root.")
}
