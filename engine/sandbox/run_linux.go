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
	"path/filepath"
	"runtime"
	"sync"
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
//
// Where the kernel allows (Containment says what applied), the run has
// its own PID and mount namespaces, whose init is the supervisor, and
// its own cgroup with spec.Limits' Processes, MemoryBytes and CPUWeight;
// at the end or on cancellation the cgroup is frozen and killed and the
// supervisor SIGKILLed, which kills every process left in the namespace.
// A cancelled run so contained answers (nil state, ctx's error) at most
// killWait after the cancellation even if the kernel is still tearing
// its killed processes down; nothing is written to stdout or stderr
// after Run returns.
func Run(ctx context.Context, spec Spec, stdout, stderr io.Writer) (*os.ProcessState, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	for _, b := range spec.Binds {
		if !filepath.IsAbs(b.Source) || !filepath.IsAbs(b.Target) {
			return nil, fmt.Errorf("sandbox: bind %q on %q: both must be absolute", b.Source, b.Target)
		}
	}
	c := detect()
	if len(spec.Binds) > 0 && c.nsErr != nil {
		return nil, fmt.Errorf("sandbox: binds need a mount namespace: %w", c.nsErr)
	}
	specFile, err := specMemfd(spec)
	if err != nil {
		return nil, err
	}
	defer specFile.Close()
	var group *runCgroup
	if c.cgroups != nil {
		if group, err = c.cgroups.create(spec.Limits); err != nil {
			return nil, err
		}
	}
	goRead, goWrite, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer goWrite.Close()
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{superviseName}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{specFile, goRead}
	// A run answered before its processes are all gone must not write
	// to the caller's buffers afterwards.
	out, errOut := &guardedWriter{w: stdout}, &guardedWriter{w: stderr}
	defer out.close()
	defer errOut.close()
	cmd.Stdout, cmd.Stderr = out, errOut
	// Outside a PID namespace, SIGTERM tells the supervisor to kill the
	// tree (it also gets it if the server dies), and SIGKILL (after
	// WaitDelay) is the last resort. Inside one, SIGKILL to the
	// supervisor is the kill: the kernel takes the namespace with it.
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.WaitDelay = 10 * time.Second
	if c.nsErr == nil {
		cmd.Args = append(cmd.Args, nsMode)
		attr.Cloneflags, attr.Pdeathsig = c.cloneflags, syscall.SIGKILL
		if c.cloneflags&unix.CLONE_NEWUSER != 0 {
			attr.UidMappings, attr.GidMappings = userNSMaps()
		}
	}
	if c.nsErr == nil || group != nil {
		// Every process is killed at once, so the pipes close at once:
		// this only bounds the wait for output already written.
		cmd.WaitDelay = 500 * time.Millisecond
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error {
		// Freezing first stops a forking tree at once, so the kill is
		// not slowed by it; in a PID namespace the supervisor's death
		// then kills whatever is left, and no process can be added to a
		// dying namespace.
		if group != nil {
			group.kill()
		}
		if c.nsErr == nil {
			return cmd.Process.Kill()
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	if err := cmd.Start(); err != nil {
		goRead.Close()
		if group != nil {
			_ = group.remove(time.Now().Add(time.Second))
		}
		return nil, err
	}
	goRead.Close()
	// The supervisor waits for this go-ahead before it starts the
	// program, so the program is born inside the cgroup.
	if group != nil {
		err = group.enter(cmd.Process.Pid)
	}
	if err == nil {
		_, err = goWrite.Write([]byte{1})
	}
	goWrite.Close()
	if err != nil {
		_ = cmd.Process.Kill()
	}
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	cleanup := func() {
		// In a PID namespace everything is gone already; without one,
		// remove kills what the supervisor left.
		if group != nil && group.remove(time.Now().Add(500*time.Millisecond)) != nil {
			_ = group.remove(time.Now().Add(time.Minute))
		}
	}
	select {
	case <-exited:
	case <-ctx.Done():
		// Every process of a contained run is killed by now or soon (see
		// Cancel); the kernel may still be tearing thousands down on a
		// busy machine. The answer does not wait more than killWait.
		if c.nsErr != nil && group == nil {
			<-exited
			break
		}
		select {
		case <-exited:
		case <-time.After(killWait):
			go func() {
				<-exited
				cleanup()
			}()
			return nil, ctx.Err()
		}
	}
	cleanup()
	if err != nil && ctx.Err() == nil {
		return cmd.ProcessState, err
	}
	return cmd.ProcessState, waitErr
}

// killWait bounds how long a cancelled contained run waits for the
// kernel to finish killing it before it answers.
const killWait = 700 * time.Millisecond

// guardedWriter passes writes on until it is closed, and drops them
// after.
type guardedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.w == nil {
		return len(p), nil
	}
	return g.w.Write(p)
}

func (g *guardedWriter) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
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

// readSpec reads the spec without moving the shared file offset: the
// supervisor and the confined helper both read it.
func readSpec(f *os.File) (Spec, error) {
	var spec Spec
	err := json.NewDecoder(io.NewSectionReader(f, 0, 1<<40)).Decode(&spec)
	return spec, err
}

func helperFail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "cursus-sandbox: "+format+"\n", args...)
	return confineFailed
}

// supervise starts the confined program once the server gives the
// go-ahead and, once it exits or the server asks (SIGTERM), ends every
// process under it. As the init of the run's PID namespace (argv[1] is
// nsMode) it first sets up the run's mount namespace; its own exit then
// kills whatever is left. Elsewhere it is a child subreaper that kills
// and reaps the tree itself.
func supervise() int {
	// The child's parent-death signal follows the thread that started
	// it: keep that thread for the supervisor's whole life.
	runtime.LockOSThread()
	inNS := len(os.Args) > 1 && os.Args[1] == nsMode
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	goAhead := os.NewFile(goAheadFD, "go-ahead")
	if n, _ := goAhead.Read(make([]byte, 1)); n != 1 {
		return helperFail("the server did not start the run")
	}
	goAhead.Close()
	specFile := os.NewFile(specFD, "spec")
	spec, err := readSpec(specFile)
	if err != nil {
		return helperFail("read spec: %v", err)
	}
	if inNS {
		if err := privateMounts(); err != nil {
			return helperFail("%v", err)
		}
		if err := bindAll(spec.Binds); err != nil {
			return helperFail("%v", err)
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return helperFail("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	child := exec.Command("/proc/self/exe")
	child.Args = []string{confineName}
	child.Env = []string{}
	child.Dir = "/"
	child.Stdin, child.Stdout, child.Stderr = nil, os.Stdout, os.Stderr
	child.ExtraFiles = []*os.File{specFile}
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		return helperFail("start: %v", err)
	}
	done := make(chan unix.WaitStatus, 1)
	go waitFor(child.Process.Pid, done)
	var ws unix.WaitStatus
	select {
	case ws = <-done:
	case <-stop:
		if inNS {
			return 128 + int(syscall.SIGKILL)
		}
		killChildren()
		ws = <-done
	}
	if !inNS {
		reapAll()
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// waitFor reaps children (orphans re-parented here included, so they do
// not pile up as zombies) until pid exits, and sends its status.
func waitFor(pid int, done chan<- unix.WaitStatus) {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			done <- unix.WaitStatus(confineFailed << 8)
			return
		}
		if got == pid {
			done <- ws
			return
		}
	}
}

// bindAll bind-mounts each Source at its Target, creating the Target
// (and its missing parents) when needed; read-only ones are remounted so.
func bindAll(binds []Bind) error {
	for _, b := range binds {
		fi, err := os.Stat(b.Source)
		if err != nil {
			return fmt.Errorf("bind: %w", err)
		}
		if fi.IsDir() {
			err = os.MkdirAll(b.Target, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(b.Target), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(b.Target, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("bind target: %w", err)
		}
		if err := unix.Mount(b.Source, b.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s on %s: %w", b.Source, b.Target, err)
		}
		if !b.ReadOnly {
			continue
		}
		// A remount must keep the flags the mount already has (a user
		// namespace may not clear locked ones).
		var st unix.Statfs_t
		if err := unix.Statfs(b.Target, &st); err != nil {
			return fmt.Errorf("bind %s: %w", b.Target, err)
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for _, f := range []struct{ st, ms uintptr }{
			{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
			{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
		} {
			if uintptr(st.Flags)&f.st != 0 {
				flags |= f.ms
			}
		}
		if err := unix.Mount("", b.Target, "", flags, ""); err != nil {
			return fmt.Errorf("bind %s read-only: %w", b.Target, err)
		}
	}
	return nil
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
	specFile := os.NewFile(specFD, "spec")
	spec, err := readSpec(specFile)
	specFile.Close()
	if err != nil {
		return helperFail("read spec: %v", err)
	}
	rules := []landlock.Rule{
		landlock.RODirs(spec.ReadDirs...).IgnoreIfMissing(),
		landlock.ROFiles(spec.ReadFiles...).IgnoreIfMissing(),
		landlock.RWDirs(spec.WriteDirs...).WithRefer(),
		landlock.RWFiles(spec.WriteFiles...).IgnoreIfMissing(),
	}
	for _, b := range spec.Binds {
		fi, err := os.Stat(b.Target)
		if err != nil {
			return helperFail("bind target: %v", err)
		}
		switch {
		case fi.IsDir() && b.ReadOnly:
			rules = append(rules, landlock.RODirs(b.Target))
		case fi.IsDir():
			rules = append(rules, landlock.RWDirs(b.Target).WithRefer())
		case b.ReadOnly:
			rules = append(rules, landlock.ROFiles(b.Target))
		default:
			rules = append(rules, landlock.RWFiles(b.Target))
		}
	}
	// Every right this kernel knows is handled (so denied unless a rule
	// grants it); the ABI floor was checked by Run.
	if err := landlock.V11.BestEffort().Restrict(rules...); err != nil {
		return helperFail("landlock: %v", err)
	}
	if err := installSeccomp(); err != nil {
		return helperFail("seccomp: %v", err)
	}
	if err := setLimits(spec.Limits); err != nil {
		return helperFail("rlimit: %v", err)
	}
	if err := dropCapabilities(); err != nil {
		return helperFail("capabilities: %v", err)
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

// dropCapabilities empties the capability bounding set, so the program
// holds no capability once it is executed, even as uid 0 (a server
// running as root, or the user namespace's root). Without CAP_SETPCAP
// there is nothing to drop: the program gets none anyway.
func dropCapabilities() error {
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		switch {
		case errors.Is(err, unix.EINVAL):
			return nil // past the last capability this kernel knows
		case errors.Is(err, unix.EPERM) && c == 0:
			return nil
		case err != nil:
			return fmt.Errorf("drop %d: %w", c, err)
		}
	}
}
