package config

import (
	"bytes"
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
	"time"
	"unicode/utf8"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/xdg"
)

// InterceptorPattern is one bashInterceptor rule: a command matching Pattern
// (a regular expression, with optional Flags) is redirected to Tool with
// Message. Compiling the expression is left to the interceptor, which owns the
// regex dialect.
type InterceptorPattern struct {
	Pattern string `json:"pattern"`
	Flags   string `json:"flags,omitempty"`
	Tool    string `json:"tool"`
	Message string `json:"message"`
}

// Settings is the merged global and project configuration.
//
// A JSON null for a known key means "use the default", which lets a project
// file reset a global value.
type Settings struct {
	VirtualTerminal     string               // bash.virtualTerminal: "on" or "off" (default "off")
	InterceptorEnabled  bool                 // bashInterceptor.enabled (default false)
	InterceptorPatterns []InterceptorPattern // bashInterceptor.patterns; nil when not configured, so the caller uses its defaults; empty when configured as []
	ShellPath           string               // shell.path
	ShellPrefix         string               // shell.prefix, overridden by a non-empty AGENTSH_SHELL_PREFIX
	ShellEnv            map[string]string    // shell.env, merged key by key across files
	ArtifactMaxBytes    int                  // artifacts.maxBytes: an artifact's cap (default bash.DefaultArtifactMaxBytes)
	ShellScrubEnv       []string             // shell.scrubEnv: names the model's shells do not inherit (bash.DefaultScrubEnv unless configured; [] = none)
	MaxJobs             int                  // bash.maxJobs: jobs running at once in a session (default jobs.DefaultMaxJobs)
	AutoBackgroundSecs  float64              // bash.autoBackgroundSeconds: a foreground command becomes a job after this long (default DefaultAutoBackgroundSeconds; 0 = never)
	Stdin               string               // bash.stdin: "terminal" (default: a foreground command reads a terminal agentsh holds) or "null" (/dev/null)
	BashPatterns        []bash.PatternRule   // bash.patterns: allow, ask and deny rules (settings_patterns.go)
	Raw                 map[string]any       // merged tree from the files (nested form, no env overrides), for keys not modelled yet
	Sources             []string             // files that were loaded, in merge order

	// Project is what the project file loosens (trust.go): nil when it
	// loosens nothing. Unless Project.Trusted, those values are the
	// user's own here.
	Project *ProjectTrust

	// Sandbox is sandbox.* and yolo (sandbox.go).
	// Unlike the keys above, a session reads it once, at start: a
	// command must not loosen its own sandbox by editing the files.
	Sandbox SandboxSettings
}

// maxArtifactMaxBytes bounds artifacts.maxBytes (1 PiB) so the value stays
// an exact integer.
const maxArtifactMaxBytes = 1 << 50

// DefaultAutoBackgroundSeconds is bash.autoBackgroundSeconds when not set.
const DefaultAutoBackgroundSeconds = 60

// Bounds of the job settings: values past them are typos, not wishes, and
// they keep the numbers exact integers and durations.
const (
	maxMaxJobs               = 1 << 20
	maxAutoBackgroundSeconds = 86400
)

// ShellPrefixEnv names the environment variable that overrides shell.prefix.
const ShellPrefixEnv = "AGENTSH_SHELL_PREFIX"

// SettingsError locates a problem in a settings file.
type SettingsError struct {
	File string
	Line int    // 1-based
	Col  int    // 1-based, in characters
	Key  string // dotted key, with [i] for array elements; empty for syntax errors
	Msg  string
}

// Error formats as "settings: FILE:LINE:COL: KEY: MSG", the shape editors and
// terminals recognise as a jump target.
func (e *SettingsError) Error() string {
	var b strings.Builder
	b.WriteString("settings: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// GlobalSettingsPath returns ConfigDir()/settings.json.
func GlobalSettingsPath() string {
	return filepath.Join(xdg.ConfigDir(), "settings.json")
}

// ProjectSettingsPath returns <cwd>/.agentsh/settings.json.
func ProjectSettingsPath(cwd string) string {
	return filepath.Join(cwd, ".agentsh", "settings.json")
}

// LoadSettings loads the global settings and then the project settings of cwd
// over them. Either file may be missing.
func LoadSettings(cwd string) (*Settings, error) {
	project := ""
	if cwd != "" {
		project = ProjectSettingsPath(cwd)
	}
	return LoadSettingsFrom(GlobalSettingsPath(), project)
}

// LoadSettingsFrom loads globalPath and then projectPath deep-merged over it
// (objects merge key by key; arrays and scalars replace). An empty path or a
// missing file contributes nothing; a file that exists but cannot be read or
// parsed is an error.
//
// The project file's values that loosen the global ones apply only when
// the user trusted its folder for them (TrustFolder; trust.go).
func LoadSettingsFrom(globalPath, projectPath string) (*Settings, error) {
	return LoadSettingsTrusting(globalPath, projectPath, false)
}

// LoadSettingsTrusting is LoadSettingsFrom; trustProject applies what the
// project file loosens even when its folder is not trusted
// (--trust-project).
func LoadSettingsTrusting(globalPath, projectPath string, trustProject bool) (*Settings, error) {
	var files []settingsFile
	for _, p := range settingsPaths(globalPath, projectPath) {
		data, err := readSettingsFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("settings: %w", err)
		}
		files = append(files, settingsFile{path: p, data: data, project: p == projectPath})
	}
	trusted := trustFunc(storedTrust)
	if trustProject {
		trusted = func(string, string) bool { return true }
	}
	return buildSettings(files, trusted)
}

// settingsPaths lists the files to merge, in order, without a project file
// that is the global one.
func settingsPaths(globalPath, projectPath string) []string {
	var paths []string
	if globalPath != "" {
		paths = append(paths, globalPath)
	}
	if projectPath != "" && (globalPath == "" || filepath.Clean(projectPath) != filepath.Clean(globalPath)) {
		paths = append(paths, projectPath)
	}
	return paths
}

// settingsFile is the content of one existing settings file.
type settingsFile struct {
	path    string
	data    []byte
	project bool // the project's file: its loosening keys need trust
}

// buildSettings parses and merges files in order. A project file (the
// last, when marked) adds its bash.patterns to the others' and may not
// loosen them unless trusted says its folder is trusted for exactly what
// it loosens (trust.go); the looser values are then the user's own again.
func buildSettings(files []settingsFile, trusted trustFunc) (*Settings, error) {
	trees := make([]map[string]any, len(files))
	for i, f := range files {
		tree, err := parseSettingsFile(f.path, f.data)
		if err != nil {
			return nil, err
		}
		trees[i] = tree
	}
	proj := -1
	if n := len(files); n > 0 && files[n-1].project {
		proj = n - 1
	}
	if proj < 0 {
		return mergeSettings(files, trees), nil
	}
	user := mergeSettings(files[:proj], trees[:proj])
	s := mergeSettings(files, trees)
	var projAllow []bash.PatternRule
	for _, r := range s.BashPatterns[len(user.BashPatterns):] {
		if r.Action == bash.PatternAllow {
			projAllow = append(projAllow, r)
		}
	}
	if ls := loosenings(user, s, projAllow); len(ls) > 0 {
		folder := filepath.Dir(filepath.Dir(files[proj].path))
		if abs, err := filepath.Abs(folder); err == nil {
			folder = abs
		}
		p := &ProjectTrust{Folder: folder, File: files[proj].path, Loosens: ls, Hash: loosenHash(ls)}
		p.Trusted = trusted != nil && trusted(folder, p.Hash)
		if !p.Trusted {
			withdraw(s, user, ls)
		}
		s.Project = p
	}
	return s, nil
}

// mergeSettings merges parsed trees in order into settings.
func mergeSettings(files []settingsFile, trees []map[string]any) *Settings {
	s := &Settings{VirtualTerminal: "off", ShellScrubEnv: bash.DefaultScrubEnv(), ArtifactMaxBytes: bash.DefaultArtifactMaxBytes,
		MaxJobs: jobs.DefaultMaxJobs, AutoBackgroundSecs: DefaultAutoBackgroundSeconds, Stdin: "terminal", Raw: map[string]any{}}
	for i, tree := range trees {
		// A copy: merging shares the first file's objects, and the trees
		// are merged twice (the user's alone, then with the project's).
		mergeInto(s.Raw, deepCopy(tree).(map[string]any))
		s.Sources = append(s.Sources, files[i].path)
	}
	s.applyRaw()
	s.BashPatterns = nil
	for _, tree := range trees {
		s.BashPatterns = append(s.BashPatterns, treePatterns(tree)...)
	}
	s.setRawPatterns()
	s.applySandbox()
	if v := os.Getenv(ShellPrefixEnv); v != "" {
		s.ShellPrefix = v
	}
	return s
}

// ToolSettings turns the settings into the bash tool's (spec §2.2): the
// shell resolved, the interceptor rules converted, and the rc snapshot left
// to the first run (ShellConfig.LazySnapshot; GetOrCreateSnapshot caches it
// per shell and env).
func (s *Settings) ToolSettings() (bash.ToolSettings, error) {
	shellPath, err := bash.ResolveShell(s.ShellPath)
	if err != nil {
		return bash.ToolSettings{}, err
	}
	rules := make([]bash.InterceptorRule, 0, len(s.InterceptorPatterns))
	for _, p := range s.InterceptorPatterns {
		rules = append(rules, bash.InterceptorRule{Pattern: p.Pattern, Flags: p.Flags, Tool: p.Tool, Message: p.Message})
	}
	return bash.ToolSettings{
		VirtualTerminal:    s.VirtualTerminal,
		InterceptorEnabled: s.InterceptorEnabled,
		InterceptorRules:   rules,
		ArtifactMaxBytes:   s.ArtifactMaxBytes,
		MaxJobs:            s.MaxJobs,
		Patterns:           s.BashPatterns,
		AutoBackground:     time.Duration(s.AutoBackgroundSecs * float64(time.Second)),
		Shell: bash.ShellConfig{
			Path:          shellPath,
			Prefix:        s.ShellPrefix,
			Env:           s.ShellEnv,
			ScrubEnv:      s.ShellScrubEnv,
			LazySnapshot:  true,
			TerminalStdin: s.Stdin != "null",
		},
	}, nil
}

// racyWindow is how long after a file's last change its size and times are
// not trusted to show the next change: timestamps are coarse (a clock tick,
// seconds on some filesystems), so a rewrite of the same size within the
// same tick keeps them. Within the window the content is compared instead.
const racyWindow = 2 * time.Second

// LiveSettings follows the settings files of one working directory, so a
// change to shell.env, shell.path, shell.prefix, bash.virtualTerminal or
// bashInterceptor takes effect from the next command without a restart
// (spec §2.2: each call loads the shell config from settings). Each call
// costs two stat calls; a file is read again only when its size or times
// changed (or changed less than racyWindow ago) and parsed again only when
// its content did. It is safe for concurrent use.
type LiveSettings struct {
	paths   []string
	project string // the project file among paths ("" = none)

	// onUntrusted, when set, hears of each new set of loosening values
	// the folder is not trusted for (a mid-session edit included), after
	// the lock is released.
	onUntrusted func(*ProjectTrust)

	mu       sync.Mutex
	files    []liveFile // one per path
	stale    bool       // a content changed since the last build
	cur      *Settings  // the last settings that loaded (the defaults until one did)
	loaded   bool       // cur is from the files, not the defaults
	readErr  error      // a file could not be read this time
	buildErr error      // the contents as last read do not load
	tool     bash.ToolSettings
	toolErr  error
	toolOf   *Settings       // the settings tool was made from
	runTrust map[string]bool // loosening sets trusted for this run (TrustForRun)
	told     string          // the hash onUntrusted last heard of
	tell     *ProjectTrust   // to tell onUntrusted once unlocked
}

// liveFile is what is known of one settings file.
type liveFile struct {
	sig    fileSig
	data   []byte // nil when the file is missing
	readAt time.Time
}

// fileSig identifies a version of a file without reading it.
type fileSig struct {
	exists       bool
	size         int64
	mtime        int64 // ns
	ctime, inode uint64
}

func statSig(path string) fileSig {
	st, err := os.Stat(path)
	if err != nil {
		return fileSig{}
	}
	ctime, inode := statExtra(st)
	return fileSig{exists: true, size: st.Size(), mtime: st.ModTime().UnixNano(), ctime: ctime, inode: inode}
}

// WatchSettings loads the settings of cwd like LoadSettings and follows the
// files from then on.
func WatchSettings(cwd string) (*LiveSettings, error) {
	project := ""
	if cwd != "" {
		project = ProjectSettingsPath(cwd)
	}
	return WatchSettingsFrom(GlobalSettingsPath(), project)
}

// WatchSettingsFrom is WatchSettings for explicit paths (LoadSettingsFrom).
// An error loading them now is returned together with LiveSettings that
// serve the defaults (Loaded reports false) until the files load: the TUI
// starts on them, so that the `!` command that fixes the file can run; the
// modes without a user to fix it do not start.
func WatchSettingsFrom(globalPath, projectPath string) (*LiveSettings, error) {
	paths := settingsPaths(globalPath, projectPath)
	l := &LiveSettings{paths: paths, files: make([]liveFile, len(paths)), runTrust: map[string]bool{}}
	if n := len(paths); n > 0 && projectPath != "" && paths[n-1] == projectPath {
		l.project = projectPath
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshLocked(true)
	if l.cur == nil {
		l.cur, _ = buildSettings(nil, nil) // no file: cannot fail
	}
	return l, l.errLocked()
}

// Loaded reports whether the settings files have loaded at least once;
// until then Current serves the defaults.
func (l *LiveSettings) Loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loaded
}

// Current returns the settings as the files are now. When they no longer
// load (a syntax error saved mid-session), it returns the last settings
// that did together with the error; callers refuse to run a command on
// settings the user has replaced.
func (l *LiveSettings) Current() (*Settings, error) {
	l.mu.Lock()
	defer l.tellUnlocked()
	l.refreshLocked(false)
	return l.cur, l.errLocked()
}

// OnUntrusted makes f hear of each new set of loosening values of the
// project file that its folder is not trusted for (the TUI asks, print
// and RPC say it on stderr). f runs on the goroutine that read the
// settings, without the lock held.
func (l *LiveSettings) OnUntrusted(f func(*ProjectTrust)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onUntrusted, l.tell = f, nil
	if l.cur != nil && l.cur.Project != nil && !l.cur.Project.Trusted {
		l.told = l.cur.Project.Hash // known already: the caller asked at start
	}
}

// TrustForRun applies the project file's loosening values as they are
// now, for this process only (--trust-project): a later change of them is
// not trusted.
func (l *LiveSettings) TrustForRun() (*Settings, error) {
	l.mu.Lock()
	defer l.tellUnlocked()
	l.refreshLocked(false)
	if p := l.cur.Project; p != nil {
		l.runTrust[p.Hash] = true
		l.refreshLocked(true)
	}
	return l.cur, l.errLocked()
}

// Trust records that the user trusts the folder for the loosening set
// hash (TrustFolder) and applies it.
func (l *LiveSettings) Trust(p *ProjectTrust) error {
	if err := TrustFolder(p.Folder, p.Hash); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.tellUnlocked()
	l.refreshLocked(true)
	return nil
}

// tellUnlocked releases the lock and tells onUntrusted what a refresh
// found.
func (l *LiveSettings) tellUnlocked() {
	p, f := l.tell, l.onUntrusted
	l.tell = nil
	l.mu.Unlock()
	if p != nil && f != nil {
		f(p)
	}
}

// trustedLocked decides the trust of a folder's loosening set: this run's
// word or the user's file.
func (l *LiveSettings) trustedLocked(folder, hash string) bool {
	return l.runTrust[hash] || storedTrust(folder, hash)
}

// ToolSettings is Current turned into the bash tool's settings, converted
// once per change of the files. On an error the last good tool settings
// come with it.
func (l *LiveSettings) ToolSettings() (bash.ToolSettings, error) {
	l.mu.Lock()
	defer l.tellUnlocked()
	l.refreshLocked(false)
	if l.toolOf != l.cur {
		l.toolOf = l.cur
		ts, err := l.cur.ToolSettings()
		if err == nil {
			l.tool = ts
		}
		l.toolErr = err
	}
	if err := l.errLocked(); err != nil {
		return l.tool, err
	}
	return l.tool, l.toolErr
}

// refreshLocked re-reads the files that may have changed and rebuilds the
// settings when a content did; force reads and builds in any case.
func (l *LiveSettings) refreshLocked(force bool) {
	if force {
		l.stale = true
	}
	l.readErr = nil
	for i, p := range l.paths {
		f := &l.files[i]
		sig := statSig(p)
		if !force && sig == f.sig && !f.racy() {
			continue
		}
		now := time.Now()
		data, err := readSettingsFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			data = nil
		case err != nil:
			l.readErr = fmt.Errorf("settings: %w", err)
			f.sig = fileSig{} // read it again next time
			continue
		case data == nil:
			data = []byte{} // exists but empty: not the same as missing
		}
		if (data == nil) != (f.data == nil) || !bytes.Equal(data, f.data) {
			l.stale = true
		}
		f.sig, f.data, f.readAt = sig, data, now
	}
	if l.readErr != nil || !l.stale {
		return
	}
	l.stale = false
	var files []settingsFile
	for i, p := range l.paths {
		if l.files[i].data != nil {
			files = append(files, settingsFile{path: p, data: l.files[i].data, project: p == l.project})
		}
	}
	s, err := buildSettings(files, l.trustedLocked)
	l.buildErr = err
	if err == nil {
		l.cur, l.loaded = s, true
		if p := s.Project; p != nil && !p.Trusted && p.Hash != l.told {
			l.told, l.tell = p.Hash, p
		}
	}
}

// errLocked is why the files as they are now do not load, nil when cur is
// current.
func (l *LiveSettings) errLocked() error {
	if l.readErr != nil {
		return l.readErr
	}
	return l.buildErr
}

// racy reports that the file changed too recently for its size and times
// to show a further change (see racyWindow).
func (f *liveFile) racy() bool {
	if !f.sig.exists {
		return false
	}
	changed := max(f.sig.mtime, int64(f.sig.ctime))
	return f.readAt.UnixNano()-changed < int64(racyWindow)
}

// Lookup returns the merged value at a dotted key such as "bash.virtualTerminal".
func (s *Settings) Lookup(key string) (any, bool) {
	var cur any = s.Raw
	for _, seg := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// applyRaw fills the typed fields. Every file was validated before merging,
// and merging keeps each known leaf from exactly one file, so the assertions
// here cannot fail on a value that passed validation.
func (s *Settings) applyRaw() {
	if v, ok := s.Lookup("bash.virtualTerminal"); ok && v != nil {
		s.VirtualTerminal = v.(string)
	}
	if v, ok := s.Lookup("bash.maxJobs"); ok && v != nil {
		s.MaxJobs = int(v.(float64))
	}
	if v, ok := s.Lookup("bash.autoBackgroundSeconds"); ok && v != nil {
		s.AutoBackgroundSecs = v.(float64)
	}
	if v, ok := s.Lookup("bash.stdin"); ok && v != nil {
		s.Stdin = v.(string)
	}
	if v, ok := s.Lookup("bashInterceptor.enabled"); ok && v != nil {
		s.InterceptorEnabled = v.(bool)
	}
	if v, ok := s.Lookup("bashInterceptor.patterns"); ok && v != nil {
		arr := v.([]any)
		s.InterceptorPatterns = make([]InterceptorPattern, 0, len(arr))
		for _, el := range arr {
			obj := el.(map[string]any)
			str := func(k string) string { v, _ := obj[k].(string); return v }
			s.InterceptorPatterns = append(s.InterceptorPatterns, InterceptorPattern{
				Pattern: str("pattern"), Flags: str("flags"), Tool: str("tool"), Message: str("message"),
			})
		}
	}
	if v, ok := s.Lookup("artifacts.maxBytes"); ok && v != nil {
		s.ArtifactMaxBytes = int(v.(float64))
	}
	if v, ok := s.Lookup("shell.path"); ok && v != nil {
		s.ShellPath = v.(string)
	}
	if v, ok := s.Lookup("shell.prefix"); ok && v != nil {
		s.ShellPrefix = v.(string)
	}
	if v, ok := s.Lookup("shell.env"); ok && v != nil {
		env := v.(map[string]any)
		s.ShellEnv = make(map[string]string, len(env))
		for k, val := range env {
			s.ShellEnv[k] = val.(string)
		}
	}
	if v, ok := s.Lookup("shell.scrubEnv"); ok && v != nil {
		arr := v.([]any)
		s.ShellScrubEnv = make([]string, 0, len(arr))
		for _, el := range arr {
			s.ShellScrubEnv = append(s.ShellScrubEnv, el.(string))
		}
	}
}

// parseSettingsFile parses one file into the nested form and validates the
// keys agentsh knows.
func parseSettingsFile(path string, data []byte) (map[string]any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// An empty file is a natural way to start a settings file; treat it as {}.
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	// The standard decoder is the authority on syntax (and gives the familiar
	// messages); only once it accepts the input do we walk the tokens again to
	// learn where each value sits.
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset)
			// For a bad character Offset points just past it.
			if strings.HasPrefix(se.Error(), "invalid character") && off > 0 {
				off--
			}
			line, col := lineCol(data, off)
			return nil, &SettingsError{File: path, Line: line, Col: col, Msg: se.Error()}
		}
		return nil, &SettingsError{File: path, Msg: err.Error()}
	}
	if _, ok := probe.(map[string]any); !ok {
		line, col := lineCol(data, skipSpace(data, 0))
		return nil, &SettingsError{File: path, Line: line, Col: col, Msg: "top level must be a JSON object, got " + jsonKind(probe)}
	}

	p := &posParser{data: data, dec: json.NewDecoder(bytes.NewReader(data)), pos: map[string]int{}}
	v, err := p.value("")
	if err != nil {
		// Unreachable after a successful Unmarshal, but never panic on input.
		return nil, &SettingsError{File: path, Msg: err.Error()}
	}
	tree := v.(map[string]any)
	if err := validateSettings(tree, func(key, msg string) error {
		line, col := lineCol(data, p.offsetOf(key))
		return &SettingsError{File: path, Line: line, Col: col, Key: key, Msg: msg}
	}); err != nil {
		return nil, err
	}
	return tree, nil
}

// posParser rebuilds a JSON document in nested form while recording the byte
// offset at which each value starts, keyed by its normalised dotted path.
type posParser struct {
	data []byte
	dec  *json.Decoder
	pos  map[string]int
}

// offsetOf returns where key's value starts or, for a missing key, where its
// nearest enclosing value does, so "required field missing" points at the
// object that lacks it.
func (p *posParser) offsetOf(key string) int {
	for {
		if off, ok := p.pos[key]; ok {
			return off
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			return p.pos[""]
		}
		key = key[:i]
	}
}

func (p *posParser) value(path string) (any, error) {
	// InputOffset is the end of the previous token; the value starts after
	// any whitespace and the ':' or ',' that the decoder consumes silently.
	p.pos[path] = skipSep(p.data, int(p.dec.InputOffset()))
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("unexpected token %v", kt)
				}
				segs := splitKey(key)
				if literalKeys[path] {
					segs = []string{key}
				}
				child, err := p.value(joinPath(path, segs...))
				if err != nil {
					return nil, err
				}
				setPath(obj, segs, child)
			}
			_, err := p.dec.Token() // '}'
			return obj, err
		case '[':
			arr := []any{}
			for i := 0; p.dec.More(); i++ {
				el, err := p.value(path + "[" + strconv.Itoa(i) + "]")
				if err != nil {
					return nil, err
				}
				arr = append(arr, el)
			}
			_, err := p.dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	default:
		return tok, nil
	}
}

// literalKeys are the objects whose keys are names, not setting paths: a
// model name such as "gpt-4.1" stays one key there.
var literalKeys = map[string]bool{"compaction.contextWindow": true}

// splitKey turns a dotted key into path segments. A key with an empty
// segment ("a..b", ".a") is kept literally: it cannot be a nested setting, and
// unknown keys are preserved rather than rejected.
func splitKey(key string) []string {
	segs := strings.Split(key, ".")
	for _, s := range segs {
		if s == "" {
			return []string{key}
		}
	}
	return segs
}

func joinPath(base string, segs ...string) string {
	parts := segs
	if base != "" {
		parts = append([]string{base}, segs...)
	}
	return strings.Join(parts, ".")
}

// setPath stores v at segs inside m, creating objects along the way; the
// value is merged like a later file would be, so "bash.x" and a later
// "bash": {...} in the same file combine instead of clobbering each other.
func setPath(m map[string]any, segs []string, v any) {
	for _, seg := range segs[:len(segs)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	last := segs[len(segs)-1]
	if dst, ok := m[last].(map[string]any); ok {
		if src, ok := v.(map[string]any); ok {
			mergeInto(dst, src)
			return
		}
	}
	m[last] = v
}

// deepCopy copies a parsed JSON value.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// mergeInto deep-merges src over dst: objects key by key, everything else
// (arrays included) replaced wholesale.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		setPath(dst, []string{k}, v)
	}
}

// validateSettings checks the types of known keys; fail builds the located
// error for a dotted key.
func validateSettings(tree map[string]any, fail func(key, msg string) error) error {
	object := func(parent map[string]any, key, path string) (map[string]any, error) {
		v, ok := parent[key]
		if !ok || v == nil {
			return nil, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fail(path, "expected object, got "+jsonKind(v))
		}
		return m, nil
	}
	str := func(parent map[string]any, key, path string) error {
		if v, ok := parent[key]; ok && v != nil {
			if _, ok := v.(string); !ok {
				return fail(path, "expected string, got "+jsonKind(v))
			}
		}
		return nil
	}

	bashObj, err := object(tree, "bash", "bash")
	if err != nil {
		return err
	}
	if v, ok := bashObj["virtualTerminal"]; ok && v != nil {
		if sv, _ := v.(string); sv != "on" && sv != "off" {
			return fail("bash.virtualTerminal", `must be "on" or "off", got `+jsonValue(v))
		}
	}
	if v, ok := bashObj["maxJobs"]; ok && v != nil {
		// 0 would refuse every job; a model that needs none just starts none.
		if n, ok := v.(float64); !ok || n != math.Trunc(n) || n < 1 || n > maxMaxJobs {
			return fail("bash.maxJobs", fmt.Sprintf("must be a whole number of jobs from 1 to %d, got %s", maxMaxJobs, jsonValue(v)))
		}
	}
	if v, ok := bashObj["stdin"]; ok && v != nil {
		if sv, _ := v.(string); sv != "terminal" && sv != "null" {
			return fail("bash.stdin", `must be "terminal" or "null", got `+jsonValue(v))
		}
	}
	if v, ok := bashObj["autoBackgroundSeconds"]; ok && v != nil {
		if n, ok := v.(float64); !ok || n < 0 || n > maxAutoBackgroundSeconds {
			return fail("bash.autoBackgroundSeconds", fmt.Sprintf("must be a number of seconds from 0 (never) to %d, got %s",
				maxAutoBackgroundSeconds, jsonValue(v)))
		}
	}

	if err := validateBashPatterns(bashObj, fail); err != nil {
		return err
	}

	bi, err := object(tree, "bashInterceptor", "bashInterceptor")
	if err != nil {
		return err
	}
	if v, ok := bi["enabled"]; ok && v != nil {
		if _, ok := v.(bool); !ok {
			return fail("bashInterceptor.enabled", "expected boolean, got "+jsonValue(v))
		}
	}
	if v, ok := bi["patterns"]; ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return fail("bashInterceptor.patterns", "expected array of objects, got "+jsonKind(v))
		}
		for i, el := range arr {
			base := "bashInterceptor.patterns[" + strconv.Itoa(i) + "]"
			obj, ok := el.(map[string]any)
			if !ok {
				return fail(base, "expected object, got "+jsonKind(el))
			}
			for _, f := range []string{"pattern", "flags", "tool", "message"} {
				fv, present := obj[f]
				if !present && f == "flags" {
					continue
				}
				if !present {
					return fail(base+"."+f, "required string is missing")
				}
				if _, ok := fv.(string); !ok {
					return fail(base+"."+f, "expected string, got "+jsonKind(fv))
				}
			}
			if obj["pattern"] == "" {
				return fail(base+".pattern", "must not be empty")
			}
		}
	}

	arts, err := object(tree, "artifacts", "artifacts")
	if err != nil {
		return err
	}
	if v, ok := arts["maxBytes"]; ok && v != nil {
		// A cap of 0 would keep nothing and a tiny one too little to
		// be worth a file, so both are refused rather than guessed at.
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) || n < bash.MinArtifactMaxBytes || n > maxArtifactMaxBytes {
			return fail("artifacts.maxBytes", fmt.Sprintf("must be a whole number of bytes from %d to %d, got %s",
				bash.MinArtifactMaxBytes, int64(maxArtifactMaxBytes), jsonValue(v)))
		}
	}

	shell, err := object(tree, "shell", "shell")
	if err != nil {
		return err
	}
	if err := str(shell, "path", "shell.path"); err != nil {
		return err
	}
	if err := str(shell, "prefix", "shell.prefix"); err != nil {
		return err
	}
	if v, ok := shell["scrubEnv"]; ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return fail("shell.scrubEnv", "expected array of strings, got "+jsonKind(v))
		}
		for i, el := range arr {
			key := "shell.scrubEnv[" + strconv.Itoa(i) + "]"
			p, ok := el.(string)
			if !ok {
				return fail(key, "expected string, got "+jsonKind(el))
			}
			if err := bash.ValidScrubPattern(p); err != nil {
				return fail(key, err.Error())
			}
		}
	}
	env, err := object(shell, "env", "shell.env")
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic: report the first bad key, not a random one
	for _, k := range keys {
		if _, ok := env[k].(string); !ok {
			return fail("shell.env."+k, "expected string, got "+jsonKind(env[k]))
		}
	}

	if err := validateCompaction(tree, fail); err != nil {
		return err
	}
	return validateSandbox(tree, fail)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonValue names the kind and, for scalars, shows the value, which is what a
// user needs to spot the typo.
func jsonValue(v any) string {
	switch v.(type) {
	case string, bool, float64:
		b, _ := json.Marshal(v)
		return jsonKind(v) + " " + string(b)
	}
	return jsonKind(v)
}

func skipSpace(data []byte, off int) int {
	for off < len(data) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n') {
		off++
	}
	return off
}

func skipSep(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// lineCol converts a byte offset to a 1-based line and character column, the
// form editors jump to.
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}

// maxSettingsBytes bounds a settings file: a bigger one is no one's
// settings.
const maxSettingsBytes = 4 << 20

// readSettingsFile reads a settings file that must be a regular file
// (through links) of at most maxSettingsBytes: a FIFO or a device the
// model put in the project's place would block agentsh or never end.
func readSettingsFile(path string) ([]byte, error) {
	return xdg.ReadRegular(path, maxSettingsBytes, "a settings file")
}
