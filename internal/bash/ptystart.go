package bash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"agentsh/internal/guard"
	"agentsh/internal/pty"
)

// ptyStart is how a program on a terminal of its own (a job, `background:
// true`, a model's PTY command) starts in the session's shell:
// bash without profile or rc, which sources the session's rc snapshot and
// then the state of the call's view, as the persistent shell does before a
// command, and evals the command. Never `bash -lc`: the user's profile
// ran once, when the snapshot was taken; at every start it would repeat
// its work (a `pyenv rehash` lock), reset PATH (/etc/profile) and lose the
// functions the user defined with `!`.
type ptyStart struct {
	args []string // the shell's arguments after argv[0]
	dir  string   // the program's own folder: start script, rc copy, scratch
	env  []string // what the shell starts with, as the persistent shell's
}

// jobDirPrefix names the folders of jobs and PTY commands in the engine
// folder (guard.EngineDir), out of every sandbox's reach but their own.
const jobDirPrefix = "job-"

// ptyStartScript is sourced by the program's bash before the command:
// the snapshot (%[1]s: its sourcing line, or nothing), then the state
// (%[3]s: applyScript, run inside a function as in the prologue; it may
// write scratch files in %[2]s). The terminal's TERM and the session's
// marker are the program's own, whatever the state's environment says.
// Everything it prints is dropped, as the persistent shell's start drops
// the rc's output.
const ptyStartScript = `%[1]s
\builtin shopt -s expand_aliases
__agentsh_d=%[2]s
__agentsh_j() {
	\builtin local __agentsh_T=${TERM-} __agentsh_M=${AGENTSH_PTY_MARK-}
%[3]s
	[[ -z $__agentsh_T ]] || \builtin export TERM="$__agentsh_T"
	[[ -z $__agentsh_M ]] || \builtin export AGENTSH_PTY_MARK="$__agentsh_M"
}
\__agentsh_j
\builtin unset -f __agentsh_j
\builtin unset -v __agentsh_d
__agentsh_c=%[4]s
`

// ptyRunLine is bash's -c text: the start script, silenced, then the
// command, evaluated as the persistent shell evaluates it (same parse,
// same messages), with the start script's aliases in force.
const ptyRunLine = `\builtin . %s >/dev/null 2>&1 </dev/null
\builtin eval "$__agentsh_c"`

// newPTYStart prepares command (the prefix already applied) to run on a
// terminal with tc's shell, snapshot and state view. shell is the resolved
// shell. The caller passes dir as the program's own folder (pty.Options.Own)
// and removes it if the program never starts.
func newPTYStart(tc ToolContext, shell, command string) (ptyStart, error) {
	if err := checkBash(shell); err != nil {
		return ptyStart{}, err
	}
	cfg := tc.Settings.Shell
	cfg.Path = shell
	if cfg.LazySnapshot && cfg.SnapshotPath == "" {
		cfg.SnapshotPath = GetOrCreateSnapshot(shell, cfg.Env)
	}
	if tc.View == ModelView && cfg.SnapshotPath != "" {
		cfg.SnapshotPath = ModelSnapshot(cfg.SnapshotPath)
	}
	engine, err := guard.EngineDir()
	if err != nil {
		return ptyStart{}, fmt.Errorf("start job: %w", err)
	}
	dir, err := os.MkdirTemp(engine, jobDirPrefix)
	if err != nil {
		return ptyStart{}, fmt.Errorf("start job: %w", err)
	}
	fail := func(err error) (ptyStart, error) {
		os.RemoveAll(dir)
		return ptyStart{}, fmt.Errorf("start job: %w", err)
	}
	// The snapshot is sourced from a copy in the program's own folder,
	// checked to be what agentsh took, as a persistent shell's is.
	snap := ""
	if rcPath, err := copySnapshot(cfg, dir); err != nil {
		return fail(err)
	} else if rcPath != "" {
		snap = `\builtin . ` + shellQuote(rcPath) + ` </dev/null`
	}
	apply := []byte(":")
	if st := tc.State; st != nil && st.version(tc.View) > 0 {
		// The call's own directory, not the session's: withCwd false.
		apply, _ = st.applyScript(tc.View, cfg.scrub(), false, cfg.Env)
	}
	startPath := filepath.Join(dir, "s")
	script := fmt.Appendf(nil, ptyStartScript, snap, shellQuote(dir), apply, shellQuote(command))
	if err := writeNew(startPath, script); err != nil {
		return fail(err)
	}
	return ptyStart{
		args: []string{"--noprofile", "--norc", "-c", fmt.Sprintf(ptyRunLine, shellQuote(startPath))},
		dir:  dir,
		env:  cfg.env(nil),
	}, nil
}

// errNeedsBash is the start error of a shell that is not bash: it exits
// at once, on bash's options or on the engine's script.
func errNeedsBash(path string) error {
	return fmt.Errorf("start shell: %s exited during start-up (agentsh needs bash as shell.path)", path)
}

// bashChecked caches checkBash per shell path: the first job of a shell
// pays one fork.
var bashChecked sync.Map // path → error (nil: bash)

// checkBash refuses a shell that is not bash with the engine's own words
// (a job's `zsh --noprofile` would fail with zsh's): the start script and
// the state are bash.
func checkBash(path string) error {
	if v, ok := bashChecked.Load(path); ok {
		err, _ := v.(error)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--noprofile", "--norc", "-c", `builtin echo "${BASH_VERSION-}"`)
	cmd.Env = pty.MergeEnv(os.Environ()) // no BASH_ENV
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		// Not runnable at all: the start itself says why.
		return nil
	}
	err = nil
	if strings.TrimSpace(string(out)) == "" {
		err = fmt.Errorf("start job: %s is not bash (agentsh needs bash as shell.path)", path)
	}
	bashChecked.Store(path, err)
	return err
}
