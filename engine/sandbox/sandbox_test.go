package sandbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRunReportsAFailedSetup: a program the confined helper cannot
// execute (here: outside every readable path) ends with the helper's
// status and a message naming the step that failed, not a hang.
func TestRunReportsAFailedSetup(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("no sandbox on this kernel: %v", err)
	}
	dir := t.TempDir()
	var stderr bytes.Buffer
	st, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "true"}, Dir: dir, WriteDirs: []string{dir}}, nil, &stderr)
	if err == nil || st == nil || st.ExitCode() != confineFailed {
		t.Fatalf("want exit %d, got %v, %v", confineFailed, st, err)
	}
	if !strings.Contains(stderr.String(), "cursus-sandbox: exec /bin/sh") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

// TestRunRefusesAMissingWorkingDirectory: setup errors come back as such.
func TestRunRefusesAMissingWorkingDirectory(t *testing.T) {
	if err := Check(); err != nil {
		var u *UnavailableError
		if !errors.As(err, &u) || !errors.Is(err, ErrUnavailable) || u.Missing == "" {
			t.Fatalf("Check() = %v, want an UnavailableError naming what is missing", err)
		}
		t.Skipf("no sandbox on this kernel: %v", err)
	}
	var stderr bytes.Buffer
	_, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"sh"}, Dir: "/nonexistent-cursus"}, nil, &stderr)
	if err == nil || !strings.Contains(stderr.String(), "cursus-sandbox: chdir") {
		t.Errorf("err = %v, stderr = %q", err, stderr.String())
	}
}
