//go:build !amd64 && !arm64

package proc

import "syscall"

// Elsewhere only read(2) is told; its number comes from the syscall package.
var waitCalls = map[int]waitCall{syscall.SYS_READ: callRead}
