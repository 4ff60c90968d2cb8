package sandbox

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const auditArch = unix.AUDIT_ARCH_AARCH64

// foreignABIs is empty: arm64 has no second syscall ABI sharing its arch
// value (32-bit compat tasks report AUDIT_ARCH_ARM and are killed).
var foreignABIs []bpf.Instruction
