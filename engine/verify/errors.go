package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cursus-dev/cursus/engine/workspace"
)

// The use-cases fail with these errors; the tool layer maps each kind to
// its error code.

// ErrNoNodes means a run names neither nodes nor a DAG file.
var ErrNoNodes = errors.New("give nodes (and edges) or dag_file")

// InputError is a request that contradicts itself or the catalog.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, a ...any) error { return &InputError{Msg: fmt.Sprintf(format, a...)} }

// PathError is a file argument that leaves the workspace or cannot be read.
type PathError struct {
	Arg string // the argument naming the file
	Err error
}

// Error says what is wrong with the argument in the tool layer's words.
func (e *PathError) Error() string {
	var esc *workspace.EscapeError
	var exists *workspace.ExistsError
	switch {
	case errors.As(e.Err, &esc):
		return fmt.Sprintf("'%s': %s", e.Arg, esc.Error())
	case errors.As(e.Err, &exists):
		return fmt.Sprintf("'%s': %s", e.Arg, exists.Error())
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("'%s': file not found", e.Arg)
	}
	return e.Err.Error()
}
func (e *PathError) Unwrap() error { return e.Err }

// ConfigError is a config file whose values do not fit the schemas.
type ConfigError struct {
	Arg string
	Err error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %v", e.Arg, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

// JobTypeError is a job type the step type has no variant for.
type JobTypeError struct {
	JobType, StepType string
	Err               error
}

func (e *JobTypeError) Error() string {
	return fmt.Sprintf("job_type '%s' for %s: %v", e.JobType, e.StepType, e.Err)
}
func (e *JobTypeError) Unwrap() error { return e.Err }

// NoScriptError is a node whose step runs a script that was not found.
type NoScriptError struct {
	Node, EntryPoint string
	Searched         []string
}

func (e *NoScriptError) Error() string {
	return fmt.Sprintf("no script for node %s (looked for %s in %s)", e.Node, e.EntryPoint, strings.Join(e.Searched, ", "))
}

// NodeError is a node that could not be prepared or run.
type NodeError struct {
	Node string
	Err  error
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %s: %v", e.Node, e.Err) }
func (e *NodeError) Unwrap() error { return e.Err }

// NotFoundError is something the request names that does not exist.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }
