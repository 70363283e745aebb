//go:build linux

package config

import (
	"os"
	"syscall"
)

// statExtra returns a file's change time (ns) and inode: a rewrite moves the
// change time even when it keeps the size and sets the modification time
// back, and an editor's save by rename changes the inode.
func statExtra(fi os.FileInfo) (ctime, inode uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ctim.Sec)*1e9 + uint64(st.Ctim.Nsec), st.Ino
}
