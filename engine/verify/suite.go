// Package verify holds the validation use-cases behind the validate and
// author tools: it finds step scripts in the workspace, runs them
// (engine/scriptrun), builds steps into test pipelines and assembles the
// reports. The static checks themselves are engine/validate's; verify adds
// the workspace, the catalogs, the script runner and the compiler around
// them.
package verify

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/cursus-dev/cursus/engine/config"
	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/scriptrun"
	"github.com/cursus-dev/cursus/engine/steps"
	"github.com/cursus-dev/cursus/engine/validate"
	"github.com/cursus-dev/cursus/engine/workspace"
)

// Suite is what the use-cases work on; its fields are shared and read-only.
type Suite struct {
	Steps  *steps.Catalog
	Config *config.Schemas
	Root   *workspace.Root
	// Files is what scripts and interface files are read from: the
	// workspace, overlaid by a call's inline files. Nil reads Root.FS().
	Files fs.FS
	// Runner runs scripts; its concurrency cap spans calls.
	Runner *scriptrun.Runner
}

// maxScriptBytes bounds a step script read for analysis.
const maxScriptBytes = 2 << 20

// DefaultScriptDirs are searched, in order, when no script location is
// given.
var DefaultScriptDirs = []string{"scripts", ".", "dockers/scripts"}

// ScriptSearch says where to look for a step's script.
type ScriptSearch struct {
	ScriptPath    string   `json:"script_path"`
	SourceDir     string   `json:"source_dir"`
	WorkspaceDirs []string `json:"workspace_dirs"`
}

// Script is a step script found in the workspace.
type Script struct {
	// Rel is the workspace-relative path, "" when not found.
	Rel    string
	Source []byte
	// Searched lists the places looked in.
	Searched []string
}

// Step resolves a step type or node name to its interface, with the
// job-type variant applied (jobType, else the node name's). Unknown names
// give *steps.NotFoundError, bad job types *JobTypeError.
func (s *Suite) Step(name, jobType string) (*steps.Interface, steps.Resolution, []string, error) {
	res, err := s.Steps.Resolve(strings.TrimSpace(name))
	if err != nil {
		return nil, res, nil, err
	}
	if jobType == "" {
		jobType = res.JobType
	}
	if jobType == "" {
		iface, _ := s.Steps.Get(res.StepType)
		return iface, res, nil, nil
	}
	iface, warns, err := s.Steps.ForJobType(res.StepType, jobType)
	if err != nil {
		return nil, res, nil, &JobTypeError{JobType: jobType, StepType: res.StepType, Err: err}
	}
	return iface, res, warns, nil
}

// FindScript locates the script of iface inside the workspace: the given
// script_path, else the contract's entry point in the source directory,
// the workspace directories or DefaultScriptDirs. Paths that escape the
// workspace, and a script that is there but cannot be read (too large, a
// directory, a pipe, unreadable), are *PathError; a script not found is
// not an error.
func (s *Suite) FindScript(iface *steps.Interface, search ScriptSearch) (Script, error) {
	if err := s.CheckSearch(search); err != nil {
		return Script{}, err
	}
	if search.ScriptPath != "" {
		name, data, err := s.readLimited(search.ScriptPath, maxScriptBytes)
		if err != nil {
			return Script{}, &PathError{Arg: "script_path", Err: err}
		}
		return Script{Rel: name, Source: data}, nil
	}
	entry := iface.Contract.EntryPoint
	if entry == "" {
		return Script{}, nil
	}
	dirs, arg := search.WorkspaceDirs, "workspace_dirs"
	if search.SourceDir != "" {
		dirs, arg = []string{search.SourceDir}, "source_dir"
	}
	explicit := len(dirs) > 0
	if !explicit {
		dirs = DefaultScriptDirs
	}
	var found Script
	for _, dir := range dirs {
		name, err := s.Root.FSPath(path.Join(dir, entry))
		if err != nil {
			if explicit {
				return Script{}, &PathError{Arg: arg, Err: err}
			}
			continue
		}
		found.Searched = append(found.Searched, name)
		_, data, err := s.readLimited(name, maxScriptBytes)
		var (
			esc    *workspace.EscapeError
			absent absentError
		)
		switch {
		case err == nil:
			found.Rel, found.Source = name, data
			return found, nil
		case explicit && errors.As(err, &esc):
			return Script{}, &PathError{Arg: arg, Err: err}
		case errors.As(err, &absent):
			// Not in this directory: try the next.
		default:
			// Found, but not a script we can read: "not found" would send
			// the caller looking for it elsewhere.
			return Script{}, &PathError{Arg: "entry_point", Err: err}
		}
	}
	return found, nil
}

// CheckSearch refuses directories named to search for scripts
// (source_dir, else workspace_dirs) that are not directories of the
// workspace or of the call's inline files: one that does not exist, or a
// file, would otherwise be searched in vain and every script reported
// missing, or the check passed. The error is a *PathError naming the
// argument.
func (s *Suite) CheckSearch(search ScriptSearch) error {
	dirs, arg := search.WorkspaceDirs, "workspace_dirs"
	if search.SourceDir != "" {
		dirs, arg = []string{search.SourceDir}, "source_dir"
	}
	for _, dir := range dirs {
		name, err := s.Root.FSPath(dir)
		if err != nil {
			return &PathError{Arg: arg, Err: err}
		}
		fi, err := fs.Stat(s.files(), name)
		switch {
		case err == nil && fi.IsDir():
		case err == nil:
			return &PathError{Arg: arg, Err: &workspace.FileError{Path: dir, Reason: "is a file, not a directory"}}
		case errors.Is(err, fs.ErrNotExist):
			return &PathError{Arg: arg, Err: &workspace.FileError{Path: dir, Reason: "is not a directory in the workspace: it does not exist"}}
		default:
			return &PathError{Arg: arg, Err: err}
		}
	}
	return nil
}

// absentError is a file readLimited could not find (its stat failed);
// its other errors are about a file that is there.
type absentError struct{ error }

func (e absentError) Unwrap() error { return e.error }

func (s *Suite) files() fs.FS {
	if s.Files != nil {
		return s.Files
	}
	return s.Root.FS()
}

// readLimited reads the caller's path p through Files, refusing a file
// larger than limit bytes; it returns p as a name in Files.
func (s *Suite) readLimited(p string, limit int64) (string, []byte, error) {
	name, err := s.Root.FSPath(p)
	if err != nil {
		return "", nil, err
	}
	fsys := s.files()
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		if path.IsAbs(p) && errors.Is(err, fs.ErrNotExist) {
			// Told apart from "outside the workspace", "not found"
			// would confirm a guess of where the workspace lies.
			return name, nil, &workspace.FileError{Path: p, Reason: "does not exist"}
		}
		return name, nil, absentError{err}
	}
	if fi.IsDir() {
		return name, nil, &workspace.FileError{Path: p, Reason: "is a directory"}
	}
	if fi.Size() > limit {
		return name, nil, &workspace.LimitError{Path: p, Limit: limit}
	}
	data, err := fs.ReadFile(fsys, name)
	return name, data, err
}

// StepCheck assembles everything alignment needs for iface and its script.
func (s *Suite) StepCheck(iface *steps.Interface, script Script) validate.StepCheck {
	c := validate.StepCheck{Interface: iface, ScriptFile: script.Rel, Script: script.Source, ScriptSearched: script.Searched,
		Score: func(dep steps.Dependency, depName string, out steps.Output, outName, provider string) float64 {
			return deps.Score(dep, depName, out, outName, provider).Total
		},
		Replacement: steps.InternalReplacement,
	}
	if sc, err := s.Config.ForStep(iface.StepType); err == nil {
		c.ConfigFields = map[string]any{}
		for _, f := range sc.Fields {
			c.ConfigFields[f.Name] = f.Default
		}
	}
	for _, n := range s.Steps.Names() {
		if p, ok := s.Steps.Get(n); ok {
			c.Providers = append(c.Providers, p)
		}
	}
	return c
}

// RunsScript reports whether iface's step type runs a step script that
// alignment can check (not an Amazon-internal SDK's).
func RunsScript(iface *steps.Interface) bool {
	for _, c := range validate.RulesetFor(iface.Registry.SageMakerStepType).Categories {
		if c == validate.CatScriptContract {
			return iface.Registry.Requires != "secure_ai_sandbox_workflow_python_sdk"
		}
	}
	return false
}
