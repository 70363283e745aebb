package guard

// A guardian waits, for as long as its shell lives, with little to do; what
// its start touched stays in its memory otherwise. Only syscall, os and
// strings here: this runs in the guardian.

import (
	"bytes"
	"os"
	"syscall"
)

// shedStartPages gives back the pages of the agentsh binary's code and
// read-only data that the runtime's start and the package inits mapped
// into the guardian and its wait does not use (RSS shared with agentsh,
// which made every guardian count 12 MB; a later use maps them again from
// the page cache). A mapping holding a page of its own (a copy on write,
// Anonymous > 0) is left alone: dropping it would lose what was written.
// smaps is read through a small buffer, not whole: a big read would grow
// the guardian's heap, its private memory, for good.
func shedStartPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	fd, err := syscall.Open("/proc/self/smaps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	type span struct{ start, end uint64 }
	var drop []span
	var cur span
	ours := false
	// Every line is parsed in place: no allocation per line.
	parse := func(l []byte) {
		if v, ok := bytes.CutPrefix(l, []byte("Anonymous:")); ok {
			if v = bytes.TrimLeft(v, " "); len(v) > 0 && v[0] != '0' {
				ours = false
			}
			return
		}
		rng, rest, _ := bytes.Cut(l, []byte(" "))
		lo, hi, ok := bytes.Cut(rng, []byte("-"))
		a, okA := parseHex(lo)
		b, okB := parseHex(hi)
		if !ok || !okA || !okB {
			return // a field line
		}
		// A mapping's header: range, perms, offset, device, inode, path.
		if ours {
			drop = append(drop, cur)
		}
		perms, rest, _ := bytes.Cut(rest, []byte(" "))
		for range 3 { // offset, device, inode
			_, rest, _ = bytes.Cut(bytes.TrimLeft(rest, " "), []byte(" "))
		}
		path := bytes.TrimLeft(rest, " ")
		ours = b > a && string(path) == exe && (string(perms) == "r-xp" || string(perms) == "r--p")
		cur = span{a, b}
	}
	buf := make([]byte, 8192)
	var line []byte // a line cut by the buffer's end
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return // a mapping half seen: drop nothing
		}
		if n == 0 {
			break
		}
		rest := buf[:n]
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				line = append(line, rest...)
				break
			}
			l := rest[:i]
			if len(line) > 0 {
				l = append(line, l...)
				line = line[:0]
			}
			rest = rest[i+1:]
			parse(l)
		}
	}
	if ours {
		drop = append(drop, cur)
	}
	for _, d := range drop {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(d.start), uintptr(d.end-d.start), syscall.MADV_DONTNEED)
	}
}

// parseHex reads a whole hexadecimal number without allocating.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}
