// Package helper is the confined side of internal/confinedfs: the agentsh
// binary re-executed below a sandboxed guardian, answering file operations
// on the unix sockets it was given (its descriptors from FirstConnFd on).
// It does each operation in its own confined view, so the kernel decides
// (Landlock, read-only mounts), and hands opened files back as descriptors.
//
// The helper mode is selected in this package's init(), before most of
// agentsh initializes: "agentsh/internal/confinedfs/helper" sorts before
// every agentsh package that does not import it, and its imports are only
// the standard library and x/sys. Keep them so. It never returns to main.
package helper

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// EnvVar selects the helper mode (value EnvValue); Conns, in the helper's
// environment, is how many connections it serves.
const (
	EnvVar   = "AGENTSH_FSHELPER"
	EnvValue = "v1"
	ConnsVar = "AGENTSH_FSHELPER_CONNS"
)

// guardianVar is internal/guard's hidden-mode entry (guard.envVar).
const guardianVar = "AGENTSH_GUARDIAN"

// FirstConnFd is the helper's first connection; the others follow it.
const FirstConnFd = 3

// Ops of the protocol. A request is one SOCK_SEQPACKET message: op (1
// byte), flags and mode (4 bytes each, little-endian), then one or two
// paths separated by NUL. An answer is errno (4 bytes; 0 = success) then
// the op's data; an opened file comes along as an SCM_RIGHTS descriptor.
const (
	OpOpen         = 1 // path, flags, mode → descriptor
	OpStat         = 2 // path → raw stat
	OpLstat        = 3 // path → raw stat
	OpMkdirAll     = 4 // path, mode → on failure, the path that failed
	OpRename       = 5 // old, new
	OpRemove       = 6 // path
	OpChmod        = 7 // path, mode
	OpEvalSymlinks = 8 // path → resolved path
	OpCreateTemp   = 9 // dir, pattern → descriptor and its name
	// OpOpenBatch opens several files of one folder for reading: dir, then
	// the names separated by NUL; the answer holds an errno per name and
	// the descriptors of those opened, in order (at most MaxBatch).
	OpOpenBatch = 10
)

// MaxBatch bounds the descriptors of one answer (SCM_RIGHTS takes 253).
const MaxBatch = 64

// MaxMsg bounds a message: two paths of PATH_MAX and a header, or a
// batch of names.
const MaxMsg = 32 << 10

// StatSize is the size of a raw stat in an answer.
const StatSize = int(unsafe.Sizeof(syscall.Stat_t{}))

// EncodeRequest builds a request message into buf.
func EncodeRequest(buf []byte, op byte, flags, mode uint32, path, path2 string) []byte {
	buf = append(buf[:0], op)
	buf = binary.LittleEndian.AppendUint32(buf, flags)
	buf = binary.LittleEndian.AppendUint32(buf, mode)
	buf = append(buf, path...)
	if path2 != "" {
		buf = append(buf, 0)
		buf = append(buf, path2...)
	}
	return buf
}

func init() {
	// The guardian that starts the helper carries the same environment
	// (and its own entry, which it removes for the helper): it must stay
	// a guardian.
	if os.Getenv(EnvVar) != EnvValue || os.Getenv(guardianVar) != "" {
		return
	}
	n, err := strconv.Atoi(os.Getenv(ConnsVar))
	if err != nil || n < 1 {
		_, _ = os.Stderr.WriteString("agentsh: internal file helper mode, started without connections\n")
		syscall.Exit(2)
	}
	// A raw exit, as the guardian's: no race-detector shutdown sleep.
	syscall.Exit(serve(n))
}

// serve answers on every connection until all are closed.
func serve(n int) int {
	var wg sync.WaitGroup
	for i := range n {
		fd := FirstConnFd + i
		syscall.CloseOnExec(fd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveConn(fd)
		}()
	}
	wg.Wait()
	return 0
}

func serveConn(fd int) {
	req := make([]byte, MaxMsg)
	ans := make([]byte, 0, MaxMsg)
	for {
		n, _, _, _, err := unix.Recvmsg(fd, req, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return // agentsh closed the connection, or is gone
		}
		var files []int
		ans, files = handle(req[:n], ans[:0], files[:0])
		var oob []byte
		if len(files) > 0 {
			oob = unix.UnixRights(files...)
		}
		for {
			err = unix.Sendmsg(fd, ans, oob, nil, 0)
			if err != unix.EINTR {
				break
			}
		}
		for _, f := range files {
			_ = unix.Close(f)
		}
		if err != nil {
			return
		}
	}
}

// handle does one request; files are descriptors to send along.
func handle(req, ans []byte, files []int) ([]byte, []int) {
	ans, fd := handleOne(req, ans, &files)
	if fd >= 0 {
		files = append(files, fd)
	}
	return ans, files
}

// openRead opens path: non-blocking, so a FIFO swapped in cannot stall
// the connection, and blocking again before it leaves. Unless the caller
// asked for a non-blocking open, only a regular file or a folder is
// handed back (ENXIO otherwise): agentsh reads what it gets to the end,
// and a FIFO a confined job holds open would hang it, /dev/zero fill its
// memory; the tools' stat before the open does not close that race.
func openRead(path string, flags int, mode uint32) (int, error) {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, mode)
	if err != nil {
		return -1, err
	}
	if flags&unix.O_NONBLOCK == 0 {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
		if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
			_ = unix.Close(fd)
			return -1, unix.ENXIO
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}
	return fd, nil
}

// handleOne does one request; file is a descriptor to send along, or -1
// (a batch appends its own to files).
func handleOne(req, ans []byte, files *[]int) (out []byte, file int) {
	ans = append(ans, 0, 0, 0, 0)
	if len(req) < 9 {
		return setErrno(ans, syscall.EINVAL), -1
	}
	op := req[0]
	flags := binary.LittleEndian.Uint32(req[1:])
	mode := binary.LittleEndian.Uint32(req[5:])
	path, path2 := string(req[9:]), ""
	for i := 9; i < len(req); i++ {
		if req[i] == 0 {
			path, path2 = string(req[9:i]), string(req[i+1:])
			break
		}
	}
	switch op {
	case OpOpen:
		fd, err := openRead(path, int(flags), mode)
		if err != nil {
			return setErr(ans, err), -1
		}
		return ans, fd
	case OpOpenBatch:
		rest := path2
		for n := 0; n < MaxBatch && (rest != "" || n == 0); n++ {
			name := rest
			if i := strings.IndexByte(rest, 0); i >= 0 {
				name, rest = rest[:i], rest[i+1:]
			} else {
				rest = ""
			}
			var errno syscall.Errno
			if name == "" || strings.IndexByte(name, '/') >= 0 {
				errno = syscall.EINVAL
			} else if fd, err := openRead(path+"/"+name, unix.O_RDONLY, 0); err != nil {
				errno = syscall.EIO
				var e syscall.Errno
				if errors.As(err, &e) {
					errno = e
				}
			} else {
				*files = append(*files, fd)
			}
			ans = binary.LittleEndian.AppendUint32(ans, uint32(errno))
		}
		return ans, -1
	case OpStat, OpLstat:
		var st syscall.Stat_t
		var err error
		if op == OpStat {
			err = syscall.Stat(path, &st)
		} else {
			err = syscall.Lstat(path, &st)
		}
		if err != nil {
			return setErr(ans, err), -1
		}
		return append(ans, unsafe.Slice((*byte)(unsafe.Pointer(&st)), StatSize)...), -1
	case OpMkdirAll:
		if err := os.MkdirAll(path, fs.FileMode(mode)); err != nil {
			ans = setErr(ans, err)
			var pe *fs.PathError
			if errors.As(err, &pe) {
				ans = append(ans, pe.Path...)
			}
			return ans, -1
		}
		return ans, -1
	case OpRename:
		return setErr(ans, syscall.Rename(path, path2)), -1
	case OpRemove:
		return setErr(ans, os.Remove(path)), -1
	case OpChmod:
		return setErr(ans, syscall.Chmod(path, mode)), -1
	case OpEvalSymlinks:
		r, err := filepath.EvalSymlinks(path)
		if err != nil {
			return setErr(ans, err), -1
		}
		return append(ans, r...), -1
	case OpCreateTemp:
		f, err := os.CreateTemp(path, path2)
		if err != nil {
			return setErr(ans, err), -1
		}
		fd, err := unix.Dup(int(f.Fd()))
		name := f.Name()
		_ = f.Close()
		if err != nil {
			_ = os.Remove(name)
			return setErr(ans, err), -1
		}
		unix.CloseOnExec(fd)
		return append(ans, name...), fd
	}
	return setErrno(ans, syscall.ENOSYS), -1
}

// setErr writes err's errno (EIO when it has none) into the answer.
func setErr(ans []byte, err error) []byte {
	if err == nil {
		return ans
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		errno = syscall.EIO
	}
	return setErrno(ans, errno)
}

func setErrno(ans []byte, errno syscall.Errno) []byte {
	binary.LittleEndian.PutUint32(ans[0:4], uint32(errno))
	return ans
}
