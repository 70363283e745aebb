package bash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/guard"
	"agentsh/internal/jobs"
	"agentsh/internal/sandbox"
)

// sessionHome is a HOME whose rc defines an alias and a function and
// counts its runs, and whose login profile counts its runs and resets PATH
// as /etc/profile does: neither may run at a job's start.
func sessionHome(t *testing.T) string {
	t.Helper()
	home := withHome(t, `case $- in *i*) ;; *) return;; esac
echo x >> "$HOME/rc-runs"
alias rcalias='echo from-rc'
rcfun() { echo rcfun; }
`)
	profile := `echo x >> "$HOME/profile-runs"
export PATH=/usr/bin:/bin
. "$HOME/.bashrc"
`
	if err := os.WriteFile(filepath.Join(home, ".bash_profile"), []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// runs counts the lines of a marker file (0 when it does not exist).
func runs(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// envProbe prints what decides how a command runs. The terminal's TERM,
// the session markers (one per shell or program, by design), OLDPWD (the
// shell's own cd history, never carried) and the engine's request alias
// are the only things a job and the persistent shell may differ in.
const envProbe = `declare -f f mf rcfun; alias | grep -v '^alias __ar='; pwd; echo "PATH=$PATH"; shopt -p globstar; set -o | grep -w pipefail; ` +
	`env | grep -v -e '^AGENTSH_SHELL_MARK=' -e '^AGENTSH_PTY_MARK=' -e '^TERM=' -e '^OLDPWD=' | sort`

// jobText waits for j's end (hang guard: its output so far) and returns
// its whole output.
func jobText(t *testing.T, j *jobs.Job) string {
	t.Helper()
	select {
	case <-j.Done():
	case <-time.After(hangGuard):
		t.Fatalf("job %s hung; output so far %q", j.ID(), j.ReadNew().Text)
	}
	return j.ReadNew().Text
}

// TestJobsRunInTheSessionsShell: a user's job, a model's
// `background: true` job and a model's PTY command start from the
// session's rc snapshot and state, as the persistent shell runs a
// command: the same functions (one defined by the user with `!`),
// aliases, directory, PATH, options and environment; the rc ran once (the
// snapshot), the login profile never (its PATH reset does not happen);
// the model's own definitions reach the model's programs only.
func TestJobsRunInTheSessionsShell(t *testing.T) {
	home := sessionHome(t)
	work := t.TempDir()
	sub := filepath.Join(work, "sub dir")
	bin := filepath.Join(work, "bin")
	for _, d := range []string{sub, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sh := testShell(t)
	sh.Env = map[string]string{"HOME": home}
	sh.LazySnapshot = true
	e := newTestExecutor(t)
	st := NewSessionState(work)
	user := func(cmd string) BashResult {
		return run(t, e, cmd, RunOptions{Shell: sh, SessionKey: "user", State: st, Capture: CaptureAll})
	}
	modelShell := sh
	modelShell.ScrubEnv = DefaultScrubEnv()
	model := func(cmd string, capture CaptureMode) BashResult {
		return run(t, e, cmd, RunOptions{Shell: modelShell, Cwd: st.Cwd(), State: st, View: ModelView, Capture: capture})
	}
	// The user's `!` commands: a function, an alias, cd, an export, PATH
	// and options.
	expect(t, user(`f() { echo "user f $1"; }; alias ua='echo user-alias'; cd `+shellQuote(sub)+
		` && export JOBVAR='a b' && PATH=`+shellQuote(bin)+`:$PATH && shopt -s globstar && set -o pipefail`), "", "0")
	// The model's own, on top.
	expect(t, model(`mf() { echo model; }; alias ma='echo model-alias'; export MODELVAR=1`, CaptureShell), "", "0")

	userShell := user(envProbe)
	if userShell.Output == "" || !strings.Contains(userShell.Output, "user f") || !strings.Contains(userShell.Output, "PATH="+bin+":") ||
		!strings.Contains(userShell.Output, "rcfun") || strings.Contains(userShell.Output, "mf ()") {
		t.Fatalf("the user's shell: %q", userShell.Output)
	}
	modelRun := model(envProbe, CaptureNone)
	if !strings.Contains(modelRun.Output, "mf ()") || !strings.Contains(modelRun.Output, "MODELVAR=1") {
		t.Fatalf("the model's shell: %q", modelRun.Output)
	}

	m := jobs.NewManager()
	t.Cleanup(m.Close)
	// The user's job (as the TUI and RPC start it: the session's
	// directory, the user's view).
	tc := ToolContext{Cwd: st.Cwd(), Settings: ToolSettings{Shell: sh}, State: st}
	j, err := StartJob(m, envProbe, st.Cwd(), 0, "", "", tc)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobText(t, j); got != userShell.Output {
		t.Errorf("the user's job differs from the user's shell:\njob:   %q\nshell: %q", got, userShell.Output)
	}

	// The model's `background: true` (its output into a file: under load
	// the call may return before the probe is done).
	mtc := ToolContext{Cwd: st.Cwd(), Settings: ToolSettings{Shell: modelShell}, State: st, View: ModelView,
		Artifacts: newTestArtifacts(t.TempDir())}
	tool := &Tool{Executor: e, Jobs: m}
	outFile := filepath.Join(t.TempDir(), "bg-out")
	if _, err := tool.Execute(context.Background(), ToolParams{Command: "{ " + envProbe + "; } > " + shellQuote(outFile) + " 2>&1", Background: true}, mtc, nil); err != nil {
		t.Fatal(err)
	}
	list := m.List()
	jobText(t, list[len(list)-1])
	if got, err := os.ReadFile(outFile); err != nil || string(got) != modelRun.Output {
		t.Errorf("the model's background job differs from the model's shell (%v):\njob:   %q\nshell: %q", err, got, modelRun.Output)
	}

	// The model's PTY command.
	ptc := mtc
	ptc.Settings.VirtualTerminal = "on"
	r, _, err := runPTY(context.Background(), envProbe, st.Cwd(), time.Minute, "", "", ptc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != modelRun.Output {
		t.Errorf("the model's PTY command differs from the model's shell:\npty:   %q\nshell: %q", r.Output, modelRun.Output)
	}

	// Each program's own folder (start script, rc copy) went with it.
	if dir, err := guard.EngineDir(); err == nil {
		if left, _ := filepath.Glob(filepath.Join(dir, jobDirPrefix+"*")); len(left) != 0 {
			t.Errorf("folders left after the programs ended: %q", left)
		}
	}
	if n := runs(t, filepath.Join(home, "rc-runs")); n != 1 {
		t.Errorf("the rc ran %d times, want once (the snapshot)", n)
	}
	if n := runs(t, filepath.Join(home, "profile-runs")); n != 0 {
		t.Errorf("the login profile ran %d times, want never", n)
	}
}

// TestNotBashSaysSo: a shell that is not bash (dash, a zsh or
// fish, or a program that exits at once) fails the persistent shell's
// start and a job's with the clear "needs bash" error, every time (the
// write of the init line used to race the shell's exit: "write
// agentsh-sock: broken pipe").
func TestNotBashSaysSo(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fakesh")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	shells := []string{fake}
	if p, err := filepath.EvalSymlinks("/bin/sh"); err == nil && !strings.Contains(filepath.Base(p), "bash") {
		shells = append(shells, "/bin/sh")
	}
	for _, sh := range shells {
		want := "start shell: " + sh + " exited during start-up (agentsh needs bash as shell.path)"
		for i := 0; i < 20; i++ {
			e := NewExecutor()
			_, err := e.Run(context.Background(), "true", RunOptions{Shell: ShellConfig{Path: sh}})
			e.Close()
			if err == nil || err.Error() != want {
				t.Fatalf("%s, try %d: %v, want %q", sh, i, err, want)
			}
		}
		m := jobs.NewManager()
		t.Cleanup(m.Close)
		_, err := StartJob(m, "true", t.TempDir(), 0, "", "", ToolContext{Settings: ToolSettings{Shell: ShellConfig{Path: sh}}})
		if want := "start job: " + sh + " is not bash (agentsh needs bash as shell.path)"; err == nil || err.Error() != want {
			t.Fatalf("job on %s: %v, want %q", sh, err, want)
		}
	}
}

// TestSandboxedJobHasTheModelsState: a confined model's job and PTY
// command read their start script in their own folder (in the sandbox's
// view), get the user's function and the model's export, and stay
// confined: a write outside is refused.
func TestSandboxedJobHasTheModelsState(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	st := NewSessionState(s.work)
	expect(t, run(t, e, `ufn() { echo user-fn; }`, RunOptions{SessionKey: "user", State: st, Capture: CaptureAll}), "", "0")
	in := s.opts(t)
	in.State, in.View, in.Capture, in.Cwd = st, ModelView, CaptureShell, s.work
	expect(t, run(t, e, `export SBX_MODEL=model-var`, in), "", "0")
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	tc := ToolContext{Cwd: s.work, Settings: ToolSettings{Shell: in.Shell}, State: st, View: ModelView}
	probe := fmt.Sprintf(`ufn; echo "$SBX_MODEL"; { echo x > %q; } 2>/dev/null; echo "rc=$?"`, filepath.Join(s.home, "job"))
	j, err := StartJob(m, probe, s.work, 0, "", "", tc)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobText(t, j); got != "user-fn\nmodel-var\nrc=1\n" {
		t.Errorf("the confined job: %q", got)
	}
	tc.Settings.VirtualTerminal = "on"
	r, _, err := runPTY(context.Background(), probe, s.work, time.Minute, "", "", tc, nil)
	if err != nil || r.Output != "user-fn\nmodel-var\nrc=1\n" {
		t.Errorf("the confined PTY command: %q %v", r.Output, err)
	}
	if _, err := os.Stat(filepath.Join(s.home, "job")); err == nil {
		t.Error("a confined job wrote outside the sandbox")
	}
}
