package proc

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"syscall"
)

// waitCall is how a system call names the files it waits on.
type waitCall int

const (
	callRead   waitCall = iota + 1 // read(fd, …)
	callPoll                       // poll/ppoll(struct pollfd *fds, nfds, …)
	callSelect                     // select/pselect6(nfds, fd_set *readfds, …)
	callEpoll                      // epoll_wait…(epfd, …): the set is in fdinfo
)

// maxWatched bounds the fds read from a poll array or select set: a program
// at a prompt watches a handful.
const maxWatched = 4096

// Poll and epoll event bits that mean "ready to read".
const (
	pollIn  = 0x1
	pollPri = 0x2
)

// WaitingToRead reports whether pid sleeps waiting for input from link (a
// terminal's path, e.g. "/dev/pts/3"): in read(2) on it, or in select, poll
// or epoll with it among the files watched for reading (a readline prompt,
// an editor, a REPL). Only the kernel's view is used: /proc/<pid>/syscall,
// the call's fd arrays in the process's memory, and the epoll set in
// /proc/<pid>/fdinfo.
func WaitingToRead(pid int, link string) bool {
	var buf [256]byte
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	f := bytes.Fields(readSmall(dir+"syscall", buf[:]))
	if len(f) < 3 {
		return false // "running", or no permission
	}
	nr, err := strconv.Atoi(string(f[0]))
	if err != nil {
		return false
	}
	arg := func(i int) uint64 {
		v, err := strconv.ParseUint(string(bytes.TrimPrefix(f[1+i], []byte("0x"))), 16, 64)
		if err != nil {
			return 0
		}
		return v
	}
	ctty := -1 // pid's controlling terminal as tty_nr, read when a fd is /dev/tty
	is := func(fd int) bool {
		l, err := os.Readlink(dir + "fd/" + strconv.Itoa(fd))
		if err != nil {
			return false
		}
		if l == "/dev/tty" {
			// ssh's host key question and sudo's password prompt read
			// /dev/tty, which is link when it is pid's controlling terminal.
			if ctty == -1 {
				ctty = ttyNr(pid)
			}
			return ctty > 0 && ctty == devNumber(link)
		}
		return l == link
	}
	switch waitCalls[nr] {
	case callRead:
		return is(int(int32(arg(0))))
	case callPoll:
		n := min(arg(1), maxWatched)
		b := readMem(pid, arg(0), int(n)*8) // struct pollfd {int fd; short events, revents;}
		for i := 0; i+8 <= len(b); i += 8 {
			fd := int32(binary.NativeEndian.Uint32(b[i:]))
			ev := binary.NativeEndian.Uint16(b[i+4:])
			if fd >= 0 && ev&(pollIn|pollPri) != 0 && is(int(fd)) {
				return true
			}
		}
	case callSelect:
		n := min(arg(0), maxWatched)
		if arg(1) == 0 {
			return false
		}
		b := readMem(pid, arg(1), int((n+63)/64*8)) // an fd_set of longs
		for fd := 0; fd < int(n) && fd/8 < len(b); fd++ {
			// Bit fd of an array of little-endian longs is bit fd%8 of
			// byte fd/8 (amd64 and arm64 are little-endian).
			if b[fd/8]&(1<<(fd%8)) != 0 && is(fd) {
				return true
			}
		}
	case callEpoll:
		var info [8192]byte
		for _, line := range bytes.Split(readSmall(dir+"fdinfo/"+strconv.Itoa(int(int32(arg(0)))), info[:]), []byte{'\n'}) {
			// "tfd:        0 events:       19 data: … pos:0 ino:… sdev:…"
			lf := bytes.Fields(line)
			if len(lf) < 4 || string(lf[0]) != "tfd:" || string(lf[2]) != "events:" {
				continue
			}
			fd, err1 := strconv.Atoi(string(lf[1]))
			ev, err2 := strconv.ParseUint(string(lf[3]), 16, 32)
			if err1 == nil && err2 == nil && ev&(pollIn|pollPri) != 0 && is(fd) {
				return true
			}
		}
	}
	return false
}

// ttyNr is field 7 of /proc/<pid>/stat, the controlling terminal's device
// number in the kernel's encoding (0 = none).
func ttyNr(pid int) int {
	var buf [512]byte
	b := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 5 {
		return 0
	}
	n, _ := strconv.Atoi(string(f[4]))
	return n
}

// devNumber is the device number of the character device at path in the
// encoding of /proc/<pid>/stat's tty_nr (minor bits 0–7 and 20–31, major
// bits 8–19); -1 when it is not one.
func devNumber(path string) int {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return -1
	}
	rdev := uint64(st.Rdev)
	major := (rdev >> 8 & 0xfff) | (rdev >> 32 & ^uint64(0xfff))
	minor := (rdev & 0xff) | (rdev >> 12 & ^uint64(0xff))
	return int(minor&0xff | major<<8 | (minor&^0xff)<<12)
}

// ReadingTerminal reports whether a process of a terminal's program sleeps
// waiting to read the terminal at link: the foreground group's leader
// pgrp (the usual reader: a shell's `read`, a REPL), else any process
// below root (the stages of a pipeline), which costs a few more files.
// pgrp <= 0 means unknown.
func ReadingTerminal(pgrp, root int, link string) bool {
	if link == "" {
		return false
	}
	if pgrp > 0 && WaitingToRead(pgrp, link) {
		return true
	}
	if root <= 0 {
		return false
	}
	if pids, ok := Descendants(root); ok {
		for _, p := range pids {
			if p != pgrp && WaitingToRead(p, link) {
				return true
			}
		}
		return false
	}
	for _, p := range List() {
		if (p.Sid == root || (pgrp > 0 && p.Pgrp == pgrp)) && p.Pid != pgrp && WaitingToRead(p.Pid, link) {
			return true
		}
	}
	return false
}

// readMem reads n bytes at addr of pid's memory (nil when it cannot: the
// process is gone, or we may not look).
func readMem(pid int, addr uint64, n int) []byte {
	if n <= 0 || addr == 0 {
		return nil
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	m, _ := f.ReadAt(b, int64(addr))
	return b[:m]
}
