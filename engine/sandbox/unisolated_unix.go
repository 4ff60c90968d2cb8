//go:build unix

package sandbox

import (
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// RunUnisolated runs argv with no confinement but its own process group,
// which is killed when ctx ends and again when argv exits (reaping what it
// left behind): what is left when the kernel offers no sandbox and the
// operator allowed running without one.
func RunUnisolated(ctx context.Context, argv []string, dir string, env []string, stdout, stderr io.Writer) (*os.ProcessState, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return cmd.ProcessState, err
}
