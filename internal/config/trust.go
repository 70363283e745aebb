package config

// Project trust: a project's .agentsh/settings.json lies in the
// workspace the model may write, so the keys that would loosen the user's
// own settings apply only once the user trusts that folder for exactly
// those values. The user's answers live in agentsh's config folder
// (TrustedFoldersPath), out of the model's reach (sandbox.denyRead).
// docs/decisions/0013-settings-trust.md.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"agentsh/internal/bash"
	"agentsh/internal/sandbox"
	"agentsh/internal/xdg"
)

// Loosening is one value of a project file that is looser than the user's
// own settings: Key as settings spell it, Value as JSON.
type Loosening struct {
	Key   string
	Value string
}

// String is "key: value", as the trust question and the refusal list it,
// with control and format characters escaped (Printable): the model wrote
// them.
func (l Loosening) String() string { return Printable(l.Key + ": " + l.Value) }

// Printable is s with its control and format characters, and bytes that
// are no UTF-8, written as Go escapes (\r, \x1b, \u202e): text the model
// wrote that agentsh shows the user (a settings key, a command to
// approve) must not move the cursor, erase a line or reorder the rest.
func Printable(s string) string {
	if !strings.ContainsFunc(s, disguising) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[0])
		case disguising(r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// disguising is a rune shown as an escape by Printable.
func disguising(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError ||
		r == '\u2028' || r == '\u2029' // a line or paragraph break to some terminals, to bash a letter
}

// ProjectTrust is what a project file loosens and whether the user
// trusts the folder for it.
type ProjectTrust struct {
	Folder  string      // the project folder, absolute
	File    string      // its settings file
	Loosens []Loosening // the looser values, in a fixed order
	Hash    string      // identifies Loosens: trust is given to this set
	Trusted bool        // the loosening values apply
}

// Keys is the loosening keys in a few words ("yolo, sandbox.mode, shell.env.PATH").
func (p *ProjectTrust) Keys() string {
	keys := make([]string, 0, len(p.Loosens))
	for _, l := range p.Loosens {
		if k := Printable(l.Key); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ", ")
}

// UntrustedError refuses a project file that loosens the user's settings
// in a mode where no one is asked (print, json, RPC, exec).
type UntrustedError struct{ Project *ProjectTrust }

// Error names the file, what it loosens and the two ways out.
func (e *UntrustedError) Error() string {
	vals := make([]string, 0, len(e.Project.Loosens))
	for _, l := range e.Project.Loosens {
		vals = append(vals, l.String())
	}
	return fmt.Sprintf("%s loosens your own settings (%s) and this folder is not trusted: "+
		"start agentsh in %s to answer its trust question, or pass --trust-project to apply it for this run",
		e.Project.File, strings.Join(vals, "; "), e.Project.Folder)
}

// UntrustedNotice is the one line the TUI shows when the user did not
// trust the folder: what is ignored, and that the rest applies.
func UntrustedNotice(p *ProjectTrust) string {
	return "Folder not trusted: ignoring " + p.Keys() + " from " + p.File + " (the rest of it applies)."
}

// UntrustedChangeNotice tells that the project file changed during the
// session to loosen what the folder is not trusted for, and that the
// change is ignored until the user trusts it.
func UntrustedChangeNotice(p *ProjectTrust) string {
	return p.File + " changed to loosen " + p.Keys() + ", which this folder is not trusted for: ignored"
}

// TrustedFoldersPath is the file of the user's trust answers and
// "always outside" rules: ConfigDir()/trusted-folders.json.
func TrustedFoldersPath() string { return filepath.Join(xdg.ConfigDir(), "trusted-folders.json") }

// trustFile is trusted-folders.json.
type trustFile struct {
	Folders map[string]*folderRecord `json:"folders"`
}

// folderRecord is what the user decided for one folder.
type folderRecord struct {
	// Trusted is the hash of the loosening values the user trusted
	// (ProjectTrust.Hash); another set is asked about again.
	Trusted string `json:"trusted,omitempty"`
	// Outside are command prefixes that run outside the sandbox without
	// asking: the sandbox question answered "always".
	Outside []string `json:"outside,omitempty"`
}

// trustMu serializes this process's edits of the file (each is a read,
// a change and an atomic rename).
var trustMu sync.Mutex

func readTrustFile(path string) (*trustFile, error) {
	tf := &trustFile{Folders: map[string]*folderRecord{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(bytes.TrimSpace(data)) == 0) {
		return tf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trusted folders: %w", err)
	}
	if err := json.Unmarshal(data, tf); err != nil {
		return nil, fmt.Errorf("trusted folders: %s: %w", path, err)
	}
	if tf.Folders == nil {
		tf.Folders = map[string]*folderRecord{}
	}
	return tf, nil
}

// editTrustFile applies edit to the record of folder and writes the file
// (0600, in a 0700 folder: it is the user's alone).
func editTrustFile(folder string, edit func(*folderRecord) error) error {
	trustMu.Lock()
	defer trustMu.Unlock()
	path := TrustedFoldersPath()
	tf, err := readTrustFile(path)
	if err != nil {
		return err
	}
	key := folderKey(folder)
	rec := tf.Folders[key]
	if rec == nil {
		rec = &folderRecord{}
	}
	if err := edit(rec); err != nil {
		return err
	}
	if rec.Trusted == "" && len(rec.Outside) == 0 {
		delete(tf.Folders, key)
	} else {
		tf.Folders[key] = rec
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return fmt.Errorf("trusted folders: %w", err)
	}
	if err := replaceFile(path, append(data, '\n'), 0o700, 0o600); err != nil {
		return fmt.Errorf("trusted folders: %w", err)
	}
	return nil
}

// folderKey is the absolute, clean form of folder: the file's key.
func folderKey(folder string) string {
	if abs, err := filepath.Abs(folder); err == nil {
		return abs
	}
	return filepath.Clean(folder)
}

// folderRecordOf reads the record of folder; a missing or unreadable
// file trusts nothing.
func folderRecordOf(folder string) folderRecord {
	tf, err := readTrustFile(TrustedFoldersPath())
	if err != nil {
		return folderRecord{}
	}
	if rec := tf.Folders[folderKey(folder)]; rec != nil {
		return *rec
	}
	return folderRecord{}
}

// storedTrust reports whether the user trusted folder for the loosening
// set hash.
func storedTrust(folder, hash string) bool {
	return hash != "" && folderRecordOf(folder).Trusted == hash
}

// TrustFolder records that the user trusts folder for the loosening set
// hash (ProjectTrust.Hash).
func TrustFolder(folder, hash string) error {
	return editTrustFile(folder, func(r *folderRecord) error { r.Trusted = hash; return nil })
}

// OutsideRules are the user's "always" answers for folder: commands that
// run outside the sandbox without asking, as allow-style rules (every
// simple command must match one, and nothing else may change what runs;
// bash.CheckOutside).
func OutsideRules(folder string) []bash.PatternRule {
	rec := folderRecordOf(folder)
	rules := make([]bash.PatternRule, 0, len(rec.Outside))
	for _, p := range rec.Outside {
		rules = append(rules, bash.PatternRule{Action: bash.PatternAllow, Pattern: p})
	}
	return rules
}

// SaveOutsideRule adds prefix to folder's "always outside" commands.
func SaveOutsideRule(folder, prefix string) error {
	return editTrustFile(folder, func(r *folderRecord) error {
		if !slices.Contains(r.Outside, prefix) {
			r.Outside = append(r.Outside, prefix)
		}
		return nil
	})
}

// RemoveOutsideRule takes prefix out of folder's "always outside" commands.
func RemoveOutsideRule(folder, prefix string) error {
	return editTrustFile(folder, func(r *folderRecord) error {
		i := slices.Index(r.Outside, prefix)
		if i < 0 {
			return fmt.Errorf("%s has no rule %q any more", TrustedFoldersPath(), prefix)
		}
		r.Outside = slices.Delete(r.Outside, i, i+1)
		return nil
	})
}

// trustFunc decides whether a folder is trusted for a loosening set.
type trustFunc func(folder, hash string) bool

// strictness orders the sandbox modes: a lower one is looser.
func strictness(m sandbox.Mode) int {
	switch m {
	case sandbox.Off:
		return 0
	case sandbox.ReadOnly:
		return 2
	}
	return 1
}

// missing lists the entries of want that have is not.
func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// loosenings compares the settings with the project file (merged) to the
// user's own (global) and lists what the project made looser; projAllow
// are the project's allow rules.
func loosenings(user, merged *Settings, projAllow []bash.PatternRule) []Loosening {
	var out []Loosening
	add := func(key string, v any) { out = append(out, Loosening{Key: key, Value: jsonText(v)}) }
	us, ms := user.Sandbox, merged.Sandbox
	if ms.Yolo && !us.Yolo {
		add("yolo", true)
	}
	if strictness(ms.Mode) < strictness(us.Mode) {
		add("sandbox.mode", string(ms.Mode))
	}
	if ms.Network && !us.Network {
		add("sandbox.network", "on")
	}
	if len(missing(ms.WritablePaths, us.WritablePaths)) > 0 {
		add("sandbox.writablePaths", nonNil(ms.WritablePaths))
	}
	udeny, mdeny := us.DenyRead, ms.DenyRead
	if udeny == nil {
		udeny = DefaultDenyRead()
	}
	if mdeny == nil {
		mdeny = DefaultDenyRead()
	}
	if len(missing(udeny, mdeny)) > 0 {
		add("sandbox.denyRead", nonNil(ms.DenyRead))
	}
	for _, r := range projAllow {
		out = append(out, Loosening{Key: "bash.patterns", Value: r.String()})
	}
	if merged.ShellPath != user.ShellPath {
		add("shell.path", merged.ShellPath)
	}
	if merged.ShellPrefix != user.ShellPrefix {
		add("shell.prefix", merged.ShellPrefix)
	}
	var envKeys []string
	for k, v := range merged.ShellEnv {
		if uv, ok := user.ShellEnv[k]; !ok || uv != v {
			envKeys = append(envKeys, k)
		}
	}
	slices.Sort(envKeys)
	for _, k := range envKeys {
		add("shell.env."+k, merged.ShellEnv[k])
	}
	if merged.ShellEnv == nil && user.ShellEnv != nil {
		add("shell.env", nil)
	}
	if len(missing(user.ShellScrubEnv, merged.ShellScrubEnv)) > 0 {
		add("shell.scrubEnv", nonNil(merged.ShellScrubEnv))
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// loosenHash identifies a loosening set (the folder is the file's key).
func loosenHash(ls []Loosening) string {
	h := sha256.New()
	for _, l := range ls {
		fmt.Fprintf(h, "%s\x00%s\n", l.Key, l.Value)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// withdraw puts the user's own values back for what the project file
// loosened, when the folder is not trusted for it.
func withdraw(merged, user *Settings, ls []Loosening) {
	for _, l := range ls {
		switch key := l.Key; {
		case key == "yolo":
			merged.Sandbox.Yolo = user.Sandbox.Yolo
		case key == "sandbox.mode":
			merged.Sandbox.Mode = user.Sandbox.Mode
		case key == "sandbox.network":
			merged.Sandbox.Network = user.Sandbox.Network
		case key == "sandbox.writablePaths":
			merged.Sandbox.WritablePaths = user.Sandbox.WritablePaths
		case key == "sandbox.denyRead":
			merged.Sandbox.DenyRead = user.Sandbox.DenyRead
		case key == "shell.path":
			merged.ShellPath = user.ShellPath
		case key == "shell.prefix":
			merged.ShellPrefix = user.ShellPrefix
		case key == "shell.env":
			merged.ShellEnv = user.ShellEnv
		case strings.HasPrefix(key, "shell.env."):
			k := strings.TrimPrefix(key, "shell.env.")
			if v, ok := user.ShellEnv[k]; ok {
				merged.ShellEnv[k] = v
			} else {
				delete(merged.ShellEnv, k)
			}
		case key == "shell.scrubEnv":
			merged.ShellScrubEnv = user.ShellScrubEnv
		}
	}
	// The project's allow rules go; its deny and ask rules stay.
	kept := merged.BashPatterns[:0:0]
	for i, r := range merged.BashPatterns {
		if i >= len(user.BashPatterns) && r.Action == bash.PatternAllow {
			continue
		}
		kept = append(kept, r)
	}
	merged.BashPatterns = kept
	merged.setRawPatterns()
	for _, l := range ls {
		if l.Key != "bash.patterns" {
			restoreRaw(merged.Raw, user.Raw, strings.Split(l.Key, "."))
		}
	}
}

// restoreRaw sets the value at path in dst to src's (removed when src has
// none), so Lookup agrees with the typed fields.
func restoreRaw(dst, src map[string]any, path []string) {
	for _, seg := range path[:len(path)-1] {
		d, ok := dst[seg].(map[string]any)
		if !ok {
			return
		}
		dst = d
		src, _ = src[seg].(map[string]any)
	}
	last := path[len(path)-1]
	if v, ok := src[last]; ok {
		dst[last] = v
	} else {
		delete(dst, last)
	}
}

// setRawPatterns makes Raw's bash.patterns the rules in effect.
func (s *Settings) setRawPatterns() {
	b, _ := s.Raw["bash"].(map[string]any)
	if len(s.BashPatterns) == 0 {
		if b != nil {
			delete(b, "patterns")
		}
		return
	}
	if b == nil {
		b = map[string]any{}
		s.Raw["bash"] = b
	}
	arr := make([]any, 0, len(s.BashPatterns))
	for _, r := range s.BashPatterns {
		arr = append(arr, map[string]any{string(r.Action): r.Pattern})
	}
	b["patterns"] = arr
}
