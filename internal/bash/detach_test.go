package bash

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/jobs"
	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// ttyShell is the test shell with terminal stdin (the default of the modes).
func ttyShell(t testing.TB) ShellConfig {
	c := testShell(t)
	c.TerminalStdin = true
	return c
}

// waitJob waits for a job to end, with a hang guard.
func waitJob(t *testing.T, j *jobs.Job) jobs.State {
	t.Helper()
	select {
	case <-j.Done():
		return j.Final()
	case <-time.After(hangGuard):
		t.Fatalf("job %s never ended (hang guard)", j.ID())
	}
	return jobs.State{}
}

// TestForegroundPromptBecomesJob: a foreground `read -p` with a terminal
// as stdin waits instead of reading EOF; once it has waited a second with
// no output, the call returns as a job waiting for input, showing the
// prompt. Typing y and Enter gives "got y" and exit 0, and the job's shell
// is gone afterwards.
func TestForegroundPromptBecomesJob(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	res := run(t, e, `echo before; read -p "Proceed? [y/N] " a; echo "got $a"`, RunOptions{Shell: ttyShell(t), Jobs: m})
	if res.Job == nil {
		t.Fatalf("the prompt did not become a job: %+v", res)
	}
	if res.JobReason != DetachInput || res.ExitCode != nil {
		t.Errorf("reason %v, exit %v", res.JobReason, res.ExitCode)
	}
	if res.Output != "before\nProceed? [y/N] " {
		t.Errorf("output so far %q", res.Output)
	}
	j := res.Job
	if st := j.State(); st.Kind != jobs.WaitingForInput {
		t.Errorf("state %v, want waiting for input", st)
	}
	// Its screen (the jobs panel's view, the attach overlay) shows the
	// prompt, fed a moment later.
	waitScreen(t, "the prompt on the job's screen", j.Screen, "before\nProceed? [y/N]")
	if err := j.Input(`y\n`); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, j); st != (jobs.State{Kind: jobs.Exited, Code: 0}) {
		t.Fatalf("final state %v", st)
	}
	out := j.ReadNew().Text
	if !strings.Contains(out, "got y") {
		t.Errorf("job output %q lacks got y", out)
	}
	if strings.Contains(out, "before") {
		t.Errorf("job output %q repeats what the call returned", out)
	}
	// The next call runs on a fresh shell: the job's is gone.
	if r := run(t, e, "echo next", RunOptions{Shell: ttyShell(t), Jobs: m}); r.Output != "next\n" || r.Job != nil {
		t.Errorf("next call %+v", r)
	}
}

// TestCatWithoutInputBecomesJob: `cat` with no file reads the terminal
// and, with no input, becomes a job waiting for input rather than hanging;
// ctrl+d ends it with exit 0.
func TestCatWithoutInputBecomesJob(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	res := run(t, e, `cat`, RunOptions{Shell: ttyShell(t), Jobs: m})
	if res.Job == nil || res.JobReason != DetachInput {
		t.Fatalf("cat did not become a job waiting for input: %+v", res)
	}
	if err := res.Job.Input(`hello\n\x04`); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, res.Job); st != (jobs.State{Kind: jobs.Exited, Code: 0}) {
		t.Fatalf("final state %v", st)
	}
	if out := res.Job.ReadNew().Text; strings.Count(out, "hello") != 2 {
		t.Errorf("output %q: want the echo and cat's copy of hello", out)
	}
}

// TestAutoBackground: a command still running after AutoBackground
// becomes a job with the output so far; the job then sees the rest and its
// exit status.
func TestAutoBackground(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	res := run(t, e, `echo compiling; sleep 2; echo built`, RunOptions{Shell: ttyShell(t), Jobs: m, AutoBackground: 500 * time.Millisecond})
	if res.Job == nil || res.JobReason != DetachTimer {
		t.Fatalf("not a job: %+v", res)
	}
	if res.Output != "compiling\n" {
		t.Errorf("output so far %q", res.Output)
	}
	st := res.Job.Wait(context.Background(), hangGuard)
	if st != (jobs.State{Kind: jobs.Exited, Code: 0}) {
		t.Fatalf("state %v", st)
	}
	if out := res.Job.ReadNew().Text; out != "built\n" {
		t.Errorf("job output %q", out)
	}
}

// TestBackgroundNow: closing BackgroundNow (the user's ctrl+b) makes the
// running command a job at once; killing the job leaves no process.
func TestBackgroundNow(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	tag := proctest.SleepTag()
	now := make(chan struct{})
	// ctrl+b once "up" is in the output and the sleep runs.
	var once sync.Once
	var seen strings.Builder
	onChunk := func(b []byte) {
		seen.Write(b)
		if strings.Contains(seen.String(), "up\n") {
			once.Do(func() {
				go func() {
					if ok, state := testkit.Poll(hangGuard, func() (bool, string) {
						pids := proctest.WithArg(tag)
						return len(pids) > 0, fmt.Sprintf("processes %v", pids)
					}); !ok {
						t.Errorf("the sleep never ran: %s", state)
					}
					close(now)
				}()
			})
		}
	}
	res := run(t, e, "echo up; sleep "+tag, RunOptions{Shell: ttyShell(t), Jobs: m, BackgroundNow: now, OnChunk: onChunk})
	if res.Job == nil || res.JobReason != DetachUser || res.Output != "up\n" {
		t.Fatalf("not a job: %+v", res)
	}
	if st := res.Job.Kill(); st.Kind != jobs.Killed {
		t.Errorf("state after kill %v", st)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("left after kill: %v", left)
	}
}

// TestDetachTimeout: an explicit timeout still kills a command that
// became a job; without KeepTimeout the job has none.
func TestDetachTimeout(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	tag := proctest.SleepTag()
	res := run(t, e, "sleep "+tag, RunOptions{Shell: ttyShell(t), Jobs: m, AutoBackground: 200 * time.Millisecond,
		Timeout: 2 * time.Second, KeepTimeout: true})
	if res.Job == nil {
		t.Fatalf("not a job: %+v", res)
	}
	if st := waitJob(t, res.Job); st.Kind != jobs.TimedOut {
		t.Errorf("state %v, want timed out", st)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("left after the timeout: %v", left)
	}
	res = run(t, e, "sleep 3; echo done", RunOptions{Shell: ttyShell(t), Jobs: m, AutoBackground: 200 * time.Millisecond,
		Timeout: time.Second})
	if res.Job == nil {
		t.Fatalf("not a job: %+v", res)
	}
	if st := waitJob(t, res.Job); st != (jobs.State{Kind: jobs.Exited, Code: 0}) {
		t.Errorf("state %v: the default timeout must not follow a job", st)
	}
}

// TestFullManagerKeepsForeground: with no room for a job, the command
// stays in the foreground to its end.
func TestFullManagerKeepsForeground(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	m.MaxJobs = 1
	t.Cleanup(m.Close)
	tag := proctest.SleepTag()
	if _, err := m.Start(jobs.Spec{Command: "sleep " + tag, Shell: proctest.BashPath(t)}); err != nil {
		t.Fatal(err)
	}
	res := run(t, e, "sleep 1; echo done", RunOptions{Shell: ttyShell(t), Jobs: m, AutoBackground: 200 * time.Millisecond})
	if res.Job != nil || res.Output != "done\n" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("%+v", res)
	}
}

// TestTerminalStdinShellReuse: on a reused shell, input typed for an
// earlier command is not read by the next one, and terminal modes a
// program changed are restored.
func TestTerminalStdinShellReuse(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	sh := ttyShell(t)
	if r := run(t, e, "stty raw -echo; [ -t 0 ] && echo tty", RunOptions{Shell: sh, Jobs: m}); r.Output != "tty\n" {
		t.Fatalf("%+v", r)
	}
	if r := run(t, e, "stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo | sort | tr '\\n' ' '", RunOptions{Shell: sh, Jobs: m}); r.Output != "echo icanon " {
		t.Errorf("modes after raw: %q", r.Output)
	}
}

// TestCtrlCToAdoptedJob: ctrl+c typed into a command that became a job
// interrupts it as in a terminal (the terminal is the shell's controlling
// terminal), and nothing of it is left.
func TestCtrlCToAdoptedJob(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	tag := proctest.SleepTag()
	now := make(chan struct{})
	close(now)
	res := run(t, e, "sleep "+tag, RunOptions{Shell: ttyShell(t), Jobs: m, BackgroundNow: now})
	if res.Job == nil {
		t.Fatalf("not a job: %+v", res)
	}
	if err := res.Job.Input(`\x03`); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, res.Job); st != (jobs.State{Kind: jobs.Exited, Code: 130}) {
		t.Errorf("state after ctrl+c %v, want exited 130", st)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("left after ctrl+c: %v", left)
	}
}

// TestTerminalSurvivesCommands: commands that take the terminal for
// themselves (an interactive shell's job control, a program reading
// /dev/tty, one closing stdin) leave the next command a working terminal.
func TestTerminalSurvivesCommands(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	sh := ttyShell(t)
	for _, c := range []string{
		"bash --norc -i -c 'echo inner' 2>/dev/null",
		"exec 0<&-; echo closed",
		"set -m; sleep 0.1 & wait; echo m",
		"read -t 0.1 x </dev/tty; echo timed",
	} {
		r := run(t, e, c, RunOptions{Shell: sh, Jobs: m})
		if r.Job != nil || r.ExitCode == nil {
			t.Fatalf("%q: %+v", c, r)
		}
		r = run(t, e, `[ -t 0 ] && echo tty; read -t 0.2 x; echo "rc=$?"`, RunOptions{Shell: sh, Jobs: m})
		if r.Output != "tty\nrc=142\n" || r.Job != nil {
			t.Errorf("after %q: %+v", c, r)
		}
	}
}

// TestAutoBackgroundAfterExec: a command that replaces the shell
// (`exec sleep`) still becomes a job after the threshold.
func TestAutoBackgroundAfterExec(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	tag := proctest.SleepTag()
	res := run(t, e, "exec sleep "+tag, RunOptions{Shell: ttyShell(t), Jobs: m, AutoBackground: 300 * time.Millisecond})
	if res.Job == nil || res.JobReason != DetachTimer {
		t.Fatalf("not a job: %+v", res)
	}
	if st := res.Job.Kill(); st.Kind != jobs.Killed {
		t.Errorf("state %v", st)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}

// TestJobEndDoesNotMoveSession: a `!` command (state captured) that
// became a job and later runs `cd` does not move the session when it
// ends; the next command runs where the session was.
func TestJobEndDoesNotMoveSession(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	home := t.TempDir()
	st := NewSessionState(home)
	away := t.TempDir()
	opts := RunOptions{Shell: ttyShell(t), Jobs: m, State: st, Capture: CaptureAll, SessionKey: "s"}
	if r := run(t, e, "cd "+home, opts); r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("%+v", r)
	}
	res := run(t, e, `read -p "go? " a; cd `+away, opts)
	if res.Job == nil {
		t.Fatalf("not a job: %+v", res)
	}
	if err := res.Job.Input(`y\n`); err != nil {
		t.Fatal(err)
	}
	if s := waitJob(t, res.Job); s != (jobs.State{Kind: jobs.Exited, Code: 0}) {
		t.Fatalf("job %v", s)
	}
	if r := run(t, e, "pwd", opts); r.Output != home+"\n" {
		t.Errorf("after the job, pwd = %q, want %q", r.Output, home)
	}
}
