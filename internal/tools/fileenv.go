package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// Names of the file tools.
const (
	ReadName  = "read"
	GrepName  = "grep"
	FindName  = "find"
	EditName  = "edit"
	WriteName = "write"
)

// Env is what the file tools need from the session. Both fields are read on
// every call, so they may change while a session runs.
type Env struct {
	// Cwd returns the session's working directory; relative paths resolve
	// against it. nil (or an empty result) means the process's directory.
	Cwd func() string
	// ResolveArtifact turns "artifact://N" into the artifact's file path
	// (session.ArtifactManager.Resolve fits). nil: artifact:// paths are
	// refused with a clear message.
	ResolveArtifact func(url string) (string, error)
	// FS returns the file system of a call: the sandbox's view under the
	// session's policy (internal/confinedfs), the host's when the sandbox
	// is off. nil (or a nil result) is the host's. WithFS overrides it.
	FS func() FS
	// Gate, when set, runs every file tool call (the session's sandbox
	// question: FileGate).
	Gate FileGate
}

// FileCall is one file tool call as a gate and the user see it.
type FileCall struct {
	Tool string // read, grep, find, edit or write
	// Summary is the call in one line ("write ../outside.txt",
	// "grep \"TODO\" in src").
	Summary string
}

// FileGate runs one file tool call: run does it with the file system
// ctx carries (WithFS), else Env.FS's.
type FileGate func(ctx context.Context, call FileCall, run func(ctx context.Context) Result) Result

// gatedFile is a file tool whose calls go through a FileGate.
type gatedFile struct {
	Tool
	gate FileGate
}

func (g gatedFile) Execute(ctx context.Context, raw json.RawMessage, onUpdate func(string)) Result {
	return g.gate(ctx, FileCall{Tool: g.Name(), Summary: callSummary(g.Name(), raw)}, func(ctx context.Context) Result {
		return g.Tool.Execute(ctx, raw, onUpdate)
	})
}

// callSummary is a file tool call in one line: the tool, its pattern
// (grep, find) and its path.
func callSummary(tool string, raw json.RawMessage) string {
	var a struct {
		Path    *string `json:"path"`
		Pattern *string `json:"pattern"`
	}
	_ = json.Unmarshal(raw, &a)
	s := tool
	if a.Pattern != nil {
		s += " " + strconv.Quote(*a.Pattern)
		if a.Path != nil && strings.TrimSpace(*a.Path) != "" {
			s += " in " + *a.Path
		}
		return s
	}
	if a.Path != nil {
		s += " " + *a.Path
	}
	return s
}

// FileTools returns the five file tools, in the order read, grep, find,
// edit, write.
func FileTools(env Env) []Tool {
	ts := []Tool{NewRead(env), NewGrep(env), NewFind(env), NewEdit(env), NewWrite(env)}
	if env.Gate != nil {
		for i, t := range ts {
			ts[i] = gatedFile{Tool: t, gate: env.Gate}
		}
	}
	return ts
}

// ErrNoArtifacts is what an Env.ResolveArtifact returns when the session it
// reads keeps no artifacts: the tool then refuses the path as it does when
// ResolveArtifact is nil.
var ErrNoArtifacts = errors.New("no artifacts in this session")

func noArtifacts(url string) string {
	return fmt.Sprintf("Cannot open %s: artifact:// paths are not available in this session", url)
}

// artifactScheme is the URL scheme of spilled tool output (session.ArtifactScheme).
const artifactScheme = "artifact://"

func (e Env) cwd() string {
	if e.Cwd != nil {
		if c := e.Cwd(); c != "" {
			return c
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return string(filepath.Separator)
	}
	return wd
}

// target is one resolved path argument.
type target struct {
	abs      string // absolute, cleaned file system path
	display  string // what messages show: the path as the model gave it
	artifact bool   // an artifact:// URL (display is the URL)
}

// isArtifactURL reports whether p uses the artifact:// scheme (any case).
func isArtifactURL(p string) bool {
	return len(p) >= len(artifactScheme) && strings.EqualFold(p[:len(artifactScheme)], artifactScheme)
}

// resolve turns a path argument into a target: artifact:// URLs through
// ResolveArtifact when allowed, "~" expanded, relative paths joined to the
// cwd. A non-empty message is the error the model reads.
func (e Env) resolve(raw string, allowArtifact bool, tool string) (target, string) {
	p := strings.TrimSpace(raw)
	if p == "" {
		return target{}, "path must not be empty"
	}
	if isArtifactURL(p) {
		if !allowArtifact {
			return target{}, fmt.Sprintf("The %s tool cannot use %s: artifact:// outputs are read-only (use read or grep on them)", tool, p)
		}
		if e.ResolveArtifact == nil {
			return target{}, noArtifacts(p)
		}
		fp, err := e.ResolveArtifact(p)
		if errors.Is(err, ErrNoArtifacts) {
			return target{}, noArtifacts(p)
		}
		if err != nil {
			return target{}, err.Error()
		}
		if !filepath.IsAbs(fp) {
			fp = filepath.Join(e.cwd(), fp)
		}
		return target{abs: filepath.Clean(fp), display: p, artifact: true}, ""
	}
	fp, err := expandHome(p)
	if err != nil {
		return target{}, fmt.Sprintf("Cannot expand ~ in %s: %v", p, err)
	}
	if !filepath.IsAbs(fp) {
		fp = filepath.Join(e.cwd(), fp)
	}
	return target{abs: filepath.Clean(fp), display: p}, ""
}

// expandHome expands a leading "~" or "~/"; "~user" is left alone.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, p[1:]), nil
}

// displayPrefix is what the paths grep and find print start with: the
// searched path as given (cleaned, slash-separated, ending in "/"), or
// nothing when it is the cwd. The printed paths can be passed straight back
// to the tools.
func displayPrefix(given string) string {
	g := strings.TrimSpace(given)
	if g == "" {
		return ""
	}
	c := filepath.ToSlash(filepath.Clean(g))
	if c == "." {
		return ""
	}
	return strings.TrimSuffix(c, "/") + "/"
}

// fsMessage turns a file system error about display into the message the
// model reads.
func fsMessage(err error, display string) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "File not found: " + display
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied: " + display
	case errors.As(err, &errno) && errno == syscall.ENOTDIR:
		return "File not found: " + display + " (a parent is not a directory)"
	case errors.As(err, &errno) && errno == syscall.ELOOP:
		return "Too many levels of symbolic links: " + display
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("Cannot %s %s: %v", pe.Op, display, pe.Err)
	}
	return fmt.Sprintf("%s: %v", display, err)
}

// notFileMessage explains why fi cannot be read or edited as a file.
func notFileMessage(fi fs.FileInfo, display string) string {
	if fi.IsDir() {
		return "Not a file: " + display + " (it is a directory)"
	}
	return "Not a file: " + display + " (not a regular file)"
}

func errorResult(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

func abortedResult(tool string) Result {
	return Result{Content: "The " + tool + " call was aborted", IsError: true, Aborted: true}
}

func marshalDetails(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// args is a decoded argument object, checked against the allowed names.
type args struct {
	tool string
	m    map[string]json.RawMessage
}

func parseArgs(tool string, raw json.RawMessage, allowed ...string) (args, string) {
	a := args{tool: tool}
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &a.m); err != nil {
		return a, fmt.Sprintf("Invalid %s arguments: %v", tool, err)
	}
	var unknown []string
	for k := range a.m {
		ok := false
		for _, n := range allowed {
			if k == n {
				ok = true
				break
			}
		}
		if !ok {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return a, fmt.Sprintf("Unknown argument %s for %s (allowed: %s)", strings.Join(unknown, ", "), tool, strings.Join(allowed, ", "))
	}
	return a, ""
}

// present reports whether name was given with a non-null value.
func (a args) present(name string) bool {
	v, ok := a.m[name]
	return ok && strings.TrimSpace(string(v)) != "null"
}

// str returns a string argument; a required one must be present.
func (a args) str(name string, required bool) (string, string) {
	if !a.present(name) {
		if required {
			return "", fmt.Sprintf("Missing required argument %q for %s", name, a.tool)
		}
		return "", ""
	}
	var s string
	if err := json.Unmarshal(a.m[name], &s); err != nil {
		return "", fmt.Sprintf("Invalid %s: expected a string, got %s", name, a.m[name])
	}
	return s, ""
}

// integer returns an optional integer argument (def when absent); numbers
// sent as strings ("20") are accepted, fractions are not.
func (a args) integer(name string, def, min int) (int, string) {
	if !a.present(name) {
		return def, ""
	}
	v := a.m[name]
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return 0, fmt.Sprintf("Invalid %s: expected an integer, got %s", name, v)
		}
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, fmt.Sprintf("Invalid %s: expected an integer, got %s", name, v)
		}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Sprintf("Invalid %s: expected an integer, got %s", name, v)
	}
	n := int(f)
	if n < min {
		return 0, fmt.Sprintf("Invalid %s: must be at least %d, got %d", name, min, n)
	}
	return n, ""
}

// boolean returns an optional boolean argument ("true"/"false" strings too).
func (a args) boolean(name string) (bool, string) {
	if !a.present(name) {
		return false, ""
	}
	v := a.m[name]
	var b bool
	if err := json.Unmarshal(v, &b); err == nil {
		return b, ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return b, ""
		}
	}
	return false, fmt.Sprintf("Invalid %s: expected true or false, got %s", name, v)
}

// countLines counts lines the way read numbers them: every "\n" ends one,
// and a last line without one still counts.
func countLines(s []byte) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// binarySniffLen is how much of a file decides whether it is binary.
const binarySniffLen = 8 << 10

// binaryReason says why head (a file's first bytes) looks binary, or "".
func binaryReason(head []byte) string {
	if len(head) > binarySniffLen {
		head = head[:binarySniffLen]
	}
	for _, c := range head {
		if c == 0 {
			return "contains NUL bytes"
		}
	}
	invalid, runes := 0, 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(head[i:]) {
				break // a rune cut by the sniff window
			}
			invalid++
		}
		runes++
		i += size
	}
	if runes > 0 && invalid*10 > runes {
		return "not valid UTF-8 text"
	}
	return ""
}

// cutLine returns s (valid UTF-8) cut to max characters, saying how many
// were left out.
func cutLine(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	i, c := 0, 0
	for i = range s {
		if c == max {
			break
		}
		c++
	}
	return s[:i] + fmt.Sprintf("… [%d chars omitted]", n-max)
}

// pathLocks serialises edit and write calls on the same file so two
// concurrent read-modify-write cycles cannot lose an update.
var pathLocks sync.Map // absolute path → *sync.Mutex

func lockPath(p string) func() {
	m, _ := pathLocks.LoadOrStore(p, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// testHookBeforeRename, when set by tests, runs after the temp file is
// written and synced, just before it replaces the target.
var testHookBeforeRename func(tmp string) error

// atomicWrite replaces path with data: a temp file in the same folder is
// written, synced, given perm (and, best effort, the old owner) and renamed
// over path. On any failure the old file is untouched and the temp file is
// removed.
func atomicWrite(fsys FS, path string, data []byte, perm fs.FileMode, old fs.FileInfo) error {
	return atomicWriteChecked(fsys, path, data, perm, old, nil)
}

// atomicWriteChecked is atomicWrite that calls check (if not nil) as late as
// possible, right before the rename; an error from it aborts the write.
func atomicWriteChecked(fsys FS, path string, data []byte, perm fs.FileMode, old fs.FileInfo, check func() error) (err error) {
	dir, base := filepath.Split(path)
	if len(base) > 100 {
		base = base[:100]
	}
	f, err := fsys.CreateTemp(filepath.Clean(dir), "."+base+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = fsys.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if old != nil {
		keepOwner(f, old)
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		if err = testHookBeforeRename(tmp); err != nil {
			return err
		}
	}
	if check != nil {
		if err = check(); err != nil {
			return err
		}
	}
	if err = fsys.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := fsys.Open(filepath.Clean(dir)); derr == nil {
		_ = d.Sync() // make the rename durable; not all systems allow it
		_ = d.Close()
	}
	return nil
}

// checkWritable makes sure an existing file may be written by us: renaming
// over a read-only file would otherwise succeed.
func checkWritable(fsys FS, path string) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
