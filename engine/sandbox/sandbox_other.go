//go:build !linux

package sandbox

import (
	"context"
	"io"
	"os"
)

// Run always answers UnavailableError: the sandbox is built on Linux's
// Landlock, seccomp and child subreapers.
func Run(ctx context.Context, spec Spec, stdout, stderr io.Writer) (*os.ProcessState, error) {
	return nil, Check()
}

// Check always answers UnavailableError, as Run does.
func Check() error {
	return &UnavailableError{Missing: "the script sandbox needs Linux (Landlock, seccomp)"}
}

func supervise() int { return confineFailed }

func confine() int { return confineFailed }
