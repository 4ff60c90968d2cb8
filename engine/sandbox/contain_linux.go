package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// containment is what this kernel lets Run do beyond Landlock and
// seccomp, found once per process.
type containment struct {
	// nsErr is nil when each run can get its own PID and mount namespaces.
	nsErr error
	// cloneflags create them (with a user namespace when not root).
	cloneflags uintptr
	// cgroups is where runs get a cgroup (nil: nowhere, cgErr says why).
	cgroups *cgroupSetup
	cgErr   error
}

var (
	detectOnce sync.Once
	detected   containment
)

func detect() *containment {
	detectOnce.Do(func() {
		detected.cloneflags = unix.CLONE_NEWPID | unix.CLONE_NEWNS
		if os.Geteuid() != 0 {
			detected.cloneflags |= unix.CLONE_NEWUSER
		}
		detected.nsErr = probeNamespaces(detected.cloneflags)
		detected.cgroups, detected.cgErr = findCgroups()
	})
	return &detected
}

// Namespaces reports whether each run gets its own PID and mount
// namespaces here (nil), so Spec.Binds work; the error says why not.
func Namespaces() error { return detect().nsErr }

// Containment says how a run's process tree is held here: which of PID
// namespace, cgroup and subreaper apply, and why one is missing.
func Containment() string {
	c := detect()
	var parts []string
	if c.nsErr == nil {
		parts = append(parts, "own PID and mount namespaces (its init's exit kills every process of the run)")
	} else {
		parts = append(parts, "no PID namespace ("+c.nsErr.Error()+")")
	}
	if c.cgroups != nil {
		parts = append(parts, "own "+c.cgroups.String()+" group, frozen and killed as a whole at the end")
	} else {
		parts = append(parts, "no cgroup ("+c.cgErr.Error()+")")
	}
	if c.nsErr != nil {
		parts = append(parts, "a subreaper supervisor kills and reaps the tree")
	}
	return strings.Join(parts, "; ")
}

// Cgroup reports whether each run gets its own cgroup here (nil), so
// Limits' Processes, MemoryBytes and CPUWeight apply; the error says why
// not.
func Cgroup() error { return detect().cgErr }

// probeNamespaces starts the probe helper in new namespaces: it makes
// its mounts private (as a run's supervisor does) and checks it is
// PID 1.
func probeNamespaces(flags uintptr) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{probeName}
	cmd.Env = []string{}
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if flags&unix.CLONE_NEWUSER != 0 {
		cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings = userNSMaps()
	}
	err := cmd.Run()
	if msg := strings.TrimSpace(stderr.String()); err != nil && msg != "" {
		err = errors.New(msg)
	}
	if err != nil {
		what := "PID and mount namespaces"
		if flags&unix.CLONE_NEWUSER != 0 {
			what = "a user namespace with PID and mount namespaces (unprivileged user namespaces may be off, or refused by the container's seccomp profile)"
		}
		return fmt.Errorf("cannot create %s: %v", what, err)
	}
	return nil
}

// probe is the probe helper's body.
func probe() int {
	if os.Getpid() != 1 {
		return helperFail("not PID 1 in the new namespace")
	}
	if err := privateMounts(); err != nil {
		return helperFail("%v", err)
	}
	return 0
}

// privateMounts keeps this mount namespace's changes from propagating
// back to the server's, and mounts a /proc of the run's PID namespace:
// the server's would answer getpid()-based paths (/proc/<pid>/..., which
// the Landlock library itself opens) with another process.
func privateMounts() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// userNSMaps map the server's user and group, and nothing else, to root
// in a run's user namespace: the supervisor keeps its capabilities there
// across exec to set up the mounts, and the confined program drops them
// all before it starts.
func userNSMaps() (uids, gids []syscall.SysProcIDMap) {
	return []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		[]syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
}
