package fsview

import (
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// The new mount API (Linux 5.2; mount_setattr 5.12): the numbers are the
// same on every architecture.
const (
	sysOpenTree     = 428
	sysMoveMount    = 429
	sysFsopen       = 430
	sysFsconfig     = 431
	sysFsmount      = 432
	sysMountSetattr = 442

	openTreeClone       = 0x1
	atEmptyPath         = 0x1000
	atRecursive         = 0x8000
	moveMountFEmptyPath = 0x4
	fsopenCloexec       = 0x1
	fsconfigSetString   = 1
	fsconfigCmdCreate   = 6
	fsmountCloexec      = 0x1

	attrRdonly = 0x1
	attrNosuid = 0x2
	attrNodev  = 0x4
	attrNoexec = 0x8
)

// Error is a step of Apply that failed: on Path, or "" for the mount
// namespace as a whole.
type Error struct {
	Step string
	Path string
	Err  error
}

func (e *Error) Error() string {
	s := "mount view: " + e.Step
	if e.Path != "" {
		s += " " + e.Path
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// System reports whether the view cannot be made on this system at all:
// the namespace itself failed, or a mount call is missing (ENOSYS: a
// kernel before 5.2, or 5.12 for mount_setattr) or refused (EPERM: a
// seccomp or LSM policy). The sandbox then falls back to Landlock alone;
// any other failure is one path's, and fails only that start (a model
// must not be able to turn the sandbox weaker by what it leaves on disk).
func (e *Error) System() bool {
	return e.Path == "" || e.Err == syscall.ENOSYS || e.Err == syscall.EPERM
}

type mountAttr struct{ set, clr, propagation, userns uint64 }

func sysErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func openTree(dfd int, path string, flags uintptr) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.Syscall(sysOpenTree, uintptr(dfd), uintptr(unsafe.Pointer(p)), flags|syscall.O_CLOEXEC)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// moveMount attaches the detached mount fd at path.
func moveMount(fd int, path string) error {
	empty, _ := syscall.BytePtrFromString("")
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(sysMoveMount, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		atFdCwd, uintptr(unsafe.Pointer(p)), moveMountFEmptyPath, 0)
	return sysErr(e)
}

const dirFdCwd = -100 // AT_FDCWD

// atFdCwd is AT_FDCWD as a syscall argument.
var atFdCwd = uintptr(^uint(99)) // -100 in two's complement

// setAttr sets attr on the mount at fd (path "") or at path (fd AT_FDCWD).
func setAttr(fd int, path string, flags uintptr, attr mountAttr) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	if path == "" {
		flags |= atEmptyPath
	}
	_, _, e := syscall.Syscall6(sysMountSetattr, uintptr(fd), uintptr(unsafe.Pointer(p)), flags,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	return sysErr(e)
}

// scratch makes a detached tmpfs for the masks: an empty file "f" and
// one empty folder per folder mask.
func scratch() (int, error) {
	name, _ := syscall.BytePtrFromString("tmpfs")
	fs, _, e := syscall.Syscall(sysFsopen, uintptr(unsafe.Pointer(name)), fsopenCloexec, 0)
	if e != 0 {
		return -1, e
	}
	defer syscall.Close(int(fs))
	key, _ := syscall.BytePtrFromString("mode")
	val, _ := syscall.BytePtrFromString("0755")
	if _, _, e := syscall.Syscall6(sysFsconfig, fs, fsconfigSetString, uintptr(unsafe.Pointer(key)), uintptr(unsafe.Pointer(val)), 0, 0); e != 0 {
		return -1, e
	}
	if _, _, e := syscall.Syscall6(sysFsconfig, fs, fsconfigCmdCreate, 0, 0, 0, 0); e != 0 {
		return -1, e
	}
	m, _, e := syscall.Syscall(sysFsmount, fs, fsmountCloexec, attrNosuid|attrNodev|attrNoexec)
	if e != 0 {
		return -1, e
	}
	return int(m), nil
}

// Apply gives the calling thread a mount namespace of its own and builds v
// in it: every mount made read-only, then v's ops in order, then the
// masks made read-only. The thread must be locked to its goroutine and
// never unlocked (its filesystem context is its own from here on), and
// hold CAP_SYS_ADMIN in its user namespace. A child it forks inherits the
// view.
func Apply(v View) error {
	wd, wdErr := syscall.Getwd()
	// CLONE_NEWNS implies CLONE_FS, which a thread of a multithreaded
	// process may unshare.
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return &Error{"unshare the mount namespace", "", err}
	}
	// Nothing mounted here may reach the namespace it came from.
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		return &Error{"make the mounts slaves", "", err}
	}
	// Clones first: after the read-only pass they would be read-only
	// too, and a mask may hide what a later bind brings back.
	fds := make([]int, len(v))
	defer func() {
		for _, fd := range fds {
			if fd > 0 {
				_ = syscall.Close(fd)
			}
		}
	}()
	for i, op := range v {
		fds[i] = -1
		if op.Kind != Bind && op.Kind != ReadOnly {
			continue
		}
		fd, err := openTree(dirFdCwd, op.Path, openTreeClone|atRecursive)
		if err == syscall.ENOENT || err == syscall.ENOTDIR {
			continue
		}
		if err != nil {
			return &Error{"clone", op.Path, err}
		}
		fds[i] = fd
		if op.Kind == Bind && !samePlace(fd, op.Path) {
			// Planned free of links; one now (a swap since the plan)
			// would bind back what it points to.
			return &Error{"clone", op.Path, syscall.ELOOP}
		}
		if op.Kind == ReadOnly {
			if err := setAttr(fd, "", atRecursive, mountAttr{set: attrRdonly}); err != nil {
				return &Error{"make read-only", op.Path, err}
			}
		}
	}
	if err := setAttr(dirFdCwd, "/", atRecursive, mountAttr{set: attrRdonly}); err != nil {
		return &Error{"make the tree read-only", "", err}
	}
	sc := -1
	defer func() {
		if sc >= 0 {
			_ = syscall.Close(sc)
		}
	}()
	var masks []int
	file := false
	for i, op := range v {
		switch op.Kind {
		case Bind, ReadOnly:
			if fds[i] < 0 {
				continue
			}
			if err := mountPoint(fds[i], op.Path); err != nil {
				return &Error{"make the mount point", op.Path, err}
			}
			if err := moveMount(fds[i], op.Path); err != nil {
				return &Error{"bind", op.Path, err}
			}
		case MaskDir, MaskFile:
			var st syscall.Stat_t
			if err := syscall.Lstat(op.Path, &st); err != nil {
				continue // gone, or hidden by a mask above
			}
			// What is there now decides (it may have changed since the
			// plan): a folder gets an empty folder, anything else an
			// empty file.
			isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
			if sc < 0 {
				var err error
				if sc, err = scratch(); err != nil {
					return &Error{"make the mask filesystem", "", err}
				}
			}
			name := "f"
			if isDir {
				name = "d" + strconv.Itoa(i)
				if err := syscall.Mkdirat(sc, name, 0o700); err != nil {
					return &Error{"make a mask", op.Path, err}
				}
				_ = fchmodat(sc, name, st.Mode&0o7777)
			} else if !file {
				fd, err := syscall.Openat(sc, name, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					return &Error{"make a mask", op.Path, err}
				}
				_ = syscall.Close(fd)
				file = true
			}
			fd, err := openTree(sc, name, openTreeClone)
			if err != nil {
				return &Error{"clone a mask", op.Path, err}
			}
			if !isDir {
				err = setAttr(fd, "", 0, mountAttr{set: attrRdonly})
			}
			if err == nil {
				err = moveMount(fd, op.Path)
			}
			if err != nil {
				_ = syscall.Close(fd)
				return &Error{"mask", op.Path, err}
			}
			if isDir {
				// Read-only once the binds inside it have their
				// mount points.
				masks = append(masks, fd)
			} else {
				_ = syscall.Close(fd)
			}
		}
	}
	for _, fd := range masks {
		err := setAttr(fd, "", 0, mountAttr{set: attrRdonly})
		_ = syscall.Close(fd)
		if err != nil {
			return &Error{"make a mask read-only", "", err}
		}
	}
	// The working directory still points into the mounts it was taken
	// from: take it again through the view.
	if wdErr != nil || syscall.Chdir(wd) != nil {
		if err := syscall.Chdir("/"); err != nil {
			return &Error{"chdir /", "", err}
		}
	}
	return nil
}

// samePlace reports whether the clone fd is the file at path itself, not
// what a symbolic link there points to.
func samePlace(fd int, path string) bool {
	var a, b syscall.Stat_t
	if syscall.Fstat(fd, &a) != nil || syscall.Lstat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

func fchmodat(dfd int, name string, mode uint32) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(syscall.SYS_FCHMODAT, uintptr(dfd), uintptr(unsafe.Pointer(p)), uintptr(mode), 0, 0, 0)
	return sysErr(e)
}

// mountPoint makes path, missing because a mask above hides it, as what
// the clone fd is (a folder or a file), with the folders above it.
func mountPoint(fd int, path string) error {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) == nil {
		return nil
	}
	var src syscall.Stat_t
	if err := syscall.Fstat(fd, &src); err != nil {
		return err
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	cur := ""
	for i, p := range parts {
		cur += "/" + p
		last := i == len(parts)-1
		if last && src.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			f, err := syscall.Open(cur, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o600)
			if err != nil {
				return err
			}
			return syscall.Close(f)
		}
		if err := syscall.Mkdir(cur, 0o755); err != nil && err != syscall.EEXIST {
			return err
		}
	}
	return nil
}
