//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
)

// Run always answers UnavailableError: the sandbox is built on Linux's
// Landlock, seccomp, namespaces, cgroups and child subreapers.
func Run(ctx context.Context, spec Spec, stdout, stderr io.Writer) (*os.ProcessState, error) {
	return nil, Check()
}

// Check always answers UnavailableError, as Run does.
func Check() error {
	return &UnavailableError{Missing: "the script sandbox needs Linux (Landlock, seccomp)"}
}

// Namespaces always answers an error: namespaces are Linux's.
func Namespaces() error { return errors.New("PID and mount namespaces need Linux") }

// Containment says that nothing holds a run here.
func Containment() string { return "none: the script sandbox needs Linux" }

// Cgroup always answers an error: cgroups are Linux's.
func Cgroup() error { return errors.New("cgroups need Linux") }

func supervise() int { return confineFailed }

func confine() int { return confineFailed }

func probe() int { return confineFailed }
