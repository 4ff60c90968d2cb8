package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls cannot be made by a confined program: socket(2) is every
// network (and unix socket) endpoint; io_uring can open and connect
// sockets without calling socket(2). socketpair(2) stays: it reaches
// nothing outside, and Python's asyncio and multiprocessing use it.
var deniedSyscalls = []uint32{unix.SYS_SOCKET, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}

// denyNetwork installs a seccomp filter on every thread that refuses
// deniedSyscalls with EPERM and kills the process on any syscall of a
// foreign architecture (e.g. i386 through int 0x80 on amd64, where
// socketcall(2) would bypass the socket rule).
//
// The filter is assembled here rather than with a policy library: the
// one we looked at allows foreign-architecture syscalls whenever the
// default action is "allow", which is exactly the bypass above.
func denyNetwork() error {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
	}
	prog = append(prog, foreignABIs...)
	for _, nr := range deniedSyscalls {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1},
			bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)})
	}
	prog = append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
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
