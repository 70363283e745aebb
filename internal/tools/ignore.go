package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Ignore files, from lowest to highest precedence, as ripgrep reads them: a
// match in a higher kind wins over any match in a lower one, and within one
// kind the deepest folder's file decides, then the last matching line.
const (
	ignoreKindExclude = iota // .git/info/exclude of the repository
	ignoreKindGit            // .gitignore
	ignoreKindIgnore         // .ignore
	ignoreKindRg             // .rgignore
	ignoreKinds
)

var ignoreFileNames = [...]string{ignoreKindGit: ".gitignore", ignoreKindIgnore: ".ignore", ignoreKindRg: ".rgignore"}

// globRule is one gitignore-style pattern.
type globRule struct {
	pattern  string // doublestar pattern, relative to base when anchored
	negate   bool   // "!pattern": re-include
	dirOnly  bool   // "pattern/": only directories
	anchored bool   // contains a "/": matched against the path below base, else the name
	base     string // absolute folder the pattern is relative to
}

// parseGlobRule parses one gitignore line; ok is false for blank lines,
// comments and malformed patterns.
func parseGlobRule(line, base string) (globRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return globRule{}, false
	}
	r := globRule{base: base}
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return globRule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
		if line == "" {
			return globRule{}, false
		}
	}
	r.pattern = escapeBraces(line)
	if !doublestar.ValidatePattern(r.pattern) {
		return globRule{}, false
	}
	return r, true
}

// escapeBraces turns "{" and "}" into literals: gitignore has no
// alternatives, doublestar does.
func escapeBraces(p string) string {
	if !strings.ContainsAny(p, "{}") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case c == '{' || c == '}':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// matches reports whether the entry at abs (slash-separated below base)
// matches the pattern, ignoring negation.
func (r *globRule) matches(abs string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	var rel string
	if r.base == "" {
		rel = abs
	} else {
		rest, ok := strings.CutPrefix(abs, r.base)
		if !ok || (rest != "" && rest[0] != filepath.Separator && !strings.HasSuffix(r.base, string(filepath.Separator))) {
			return false
		}
		rel = filepath.ToSlash(strings.TrimLeft(rest, string(filepath.Separator)))
	}
	if rel == "" {
		return false
	}
	if !r.anchored {
		rel = path.Base(rel)
	}
	// "dir/**" matches what is inside dir, not dir itself.
	if strings.HasSuffix(r.pattern, "/**") && rel == strings.TrimSuffix(r.pattern, "/**") {
		return false
	}
	ok, _ := doublestar.Match(r.pattern, rel)
	return ok
}

// ignoreMatcher holds the rules in force in one folder. It is immutable:
// with returns a new matcher for a subfolder.
type ignoreMatcher struct {
	rules [ignoreKinds][]globRule // each kind from the root down
}

// verdict of the ignore files for one entry.
type verdict int

const (
	verdictNone    verdict = iota // no rule matched
	verdictIgnore                 // ignored
	verdictInclude                // re-included by a "!" rule
)

func (m *ignoreMatcher) match(abs string, isDir bool) verdict {
	if m == nil {
		return verdictNone
	}
	for k := ignoreKinds - 1; k >= 0; k-- {
		rs := m.rules[k]
		for i := len(rs) - 1; i >= 0; i-- {
			if rs[i].matches(abs, isDir) {
				if rs[i].negate {
					return verdictInclude
				}
				return verdictIgnore
			}
		}
	}
	return verdictNone
}

// with returns the matcher for folder dir: m plus dir's ignore files.
func (m *ignoreMatcher) with(fsys FS, dir string, present func(name string) bool) *ignoreMatcher {
	return m.withKinds(fsys, dir, true, present)
}

// withKinds is with, leaving out dir's .gitignore unless git is set. present,
// when known, tells which names dir holds: the others are not opened.
func (m *ignoreMatcher) withKinds(fsys FS, dir string, git bool, present func(name string) bool) *ignoreMatcher {
	var added [ignoreKinds][]globRule
	any := false
	for k, name := range ignoreFileNames {
		if name == "" || (k == ignoreKindGit && !git) || (present != nil && !present(name)) {
			continue
		}
		if rs := readIgnoreFile(fsys, filepath.Join(dir, name), dir); len(rs) > 0 {
			added[k] = rs
			any = true
		}
	}
	if !any {
		return m
	}
	n := &ignoreMatcher{}
	for k := range n.rules {
		if m != nil {
			n.rules[k] = slices.Clip(m.rules[k])
		}
		n.rules[k] = append(n.rules[k], added[k]...)
	}
	return n
}

// enterRepo returns the matcher for the root of a git repository: the
// .gitignore rules from above no longer apply, its .git/info/exclude does.
func (m *ignoreMatcher) enterRepo(fsys FS, dir string) *ignoreMatcher {
	n := &ignoreMatcher{}
	if m != nil {
		*n = *m
	}
	n.rules[ignoreKindGit] = nil
	n.rules[ignoreKindExclude] = readIgnoreFile(fsys, filepath.Join(dir, ".git", "info", "exclude"), dir)
	return n
}

// readIgnoreFile parses one ignore file; a missing or unreadable one has no
// rules.
func readIgnoreFile(fsys FS, file, base string) []globRule {
	data, err := readFileFS(fsys, file)
	if err != nil || len(data) == 0 {
		return nil
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	var rs []globRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if r, ok := parseGlobRule(sc.Text(), base); ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// rootMatcher returns the rules in force at root before its own ignore
// files come in, the way ripgrep (with --no-require-git) reads parent
// folders: .ignore and .rgignore files of every folder above root, and
// .gitignore files up to the enclosing git repository's root (with its
// .git/info/exclude), or of every folder above when there is none.
func rootMatcher(fsys FS, root string) *ignoreMatcher {
	var chain []string // folders above root, nearest first
	for dir := root; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		chain = append(chain, parent)
		dir = parent
	}
	// .gitignore files apply in chain[:gitUpTo]: up to the repository root,
	// or everywhere outside a repository.
	repo, gitUpTo := "", len(chain)
	if hasGit(fsys, root) {
		repo, gitUpTo = root, 0
	} else {
		for i, d := range chain {
			if hasGit(fsys, d) {
				repo, gitUpTo = d, i+1
				break
			}
		}
	}
	var m *ignoreMatcher
	if repo != "" {
		if rs := readIgnoreFile(fsys, filepath.Join(repo, ".git", "info", "exclude"), repo); len(rs) > 0 {
			m = &ignoreMatcher{}
			m.rules[ignoreKindExclude] = rs
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		m = m.withKinds(fsys, chain[i], i < gitUpTo, nil)
	}
	return m
}

// hasGit reports whether dir is the root of a git repository or worktree.
func hasGit(fsys FS, dir string) bool {
	_, err := fsys.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// isHidden reports whether a name is hidden the way ripgrep sees it.
func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// walkOptions tune walkTree.
type walkOptions struct {
	hidden bool // include hidden entries (".git" is always skipped)
	// override, when set, decides an entry before the ignore files:
	// verdictInclude keeps it (even hidden or ignored), verdictIgnore drops
	// it, verdictNone lets the ignore files and hidden rule decide.
	override func(rel string, isDir bool) verdict
	// prune, when set, reports whether a folder that is kept may hold
	// anything of interest; false skips its contents.
	prune func(rel string) bool
	// open asks for each regular file opened for reading (walkEntry.file),
	// in batches where the file system can.
	open bool
}

// walkEntry is one entry walkTree reports.
type walkEntry struct {
	abs  string
	rel  string // slash-separated, relative to the root
	dir  bool   // a real folder (symlinks are never followed)
	mode fs.FileMode
	// file, with walkOptions.open, is the file opened ahead, or nil (not
	// opened: open it yourself); walkTree closes it once fn returns.
	file *os.File
}

// walkTree visits the entries below root (not root itself) depth first,
// each folder's entries in byte order of their names, skipping .git, hidden
// entries (unless opts.hidden) and whatever the .gitignore, .ignore and
// .rgignore files in force exclude. Symlinks are reported but never
// followed, so loops cannot trap it. Unreadable folders are skipped. fn may
// return fs.SkipDir for a folder or errStopWalk to end the walk.
func walkTree(ctx context.Context, fsys FS, root string, opts walkOptions, fn func(walkEntry) error) error {
	err := walkDir(ctx, fsys, root, "", rootMatcher(fsys, root), opts, fn)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

func walkDir(ctx context.Context, fsys FS, dir, rel string, parent *ignoreMatcher, opts walkOptions, fn func(walkEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	des, err := fsys.ReadDir(dir)
	if err != nil && len(des) == 0 {
		return nil // unreadable: skipped, as ripgrep does (it only warns)
	}
	m := parent
	for _, de := range des {
		if de.Name() == ".git" {
			m = m.enterRepo(fsys, dir) // a (nested) repository: outer .gitignore files stop here
			break
		}
	}
	// Only the ignore files the folder holds are opened (a round trip
	// each through a sandbox's helper).
	m = m.with(fsys, dir, func(name string) bool {
		_, found := slices.BinarySearchFunc(des, name, func(de fs.DirEntry, n string) int { return strings.Compare(de.Name(), n) })
		return found
	})
	var kept []walkEntry
	for _, de := range des {
		name := de.Name()
		if name == ".git" {
			continue
		}
		e := walkEntry{abs: filepath.Join(dir, name), rel: name, dir: de.IsDir(), mode: de.Type()}
		if rel != "" {
			e.rel = rel + "/" + name
		}
		v := verdictNone
		if opts.override != nil {
			v = opts.override(e.rel, e.dir)
		}
		if v == verdictNone {
			v = m.match(e.abs, e.dir)
		}
		if v == verdictIgnore || (v == verdictNone && !opts.hidden && isHidden(name)) {
			continue
		}
		kept = append(kept, e)
	}
	bo, batch := fsys.(batchOpener)
	batch = batch && opts.open
	opened := 0 // entries before this one were opened ahead (or not regular)
	defer func() {
		for _, e := range kept {
			if e.file != nil {
				e.file.Close()
			}
		}
	}()
	for i := range kept {
		if err := ctx.Err(); err != nil {
			return err
		}
		if batch && i >= opened && kept[i].mode.IsRegular() {
			opened = openAhead(bo, dir, kept, i)
		}
		e := kept[i]
		err := fn(e)
		if e.file != nil {
			e.file.Close()
			kept[i].file = nil
		}
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if e.dir && (opts.prune == nil || opts.prune(e.rel)) {
			if err := walkDir(ctx, fsys, e.abs, e.rel, m, opts, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// batchOpener is a file system that opens several files of a folder in
// one step (a sandbox's helper: one round trip instead of one per file).
type batchOpener interface {
	OpenBatch(dir string, names []string) ([]*os.File, []error)
}

// openAheadCount is how many files a walk opens ahead in one batch: one
// round trip through a sandbox's helper for that many files, and no more
// descriptors held per folder level.
const openAheadCount = 64

// openAhead opens the next regular files of entries, from entries[from]
// on, in one batch; it returns the index after the last one it covered.
// Those it could not open stay nil and are opened by whoever reads them
// (to get the error).
func openAhead(bo batchOpener, dir string, entries []walkEntry, from int) int {
	var idx []int
	var names []string
	end := from
	for ; end < len(entries) && len(names) < openAheadCount; end++ {
		if e := entries[end]; e.mode.IsRegular() {
			idx = append(idx, end)
			names = append(names, filepath.Base(e.abs))
		}
	}
	files, _ := bo.OpenBatch(dir, names)
	for k, i := range idx {
		entries[i].file = files[k]
	}
	return end
}

// globFilter is the grep glob and the find pattern: without a "/" it
// matches the name at any depth, with one the path below the root.
type globFilter struct {
	rule globRule
}

func newGlobFilter(pattern string) (*globFilter, error) {
	p := strings.TrimPrefix(strings.TrimSpace(pattern), "./")
	r := globRule{}
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if strings.Contains(p, "/") {
		r.anchored = true
		p = strings.TrimLeft(p, "/")
	}
	if p == "" {
		return nil, errors.New("empty pattern")
	}
	if !doublestar.ValidatePattern(p) {
		return nil, doublestar.ErrBadPattern
	}
	r.pattern = p
	return &globFilter{rule: r}, nil
}

// match tests rel (slash-separated, below the root).
func (g *globFilter) match(rel string, isDir bool) bool {
	if g.rule.dirOnly && !isDir {
		return false
	}
	name := rel
	if !g.rule.anchored {
		name = path.Base(rel)
	}
	// "dir/**" matches what is inside dir, not dir itself.
	if strings.HasSuffix(g.rule.pattern, "/**") && name == strings.TrimSuffix(g.rule.pattern, "/**") {
		return false
	}
	ok, _ := doublestar.Match(g.rule.pattern, name)
	return ok
}

// base is the pattern's fixed leading folder ("" when there is none): only
// it and what lies below it can match.
func (g *globFilter) base() string {
	if !g.rule.anchored {
		return ""
	}
	b, _ := doublestar.SplitPattern(g.rule.pattern)
	if b == "." || b == "/" {
		return ""
	}
	return b
}

// mayHold reports whether folder rel can contain a match of a pattern whose
// fixed leading folder is base.
func mayHold(base, rel string) bool {
	return base == "" || rel == base || strings.HasPrefix(base, rel+"/") || strings.HasPrefix(rel, base+"/")
}

// compareRel orders slash-separated relative paths the way a sorted walk
// visits them: folder by folder, names in byte order.
func compareRel(a, b string) int {
	for {
		ai, bi := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		as, bs := a, b
		if ai >= 0 {
			as = a[:ai]
		}
		if bi >= 0 {
			bs = b[:bi]
		}
		if c := strings.Compare(as, bs); c != 0 {
			return c
		}
		switch {
		case ai < 0 && bi < 0:
			return 0
		case ai < 0:
			return -1
		case bi < 0:
			return 1
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}
