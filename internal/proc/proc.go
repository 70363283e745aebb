// Package proc finds and ends the processes of a shell session by reading
// /proc: its session, process group, descendants and environment marker.
// It also says what the kernel knows of a process: its state and CPU time,
// whether it sleeps reading a given descriptor (waiting.go, which tells a
// job waiting for input), and which descriptors hold a file.
package proc

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Info is what the kill logic needs to know about one process.
type Info struct {
	Pid, PPid, Pgrp, Sid int
	State                byte
	Start                uint64 // start time in clock ticks after boot
	CPU                  uint64 // user + system CPU time used, in clock ticks (not its children's)
}

// TicksPerSecond is the kernel's clock tick rate for Start and CPU
// (USER_HZ, 100 on Linux).
const TicksPerSecond = 100

// readSmall reads a small /proc file with raw syscalls into buf: a sweep
// reads one per process, and os.ReadFile's extra calls double its cost.
func readSmall(path string, buf []byte) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if m <= 0 || err != nil {
			break
		}
		n += m
	}
	return buf[:n]
}

// Stat parses /proc/<pid>/stat. The command name may contain spaces
// and parentheses, so fields are taken after the last ')'.
func Stat(pid int) (Info, bool) {
	var buf [512]byte
	b := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Info{}, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 20 {
		return Info{}, false
	}
	p := Info{Pid: pid, State: f[0][0]}
	p.PPid, _ = strconv.Atoi(string(f[1]))
	p.Pgrp, _ = strconv.Atoi(string(f[2]))
	p.Sid, _ = strconv.Atoi(string(f[3]))
	p.Start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	ut, _ := strconv.ParseUint(string(f[11]), 10, 64)
	st, _ := strconv.ParseUint(string(f[12]), 10, 64)
	p.CPU = ut + st
	return p, true
}

// List returns every process visible in /proc.
func List() []Info {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]Info, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := Stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// EnvironHas reports whether the initial environment of pid holds the exact
// entry kv ("NAME=value"). Processes that setsid and double-fork away from the
// shell keep their environment, which is how they are found.
func EnvironHas(pid int, kv []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return envHas(b, kv)
}

func envHas(b, kv []byte) bool {
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		var e []byte
		if i < 0 {
			e, b = b, nil
		} else {
			e, b = b[:i], b[i+1:]
		}
		if bytes.Equal(e, kv) {
			return true
		}
	}
	return false
}

// SessionProcs finds every live process that belongs to the shell session
// rooted at root: its session, its process group, its descendants, and any
// process carrying the session's environment marker. Only processes started
// no earlier than since (clock ticks after boot; the shell's own start) can
// carry the marker, so older ones are never read: that keeps a sweep cheap
// on a machine with hundreds of processes.
//
// If root's pid now belongs to a process that started at another time, the
// pid was reused after the shell died, and only the marker can be trusted
// (reused reports that, so the caller does not signal the group either).
func SessionProcs(root int, marker []byte, since uint64) (pids []int, reused bool) {
	self := os.Getpid()
	procs := List()
	parent := make(map[int]int, len(procs))
	for _, p := range procs {
		parent[p.Pid] = p.PPid
		if p.Pid == root && since != 0 && p.Start != since {
			reused = true
		}
	}
	var out []int
	for _, p := range procs {
		if p.Pid == self || p.State == 'Z' || p.State == 'X' {
			continue
		}
		match := !reused && (p.Pid == root || p.Sid == root || p.Pgrp == root)
		if !match && !reused {
			for q, n := p.PPid, 0; q > 1 && n < 64; q, n = parent[q], n+1 {
				if q == root {
					match = true
					break
				}
			}
		}
		if !match && len(marker) > 0 && p.Start >= since && p.PPid != 2 && p.Pid != 2 {
			match = EnvironHas(p.Pid, marker)
		}
		if match {
			out = append(out, p.Pid)
		}
	}
	return out, reused
}

// Alive reports whether pid still runs (a zombie counts as gone).
func Alive(pid int) bool {
	p, ok := Stat(pid)
	return ok && p.State != 'Z' && p.State != 'X'
}

// KillSession terminates every process of a shell session: SIGTERM first,
// SIGKILL to whatever is left after grace, and a final scan must find
// nothing, so processes forked while handling SIGTERM are caught too. It
// returns once no process of the session is alive (or after a hard bound).
func KillSession(root int, marker []byte, since uint64, grace time.Duration) {
	var reused bool
	find := func() []int {
		var pids []int
		pids, reused = SessionProcs(root, marker, since)
		return pids
	}
	group := func(sig syscall.Signal) {
		if !reused {
			_ = syscall.Kill(-root, sig)
		}
	}
	sweep(find, group, grace)
}

// KillDescendants ends every descendant of the calling process and every
// process carrying marker that started no earlier than since, the way
// KillSession ends a session; the caller itself is spared. A guardian that
// is a child subreaper calls it: every orphan of its tree was reparented to
// it, so "descendant" covers processes that left the session, cleared their
// environment or double-forked.
func KillDescendants(marker []byte, since uint64, grace time.Duration) {
	self := os.Getpid()
	find := func() []int {
		// The caller is no session leader and leads a group of its own,
		// so only its descendants and the marker match.
		pids, _ := SessionProcs(self, marker, since)
		return pids
	}
	sweep(find, nil, grace)
}

// sweep sends SIGTERM to what find reports (and to group, when not nil),
// rescans until nothing is left or grace has passed, then SIGKILLs in rounds
// until a scan comes back empty.
func sweep(find func() []int, group func(syscall.Signal), grace time.Duration) {
	signalGroup := func(sig syscall.Signal) {
		if group != nil {
			group(sig)
		}
	}
	pids := find()
	if len(pids) == 0 {
		return // nothing alive, so nothing can fork either
	}
	signalGroup(syscall.SIGTERM)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	sleep := 500 * time.Microsecond
	for time.Now().Before(deadline) {
		live := pids[:0]
		for _, p := range pids {
			if Alive(p) {
				live = append(live, p)
			}
		}
		pids = live
		if len(pids) == 0 {
			// All gone; one more scan catches anything forked meanwhile.
			if pids = find(); len(pids) == 0 {
				return
			}
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGTERM)
			}
		}
		time.Sleep(sleep)
		if sleep < 10*time.Millisecond {
			sleep *= 2
		}
	}
	for round := 0; round < 50; round++ {
		signalGroup(syscall.SIGKILL)
		if pids = find(); len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		// SIGKILL is not instant: wait for the kernel to tear them down.
		for i := 0; i < 100; i++ {
			any := false
			for _, p := range pids {
				if Alive(p) {
					any = true
					break
				}
			}
			if !any {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// FileHolders returns the fds of pid that refer to the same file as f.
func FileHolders(pid int, f *os.File) []int {
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, err := os.Stat(dir + n); err == nil && os.SameFile(st, fi) {
			out = append(out, fd)
		}
	}
	return out
}

// Descendants returns root and every process below it, read from
// /proc/<pid>/task/<tid>/children: a few small files for a job's tree
// instead of the stat of every process on the machine. ok is false when the
// kernel has no such files (built without CONFIG_PROC_CHILDREN).
func Descendants(root int) (pids []int, ok bool) {
	if !hasChildren() {
		return nil, false
	}
	var buf [4096]byte
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		d, err := os.Open(dir)
		if err != nil {
			continue // exited meanwhile
		}
		tids, _ := d.Readdirnames(-1)
		d.Close()
		pids = append(pids, pid)
		for _, tid := range tids {
			for _, f := range bytes.Fields(readSmall(dir+tid+"/children", buf[:])) {
				if c, err := strconv.Atoi(string(f)); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return pids, true
}

// hasChildren reports whether the kernel offers the children files.
var hasChildren = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(syscall.Gettid()) + "/children")
	return err == nil
})
