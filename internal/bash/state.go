package bash

import (
	"bytes"
	"path"
	"sort"
	"strings"
	"sync"
)

// SessionState is the shell state of one agent session (spec §2.1, ours):
// its working directory (moved by the user's `!cd`), exported variables,
// functions, aliases and shell options. The engine captures it after runs
// that may change it and gives it to every shell of the session (a replaced,
// a parallel or a model's shell) before that shell's next run, so a cancel,
// a timeout or a broken shell loses nothing of it. Safe for concurrent use.
//
// It has two layers: the user's, captured from the user's own shells
// (`!` commands, an RPC client's bash), and the model's, what the model's
// shells changed on top of it. The model's shells get both
// (ModelView); every other shell gets the user's layer only (UserView):
// nothing the model defines (a function named like a command, an alias,
// PATH, LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND, PYTHONPATH, options) runs in
// a shell outside the sandbox. No list of "variables that decide what
// runs" could be complete, so no variable of the model's crosses, plain
// data included.
type SessionState struct {
	mu      sync.Mutex
	userVer uint64 // captures into the user's layer; 0 = none yet: shells keep what they start with
	ver     uint64 // captures into either layer
	cwd     string
	user    *layer // never changed once made: a shell keeps the one it applied (shellSession.base)
	// model is what the model's shells changed on top of the user's
	// layer: modelSet's entries replace or add, modelUnset's remove.
	modelSet, modelUnset *layer
	// blind are the scrub patterns of the shell that made the user's
	// layer's last capture: it could not see those names, so applying the
	// state leaves them as the target shell has them.
	blind []string
}

// StateView says which layers of a SessionState a shell gets.
type StateView uint8

const (
	// UserView is the user's layer only: the user's `!` commands, an RPC
	// client's bash, the user's jobs, and a model's command the user let
	// run outside the sandbox. It is the zero value: a caller that says
	// nothing gets nothing of the model's.
	UserView StateView = iota
	// ModelView is the user's layer with the model's on top: the model's
	// own shells, which also capture into the model's layer.
	ModelView
)

// layer is one layer's state. Option keys are "shopt name" or "set name";
// their values are the lines that replay them.
type layer struct {
	env, funcs, aliases, options map[string]string
}

func newLayer() *layer {
	return &layer{env: map[string]string{}, funcs: map[string]string{}, aliases: map[string]string{}, options: map[string]string{}}
}

// NewSessionState starts a state in dir; nothing else is known until the
// first capture.
func NewSessionState(dir string) *SessionState {
	return &SessionState{cwd: dir, modelSet: newLayer(), modelUnset: newLayer()}
}

// Cwd is the session's working directory.
func (st *SessionState) Cwd() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cwd
}

// version is what a shell with view v compares to know whether it is
// behind: a shell that applied version x is current until the next
// capture that its view sees. 0 = nothing to apply.
func (st *SessionState) version(v StateView) uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if v == ModelView {
		return st.ver
	}
	return st.userVer
}

// Env returns a copy of the exported variables view v holds; nil when it
// holds nothing yet. Before the user's layer is captured, a ModelView's
// are start's ("NAME=value" entries: what a shell starts with) with the
// model's changes.
func (st *SessionState) Env(v StateView, start []string) map[string]string {
	st.mu.Lock()
	defer st.mu.Unlock()
	l := st.viewLocked(v)
	if l == nil {
		return nil
	}
	if st.user == nil {
		env := make(map[string]string, len(start))
		for _, kv := range start {
			if k, val, ok := strings.Cut(kv, "="); ok {
				env[k] = val
			}
		}
		for k := range st.modelUnset.env {
			delete(env, k)
		}
		for k, val := range l.env {
			env[k] = val
		}
		return env
	}
	return l.env
}

// userMayChange reports whether a user's command could change the user's
// layer: always before that layer is first captured (what the shell
// started with, its rc's functions named like programs included, is not
// known yet), else MayChangeState with the layer's functions and aliases
// as the names that are not programs.
func (st *SessionState) userMayChange(command string) bool {
	st.mu.Lock()
	if st.userVer == 0 || st.user == nil {
		st.mu.Unlock()
		return true
	}
	names := make([]string, 0, len(st.user.funcs)+len(st.user.aliases))
	for k := range st.user.funcs {
		names = append(names, k)
	}
	for k := range st.user.aliases {
		names = append(names, k)
	}
	st.mu.Unlock()
	return MayChangeState(command, names)
}

// Functions returns the names of the functions view v holds.
func (st *SessionState) Functions(v StateView) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	l := st.viewLocked(v)
	if l == nil {
		return nil
	}
	return sortedKeys(l.funcs)
}

// ModelDefined returns those of names that the model's layer defines as a
// function or an alias of its own (not the user's): what a command would
// call in the model's shells but not in a shell with the user's state.
func (st *SessionState) ModelDefined(names []string) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for _, n := range names {
		_, f := st.modelSet.funcs[n]
		_, a := st.modelSet.aliases[n]
		if f || a {
			out = append(out, n)
		}
	}
	return out
}

// viewLocked is view v as one new layer; nil when nothing was captured
// into it yet. Before the user's layer is captured, a ModelView's is only
// the model's changes (modelSet; modelUnset removes), which go on top of
// what a shell has.
func (st *SessionState) viewLocked(v StateView) *layer {
	if st.ver == 0 || (v == UserView && st.userVer == 0) {
		return nil
	}
	out := newLayer()
	if st.user != nil {
		copyLayer(out, st.user)
	}
	if v == ModelView {
		// The user's rc definitions of common tools stay the user's
		// (commonTools, rcHeldBack): the model's shells run the standard
		// ones. What the user defines with `!` reaches the model.
		for _, name := range commonTools {
			if v, ok := out.funcs[name]; ok && rcHeldBack("f", name, v) {
				delete(out.funcs, name)
			}
			if v, ok := out.aliases[name]; ok && rcHeldBack("a", name, v) {
				delete(out.aliases, name)
			}
		}
		for k := range st.modelUnset.env {
			delete(out.env, k)
		}
		for k := range st.modelUnset.funcs {
			delete(out.funcs, k)
		}
		for k := range st.modelUnset.aliases {
			delete(out.aliases, k)
		}
		copyLayer(out, st.modelSet)
	}
	return out
}

func copyLayer(dst, src *layer) {
	for k, v := range src.env {
		dst.env[k] = v
	}
	for k, v := range src.funcs {
		dst.funcs[k] = v
	}
	for k, v := range src.aliases {
		dst.aliases[k] = v
	}
	for k, v := range src.options {
		dst.options[k] = v
	}
}

// CaptureMode says what a run's end records into its session state.
type CaptureMode int

const (
	// CaptureNone leaves the state as it is (a command that cannot change it).
	CaptureNone CaptureMode = iota
	// CaptureShell records variables, functions, aliases and options, not
	// the directory: a model's `cd` ends with its call (spec §1.3).
	CaptureShell
	// CaptureAll also records the directory: the user's `!cd` moves the
	// session.
	CaptureAll
)

// neverCarried are names the engine owns or bash manages itself, and
// those that make every bash run a file or a command of theirs.
func neverCarried(name string) bool {
	switch name {
	case markerVar, "_", "PWD", "OLDPWD", "SHLVL", "BASHOPTS", "SHELLOPTS", "BASH_ENV", "ENV", "PROMPT_COMMAND":
		return true
	}
	return strings.HasPrefix(name, "__agentsh")
}

// unsafeOptions are never replayed into another shell: they would stop it
// (errexit, noexec, onecmd), belong to an interactive terminal, or run the
// model's code around every command (extdebug, functrace).
var unsafeOptions = map[string]bool{
	"errexit": true, "noexec": true, "onecmd": true, "restricted": true, "monitor": true,
	"history": true, "histexpand": true, "emacs": true, "vi": true, "restricted_shell": true,
	"login_shell": true, "extdebug": true, "functrace": true, "progcomp_alias": false,
}

// optionNames are the names of a bash's shopt and set -o options, as its
// first full dump listed them (`shopt -p; set +o`, one write per line:
// bash's stdout is line buffered); its later dumps give only $BASHOPTS and
// $SHELLOPTS, the enabled ones, in one write.
type optionNames struct{ shopt, set []string }

// parseDump reads a dump written by __agentsh_dump (see the init script):
// NUL-separated records P cwd, X name value, f name text, a name value,
// O options (shopt -p and set +o lines, whose names it keeps in names) or
// o $BASHOPTS $SHELLOPTS (read with names), Z (the end). ok is false when
// it is malformed.
func parseDump(dump []byte, cfgEnv map[string]string, names *optionNames) (l *layer, cwd string, ok bool) {
	fields := bytes.Split(dump, []byte{0})
	l = newLayer()
	for i := 0; i < len(fields); {
		need := 0 // the record's fields after its tag
		switch string(fields[i]) {
		case "P", "O":
			need = 1
		case "X", "f", "a", "o":
			need = 2
		}
		if i+need >= len(fields) {
			return nil, "", false
		}
		switch string(fields[i]) {
		case "P":
			cwd = string(fields[i+1])
		case "X":
			// A variable with the value shell.env gives it comes from the
			// settings, not from a command: the settings stay in charge of
			// it (an edit of shell.env applies from the next command).
			if name, val := string(fields[i+1]), string(fields[i+2]); !neverCarried(name) {
				if cv, ok := cfgEnv[name]; !ok || cv != val {
					l.env[name] = val
				}
			}
		case "f":
			l.funcs[string(fields[i+1])] = string(fields[i+2])
		case "a":
			l.aliases[string(fields[i+1])] = string(fields[i+2])
		case "O":
			var seen optionNames
			for _, line := range strings.Split(string(fields[i+1]), "\n") {
				if f := strings.Fields(line); len(f) == 3 && f[0] == "shopt" {
					seen.shopt = append(seen.shopt, f[2])
				} else if len(f) == 3 && f[0] == "set" {
					seen.set = append(seen.set, f[2])
				}
				if k, ok := optionKey(line); ok {
					l.options[k] = "\\builtin " + line
				}
			}
			if names != nil && len(seen.shopt) > 0 {
				*names = seen
			}
		case "o":
			if names == nil || len(names.shopt) == 0 {
				return nil, "", false
			}
			set := func(list []byte) map[string]bool {
				m := map[string]bool{}
				for _, n := range strings.Split(string(list), ":") {
					m[n] = true
				}
				return m
			}
			shoptOn, setOn := set(fields[i+1]), set(fields[i+2])
			add := func(line string) {
				if k, ok := optionKey(line); ok {
					l.options[k] = "\\builtin " + line
				}
			}
			for _, n := range names.shopt {
				if shoptOn[n] {
					add("shopt -s " + n)
				} else {
					add("shopt -u " + n)
				}
			}
			for _, n := range names.set {
				if setOn[n] {
					add("set -o " + n)
				} else {
					add("set +o " + n)
				}
			}
		case "Z":
			return l, cwd, true
		case "":
		default:
			return nil, "", false
		}
		i += need + 1
	}
	return nil, "", false
}

// update applies a dump. A UserView capture replaces the user's layer
// (and drops from the model's layer what the user has just changed: the
// latest writer of a name wins); a ModelView capture replaces the model's
// layer with what the dump differs from base, the user's layer that shell
// had applied (nil: none). It returns false when the dump is malformed.
func (st *SessionState) update(dump []byte, mode CaptureMode, v StateView, base *layer, scrub []string, cfgEnv map[string]string, names *optionNames) bool {
	l, cwd, ok := parseDump(dump, cfgEnv, names)
	if !ok {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ver++
	if v == ModelView {
		set, unset := newLayer(), newLayer()
		if base == nil {
			base = newLayer()
		}
		diff := func(now, was, set, unset map[string]string, skip func(string) bool) {
			for k, val := range now {
				if old, ok := was[k]; (!ok || old != val) && !skip(k) {
					set[k] = val
				}
			}
			for k := range was {
				if _, ok := now[k]; !ok && !skip(k) {
					unset[k] = ""
				}
			}
		}
		none := func(string) bool { return false }
		// A scrubbed shell cannot see those names: their absence is not
		// an unset, and what it set under them stays in that shell.
		diff(l.env, base.env, set.env, unset.env, func(k string) bool { return Scrubbed(k, scrub) })
		diff(l.funcs, base.funcs, set.funcs, unset.funcs, none)
		diff(l.aliases, base.aliases, set.aliases, unset.aliases, none)
		diff(l.options, base.options, set.options, map[string]string{}, none)
		st.modelSet, st.modelUnset = set, unset
		return true
	}
	// A scrubbed shell did not see the secrets: keep what the state knew
	// of them. The first capture compares with the shell's own start.
	old := st.user
	if old == nil {
		old = base
	}
	if old == nil {
		old = newLayer()
	}
	for k, val := range old.env {
		if _, ok := l.env[k]; !ok && Scrubbed(k, scrub) {
			l.env[k] = val
		}
	}
	forget := func(now, was, set, unset map[string]string) {
		for k, val := range now {
			if o, ok := was[k]; !ok || o != val {
				delete(set, k)
				delete(unset, k)
			}
		}
		for k := range was {
			if _, ok := now[k]; !ok {
				delete(set, k)
				delete(unset, k)
			}
		}
	}
	forget(l.env, old.env, st.modelSet.env, st.modelUnset.env)
	forget(l.funcs, old.funcs, st.modelSet.funcs, st.modelUnset.funcs)
	forget(l.aliases, old.aliases, st.modelSet.aliases, st.modelUnset.aliases)
	forget(l.options, old.options, st.modelSet.options, st.modelUnset.options)
	st.user = l
	st.userVer++
	st.blind = append([]string(nil), scrub...)
	if mode == CaptureAll && cwd != "" {
		st.cwd = cwd
	}
	return true
}

// optionKey is "shopt name" or "set name" for a `shopt -s/-u name` or
// `set -o/+o name` line of an option that is safe to replay.
func optionKey(line string) (string, bool) {
	f := strings.Fields(line)
	if len(f) != 3 || unsafeOptions[f[2]] {
		return "", false
	}
	if (f[0] == "shopt" && (f[1] == "-s" || f[1] == "-u")) || (f[0] == "set" && (f[1] == "-o" || f[1] == "+o")) {
		return f[0] + " " + f[2], true
	}
	return "", false
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

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// applyScript is the bash text that makes a shell's state view v, and the
// user's layer it is made from (for the model's next capture to diff
// against). It runs inside the prologue function, so its helpers are
// local. Names matching scrub are left out (a model's shell never receives
// secrets from the user's), and the target's shell.env names are never
// unset. With cwd set, it also changes directory.
func (st *SessionState) applyScript(v StateView, scrub []string, withCwd bool, cfgEnv map[string]string) ([]byte, *layer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var b []byte
	b = append(b, "\\builtin local -a __agentsh_v; \\builtin local -A __agentsh_k; \\builtin local __agentsh_i\n"...)
	l := st.viewLocked(v)
	if l != nil && st.user == nil {
		b = st.appendModelChanges(b, scrub)
		l = nil
	}
	if l != nil {
		names := make([]string, 0, len(l.env))
		for k := range l.env {
			if !Scrubbed(k, scrub) {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		b = append(b, "__agentsh_k=("...)
		for _, k := range names {
			b = append(b, '[')
			b = appendShellQuoted(b, k)
			b = append(b, "]=1 "...)
		}
		b = append(b, ")\n"...)
		// Unexport what the state does not have (a `!unset FOO`), then
		// export what it has.
		b = append(b, `\builtin compgen -e >|"$__agentsh_d/a.e" 2>/dev/null; \builtin mapfile -t __agentsh_v <"$__agentsh_d/a.e"
for __agentsh_i in "${__agentsh_v[@]}"; do [[ -n ${__agentsh_k[$__agentsh_i]-} || $__agentsh_i == @(__agentsh*|AGENTSH_SHELL_MARK|_|PWD|OLDPWD|SHLVL|BASHOPTS|SHELLOPTS`...)
		for _, p := range append(append([]string(nil), st.blind...), scrub...) {
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
			b = appendShellQuoted(b, l.env[k])
			b = append(b, " 2>/dev/null\n"...)
		}
		// Functions: drop those the state does not have, define the rest.
		funcs := sortedKeys(l.funcs)
		b = append(b, "\\builtin compgen -A function >|\"$__agentsh_d/a.f\" 2>/dev/null; \\builtin mapfile -t __agentsh_v <\"$__agentsh_d/a.f\"; __agentsh_k=(); "...)
		for _, f := range funcs {
			b = append(b, "__agentsh_k["...)
			b = appendShellQuoted(b, f)
			b = append(b, "]=1; "...)
		}
		b = append(b, "\nfor __agentsh_i in \"${__agentsh_v[@]}\"; do [[ -n ${__agentsh_k[$__agentsh_i]-} || $__agentsh_i == __agentsh* ]] || \\builtin unset -f -- \"$__agentsh_i\"; done\n"...)
		for _, f := range funcs {
			b = append(b, l.funcs[f]...)
			b = append(b, '\n')
		}
		b = append(b, "for __agentsh_i in \"${!BASH_ALIASES[@]}\"; do [[ $__agentsh_i == __ar ]] || \\builtin unalias -- \"$__agentsh_i\"; done\n"...)
		for _, a := range sortedKeys(l.aliases) {
			b = append(b, "\\builtin alias -- "...)
			b = appendShellQuoted(b, a)
			b = append(b, '=')
			b = appendShellQuoted(b, l.aliases[a])
			b = append(b, '\n')
		}
		b = appendOptions(b, l.options)
	}
	if withCwd && st.cwd != "" {
		b = append(b, "\\builtin cd -- "...)
		b = appendShellQuoted(b, st.cwd)
		b = append(b, " 2>/dev/null\n"...)
	}
	return b, st.user
}

// appendModelChanges appends the model's layer as changes to a shell's own
// state: the view of a ModelView shell before the user's layer exists.
func (st *SessionState) appendModelChanges(b []byte, scrub []string) []byte {
	for _, k := range sortedKeys(st.modelUnset.env) {
		if validName(k) && !Scrubbed(k, scrub) {
			b = append(b, "\\builtin unset -v -- "...)
			b = append(b, k...)
			b = append(b, " 2>/dev/null\n"...)
		}
	}
	for _, k := range sortedKeys(st.modelSet.env) {
		if validName(k) && !Scrubbed(k, scrub) {
			b = append(b, "\\builtin export "...)
			b = append(b, k...)
			b = append(b, '=')
			b = appendShellQuoted(b, st.modelSet.env[k])
			b = append(b, " 2>/dev/null\n"...)
		}
	}
	for _, f := range sortedKeys(st.modelUnset.funcs) {
		b = append(b, "\\builtin unset -f -- "...)
		b = appendShellQuoted(b, f)
		b = append(b, '\n')
	}
	for _, f := range sortedKeys(st.modelSet.funcs) {
		b = append(append(b, st.modelSet.funcs[f]...), '\n')
	}
	for _, a := range sortedKeys(st.modelUnset.aliases) {
		b = append(b, "\\builtin unalias -- "...)
		b = appendShellQuoted(b, a)
		b = append(b, " 2>/dev/null\n"...)
	}
	for _, a := range sortedKeys(st.modelSet.aliases) {
		b = append(b, "\\builtin alias -- "...)
		b = appendShellQuoted(b, a)
		b = append(b, '=')
		b = appendShellQuoted(b, st.modelSet.aliases[a])
		b = append(b, '\n')
	}
	return appendOptions(b, st.modelSet.options)
}

// appendOptions appends the option lines: shopt's before set's, as `shopt
// -p; set +o` gave them.
func appendOptions(b []byte, opts map[string]string) []byte {
	keys := sortedKeys(opts)
	for _, k := range keys {
		if strings.HasPrefix(k, "shopt ") {
			b = append(append(b, opts[k]...), '\n')
		}
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "set ") {
			b = append(append(b, opts[k]...), '\n')
		}
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
