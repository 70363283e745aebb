package bash

// Prestart: the shell a model's first call runs on is started
// while the model thinks. The call must get exactly the shell it would have
// started (its sandbox, the model's state), a call during the start must
// take that start instead of making a second shell, and nothing may be left
// when the executor closes mid-start or unused.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
	"agentsh/internal/testkit"
)

// shellCounts is how many shells e holds, idle among them, and how many
// Prestarts are taking their snapshot or starting a shell.
func shellCounts(e *Executor) (all, idle, starting int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.idle {
		idle += len(l)
	}
	return len(e.all), idle, len(e.starting) + e.preparing
}

// waitIdleShell waits (hang-guarded) until e holds an idle shell and no
// start is under way, and returns the idle shell's pid.
func waitIdleShell(t *testing.T, e *Executor) int {
	t.Helper()
	pid := 0
	testkit.Eventually(t, hangGuard, "an idle prestarted shell", func() (bool, string) {
		all, idle, starting := shellCounts(e)
		if idle == 1 && starting == 0 {
			e.mu.Lock()
			defer e.mu.Unlock()
			for _, l := range e.idle {
				pid = l[0].pid
			}
		}
		return pid != 0, fmt.Sprintf("%d shells, %d idle, %d starting", all, idle, starting)
	})
	return pid
}

// TestPrestartedShellServesTheFirstRun: the run after a Prestart with the
// same options runs on the prestarted shell (the same bash), and no other
// shell is started.
func TestPrestartedShellServesTheFirstRun(t *testing.T) {
	e := newTestExecutor(t)
	o := modeOpts(t, RunOptions{Shell: testShell(t)})
	e.Prestart(o)
	pid := waitIdleShell(t, e)
	r := run(t, e, "echo $$", o)
	expect(t, r, strconv.Itoa(pid)+"\n", "0")
	if all, idle, _ := shellCounts(e); all != 1 || idle != 1 {
		t.Errorf("%d shells (%d idle) after the run, want the one prestarted", all, idle)
	}
	// A second Prestart with an idle shell there starts nothing.
	e.Prestart(o)
	waitIdleShell(t, e)
	if all, _, _ := shellCounts(e); all != 1 {
		t.Errorf("a Prestart beside an idle shell started another: %d shells", all)
	}
}

// TestRunDuringPrestartTakesIt: a run that comes while the Prestart still
// takes the rc snapshot or starts bash waits for that shell: one shell in
// all, and the run's output is right.
func TestRunDuringPrestartTakesIt(t *testing.T) {
	e := newTestExecutor(t)
	sh := testShell(t)
	// A lazily taken snapshot of an rc that defines a function: the run
	// comes while the Prestart is still taking it.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("prestart_fn() { echo from-rc; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh.Env = map[string]string{"HOME": home}
	sh.LazySnapshot = true
	o := modeOpts(t, RunOptions{Shell: sh})
	e.Prestart(o)
	expect(t, run(t, e, "prestart_fn", o), "from-rc\n", "0")
	if all, idle, starting := shellCounts(e); all != 1 || idle != 1 || starting != 0 {
		t.Errorf("%d shells (%d idle, %d starting) after the run, want the one prestarted", all, idle, starting)
	}
}

// TestPrestartedShellIsConfinedWithTheModelsState: a prestarted shell
// under a sandbox policy confines the first run as a shell started for it
// would, and the model's state reaches it.
func TestPrestartedShellIsConfinedWithTheModelsState(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	o := s.opts(t)
	o.State, o.View = NewSessionState(s.work), ModelView
	o = modeOpts(t, o)
	// An earlier command of the model's, on another executor's shell,
	// left a variable in the model's layer.
	set := o
	set.Capture = CaptureShell
	expect(t, run(t, newTestExecutor(t), "export PRESTART_VAR=from-state", set), "", "0")
	e := newTestExecutor(t)
	e.Prestart(o)
	pid := waitIdleShell(t, e)
	outside := filepath.Join(s.home, "outside")
	r := run(t, e, `echo "$$ $PRESTART_VAR"; echo x > "$HOME/outside"`, o)
	if !strings.HasPrefix(r.Output, strconv.Itoa(pid)+" from-state\n") {
		t.Errorf("the first run did not run on the prestarted shell (pid %d) with the model's state: %q", pid, r.Output)
	}
	denied(t, r, "echo > ~/outside on the prestarted shell", outside, "")
}

// TestCloseDuringPrestartLeavesNothing: an executor closed while its
// Prestart is under way (a run that ends without a bash call) waits for it
// and leaves no process of it.
func TestCloseDuringPrestartLeavesNothing(t *testing.T) {
	mark := "AGENTSH_TEST_PRESTART=" + randomHex(8)
	for i := 0; i < 5; i++ {
		e := NewExecutor()
		sh := testShell(t)
		k, v, _ := strings.Cut(mark, "=")
		sh.Env = map[string]string{k: v}
		e.Prestart(RunOptions{Shell: sh})
		if i%2 == 1 {
			waitIdleShell(t, e)
		}
		done := make(chan struct{})
		go func() { e.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(hangGuard):
			all, idle, starting := shellCounts(e)
			t.Fatalf("Close hung: %d shells, %d idle, %d starting", all, idle, starting)
		}
		if left := proctest.Marked(mark); len(left) > 0 {
			t.Fatalf("round %d: processes left after Close: %v", i, left)
		}
		if _, err := e.Run(context.Background(), "true", RunOptions{Shell: sh}); err == nil {
			t.Fatal("a run after Close did not fail")
		}
	}
}

// TestPrestartSkipsFreshRuns: a context whose runs take a fresh shell each
// (the user's view outside the sandbox) gets nothing started ahead.
func TestPrestartSkipsFreshRuns(t *testing.T) {
	e := newTestExecutor(t)
	tool := &Tool{Executor: e}
	tool.Prestart(ToolContext{Settings: ToolSettings{Shell: testShell(t)}, State: NewSessionState(t.TempDir()), View: UserView})
	e.Close() // waits for any start under way
	if all, _, _ := shellCounts(e); all != 0 {
		t.Errorf("%d shells started for a fresh-shell context", all)
	}
}

// TestPrestartedModelShellLeavesOutToolNames: the shell the Tool prestarts
// for the model's view sources the model's snapshot (without the rc's
// tool-named definitions), like a shell started for the model's run; and
// that run takes it.
func TestPrestartedModelShellLeavesOutToolNames(t *testing.T) {
	home := withHome(t, "case $- in *i*) ;; *) return;; esac\nrm() { echo \"user rm $*\"; }\nuser_fn() { :; }\n")
	sh := testShell(t)
	sh.LazySnapshot = true
	sh.Env = map[string]string{"HOME": home}
	sh.ScrubEnv = DefaultScrubEnv()
	e := newTestExecutor(t)
	work := t.TempDir()
	tool := &Tool{Executor: e}
	tc := ToolContext{Cwd: work, Settings: ToolSettings{Shell: sh}, State: NewSessionState(work), View: ModelView}
	tool.Prestart(tc)
	pid := waitIdleShell(t, e)
	res, err := tool.Execute(context.Background(), ToolParams{Command: "type -t rm user_fn; echo pid=$$"}, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "file\nfunction\npid="+strconv.Itoa(pid)+"\n") {
		t.Errorf("the model's first run: %q (want rm as the file, user_fn from the rc, on prestarted shell %d)", res.Text, pid)
	}
}
