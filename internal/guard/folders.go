package guard

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"agentsh/internal/proc"
)

// ownerTag is "<pid>-<start time>" of this process: a pid alone could
// belong to another process by the time anyone reads it.
var ownerTag = sync.OnceValue(func() string {
	pid := os.Getpid()
	st, _ := proc.Stat(pid)
	return strconv.Itoa(pid) + "-" + strconv.FormatUint(st.Start, 10)
})

// MkdirOwned creates a new folder in dir named
// prefix<pid>-<start>-<random>, where pid and start identify this process,
// so that RemoveStale can tell when its owner is gone.
func MkdirOwned(dir, prefix string) (string, error) {
	return os.MkdirTemp(dir, prefix+ownerTag()+"-")
}

// RemoveStale removes the folders in dir that MkdirOwned made with prefix
// for an owner that is no longer alive (a SIGKILLed or crashed agentsh),
// and returns how many it removed. Folders of living owners, of other users
// and names it does not recognise are left alone.
func RemoveStale(dir, prefix string) int {
	d, err := os.Open(dir)
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	uid := os.Getuid()
	removed := 0
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		f := strings.SplitN(rest, "-", 3)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 {
			continue
		}
		if p, ok := proc.Stat(pid); ok && p.Start == start && p.State != 'Z' && p.State != 'X' {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		if os.RemoveAll(path) == nil {
			removed++
		}
	}
	return removed
}
