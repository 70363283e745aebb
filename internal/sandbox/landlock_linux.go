package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights, as the kernel numbers them (x/sys names them).
const (
	fsExecute   = unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsWriteFile = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	fsReadFile  = unix.LANDLOCK_ACCESS_FS_READ_FILE
	fsReadDir   = unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsRefer     = unix.LANDLOCK_ACCESS_FS_REFER
	fsTruncate  = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsIoctlDev  = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// fsABI1 is every right of ABI 1 (execute … make_sym).
	fsABI1 = 1<<13 - 1

	// Rights that mean something on a file; a rule for a file with any
	// other right is refused by the kernel (EINVAL).
	fsFileRights = fsExecute | fsWriteFile | fsReadFile | fsTruncate | fsIoctlDev

	fsRead  = fsExecute | fsReadFile | fsReadDir
	fsWrite = fsABI1 | fsRefer | fsTruncate // everything but device ioctls
	fsDev   = fsRead | fsWrite | fsIoctlDev
)

// handledFS is the filesystem rights a ruleset controls under ABI abi:
// every one the kernel knows, so what is not granted is denied.
func handledFS(abi int) uint64 {
	h := uint64(fsABI1)
	if abi >= 2 {
		h |= fsRefer
	}
	if abi >= 3 {
		h |= fsTruncate
	}
	if abi >= 5 {
		h |= fsIoctlDev
	}
	return h
}

// landlockABI asks the kernel for its Landlock ABI version; 0 = none
// (not built in, not enabled at boot, or a kernel before 5.13).
func landlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// rule grants access beneath path (or to the file path).
type rule struct {
	path   string
	access uint64
}

// plan is the ruleset as paths: read everywhere but beneath deny, write
// beneath writable, and devs with device ioctls. Landlock only grants, so a
// denied subtree is one that no rule covers: each directory above a denied
// path (an ancestor) gets only READ_DIR, and each of its other entries gets
// a rule of its own. A writable root that holds a denied path is split the
// same way. Symbolic links among the entries need no rule: what they point
// to is checked where it lives.
func plan(deny, writable, devs []string) []rule {
	isAncestor := func(p string) bool {
		for _, d := range deny {
			if d != p && under(d, p) {
				return true
			}
		}
		return false
	}
	isDenied := func(p string) bool {
		for _, d := range deny {
			if under(p, d) {
				return true
			}
		}
		return false
	}
	isWritable := func(p string) bool {
		for _, w := range writable {
			if under(p, w) {
				return true
			}
		}
		return false
	}
	var rules []rule
	var walk func(dir string)
	walk = func(dir string) {
		rules = append(rules, rule{dir, fsReadDir})
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case isDenied(p), e.Type()&os.ModeSymlink != 0:
			case isAncestor(p):
				walk(p)
			case isWritable(p):
				rules = append(rules, rule{p, fsRead | fsWrite})
			default:
				rules = append(rules, rule{p, fsRead})
			}
		}
	}
	if len(deny) == 0 {
		rules = append(rules, rule{"/", fsRead})
	} else {
		walk("/")
	}
	for _, w := range writable {
		// An ancestor's own entries were granted by the walk; a rule on
		// the ancestor itself would reach into the denied path.
		if !isAncestor(w) {
			rules = append(rules, rule{w, fsRead | fsWrite})
		}
	}
	for _, d := range devs {
		rules = append(rules, rule{d, fsDev})
	}
	return rules
}

// under reports whether p is dir or lies beneath it (both clean and
// absolute).
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// resolve makes each path absolute, clean and free of symbolic links, and
// drops the ones that do not exist: a rule needs an inode.
func resolve(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		a, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		r, err := filepath.EvalSymlinks(a)
		if err != nil || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// buildRuleset creates a Landlock ruleset from rules under ABI abi; with
// denyTCP it also handles TCP bind and connect with no port allowed (the
// network fallback when no network namespace can be made).
func buildRuleset(abi int, rules []rule, denyTCP bool) (*os.File, error) {
	handled := handledFS(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if denyTCP && abi >= 4 {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		// Signals and abstract unix sockets stay inside the sandbox's own
		// processes: no `kill` of an outside process of the same user.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	rs := os.NewFile(fd, "landlock-ruleset")
	for _, r := range rules {
		if err := addPathRule(int(fd), r, handled); err != nil {
			rs.Close()
			return nil, err
		}
	}
	return rs, nil
}

// addPathRule adds r to the ruleset fd; a path that vanished or cannot be
// opened is left out (it grants nothing then).
func addPathRule(rulesetFd int, r rule, handled uint64) error {
	fd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	access := r.access & handled
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFileRights
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", r.path, e)
	}
	return nil
}
