package sandbox

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const auditArch = unix.AUDIT_ARCH_X86_64

// foreignABIs refuses x32 syscalls (nr with bit 30 set): they share the
// x86_64 arch value and would reach socket(2) under another number.
var foreignABIs = []bpf.Instruction{
	bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: 0x40000000, SkipFalse: 1},
	bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
}
