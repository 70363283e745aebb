package bash

import (
	"bytes"
	"path"
	"sort"
	"strings"
	"sync"
)

// SessionState is the shell state of one agent session (SPEC §2.1, ours):
// its working directory (moved by the user's `!cd`), exported variables,
// functions, aliases and shell options. The engine captures it after runs
// that may change it and gives it to every shell of the session (a replaced,
// a parallel or a model's shell) before that shell's next run, so a cancel,
// a timeout or a broken shell loses nothing of it. Safe for concurrent use.
type SessionState struct {
	mu       sync.Mutex
	version  uint64 // 0 = nothing captured yet: shells keep what they start with
	cwd      string
	env      map[string]string
	funcs    string // declare -f text
	aliases  string // alias lines
	options  string // shopt -p and set -o lines that may be replayed
	funcList []string
	// blind are the scrub patterns of the shell that made the last capture:
	// it could not see those names, so applying the state leaves them as
	// the target shell has them.
	blind []string
}

// NewSessionState starts a state in dir; nothing else is known until the
// first capture.
func NewSessionState(dir string) *SessionState {
	return &SessionState{cwd: dir}
}

// Cwd is the session's working directory.
func (st *SessionState) Cwd() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cwd
}

// Version counts captures; a shell that applied version v is current until
// the next capture.
func (st *SessionState) Version() uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.version
}

// Env returns a copy of the captured exported variables (nil before the
// first capture).
func (st *SessionState) Env() map[string]string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.env == nil {
		return nil
	}
	out := make(map[string]string, len(st.env))
	for k, v := range st.env {
		out[k] = v
	}
	return out
}

// Functions returns the names of the captured functions.
func (st *SessionState) Functions() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]string(nil), st.funcList...)
}

// CaptureMode says what a run's end records into its session state.
type CaptureMode int

const (
	// CaptureNone leaves the state as it is (a command that cannot change it).
	CaptureNone CaptureMode = iota
	// CaptureShell records variables, functions, aliases and options, not
	// the directory: a model's `cd` ends with its call (SPEC §1.3).
	CaptureShell
	// CaptureAll also records the directory: the user's `!cd` moves the
	// session.
	CaptureAll
)

// neverCarried are names the engine owns or bash manages itself.
func neverCarried(name string) bool {
	switch name {
	case markerVar, "_", "PWD", "OLDPWD", "SHLVL", "BASHOPTS", "SHELLOPTS", "BASH_ENV", "ENV", "PROMPT_COMMAND":
		return true
	}
	return strings.HasPrefix(name, "__agentsh")
}

// unsafeOptions are never replayed into another shell: they would stop it
// (errexit, noexec, onecmd), or belong to an interactive terminal.
var unsafeOptions = map[string]bool{
	"errexit": true, "noexec": true, "onecmd": true, "restricted": true, "monitor": true,
	"history": true, "histexpand": true, "emacs": true, "vi": true, "restricted_shell": true,
	"login_shell": true, "extdebug": true, "functrace": true, "progcomp_alias": false,
}

// update applies a dump written by __agentsh_dump (see the init script):
// NUL-separated records P cwd, X name value…, F functions, A aliases, O
// options. It returns false when the dump is malformed.
func (st *SessionState) update(dump []byte, mode CaptureMode, scrub []string, cfgEnv map[string]string) bool {
	fields := bytes.Split(dump, []byte{0})
	var cwd, funcs, aliases, opts string
	env := map[string]string{}
	var sawEnd bool
	for i := 0; i < len(fields); {
		switch string(fields[i]) {
		case "P":
			if i+1 >= len(fields) {
				return false
			}
			cwd = string(fields[i+1])
			i += 2
		case "X":
			if i+2 >= len(fields) {
				return false
			}
			// A variable with the value shell.env gives it comes from the
			// settings, not from a command: the settings stay in charge of
			// it (an edit of shell.env applies from the next command).
			if name, val := string(fields[i+1]), string(fields[i+2]); !neverCarried(name) {
				if cv, ok := cfgEnv[name]; !ok || cv != val {
					env[name] = val
				}
			}
			i += 3
		case "F", "A", "O":
			if i+1 >= len(fields) {
				return false
			}
			switch string(fields[i]) {
			case "F":
				funcs = string(fields[i+1])
			case "A":
				aliases = string(fields[i+1])
			case "O":
				opts = filterOptions(string(fields[i+1]))
			}
			i += 2
		case "Z":
			sawEnd = true
			i = len(fields)
		case "":
			i++
		default:
			return false
		}
	}
	if !sawEnd {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	// A scrubbed (model's) shell did not see the secrets: keep what the
	// state knew of them.
	for k, v := range st.env {
		if _, ok := env[k]; !ok && Scrubbed(k, scrub) {
			env[k] = v
		}
	}
	st.blind = append([]string(nil), scrub...)
	st.version++
	if mode == CaptureAll && cwd != "" {
		st.cwd = cwd
	}
	st.env, st.funcs, st.aliases, st.options = env, funcs, aliases, opts
	st.funcList = functionNames(funcs)
	return true
}

// filterOptions keeps the `shopt -s/-u name` and `set -o/+o name` lines of
// options that are safe to replay.
func filterOptions(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || (f[0] != "shopt" && f[0] != "set") || unsafeOptions[f[2]] {
			continue
		}
		if (f[0] == "shopt" && f[1] != "-s" && f[1] != "-u") || (f[0] == "set" && f[1] != "-o" && f[1] != "+o") {
			continue
		}
		b.WriteString("\\builtin ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// functionNames reads the names off `declare -f` output ("name () " lines).
func functionNames(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutSuffix(line, " () "); ok && name != "" && !strings.ContainsAny(name, " \t") {
			out = append(out, name)
		}
	}
	return out
}

// Scrubbed reports whether name matches one of the glob patterns (used for
// the secrets kept from the model's shells).
func Scrubbed(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// applyScript is the bash text that makes a shell's state the captured one.
// It runs inside the prologue function, so its helpers are local. Names
// matching scrub are left out (a model's shell never receives secrets from
// the user's), and the target's shell.env names are never unset. With cwd
// set, it also changes directory.
func (st *SessionState) applyScript(scrub []string, withCwd bool, cfgEnv map[string]string) []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	var b []byte
	b = append(b, "\\builtin local -a __agentsh_v; \\builtin local -A __agentsh_k; \\builtin local __agentsh_i\n"...)
	names := make([]string, 0, len(st.env))
	for k := range st.env {
		if !Scrubbed(k, scrub) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if st.env != nil {
		b = append(b, "__agentsh_k=("...)
		for _, k := range names {
			b = append(b, '[')
			b = appendShellQuoted(b, k)
			b = append(b, "]=1 "...)
		}
		b = append(b, ")\n"...)
		// Unexport what the state does not have (a `!unset FOO`), then
		// export what it has.
		b = append(b, `\builtin compgen -e >|"$__agentsh_d/n" 2>/dev/null; \builtin mapfile -t __agentsh_v <"$__agentsh_d/n"
for __agentsh_i in "${__agentsh_v[@]}"; do [[ -n ${__agentsh_k[$__agentsh_i]-} || $__agentsh_i == @(__agentsh*|AGENTSH_SHELL_MARK|_|PWD|OLDPWD|SHLVL|BASHOPTS|SHELLOPTS`...)
		for _, p := range st.blind {
			if !strings.ContainsAny(p, "|()'\"\\ \t\n$`") {
				b = append(b, '|')
				b = append(b, p...)
			}
		}
		for k := range cfgEnv { // the target's own shell.env
			if validName(k) {
				b = append(b, '|')
				b = append(b, k...)
			}
		}
		b = append(b, `) ]] || \builtin unset -v -- "$__agentsh_i" 2>/dev/null; done
`...)
		for _, k := range names {
			if !validName(k) {
				continue
			}
			b = append(b, "\\builtin export "...)
			b = append(b, k...)
			b = append(b, '=')
			b = appendShellQuoted(b, st.env[k])
			b = append(b, " 2>/dev/null\n"...)
		}
		// Functions: drop those the state does not have, define the rest.
		b = append(b, "\\builtin compgen -A function >|\"$__agentsh_d/n\" 2>/dev/null; \\builtin mapfile -t __agentsh_v <\"$__agentsh_d/n\"; __agentsh_k=(); "...)
		for _, f := range st.funcList {
			b = append(b, "__agentsh_k["...)
			b = appendShellQuoted(b, f)
			b = append(b, "]=1; "...)
		}
		b = append(b, "\nfor __agentsh_i in \"${__agentsh_v[@]}\"; do [[ -n ${__agentsh_k[$__agentsh_i]-} || $__agentsh_i == __agentsh* ]] || \\builtin unset -f -- \"$__agentsh_i\"; done\n"...)
		b = append(b, st.funcs...)
		b = append(b, "\nfor __agentsh_i in \"${!BASH_ALIASES[@]}\"; do [[ $__agentsh_i == __ar ]] || \\builtin unalias -- \"$__agentsh_i\"; done\n"...)
		b = append(b, st.aliases...)
		b = append(b, '\n')
		b = append(b, st.options...)
	}
	if withCwd && st.cwd != "" {
		b = append(b, "\\builtin cd -- "...)
		b = appendShellQuoted(b, st.cwd)
		b = append(b, " 2>/dev/null\n"...)
	}
	return b
}

// validName reports whether name can be exported by bash.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
