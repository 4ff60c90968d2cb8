package compiler

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/cursus-dev/cursus/engine/stepcode"
)

// BuiltinPrefix starts the manifest local of an artifact built from the
// built-in step code: "builtin:<path in stepcode.FS>", e.g.
// builtin:xgboost_training (a packed source folder) or
// builtin:tabular_preprocessing/tabular_preprocessing.py (one script).
const BuiltinPrefix = "builtin:"

// codeSource is where the code a step runs comes from: the caller's files
// (the workspace with the call's inline files over it), an s3:// prefix the
// caller names, or the built-in code of its step type.
type codeSource struct {
	fsys fs.FS // b.sources or stepcode.FS; nil for an s3:// dir
	loc  codeLocation
	// builtin is the stepcode folder when the code is built-in.
	builtin string
	// missing: there is no code (resolveCode's miss); nothing is packed.
	missing bool
}

// local is the manifest name of what the artifact holds: the
// workspace-relative file or folder, or builtin:<path>.
func (c codeSource) local(p string) string {
	if c.builtin != "" {
		return BuiltinPrefix + cleanRel(p)
	}
	return cleanRel(p)
}

// MissingCode is a step whose code is nowhere: not in the caller's files
// or workspace, and its step type has no built-in code.
type MissingCode struct {
	Node     string `json:"node"`
	StepName string `json:"step_name"`
	StepType string `json:"step_type"`
	// Expected is the workspace path of the script the step runs.
	Expected string `json:"expected"`
	Remedy   string `json:"remedy"`
}

func (m MissingCode) String() string {
	return fmt.Sprintf("node %q (%s): no code: %s is not in the call's files or the workspace, and %s has no built-in code; %s",
		m.Node, m.StepType, m.Expected, m.StepType, m.Remedy)
}

// StandIn is a step whose script, named under a source directory, is not
// in the call's files or the workspace, built with the built-in code of
// its step type in its place.
type StandIn struct {
	Node     string
	StepType string
	Script   string // the workspace path of the script the config names
}

// String is the compile's warning for s.
func (s StandIn) String() string {
	return fmt.Sprintf("%s is not in the call's files or the workspace: the built-in code of %s is used in its place", s.Script, s.StepType)
}

// MissingCodeError refuses a compile with steps that have no code: a
// definition would name code that does not exist.
type MissingCodeError struct{ Steps []MissingCode }

func (e *MissingCodeError) Error() string {
	parts := make([]string, len(e.Steps))
	for i, m := range e.Steps {
		parts[i] = m.String()
	}
	return strings.Join(parts, "; ")
}

// needsCode reports whether a node's step ships code: every processing,
// training, tuning and model step, except those whose image runs itself
// (a byo_container compute with its own entrypoint).
func needsCode(n *node) bool {
	switch n.handler {
	case HandlerProcessing, HandlerTraining, HandlerTuning:
		c := n.iface.Compute
		return c == nil || c.Kind != "byo_container" || len(c.ContainerEntrypoint) == 0
	case HandlerModel:
		return true
	}
	return false
}

// resolveCode finds a step's code. The caller's wins: an s3:// source
// directory, or the entry script in the call's files or the workspace (at
// source_dir/entry point, or at the entry point when no source directory
// is configured). Otherwise the built-in code of the step type serves,
// when it has a script of that name. standIn is set when the built-in code
// stands in for a script the config names under a source directory. miss
// is set when there is no code at all.
func resolveCode(sources fs.FS, n *node) (src codeSource, standIn *StandIn, miss *MissingCode, err error) {
	loc := codeFor(n)
	if isS3(loc.dir) {
		return codeSource{loc: loc}, nil, nil, nil
	}
	script := loc.entry
	if !loc.scriptOnly {
		script = path.Join(loc.dir, loc.entry)
	}
	has, err := isFile(sources, script)
	if err != nil {
		return codeSource{}, nil, nil, err
	}
	if has {
		return codeSource{fsys: sources, loc: loc}, nil, nil, nil
	}
	if dir, ok := stepcode.Dir(n.cfg.StepType); ok {
		entry := path.Base(loc.entry)
		if has, _ := isFile(stepcode.FS, path.Join(dir, entry)); has {
			if !loc.scriptOnly {
				standIn = &StandIn{Node: n.name, StepType: n.cfg.StepType, Script: cleanRel(script)}
			}
			return codeSource{fsys: stepcode.FS, loc: codeLocation{dir: dir, entry: entry}, builtin: dir}, standIn, nil, nil
		}
	}
	return codeSource{}, nil, &MissingCode{Node: n.name, StepName: n.stepName, StepType: n.cfg.StepType, Expected: cleanRel(script),
		Remedy: fmt.Sprintf("send %s in files (path → text) or put it in the workspace, or point source_dir and the entry point at code you have",
			cleanRel(script))}, nil
}

// missingCode lists the nodes in order whose code is nowhere, without
// building anything.
func missingCode(sources fs.FS, nodes map[string]*node, order []string) ([]MissingCode, error) {
	var out []MissingCode
	for _, name := range order {
		n := nodes[name]
		if n == nil || !needsCode(n) {
			continue
		}
		_, _, miss, err := resolveCode(sources, n)
		if err != nil {
			return nil, &BuildError{Node: name, StepName: n.stepName, Err: err}
		}
		if miss != nil {
			out = append(out, *miss)
		}
	}
	return out, nil
}

// isFile reports whether p is a regular file in fsys (false for no fsys or
// an absolute path, which a workspace cannot serve).
func isFile(fsys fs.FS, p string) (bool, error) {
	st, err := statRel(fsys, p)
	if err != nil || st == nil {
		return false, err
	}
	return st.Mode().IsRegular(), nil
}

// statRel stats a workspace-relative path; nil, nil when it is not there.
func statRel(fsys fs.FS, p string) (fs.FileInfo, error) {
	if fsys == nil || path.IsAbs(p) {
		return nil, nil
	}
	p = cleanRel(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return nil, nil
	}
	st, err := fs.Stat(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	return st, nil
}
