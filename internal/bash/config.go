package bash

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"agentsh/internal/pty"
	"agentsh/internal/sandbox"
)

// ShellConfig says which shell runs commands and how. Two runs share a cached
// session only when their whole ShellConfig (and session key) is equal.
type ShellConfig struct {
	Path         string            // absolute path of the shell (bash)
	Prefix       string            // optional command prefix: "<prefix> <command>"
	Env          map[string]string // extra environment for the shell
	SnapshotPath string            // rc snapshot sourced once at session start; "" = none
	// LazySnapshot takes the rc snapshot (GetOrCreateSnapshot) on the
	// first run instead of at start-up, when SnapshotPath is "": the TUI
	// draws its first frame without waiting for the user's rc files.
	LazySnapshot bool
	// ScrubEnv holds glob patterns (path.Match syntax, case-sensitive like
	// the names themselves): inherited variables whose names match one are
	// not passed to the shell. The model's shells get DefaultScrubEnv (or
	// the shell.scrubEnv setting); the user's own `!` commands get none.
	// Entries of Env are explicit configuration and are always kept.
	ScrubEnv []string
	// TerminalStdin gives commands a terminal held by agentsh as stdin
	// instead of /dev/null (spec §2.1, setting bash.stdin): a prompt waits
	// and a run blocked reading it can become a job (RunOptions.Jobs).
	TerminalStdin bool
	// Attended marks the shell of the user's `!` commands on a terminal
	// the user watches (RunOptions.Terminal): it keeps the inherited
	// pagers, editors and prompts instead of pty.NonInteractiveEnv, which
	// exists for unattended runs (spec §3), so `git log` pages and
	// `git commit` opens the user's editor.
	Attended bool
	// Sandbox confines the shell and everything it starts; nil
	// or Mode off: none. The user's own `!` commands are never confined.
	Sandbox *sandbox.Policy
}

// DefaultScrubEnv is what a model's shells do not inherit unless the
// shell.scrubEnv setting says otherwise: the provider keys agentsh itself
// reads (named although the patterns cover them, so they stay listed if the
// patterns change) and names that usually carry credentials. The provider
// endpoints (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST) are kept: they
// are addresses, and a command may need them to reach a local model server.
func DefaultScrubEnv() []string {
	return []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY",
		"*_API_KEY", "*_TOKEN", "*SECRET*", "*PASSWORD*"}
}

// ValidScrubPattern reports whether p is a usable ScrubEnv pattern.
func ValidScrubPattern(p string) error {
	if p == "" {
		return fmt.Errorf("empty pattern")
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("bad pattern %q: %w", p, err)
	}
	return nil
}

// scrubbed reports whether the variable name matches one of c.scrub().
func (c ShellConfig) scrubbed(name string) bool {
	return Scrubbed(name, c.scrub())
}

// scrub is ScrubEnv, plus, for a confined shell, the variables naming the
// sockets of outside servers (sandbox.SocketEnv: the view masks the
// sockets, and the state a confined shell captures must not read their
// absence as an unset).
func (c ShellConfig) scrub() []string {
	if !c.Sandbox.Enabled() {
		return c.ScrubEnv
	}
	return append(append([]string(nil), c.ScrubEnv...), sandbox.SocketEnv...)
}

// inheritedEnv is agentsh's own environment minus the scrubbed names: the
// base every shell of this config starts from.
func (c ShellConfig) inheritedEnv() []string {
	env := os.Environ()
	if len(c.scrub()) == 0 {
		return env
	}
	out := env[:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !c.scrubbed(k) {
			out = append(out, kv)
		}
	}
	return out
}

// env is the shell's environment: the inherited one, hardened unless the
// shell is Attended, then Env and extra.
func (c ShellConfig) env(extra map[string]string) []string {
	if c.Attended {
		return pty.MergeEnv(c.inheritedEnv(), c.Env, extra)
	}
	return pty.BuildEnv(c.inheritedEnv(), c.Env, extra)
}

// ResolveShell picks the shell binary: the configured path if given, else
// $SHELL when it is bash, else bash from PATH or the usual places.
func ResolveShell(configured string) (string, error) {
	if configured != "" {
		p, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("custom shell path not found: %s", configured)
		}
		return filepath.Abs(p)
	}
	if sh := os.Getenv("SHELL"); sh != "" && strings.Contains(filepath.Base(sh), "bash") {
		if st, err := os.Stat(sh); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return sh, nil
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return filepath.Abs(p)
	}
	for _, p := range []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no bash found on PATH")
}

// cacheKey serializes the config and session key; env entries are sorted so
// map order never splits the cache.
func (c ShellConfig) cacheKey(sessionKey string) string {
	var b strings.Builder
	b.WriteString(sessionKey)
	b.WriteByte('\n')
	b.WriteString(c.Path)
	b.WriteByte('\n')
	b.WriteString(c.Prefix)
	b.WriteByte('\n')
	b.WriteString(c.SnapshotPath)
	if c.TerminalStdin {
		b.WriteString("\nstdin:terminal")
	}
	if c.Attended {
		b.WriteString("\nattended")
	}
	b.WriteString("\nsandbox:")
	b.WriteString(c.Sandbox.Key())
	// Scrubbed and unscrubbed shells are never shared: the difference is
	// the point. Quoting keeps the list unambiguous.
	b.WriteString("\nscrub:")
	for _, p := range c.ScrubEnv {
		b.WriteString(strconv.Quote(p))
	}
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte('\n')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(c.Env[k])
	}
	return b.String()
}
