package bash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
)

// One session state (spec §2.1): cwd, exports, functions, aliases and
// options survive a cancel, a timeout and a replaced shell, and reach the
// model's shells.

func userRun(t *testing.T, e *Executor, st *SessionState, cmd string) BashResult {
	t.Helper()
	return run(t, e, cmd, RunOptions{SessionKey: "user", State: st, Capture: CaptureAll, Timeout: 60 * time.Second})
}

func modelRun(t *testing.T, e *Executor, st *SessionState, cmd string, scrub ...string) BashResult {
	t.Helper()
	sh := testShell(t)
	sh.ScrubEnv = scrub
	return run(t, e, cmd, RunOptions{Shell: sh, State: st, View: ModelView, Cwd: st.Cwd(), Capture: CaptureShell, Timeout: 60 * time.Second})
}

const stateSetup = `cd %s && export AGENTSH_T_FOO=bar && greet() { echo "hi $1"; } && alias ll='echo listed' && shopt -s extglob && set -o noclobber`
const stateProbe = `echo "$PWD|$AGENTSH_T_FOO"; greet you; ll; shopt -q extglob && echo extglob; [[ -o noclobber ]] && echo noclobber`

func TestStateSurvivesCancelAndTimeout(t *testing.T) {
	dir := t.TempDir()
	e := newTestExecutor(t)
	st := NewSessionState(t.TempDir())
	expect(t, userRun(t, e, st, strings.ReplaceAll(stateSetup, "%s", shellQuote(dir))), "", "0")
	if st.Cwd() != dir {
		t.Fatalf("session cwd %q, want %q", st.Cwd(), dir)
	}
	want := dir + "|bar\nhi you\nlisted\nextglob\nnoclobber\n"
	expect(t, userRun(t, e, st, stateProbe), want, "0")

	// esc on a running command: the shell is killed and replaced.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan BashResult, 1)
	tag := proctest.SleepTag()
	go func() {
		r, _ := e.Run(ctx, "sleep "+tag, RunOptions{Shell: testShell(t), SessionKey: "user", State: st, Capture: CaptureAll})
		done <- r
	}()
	proctest.WaitWithArg(t, tag, 1)
	cancel()
	select {
	case r := <-done:
		if !r.Cancelled {
			t.Fatalf("%+v", r)
		}
	case <-time.After(hangGuard):
		t.Fatal("cancel hung")
	}
	expect(t, userRun(t, e, st, stateProbe), want, "0")

	// A timeout, likewise.
	r := run(t, e, "export AGENTSH_T_FOO=changed; sleep 30", RunOptions{SessionKey: "user", State: st, Capture: CaptureAll, Timeout: time.Second})
	if !r.Cancelled {
		t.Fatalf("%+v", r)
	}
	// The change made by the timed-out command is lost with its shell (it
	// never finished); what was captured before is all there.
	expect(t, userRun(t, e, st, stateProbe), want, "0")

	// A command that breaks the shell, likewise.
	r = userRun(t, e, st, "kill -STOP $$")
	if r.ExitCode != nil {
		t.Fatalf("%+v", r)
	}
	expect(t, userRun(t, e, st, stateProbe), want, "0")
}

func TestUserStateReachesTheModel(t *testing.T) {
	dir := t.TempDir()
	e := newTestExecutor(t)
	st := NewSessionState(t.TempDir())
	t.Setenv("AGENTSH_T_GONE", "present")
	t.Setenv("AGENTSH_T_API_KEY", "sk-secret")
	// A model shell that already ran before the user's changes.
	expect(t, modelRun(t, e, st, "echo ${AGENTSH_T_GONE-unset}", "*_API_KEY"), "present\n", "0")
	expect(t, userRun(t, e, st, strings.ReplaceAll(stateSetup, "%s", shellQuote(dir))+" && unset AGENTSH_T_GONE && echo $AGENTSH_T_API_KEY"), "sk-secret\n", "0")
	// The model's call runs in the session's directory with the user's
	// exports, functions, aliases and options, but not the secret.
	want := dir + "|bar\nhi you\nlisted\nextglob\nnoclobber\n"
	expect(t, modelRun(t, e, st, stateProbe+"; echo ${AGENTSH_T_GONE-unset} ${AGENTSH_T_API_KEY-scrubbed}", "*_API_KEY"), want+"unset scrubbed\n", "0")
	// The model's own cd ends with its call; its export stays in the
	// model's layer: the user's shell does not get it.
	expect(t, modelRun(t, e, st, "cd / && export AGENTSH_T_MODEL=1 && pwd", "*_API_KEY"), "/\n", "0")
	if st.Cwd() != dir {
		t.Fatalf("a model's cd moved the session to %q", st.Cwd())
	}
	expect(t, userRun(t, e, st, `echo "$PWD ${AGENTSH_T_MODEL-unset}"`), dir+" unset\n", "0")
	// A parallel (fresh) model shell gets it all, the model's export too.
	e2 := newTestExecutor(t)
	expect(t, modelRun(t, e2, st, stateProbe+"; echo $AGENTSH_T_MODEL", "*_API_KEY"), want+"1\n", "0")
}

func TestStateCarriesNoPoison(t *testing.T) {
	e := newTestExecutor(t)
	st := NewSessionState(t.TempDir())
	// A function that shadows exec would break every shell it reached.
	userRun(t, e, st, "exec() { :; }; export AGENTSH_T_OK=1")
	// Whether or not that shell survived, a fresh one gets the state
	// without the poison and works.
	e2 := newTestExecutor(t)
	expect(t, modelRun(t, e2, st, "echo ${AGENTSH_T_OK-missing}"), "1\n", "0")
}

func TestStateSourceVenv(t *testing.T) {
	dir := t.TempDir()
	act := filepath.Join(dir, "activate")
	if err := os.WriteFile(act, []byte(`export VIRTUAL_ENV=`+shellQuote(dir)+`
export PATH="$VIRTUAL_ENV/bin:$PATH"
deactivate() { export PATH="${PATH#$VIRTUAL_ENV/bin:}"; unset VIRTUAL_ENV; unset -f deactivate; }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newTestExecutor(t)
	st := NewSessionState(dir)
	expect(t, userRun(t, e, st, "source "+shellQuote(act)), "", "0")
	want := dir + "/bin\n" + dir + "\n"
	expect(t, modelRun(t, e, st, `echo "${PATH%%:*}"; echo "$VIRTUAL_ENV"`), want, "0")
	expect(t, userRun(t, e, st, `deactivate; echo "${VIRTUAL_ENV-none}"`), "none\n", "0")
	expect(t, modelRun(t, e, st, `echo "${VIRTUAL_ENV-none}"; declare -F deactivate || echo nofunc`), "none\nnofunc\n", "0")
}

// TestUserCaptureOnlyWhenTheCommandMayChangeState: once the
// user's layer is known, a user's command that cannot change the state
// (programs, neutral builtins) leaves the last capture as it is instead of
// dumping the whole state again (~250 writes of bash's per RPC call); one
// that calls the user's function or alias named like a program still
// records what it did, and a fresh shell gets it.
func TestUserCaptureOnlyWhenTheCommandMayChangeState(t *testing.T) {
	e := newTestExecutor(t)
	st := NewSessionState(t.TempDir())
	dir := strings.TrimSpace(userRun(t, e, st, `echo "$__agentsh_d"`).Output)
	dump := filepath.Join(dir, "st")
	f, err := os.OpenFile(dump, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("the first user's command made no capture: %v", err)
	}
	const mark = "\x00untouched"
	_, _ = f.WriteString(mark)
	f.Close()
	expect(t, userRun(t, e, st, `true; ls / >/dev/null; echo ok | cat`), "ok\n", "0")
	if b, err := os.ReadFile(dump); err != nil || !strings.HasSuffix(string(b), mark) {
		t.Fatalf("a command that cannot change the state dumped it again (%v)", err)
	}
	expect(t, userRun(t, e, st, `ls() { export AGENTSH_T_LSFN=ran; command ls "$@"; }; alias grep='export AGENTSH_T_GREPAL=ran; true'`), "", "0")
	expect(t, userRun(t, e, st, `ls / >/dev/null; grep x`), "", "0")
	r := run(t, e, `echo "${AGENTSH_T_LSFN-unset} ${AGENTSH_T_GREPAL-unset}"`,
		RunOptions{SessionKey: "user", State: st, Capture: CaptureAll, Fresh: true, Timeout: 60 * time.Second})
	expect(t, r, "ran ran\n", "0")
}

// TestOptionsCarriedFromTheShortDump: after a shell's first
// capture lists its option names, its captures give only the enabled
// options ($BASHOPTS, $SHELLOPTS) in one write instead of ~85 lines of
// `shopt -p; set +o`; options turned on and off there still reach a fresh
// shell.
func TestOptionsCarriedFromTheShortDump(t *testing.T) {
	e := newTestExecutor(t)
	st := NewSessionState(t.TempDir())
	fresh := func(cmd string) BashResult {
		return run(t, e, cmd, RunOptions{SessionKey: "user", State: st, Capture: CaptureAll, Fresh: true, Timeout: 60 * time.Second})
	}
	const probe = `shopt -q globstar && echo globstar; [[ -o noclobber ]] && echo noclobber; shopt -q nullglob && echo nullglob; echo end`
	dir := strings.TrimSpace(userRun(t, e, st, `shopt -s nullglob; echo "$__agentsh_d"`).Output)
	expect(t, userRun(t, e, st, `shopt -s globstar; set -o noclobber`), "", "0")
	if b, err := os.ReadFile(filepath.Join(dir, "st")); err != nil || strings.Contains(string(b), "shopt -") {
		t.Fatalf("the second capture listed every option again (%v)", err)
	}
	expect(t, fresh(probe), "globstar\nnoclobber\nnullglob\nend\n", "0")
	expect(t, userRun(t, e, st, `shopt -u globstar nullglob; set +o noclobber`), "", "0")
	expect(t, fresh(probe), "end\n", "0")
}
