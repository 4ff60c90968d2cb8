package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls cannot be made by a confined program (EPERM):
//
//   - socket(2) is every network (and unix socket) endpoint; io_uring can
//     open and connect sockets without calling socket(2). socketpair(2)
//     stays: it reaches nothing outside, and Python's asyncio and
//     multiprocessing use it.
//   - unshare(2) and setns(2) would give the program namespaces of its own
//     (a user namespace grants every capability inside it, a network
//     namespace its own interfaces); the mount calls would change what
//     paths mean under Landlock's rules. clone(2) with a CLONE_NEW* flag
//     is refused below, clone3(2) altogether.
var deniedSyscalls = []uint32{
	unix.SYS_SOCKET, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
}

// cloneNewFlags are clone(2)'s flags that create a namespace.
const cloneNewFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// installSeccomp installs a seccomp filter on every thread that refuses
// deniedSyscalls and namespace-creating clones with EPERM, answers
// clone3(2) with ENOSYS (its flags sit in memory a filter cannot read;
// libc then falls back to clone(2), whose flags it can), and kills the
// process on any syscall of a foreign architecture (e.g. i386 through
// int 0x80 on amd64, where socketcall(2) would bypass the socket rule).
//
// The filter is assembled here rather than with a policy library: the
// one we looked at allows foreign-architecture syscalls whenever the
// default action is "allow", which is exactly the bypass above.
func installSeccomp() error {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
	}
	prog = append(prog, foreignABIs...)
	deny := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	for _, nr := range deniedSyscalls {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1}, deny)
	}
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_CLONE3, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		// clone(2)'s flags are its first argument on amd64 and arm64;
		// every CLONE_NEW* flag is in its low 32 bits (little-endian:
		// the word at offset 16 of seccomp_data).
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_CLONE, SkipTrue: 3},
		bpf.LoadAbsolute{Off: 16, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsNotSet, Val: cloneNewFlags, SkipTrue: 1},
		deny,
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	return nil
}
