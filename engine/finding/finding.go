// Package finding holds the one result type the engine's checks return: a
// Finding names where (file and key path), which rule, how severe and what
// is wrong. The step interface checks, the step catalog and the pipeline
// catalog return it as it is, and the tools emit it as it is. Checks whose
// results the tools emit in another shape keep their own type, and each
// says why in its comment; those with a severity use Level.
package finding

import (
	"cmp"
	"fmt"
	"slices"
)

// Level is a finding's severity. Critical and error fail a check.
type Level string

// Levels, most severe first.
const (
	Critical Level = "critical"
	Error    Level = "error"
	Warning  Level = "warning"
	Info     Level = "info"
)

// Blocking reports whether a finding of level l fails the check.
func (l Level) Blocking() bool { return l == Critical || l == Error }

func (l Level) rank() int {
	switch l {
	case Critical:
		return 0
	case Error:
		return 1
	case Warning:
		return 2
	}
	return 3
}

// CompareLevels orders levels most severe first, for slices.SortFunc.
func CompareLevels(a, b Level) int { return cmp.Compare(a.rank(), b.rank()) }

// Finding is one result of a check. File names the file (or inline
// document) and Path the dotted key path inside it
// ("spec.outputs.model_output.property_path"); Rule is a stable rule name.
// Level is empty where the list holding the finding says what it is: a
// catalog's problems are files it skipped.
type Finding struct {
	Level   Level  `json:"level,omitempty"`
	File    string `json:"file,omitempty"`
	Path    string `json:"path"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Blocking reports whether the finding fails the check.
func (f Finding) Blocking() bool { return f.Level.Blocking() }

// String renders "level: file: path [rule]: message", leaving out the
// parts that are empty.
func (f Finding) String() string {
	where := f.File
	if f.Path != "" {
		if where != "" {
			where += ": "
		}
		where += f.Path
	}
	s := fmt.Sprintf("%s [%s]: %s", where, f.Rule, f.Message)
	if f.Level != "" {
		s = string(f.Level) + ": " + s
	}
	return s
}

// AnyBlocking reports whether any of fs fails its check.
func AnyBlocking(fs []Finding) bool { return slices.ContainsFunc(fs, Finding.Blocking) }
