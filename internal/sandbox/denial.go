package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"
)

// DenialKind is what the sandbox refused.
type DenialKind string

// The kinds of denial.
const (
	DeniedWrite   DenialKind = "write"
	DeniedRead    DenialKind = "read"
	DeniedNetwork DenialKind = "network"
)

// Denial is a failure of a confined command that the sandbox caused (see
// DetectDenial).
type Denial struct {
	Kind DenialKind
	Path string // the refused path (write, read); "" for the network
	Line string // the output line that told
}

// Reason says what the sandbox refused, for the approval question and the
// note the model reads.
func (d Denial) Reason() string {
	switch d.Kind {
	case DeniedWrite:
		return "writing " + d.Path + " (outside the sandbox's writable paths)"
	case DeniedRead:
		return "reading " + d.Path + " (sandbox.denyRead)"
	}
	return "the network (off in the sandbox): " + d.Line
}

// Landlock refuses with EACCES, its scopes (signals, abstract sockets) with
// EPERM, and the mount view's read-only tree with EROFS; these are the
// words programs print for them, lower-case.
var deniedWords = []string{"permission denied", "operation not permitted", "read-only file system"}

// maskedWords are what a read beneath a masked (denied) folder prints in
// the mount view: the folder is empty there. They count only for a path
// under DenyRead that exists outside.
var maskedWords = []string{"no such file or directory"}

// networkWords tell a refused connection or an unresolved host.
var networkWords = []string{"network is unreachable", "couldn't connect to server", "connection refused",
	"could not resolve host", "temporary failure in name resolution", "name or service not known", "no such host",
	"getaddrinfo"}

// hasAny reports whether s (lower-case) contains one of words.
func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Where programs put the path in a denial line: quoted ('…', ‘…’, "…",
// `…'), after open/create/stat and before ": permission denied".
var (
	quotedPath = regexp.MustCompile("['‘\"`]([^'’\"`\n]+)['’\"]")
	callPath   = regexp.MustCompile(`(?i)\b(?:open|create|creat|mkdir|stat|lstat|unlink|rename|remove|chmod|write|opendir|access)\s+([^\s:'"]+)`)
	colonPath  = regexp.MustCompile(`(?i)(?:^|\s)([^\s:'"]*/[^\s:'"]*):\s*(?:permission denied|operation not permitted|read-only file system|no such file or directory)`)
	// namePath is a path without a slash between colons, as a shell names
	// a redirection's file: "bash: line 1: f: Read-only file system".
	namePath = regexp.MustCompile(`(?i):\s+([^\s:'"/]+):\s*(?:permission denied|operation not permitted|read-only file system|no such file or directory)`)
)

// DetectDenial tells whether the output of a command that failed under p
// shows that the sandbox refused it, so the user can be asked to run it
// outside (spec §10). A line saying
// "Permission denied" or "Operation not permitted" counts when it names a
// path that (a) lies under p.DenyRead, or outside the writable set (the
// working directory and p.Writable; nothing under ReadOnly), and (b) this
// process, unconfined, could read (denyRead) or write, or create in its
// parent: a real permission error is not the sandbox's. With p.Network
// off, a line of a refused connection or an unresolved host counts too.
// Relative paths resolve against cwd, the command's directory.
func DetectDenial(output, cwd string, p *Policy) (Denial, bool) {
	return DetectDenialIn(output, []string{cwd}, p)
}

// DetectDenialIn is DetectDenial for a command that may have printed
// from any of dirs (it changed directory: `cd sub && rm ../f`): a
// relative path counts when it is refused resolved against one of them,
// tried in order (the likeliest first). A ".." in it is resolved from
// the directory's real path, as the kernel does.
func DetectDenialIn(output string, dirs []string, p *Policy) (Denial, bool) {
	if !p.Enabled() {
		return Denial{}, false
	}
	home, _ := os.UserHomeDir()
	var network *Denial
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		lower := strings.ToLower(line)
		if hasAny(lower, deniedWords) {
			for _, path := range linePaths(line) {
				for _, abs := range resolveIn(path, dirs, home) {
					if d, ok := pathDenial(abs, p, home); ok {
						d.Line = line
						return d, true
					}
				}
			}
		} else if hasAny(lower, maskedWords) {
			for _, path := range linePaths(line) {
				for _, abs := range resolveIn(path, dirs, home) {
					if d, ok := pathDenial(abs, p, home); ok && d.Kind == DeniedRead && exists(d.Path) {
						d.Line = line
						return d, true
					}
				}
			}
		}
		if network == nil && !p.Network && hasAny(lower, networkWords) {
			network = &Denial{Kind: DeniedNetwork, Line: line}
		}
	}
	if network != nil {
		return *network, true
	}
	return Denial{}, false
}

// resolveIn is path made absolute: once when it is absolute or under ~,
// else against each of dirs.
func resolveIn(path string, dirs []string, home string) []string {
	if filepath.IsAbs(path) || path == "~" || strings.HasPrefix(path, "~/") || len(dirs) == 0 {
		return []string{resolveAgainst(path, "/", home)}
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if hasDotDot(path) {
			d = realPath(d) // the kernel walks .. from where it really is
		}
		out = append(out, resolveAgainst(path, d, home))
	}
	return out
}

// hasDotDot reports a ".." element in path.
func hasDotDot(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// linePaths are the candidate paths of a denial line, best first.
func linePaths(line string) []string {
	var out []string
	for _, re := range []*regexp.Regexp{quotedPath, callPath, colonPath, namePath} {
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			if p := strings.TrimSpace(m[1]); p != "" && !strings.HasPrefix(p, "-") {
				out = append(out, p)
			}
		}
	}
	return out
}

// resolveAgainst makes path absolute: ~ is home, a relative path is in cwd.
func resolveAgainst(path, cwd, home string) string {
	switch {
	case path == "~" && home != "":
		path = home
	case strings.HasPrefix(path, "~/") && home != "":
		path = filepath.Join(home, path[2:])
	case !filepath.IsAbs(path):
		path = filepath.Join(cwd, path)
	}
	return filepath.Clean(path)
}

// pathDenial decides on one path (see DetectDenial).
func pathDenial(path string, p *Policy, home string) (Denial, bool) {
	real := realPath(path)
	for _, d := range p.DenyRead {
		if within(real, realPath(resolveAgainst(d, "/", home))) {
			if CanAccess(path, unix.R_OK) {
				return Denial{Kind: DeniedRead, Path: path}, true
			}
			return Denial{}, false
		}
	}
	if p.Mode != ReadOnly {
		roots := append([]string{p.Workdir}, p.Writable...)
		for _, r := range roots {
			if r != "" && within(real, realPath(resolveAgainst(r, "/", home))) {
				return Denial{}, false
			}
		}
	}
	if CanAccess(path, unix.W_OK) {
		return Denial{Kind: DeniedWrite, Path: path}, true
	}
	return Denial{}, false
}

// DeniesRead reports whether path lies under one of p's DenyRead folders
// (symbolic links resolved as the kernel would): the mount view shows such
// a path as missing, so a "no such file" there is the sandbox's doing when
// the path exists outside.
func (p *Policy) DeniesRead(path string) bool {
	if !p.Enabled() {
		return false
	}
	home, _ := os.UserHomeDir()
	real := realPath(path)
	for _, d := range p.DenyRead {
		if within(real, realPath(resolveAgainst(d, "/", home))) {
			return true
		}
	}
	return false
}

// exists reports whether path exists for this (unconfined) process.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// CanAccess reports whether this process may access path with mode (by its
// effective ids), or, when path does not exist, may create it in its
// parent: whether a refusal inside the sandbox was the sandbox's.
func CanAccess(path string, mode uint32) bool {
	err := unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS)
	if err == nil {
		return true
	}
	if err != unix.ENOENT {
		return false
	}
	return unix.Faccessat(unix.AT_FDCWD, filepath.Dir(path), unix.W_OK|unix.X_OK, unix.AT_EACCESS) == nil
}

// realPath is path with the symlinks of its deepest existing ancestor
// resolved, as the kernel sees it.
func realPath(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// within reports whether path is root or lies below it.
func within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || strings.HasPrefix(path, root+"/")
}
