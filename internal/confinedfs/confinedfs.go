// Package confinedfs gives the file tools (read, write, edit, grep, find,
// the TUI's @ completion) the same boundary as the model's shells: every
// path is opened, created, renamed or looked up by a helper process that
// runs below a guardian with the sandbox pty.GuardSandbox makes for the
// policy (the one every confined shell gets), so the kernel decides what
// the model may reach, not path checks in Go. An opened file comes back as
// a descriptor (SCM_RIGHTS) that agentsh reads and writes at full speed:
// Landlock and read-only mounts check at open time, in the helper.
//
// One helper runs per policy per agentsh process, started at the first
// operation, reused, started again when it died, and stopped by StopAll
// (or with agentsh, by its guardian's lifeline). See
// docs/decisions/0012-file-tools-through-the-boundary.md.
package confinedfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"agentsh/internal/confinedfs/helper"
	"agentsh/internal/guard"
	"agentsh/internal/pty"
	"agentsh/internal/sandbox"
)

// helperName is argv[0] of every helper, so `ps` tells them apart.
const helperName = "agentsh-fs"

// poolSize is how many connections a helper serves: one call at a time on
// each, so a grep's walk and a read in parallel do not wait for each other.
const poolSize = 4

// FS is the file system as a confined command sees it under one policy.
// Its methods mirror package os; their errors are *fs.PathError, and a
// *Refusal when the sandbox refused what this process could do itself.
type FS struct {
	policy    *sandbox.Policy
	key       string
	onRefusal func(*Refusal)
}

// New is the file system of policy p, which must confine something.
func New(p *sandbox.Policy) *FS { return &FS{policy: p, key: p.Key()} }

// Watch is f calling fn with every refusal of its operations (the
// session's gate asks the user about the first); same helper.
func (f *FS) Watch(fn func(*Refusal)) *FS {
	g := *f
	g.onRefusal = fn
	return &g
}

// Policy is the policy f confines to.
func (f *FS) Policy() *sandbox.Policy { return f.policy }

// Refusal is an operation the sandbox refused (EACCES, EPERM or EROFS in
// the helper) although agentsh's own process could do it: the tools report
// it like bash's denials, and the user may run the call outside.
type Refusal struct {
	*fs.PathError
	Denial sandbox.Denial
}

// Unwrap gives the underlying *fs.PathError.
func (r *Refusal) Unwrap() error { return r.PathError }

// Is makes a refusal a permission error whatever the errno (EROFS too).
func (r *Refusal) Is(target error) bool { return target == fs.ErrPermission }

// helperProc is one running helper and its connections.
type helperProc struct {
	proc     *guard.Process
	conns    chan *conn
	dead     atomic.Bool
	marker   string
	lastUsed atomic.Int64 // unix nanoseconds of the last call's end
}

// idleAfter is how long a helper may go unused before it is stopped (the
// next call starts a new one, with a ruleset built anew): a session whose
// sandbox changed leaves no helper of its old policy behind for long.
var idleAfter = 2 * time.Minute

type conn struct {
	fd       int
	req, ans []byte
	oob      []byte
}

var (
	helpersMu sync.Mutex
	helpers   = map[string]*helperProc{} // Policy.Key() → running helper
	helperSeq atomic.Int64
)

// errGone is a helper that died under a call.
var errGone = errors.New("the file helper is gone")

// markerVar names the environment entry each helper carries, so a sweep
// (and a test) finds it.
const markerVar = "AGENTSH_FSHELPER_MARK"

// get returns the running helper of f's policy, starting one if needed.
func (f *FS) get() (*helperProc, error) {
	helpersMu.Lock()
	defer helpersMu.Unlock()
	if h := helpers[f.key]; h != nil {
		if !h.dead.Load() {
			return h, nil
		}
		go h.proc.Stop()
		delete(helpers, f.key)
	}
	h, err := start(f.policy, f.key)
	if err != nil {
		return nil, err
	}
	helpers[f.key] = h
	return h, nil
}

func start(p *sandbox.Policy, key string) (*helperProc, error) {
	sb, err := pty.GuardSandbox(p)
	if err != nil {
		return nil, fmt.Errorf("start the file helper: %w", err)
	}
	if sb != nil && sb.Ruleset != nil {
		defer sb.Ruleset.Close()
	}
	files := make([]*os.File, helper.FirstConnFd, helper.FirstConnFd+poolSize)
	h := &helperProc{conns: make(chan *conn, poolSize)}
	var mine []*conn
	fail := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
		for _, c := range mine {
			_ = unix.Close(c.fd)
		}
	}
	for range poolSize {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fail()
			return nil, fmt.Errorf("start the file helper: socketpair: %w", err)
		}
		mine = append(mine, &conn{fd: fds[0], req: make([]byte, 0, helper.MaxMsg),
			ans: make([]byte, helper.MaxMsg), oob: make([]byte, unix.CmsgSpace(4*helper.MaxBatch))})
		files = append(files, os.NewFile(uintptr(fds[1]), "fshelper"))
	}
	h.marker = markerVar + "=" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(helperSeq.Add(1), 10)
	exe := "/proc/self/exe"
	if syscall.Access(exe, 1 /* X_OK */) != nil {
		if exe, err = os.Executable(); err != nil {
			fail()
			return nil, fmt.Errorf("start the file helper: %w", err)
		}
	}
	proc, err := guard.Start(guard.Cmd{
		Path: exe,
		Args: []string{helperName},
		Env: []string{helper.EnvVar + "=" + helper.EnvValue, helper.ConnsVar + "=" + strconv.Itoa(poolSize),
			h.marker},
		Dir:     "/",
		Files:   files,
		Marker:  []byte(h.marker),
		Grace:   time.Second,
		Sandbox: sb,
	})
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
	if err != nil {
		for _, c := range mine {
			_ = unix.Close(c.fd)
		}
		return nil, fmt.Errorf("start the file helper: %w", err)
	}
	h.proc = proc
	for _, c := range mine {
		h.conns <- c
	}
	h.lastUsed.Store(time.Now().UnixNano())
	go func() {
		// A helper that exits (killed, crashed) is replaced at the next call.
		<-proc.Exited()
		h.dead.Store(true)
	}()
	go h.stopWhenIdle(key, idleAfter)
	return h, nil
}

// stopWhenIdle stops h once it has been unused for idle with no call in
// flight, unless it was stopped or replaced before.
func (h *helperProc) stopWhenIdle(key string, idle time.Duration) {
	for {
		time.Sleep(idle / 4)
		if h.dead.Load() {
			return
		}
		if time.Since(time.Unix(0, h.lastUsed.Load())) < idle || len(h.conns) < poolSize {
			continue
		}
		helpersMu.Lock()
		if helpers[key] == h {
			delete(helpers, key)
		}
		helpersMu.Unlock()
		h.stop()
		return
	}
}

// StopAll stops every helper of this process; later operations start new
// ones. Call it when agentsh ends (the guardians' lifelines stop them when
// it dies).
func StopAll() {
	helpersMu.Lock()
	hs := helpers
	helpers = map[string]*helperProc{}
	helpersMu.Unlock()
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.stop()
		}()
	}
	wg.Wait()
}

func (h *helperProc) stop() {
	h.dead.Store(true)
	h.proc.Stop()
	// Idle connections are closed here, busy ones by their call when it
	// fails; each goes back closed (fd -1), so no waiter is left hanging.
	for range poolSize {
		select {
		case c := <-h.conns:
			if c.fd >= 0 {
				_ = unix.Close(c.fd)
				c.fd = -1
			}
			defer func() { h.conns <- c }()
		default:
			return
		}
	}
}

// Markers are the environment entries of the running helpers (tests look
// for their processes with them).
func Markers() []string {
	helpersMu.Lock()
	defer helpersMu.Unlock()
	var out []string
	for _, h := range helpers {
		out = append(out, h.marker)
	}
	sort.Strings(out)
	return out
}

// roundTrip sends one request and reads its answer: the errno, a copy of
// the data and the descriptors that came along.
func (h *helperProc) roundTrip(op byte, flags, mode uint32, path, path2 string) (syscall.Errno, []byte, []int, error) {
	c := <-h.conns
	if c.fd < 0 {
		h.conns <- c
		return 0, nil, nil, errGone
	}
	c.req = helper.EncodeRequest(c.req, op, flags, mode, path, path2)
	var err error
	for {
		err = unix.Sendmsg(c.fd, c.req, nil, nil, 0)
		if err != unix.EINTR {
			break
		}
	}
	var n, oobn int
	if err == nil {
		for {
			n, oobn, _, _, err = unix.Recvmsg(c.fd, c.ans, c.oob, unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				break
			}
		}
	}
	if err != nil || n < 4 {
		// The helper is gone or broken: this connection is of no more use.
		_ = unix.Close(c.fd)
		c.fd = -1
		h.dead.Store(true)
		h.conns <- c
		return 0, nil, nil, errGone
	}
	var fds []int
	if oobn > 0 {
		if msgs, err := unix.ParseSocketControlMessage(c.oob[:oobn]); err == nil {
			for _, m := range msgs {
				if got, err := unix.ParseUnixRights(&m); err == nil {
					fds = append(fds, got...)
				}
			}
		}
	}
	errno := syscall.Errno(binary.LittleEndian.Uint32(c.ans[:4]))
	data := append([]byte(nil), c.ans[4:n]...)
	h.lastUsed.Store(time.Now().UnixNano())
	if h.dead.Load() {
		// Stopped while this call was answered: no one else closes it.
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	h.conns <- c
	return errno, data, fds, nil
}

// call is a round trip on f's helper, started (again) when needed: a
// helper that died under a call is replaced once. It keeps at most one
// descriptor (fd, -1 for none); call's callers expect no more.
func (f *FS) call(op byte, flags, mode uint32, path, path2 string) (syscall.Errno, []byte, int, error) {
	errno, data, fds, err := f.callFds(op, flags, mode, path, path2)
	fd := -1
	for i, x := range fds {
		if i == 0 {
			fd = x
		} else {
			_ = unix.Close(x)
		}
	}
	return errno, data, fd, err
}

func (f *FS) callFds(op byte, flags, mode uint32, path, path2 string) (syscall.Errno, []byte, []int, error) {
	// The protocol separates paths (and a batch's names) with NUL: a path
	// holding one would reach the helper as another path.
	if strings.IndexByte(path, 0) >= 0 || (op != helper.OpOpenBatch && strings.IndexByte(path2, 0) >= 0) {
		return syscall.EINVAL, nil, nil, nil
	}
	for try := 0; ; try++ {
		h, err := f.get()
		if err != nil {
			return 0, nil, nil, err
		}
		errno, data, fds, err := h.roundTrip(op, flags, mode, path, path2)
		if errors.Is(err, errGone) && try == 0 {
			continue
		}
		return errno, data, fds, err
	}
}

// OpenBatch opens names (entries of dir) for reading, several per round
// trip: a search opens every file of a folder this way. files[i] is nil
// where errs[i] says why.
func (f *FS) OpenBatch(dir string, names []string) (files []*os.File, errs []error) {
	files, errs = make([]*os.File, len(names)), make([]error, len(names))
	// A name holding a NUL or a slash would shift every answer after it:
	// refused here, the others batched.
	var valid []string
	var at []int
	for i, n := range names {
		if n == "" || strings.IndexByte(n, 0) >= 0 || strings.IndexByte(n, '/') >= 0 {
			errs[i] = &fs.PathError{Op: "open", Path: filepath.Join(dir, n), Err: syscall.EINVAL}
			continue
		}
		valid, at = append(valid, n), append(at, i)
	}
	vfiles, verrs := f.openBatch(dir, valid)
	for j, i := range at {
		files[i], errs[i] = vfiles[j], verrs[j]
	}
	return files, errs
}

func (f *FS) openBatch(dir string, names []string) (files []*os.File, errs []error) {
	files, errs = make([]*os.File, len(names)), make([]error, len(names))
	for start := 0; start < len(names); {
		end, size := start, len(dir)+16
		for end < len(names) && end-start < helper.MaxBatch && size+len(names[end])+1 <= helper.MaxMsg {
			size += len(names[end]) + 1
			end++
		}
		if end == start { // a name too long for a message: refused alone
			errs[start] = &fs.PathError{Op: "open", Path: filepath.Join(dir, names[start]), Err: syscall.ENAMETOOLONG}
			start++
			continue
		}
		var b []byte
		for i, n := range names[start:end] {
			if i > 0 {
				b = append(b, 0)
			}
			b = append(b, n...)
		}
		_, data, fds, err := f.callFds(helper.OpOpenBatch, 0, 0, dir, string(b))
		for i := start; i < end; i++ {
			p := filepath.Join(dir, names[i])
			k := 4 * (i - start)
			switch {
			case err != nil:
				errs[i] = callErr("open", p, err)
			case k+4 > len(data):
				errs[i] = callErr("open", p, errors.New("a short answer from the file helper"))
			default:
				if errno := syscall.Errno(binary.LittleEndian.Uint32(data[k:])); errno != 0 {
					errs[i] = f.pathErr("open", p, errno, false, "")
				} else if len(fds) > 0 {
					files[i] = os.NewFile(uintptr(fds[0]), p)
					fds = fds[1:]
				} else {
					errs[i] = callErr("open", p, errors.New("the file helper sent no descriptor"))
				}
			}
		}
		for _, x := range fds {
			_ = unix.Close(x)
		}
		start = end
	}
	return files, errs
}

// pathErr makes the error of a failed operation on path: a *Refusal when
// the sandbox refused what this process could do (write: create, change
// or remove; else read).
func (f *FS) pathErr(op, path string, errno syscall.Errno, write bool, check string) error {
	pe := &fs.PathError{Op: op, Path: path, Err: errno}
	if check == "" {
		check = path
	}
	if errno == syscall.ENOENT && !write && f.policy.DeniesRead(check) {
		// The mount view masks a denied folder with an empty one: what
		// exists outside is missing inside, which is the sandbox's refusal.
		if unix.Faccessat(unix.AT_FDCWD, check, unix.F_OK, unix.AT_EACCESS) != nil {
			return pe
		}
		pe.Err = syscall.EACCES
		errno = syscall.EACCES
	}
	if errno != syscall.EACCES && errno != syscall.EPERM && errno != syscall.EROFS {
		return pe
	}
	var r *Refusal
	if write {
		if sandbox.CanAccess(check, unix.W_OK) {
			r = &Refusal{PathError: pe, Denial: sandbox.Denial{Kind: sandbox.DeniedWrite, Path: check}}
		}
	} else if unix.Faccessat(unix.AT_FDCWD, check, unix.R_OK, unix.AT_EACCESS) == nil {
		r = &Refusal{PathError: pe, Denial: sandbox.Denial{Kind: sandbox.DeniedRead, Path: check}}
	}
	if r == nil {
		return pe
	}
	if f.onRefusal != nil {
		f.onRefusal(r)
	}
	return r
}

func callErr(op, path string, err error) error {
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// writeFlags are the open flags that make an open a write.
const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

// Open opens name for reading.
func (f *FS) Open(name string) (*os.File, error) { return f.OpenFile(name, os.O_RDONLY, 0) }

// OpenFile opens name with flag and, when it creates it, perm. Without
// O_NONBLOCK in flag it opens only a regular file or a folder (ENXIO for a
// FIFO or a device, which a read to the end could never finish).
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	errno, _, fd, err := f.call(helper.OpOpen, uint32(flag), uint32(syscallMode(perm)), name, "")
	if err != nil {
		return nil, callErr("open", name, err)
	}
	if errno != 0 {
		return nil, f.pathErr("open", name, errno, flag&writeFlags != 0, "")
	}
	if fd < 0 {
		return nil, callErr("open", name, errors.New("the file helper sent no descriptor"))
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Stat is os.Stat in the confined view.
func (f *FS) Stat(name string) (fs.FileInfo, error) { return f.stat(helper.OpStat, "stat", name) }

// Lstat is os.Lstat in the confined view.
func (f *FS) Lstat(name string) (fs.FileInfo, error) { return f.stat(helper.OpLstat, "lstat", name) }

func (f *FS) stat(op byte, opName, name string) (fs.FileInfo, error) {
	errno, data, _, err := f.call(op, 0, 0, name, "")
	if err != nil {
		return nil, callErr(opName, name, err)
	}
	if errno != 0 {
		return nil, f.pathErr(opName, name, errno, false, "")
	}
	if len(data) != helper.StatSize {
		return nil, callErr(opName, name, errors.New("a short answer from the file helper"))
	}
	fi := &fileInfo{name: filepath.Base(name)}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&fi.st)), helper.StatSize), data)
	return fi, nil
}

// ReadDir is os.ReadDir in the confined view: the folder is opened by the
// helper and read here.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := f.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	des, err := d.ReadDir(-1)
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	return des, err
}

// MkdirAll is os.MkdirAll in the confined view.
func (f *FS) MkdirAll(name string, perm fs.FileMode) error {
	errno, data, _, err := f.call(helper.OpMkdirAll, 0, uint32(syscallMode(perm)), name, "")
	if err != nil {
		return callErr("mkdir", name, err)
	}
	if errno != 0 {
		p := name
		if len(data) > 0 {
			p = string(data)
		}
		return f.pathErr("mkdir", p, errno, true, "")
	}
	return nil
}

// Rename is os.Rename in the confined view.
func (f *FS) Rename(oldpath, newpath string) error {
	errno, _, _, err := f.call(helper.OpRename, 0, 0, oldpath, newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	if errno != 0 {
		if e := f.pathErr("rename", newpath, errno, true, ""); errors.As(e, new(*Refusal)) {
			return e
		}
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errno}
	}
	return nil
}

// Remove is os.Remove in the confined view.
func (f *FS) Remove(name string) error {
	errno, _, _, err := f.call(helper.OpRemove, 0, 0, name, "")
	if err != nil {
		return callErr("remove", name, err)
	}
	if errno != 0 {
		return f.pathErr("remove", name, errno, true, "")
	}
	return nil
}

// Chmod is os.Chmod in the confined view.
func (f *FS) Chmod(name string, mode fs.FileMode) error {
	errno, _, _, err := f.call(helper.OpChmod, 0, uint32(syscallMode(mode)), name, "")
	if err != nil {
		return callErr("chmod", name, err)
	}
	if errno != 0 {
		return f.pathErr("chmod", name, errno, true, "")
	}
	return nil
}

// EvalSymlinks is filepath.EvalSymlinks in the confined view.
func (f *FS) EvalSymlinks(path string) (string, error) {
	errno, data, _, err := f.call(helper.OpEvalSymlinks, 0, 0, path, "")
	if err != nil {
		return "", callErr("lstat", path, err)
	}
	if errno != 0 {
		return "", f.pathErr("lstat", path, errno, false, "")
	}
	return string(data), nil
}

// CreateTemp is os.CreateTemp in the confined view; dir must not be "".
func (f *FS) CreateTemp(dir, pattern string) (*os.File, error) {
	errno, data, fd, err := f.call(helper.OpCreateTemp, 0, 0, dir, pattern)
	if err != nil {
		return nil, callErr("createtemp", filepath.Join(dir, pattern), err)
	}
	if errno != 0 {
		// The folder is what the sandbox refused to write.
		return nil, f.pathErr("open", filepath.Join(dir, pattern), errno, true, filepath.Clean(dir))
	}
	if fd < 0 {
		return nil, callErr("createtemp", dir, errors.New("the file helper sent no descriptor"))
	}
	return os.NewFile(uintptr(fd), string(data)), nil
}

// syscallMode is os's conversion of a FileMode for open and mkdir.
func syscallMode(m fs.FileMode) uint32 {
	o := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		o |= syscall.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		o |= syscall.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		o |= syscall.S_ISVTX
	}
	return o
}

// fileInfo is a stat made in the helper.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

func (fi *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
