package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// minLandlockABI is the oldest Landlock that keeps every promise: ABI 3
// adds truncation, ABI 6 the signal scope that keeps a script from
// killing its supervisor (and the server).
const minLandlockABI = 6

// Run runs spec confined, with stdin empty and the given stdout and
// stderr, and returns when the program and everything it started are
// gone. Cancelling ctx kills them all.
func Run(ctx context.Context, spec Spec, stdout, stderr io.Writer) (*os.ProcessState, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	specFile, err := specMemfd(spec)
	if err != nil {
		return nil, err
	}
	defer specFile.Close()
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{superviseName}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{specFile}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// SIGTERM tells the supervisor to kill the tree; it also gets it if
	// the server dies. SIGKILL (after WaitDelay) is the last resort: the
	// supervisor cannot clean up after that one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	return cmd.ProcessState, err
}

// Check reports whether this kernel has what Run needs that can be
// checked without running anything (a container runtime's seccomp
// profile may still refuse Landlock or seccomp: Run then fails).
func Check() error {
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < minLandlockABI {
		return &UnavailableError{Missing: landlockMissing(v, err)}
	}
	return nil
}

func landlockMissing(v int, err error) string {
	if err != nil {
		return fmt.Sprintf("Landlock is not enabled in this kernel (%v); it needs Landlock ABI %d or later (Linux 6.12+, landlock in the lsm= list)", err, minLandlockABI)
	}
	return fmt.Sprintf("this kernel has Landlock ABI %d; the sandbox needs ABI %d or later (Linux 6.12+) to keep scripts from signalling processes outside it", v, minLandlockABI)
}

// specMemfd holds the spec in an anonymous file the helpers inherit: it
// never touches the disk and may exceed what argv allows.
func specMemfd(spec Spec) (*os.File, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("cursus-sandbox-spec", 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox spec: %w", err)
	}
	f := os.NewFile(uintptr(fd), "cursus-sandbox-spec")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readSpec() (Spec, error) {
	var spec Spec
	f := os.NewFile(specFD, "spec")
	defer f.Close()
	err := json.NewDecoder(f).Decode(&spec)
	return spec, err
}

func helperFail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "cursus-sandbox: "+format+"\n", args...)
	return confineFailed
}

// supervise starts the confined program and, once it exits or the
// server asks (SIGTERM), kills and reaps every process under it.
func supervise() int {
	// The child's parent-death signal follows the thread that started
	// it: keep that thread for the supervisor's whole life.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return helperFail("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	spec := os.NewFile(specFD, "spec")
	child := exec.Command("/proc/self/exe")
	child.Args = []string{confineName}
	child.Env = []string{}
	child.Dir = "/"
	child.Stdin, child.Stdout, child.Stderr = nil, os.Stdout, os.Stderr
	child.ExtraFiles = []*os.File{spec}
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		return helperFail("start: %v", err)
	}
	spec.Close()
	done := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := child.Process.Wait()
		done <- st
	}()
	var st *os.ProcessState
	select {
	case st = <-done:
	case <-stop:
		killChildren()
		st = <-done
	}
	reapAll()
	if st == nil {
		return confineFailed
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// killChildren SIGKILLs every direct child. Only direct children are
// signalled: their pids cannot be reused before they are reaped, whereas
// a grandchild's pid may already belong to someone else.
func killChildren() {
	procs, err := procfs.AllProcs()
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.PPID == self {
			_ = unix.Kill(p.PID, unix.SIGKILL)
		}
	}
}

// reapAll kills and reaps until no child is left. A killed process's
// children are re-parented here (subreaper), so each round reaches one
// generation further, setsid and double-forked ones included.
func reapAll() {
	deadline := time.Now().Add(5 * time.Second)
	for round := 0; round < 100000 && time.Now().Before(deadline); round++ {
		killChildren()
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.ECHILD) {
				return
			}
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if pid <= 0 {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// confine restricts this process as the spec says and executes the
// program in its place.
func confine() int {
	spec, err := readSpec()
	if err != nil {
		return helperFail("read spec: %v", err)
	}
	rules := []landlock.Rule{
		landlock.RODirs(spec.ReadDirs...).IgnoreIfMissing(),
		landlock.ROFiles(spec.ReadFiles...).IgnoreIfMissing(),
		landlock.RWDirs(spec.WriteDirs...).WithRefer(),
		landlock.RWFiles(spec.WriteFiles...).IgnoreIfMissing(),
	}
	// Every right this kernel knows is handled (so denied unless a rule
	// grants it); the ABI floor was checked by Run.
	if err := landlock.V11.BestEffort().Restrict(rules...); err != nil {
		return helperFail("landlock: %v", err)
	}
	if err := denyNetwork(); err != nil {
		return helperFail("seccomp: %v", err)
	}
	if err := setLimits(spec.Limits); err != nil {
		return helperFail("rlimit: %v", err)
	}
	if err := os.Chdir(spec.Dir); err != nil {
		return helperFail("chdir: %v", err)
	}
	err = syscall.Exec(spec.Path, spec.Args, spec.Env)
	return helperFail("exec %s: %v", spec.Path, err)
}

func setLimits(l Limits) error {
	for _, r := range []struct {
		resource int
		value    uint64
	}{
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_CPU, l.CPUSeconds},
		{unix.RLIMIT_AS, l.AddressSpace},
		{unix.RLIMIT_FSIZE, l.FileSize},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
	} {
		if r.value == 0 && r.resource != unix.RLIMIT_CORE {
			continue
		}
		// syscall.Setrlimit, not unix's: it also stops the runtime from
		// restoring its own RLIMIT_NOFILE across exec.
		if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: r.value, Max: r.value}); err != nil {
			return fmt.Errorf("resource %d: %w", r.resource, err)
		}
	}
	return nil
}
