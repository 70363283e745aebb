package bash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/sandbox"
)

// modelPoison is what a prompt-injected model would leave in its confined
// shell so that the user's next command, or a command run outside the
// sandbox, runs its code: functions and aliases named like commands, a
// PATH with its own programs first, LD_PRELOAD, BASH_ENV, a DEBUG trap,
// PROMPT_COMMAND, extdebug. Each writes a file in HOME, which the sandbox
// does not let the model write: a file there means the code ran outside.
func modelPoison(home, bin string) string {
	mark := func(name string) string { return shellQuote(filepath.Join(home, "pwned-"+name)) }
	return strings.Join([]string{
		`touch() { echo pwned > ` + mark("touch") + `; }`,
		`git() { echo pwned > ` + mark("git") + `; }`,
		`alias ls='echo pwned > ` + filepath.Join(home, "pwned-ls") + `'`,
		`mkdir -p ` + shellQuote(bin) + ` && printf '#!/bin/sh\necho pwned > %s\n' ` + mark("path") + ` > ` + shellQuote(bin+"/id") + ` && chmod +x ` + shellQuote(bin+"/id"),
		`export PATH=` + shellQuote(bin) + `:$PATH`,
		`export LD_PRELOAD=/nonexistent/agentsh-evil.so BASH_ENV=` + shellQuote(bin+"/id") + ` AGENTSH_T_MODELDATA=model`,
		`trap '{ echo pwned > ` + filepath.Join(home, "pwned-trap") + `; } 2>/dev/null; :' DEBUG`,
		`export PROMPT_COMMAND='echo pwned > ` + filepath.Join(home, "pwned-prompt") + `'`,
		`shopt -s extdebug`,
		`echo defined`,
	}, "\n")
}

// pwned lists the marks the model's code left in home.
func pwned(t *testing.T, home string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(home, "pwned-*"))
	return m
}

// outsideProbe runs the names the model took over; in a shell with only
// the user's state each is the real one.
const outsideProbe = `touch made; ls made; id -u >/dev/null && echo id; command -v git >/dev/null && echo git-is-$(type -t git); ` +
	`echo "${LD_PRELOAD-none} ${BASH_ENV-none} ${AGENTSH_T_MODELDATA-none} ${PROMPT_COMMAND-none}"; shopt -q extdebug && echo extdebug; trap -p DEBUG`

// TestModelStateStaysInside: what a model's confined shell
// defines (functions, aliases, PATH, LD_PRELOAD, BASH_ENV, a DEBUG trap,
// PROMPT_COMMAND, extdebug) does not run in the user's next `!` command nor
// in a fresh shell with the user's view (an approved re-run outside the
// sandbox); the model's next shells still have it; the user's function and
// export still reach the model.
func TestModelStateStaysInside(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	st := NewSessionState(s.work)
	model := func(cmd string) BashResult {
		o := s.opts(t)
		o.State, o.View, o.Capture, o.Timeout = st, ModelView, CaptureShell, 60*time.Second
		return run(t, e, cmd, o)
	}
	user := func(cmd string) BashResult {
		return run(t, e, cmd, RunOptions{SessionKey: "user", State: st, Capture: CaptureAll, Timeout: 60 * time.Second})
	}
	// A user's `!` before and after: its shell exists when the model
	// defines its own.
	expect(t, user("cd "+shellQuote(s.work)+" && greet() { echo hi; }"), "", "0")
	expect(t, model(modelPoison(s.home, filepath.Join(s.work, "bin"))), "defined\n", "0")
	if p := pwned(t, s.home); len(p) != 0 {
		t.Fatalf("the model's confined shell wrote outside: %q", p)
	}
	// The model's next call, in another (fresh) confined shell, has its
	// own definitions: they stay the model's.
	e2 := newTestExecutor(t)
	o := s.opts(t)
	o.State, o.View, o.Capture = st, ModelView, CaptureShell
	expect(t, run(t, e2, `type -t touch; alias ls; echo "${PATH%%:*}" $AGENTSH_T_MODELDATA`, o),
		"function\nalias ls='echo pwned > "+filepath.Join(s.home, "pwned-ls")+"'\n"+filepath.Join(s.work, "bin")+" model\n", "0")

	want := "made\nid\nnone none none none\n"
	if _, err := os.Stat("/usr/bin/git"); err == nil {
		want = "made\nid\ngit-is-file\nnone none none none\n"
	}
	// The user's next `!` command, on the user's shell.
	expect(t, user(outsideProbe), want, "0")
	// A fresh user's shell (a replaced one, another agentsh mode).
	expect(t, run(t, newTestExecutor(t), outsideProbe, RunOptions{SessionKey: "user", State: st, Capture: CaptureAll}), want, "0")
	// An approved re-run: outside the sandbox, the user's view, fresh.
	rerun := testShell(t)
	rerun.ScrubEnv = DefaultScrubEnv()
	expect(t, run(t, e, outsideProbe, RunOptions{Shell: rerun, State: st, View: UserView, Fresh: true, Cwd: s.work}), want, "0")
	if p := pwned(t, s.home); len(p) != 0 {
		t.Fatalf("the model's code ran outside the sandbox: %q", p)
	}

	// The user's function and export still reach the model, over its own.
	expect(t, user(`export AGENTSH_T_USER=u; greet() { echo hello; }; touch() { command touch "$@"; echo user-touch; }`), "", "0")
	expect(t, model(`unset LD_PRELOAD; greet; echo $AGENTSH_T_USER $AGENTSH_T_MODELDATA; touch f; type -t git`), "hello\nu model\nuser-touch\nfunction\n", "0")
	// The user's own touch is the user's, also in the user's shell.
	expect(t, user(`touch g`), "user-touch\n", "0")
	if p := pwned(t, s.home); len(p) != 0 {
		t.Fatalf("the model's code ran outside the sandbox: %q", p)
	}
}

// TestModelLayerBeforeUserCapture: before any user's command was
// captured, the model's changes go on top of each model shell's own
// state (nothing of the inherited environment is lost), the model's unset
// holds, and the first user's capture drops only what the user changed.
func TestModelLayerBeforeUserCapture(t *testing.T) {
	e := newTestExecutor(t)
	st := NewSessionState(t.TempDir())
	t.Setenv("AGENTSH_T_INHERITED", "inh")
	t.Setenv("AGENTSH_T_DROP", "drop")
	expect(t, modelRun(t, e, st, "export AGENTSH_T_M=1 PATH=/agentsh-model-bin:$PATH; unset AGENTSH_T_DROP; m() { echo m; }"), "", "0")
	// Another model shell gets them with a run that captures nothing,
	// then changes more: the model's layer keeps both.
	e2 := newTestExecutor(t)
	sh := testShell(t)
	expect(t, run(t, e2, `echo $AGENTSH_T_INHERITED $AGENTSH_T_M ${AGENTSH_T_DROP-unset} ${PATH%%:*}; m`,
		RunOptions{Shell: sh, State: st, View: ModelView, Cwd: st.Cwd()}), "inh 1 unset /agentsh-model-bin\nm\n", "0")
	expect(t, modelRun(t, e2, st, "export AGENTSH_T_M2=2"), "", "0")
	expect(t, modelRun(t, newTestExecutor(t), st, `echo $AGENTSH_T_M $AGENTSH_T_M2; m`), "1 2\nm\n", "0")
	// The user's first capture: the user sets AGENTSH_T_M; the model's
	// PATH and function are not the user's business and stay.
	expect(t, userRun(t, e, st, `export AGENTSH_T_M=user; echo ${PATH%%:*} ${AGENTSH_T_DROP-unset}`), strings.Split(os.Getenv("PATH"), ":")[0]+" drop\n", "0")
	expect(t, modelRun(t, e2, st, `echo $AGENTSH_T_INHERITED $AGENTSH_T_M ${AGENTSH_T_DROP-unset} ${PATH%%:*}; m`), "inh user unset /agentsh-model-bin\nm\n", "0")
}
