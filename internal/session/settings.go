package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"agentsh/internal/bash"
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
	ShellScrubEnv       []string             // shell.scrubEnv: names the model's shells do not inherit (bash.DefaultScrubEnv unless configured; [] = none)
	Raw                 map[string]any       // merged tree from the files (nested form, no env overrides), for keys not modelled yet
	Sources             []string             // files that were loaded, in merge order
}

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
	return filepath.Join(ConfigDir(), "settings.json")
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
func LoadSettingsFrom(globalPath, projectPath string) (*Settings, error) {
	s := &Settings{VirtualTerminal: "off", ShellScrubEnv: bash.DefaultScrubEnv(), Raw: map[string]any{}}
	paths := []string{globalPath}
	if projectPath != "" && (globalPath == "" || filepath.Clean(projectPath) != filepath.Clean(globalPath)) {
		paths = append(paths, projectPath)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("settings: %w", err)
		}
		tree, err := parseSettingsFile(p, data)
		if err != nil {
			return nil, err
		}
		mergeInto(s.Raw, tree)
		s.Sources = append(s.Sources, p)
	}
	s.applyRaw()
	if v := os.Getenv(ShellPrefixEnv); v != "" {
		s.ShellPrefix = v
	}
	return s, nil
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
	return nil
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
