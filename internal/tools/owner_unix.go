//go:build unix

package tools

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of old, best effort: it only
// matters (and only works) when a privileged user rewrites someone else's
// file.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
