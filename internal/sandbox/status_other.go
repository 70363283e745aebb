//go:build !linux

package sandbox

import "runtime"

// Unavailable is why this system cannot confine a shell at all: the
// sandbox is Linux only (Landlock and namespaces).
func Unavailable() string { return "not available on " + runtime.GOOS }
