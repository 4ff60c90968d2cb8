// Package sandbox runs an untrusted program confined by the kernel, as
// root or as a non-root user in a pod with no added privileges:
//
//   - Landlock (ABI 6 or later) limits the filesystem to the paths a Spec
//     names, forbids signalling or ptracing anything outside the sandbox,
//     and (where the ABI has it) TCP bind/connect;
//   - a seccomp filter refuses socket(2) and io_uring, so there is no
//     network of any kind (Landlock does not cover UDP before ABI 10), and
//     namespace creation (unshare, setns, clone with CLONE_NEW*, clone3)
//     and every mount call;
//   - no capabilities (the bounding set is emptied before the program is
//     executed, so even uid 0 holds none), no_new_privs, and rlimits on
//     CPU, address space, file size, open files and core dumps (not RLIMIT_NPROC: it counts every process of
//     the user, the server's own threads included, so it cannot bound one
//     run; the run's cgroup does);
//   - the whole process tree of a run is held, with what the kernel
//     offers (detected once; Containment says what applied):
//     its own PID namespace, whose init is the run's supervisor, so the
//     supervisor's exit kills every process of the run, setsid and
//     double-forked ones included (as root directly; otherwise inside a
//     user namespace mapping only the server's uid, where unprivileged
//     user namespaces are allowed); its own mount namespace, where
//     Spec.Binds are mounted; and its own cgroup, a child of the server's,
//     with a pids limit, a memory limit and a CPU weight (v2 where the
//     server's group can delegate pids and memory, else v1 pids, memory,
//     freezer and cpu), which is frozen, killed as a whole and removed at
//     the end. The supervisor enters the cgroup before it starts the
//     program (it waits for the server's go-ahead on a pipe).
//     Where neither exists (RuntimeDefault seccomp profiles refuse
//     CLONE_NEWUSER to unprivileged containers, and pods rarely get a
//     writable cgroup), the supervisor is a child subreaper that kills and
//     reaps every descendant before it exits, as far as it can within 5 s.
//
// Landlock's signal scope keeps the script from killing its supervisor to
// escape it; in a PID namespace its init ignores signals from inside too.
//
// Landlock has to be applied by the process that will become the script,
// before it executes the interpreter, and Go cannot run code between fork
// and exec. So the program re-executes itself (/proc/self/exe) under a
// marker argv[0]; this package's init takes over such a process before
// main runs, in the server and in test binaries alike.
package sandbox

import (
	"errors"
	"fmt"
	"os"
)

// Spec is one confined run.
type Spec struct {
	// Path is the program to execute (absolute); Args is its argv.
	Path string   `json:"path"`
	Args []string `json:"args"`
	// Env is the program's whole environment.
	Env []string `json:"env"`
	// Dir is its working directory.
	Dir string `json:"dir"`
	// ReadDirs and ReadFiles may be read (and executed); missing ones are
	// skipped.
	ReadDirs  []string `json:"read_dirs"`
	ReadFiles []string `json:"read_files"`
	// WriteDirs and WriteFiles may be read and written.
	WriteDirs  []string `json:"write_dirs"`
	WriteFiles []string `json:"write_files"`
	// Binds are bind-mounted in the run's own mount namespace before the
	// program starts, and Landlock lets the program use their Targets
	// (read-only ones only for reading). They need Namespaces(); Run
	// refuses a Spec with Binds where it fails.
	Binds  []Bind `json:"binds"`
	Limits Limits `json:"limits"`
}

// Bind makes Source (a directory or file) appear at Target, both
// absolute, inside one run only. Missing directories of Target are
// created (on the real file system: a mount point has to exist).
type Bind struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only"`
}

// Limits bound a run; zero leaves one unset. CPUSeconds, AddressSpace,
// FileSize and OpenFiles are rlimits of each process; Processes,
// MemoryBytes and CPUWeight hold for the run's whole process tree and
// apply where the run gets a cgroup (see Containment).
type Limits struct {
	CPUSeconds   uint64 `json:"cpu_seconds"`
	AddressSpace uint64 `json:"address_space"`
	FileSize     uint64 `json:"file_size"`
	OpenFiles    uint64 `json:"open_files"`
	// Processes caps the tasks (processes and threads, the supervisor's
	// few included) alive at once.
	Processes uint64 `json:"processes"`
	// MemoryBytes caps the memory the tree uses (swap included); over it,
	// the kernel kills a process of the run.
	MemoryBytes uint64 `json:"memory_bytes"`
	// CPUWeight is the run's share of CPU under contention, 1-10000
	// (cgroup v2's cpu.weight; 100 is a peer of an ordinary process
	// group), where the cpu controller is available.
	CPUWeight uint64 `json:"cpu_weight"`
}

// ErrUnavailable means this kernel (or the container runtime) cannot
// confine a run.
var ErrUnavailable = errors.New("the script sandbox is unavailable")

// UnavailableError names what is missing.
type UnavailableError struct{ Missing string }

func (e *UnavailableError) Error() string { return fmt.Sprintf("%v: %s", ErrUnavailable, e.Missing) }

func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// Marker argv[0]s of the helper roles; nothing else runs the binary
// under these names.
const (
	superviseName = "cursus-sandbox-supervise"
	confineName   = "cursus-sandbox-confine"
	probeName     = "cursus-sandbox-probe"
)

// nsMode, as the supervisor's argv[1], says it is the init of the run's
// own PID and mount namespaces.
const nsMode = "ns"

// specFD is where a helper finds its Spec (JSON); goAheadFD is the pipe
// on which the supervisor waits for the server to have put it in the
// run's cgroup.
const (
	specFD    = 3
	goAheadFD = 4
)

// confineFailed is the exit status of a helper that could not set up the
// confinement; its stderr says why.
const confineFailed = 125

func init() {
	switch os.Args[0] {
	case superviseName:
		os.Exit(supervise())
	case confineName:
		os.Exit(confine())
	case probeName:
		os.Exit(probe())
	}
}
