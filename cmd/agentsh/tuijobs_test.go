package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
)

// The model starts two background jobs: the status line counts them, the
// jobs panel lists them, and quitting asks first; n goes back, y quits and
// stops them, nothing left.
func TestTUIQuitWithJobsAsks(t *testing.T) {
	tag := proctest.SleepTag()
	cmd, _ := json.Marshal(map[string]any{"command": "sleep " + tag, "background": true})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_1", string(cmd))
		case 1:
			w.bash("call_2", string(cmd))
		default:
			w.answer("Both started.")
		}
	})
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.typeLine("start two servers")
	tt.waitText("Both started.")
	tt.waitText("2 jobs")

	tt.keys("C-d")
	tt.waitText("2 jobs running — quit and stop them? y/n")
	tt.keys("n")
	tt.waitScreen("the question to go", func(s string) bool { return !strings.Contains(s, "quit and stop them") })

	tt.keys("C-t")
	scr := tt.waitText("Jobs · 2 running")
	if !strings.Contains(scr, "sleep "+tag) {
		t.Errorf("the panel lacks the jobs' command:\n%s", scr)
	}
	tt.keys("Escape")
	tt.waitText("Message the agent")

	tt.keys("C-c", "C-c")
	tt.waitText("2 jobs running — quit and stop them? y/n")
	if tt.exited() {
		t.Fatal("agentsh quit before the answer")
	}
	tt.keys("y")
	tt.waitExit()
	tt.assertNoProcesses()
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("the jobs' sleeps survived agentsh: %v", left)
	}
}

// The model starts a job that waits at a prompt: the status line says so.
// The user attaches to it from the jobs panel, answers y, detaches with
// ctrl+z (the job runs on) and kills it with k: nothing of it is left.
func TestTUIAttachToJob(t *testing.T) {
	tag := proctest.SleepTag()
	command := `read -p "Proceed? [y/N] " a; echo "got $a"; sleep ` + tag
	call, _ := json.Marshal(map[string]any{"command": command, "background": true})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			w.bash("call_1", string(call))
			return
		}
		w.answer("The installer waits.")
	})
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.typeLine("run the installer")
	tt.waitText("The installer waits.")
	tt.waitText("1 job · 1 waiting for input")

	tt.keys("C-t")
	tt.waitText("Jobs · 1 running · 1 waiting for input")
	tt.keys("a")
	scr := tt.waitText("│Proceed? [y/N]")
	if !strings.Contains(scr, "ctrl+z detach") {
		t.Errorf("the attached overlay does not say how to detach:\n%s", scr)
	}
	tt.keys("y", "Enter")
	tt.waitText("│got y")

	tt.keys("C-z")
	scr = tt.waitText("detached from job 1: it keeps running")
	if strings.Contains(scr, "ctrl+z detach") || !strings.Contains(scr, "› 1    running") {
		t.Errorf("after ctrl+z:\n%s", scr)
	}
	if len(proctest.WithArg(tag)) == 0 {
		t.Fatalf("the job's sleep is gone after detach:\n%s", scr)
	}

	tt.keys("k")
	tt.waitText("job 1 killed")
	if left := append(proctest.WithArg(tag), proctest.WithArg(command)...); len(left) != 0 {
		t.Errorf("processes of the killed job left: %v", left)
	}
	tt.keys("Escape")
	tt.waitText("Message the agent")
	tt.keys("C-d") // no job runs: no question
	tt.waitExit()
	tt.assertNoProcesses()
}

// waitProcess waits until a process with arg among its arguments runs: the
// command has reached its shell, so ctrl+b finds it running.
func (tt *tmuxTUI) waitProcess(arg string) {
	tt.t.Helper()
	tt.waitScreen("a process with "+arg, func(string) bool { return len(proctest.WithArg(arg)) > 0 })
}

// ctrl+b moves a running `!` command into the background: its block says it
// became job 1, the status line counts it, the editor runs the next command
// at once, and the jobs panel lists and kills it.
func TestTUICtrlBMovesBangToJob(t *testing.T) {
	tag := proctest.SleepTag()
	s := newSandbox(t)
	tt := startTUI(t, s)
	tt.typeLine("!sleep " + tag + "; echo")
	tt.waitText("· esc to cancel")
	tt.waitProcess(tag)

	tt.keys("C-b")
	scr := tt.waitText("→ job 1")
	for _, want := range []string{"[The user moved the command to the background: it became job 1.]", " · 1 job"} {
		if !strings.Contains(scr, want) {
			t.Errorf("after ctrl+b the screen lacks %q:\n%s", want, scr)
		}
	}
	for _, bad := range []string{"Running…", "(cancelled)", "(exit"} {
		if strings.Contains(scr, bad) {
			t.Errorf("after ctrl+b the block shows %q:\n%s", bad, scr)
		}
	}

	tt.typeLine("!echo hi")
	tt.waitText("$ echo hi\nhi\n")

	tt.keys("C-t")
	scr = tt.waitText("Jobs · 1 running")
	if !strings.Contains(scr, "sleep "+tag+"; echo") {
		t.Errorf("the panel lacks the job's command:\n%s", scr)
	}
	tt.keys("k")
	tt.waitText("job 1 killed")
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("the killed job's sleep is left: %v", left)
	}
	tt.keys("Escape")
	tt.waitText("Message the agent")
	tt.keys("C-d") // no job runs: no question
	tt.waitExit()
	tt.assertNoProcesses()
}

// A `!` command that waits at a prompt opens the overlay; ctrl+z there
// makes it job 1 waiting for input; attached from the jobs panel, it takes
// the user's answer.
func TestTUIBangPromptBecomesJob(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)
	tt.typeLine(`!read -p "Proceed? [y/N] " a; echo "got $a"`)
	// The prompt opens the overlay; ctrl+z there makes it a job.
	tt.waitText("│Proceed? [y/N]")
	tt.waitText("ctrl+z background")
	tt.keys("C-z")
	tt.waitText("→ job 1")
	scr := tt.waitText("1 job · 1 waiting for input")
	for _, want := range []string{"\nProceed? [y/N]", "[The user moved the command to the background: it became job 1.",
		"1 job · 1 waiting for input"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}

	tt.keys("C-t")
	tt.waitText("Jobs · 1 running · 1 waiting for input")
	tt.keys("a")
	tt.waitText("│Proceed? [y/N]")
	tt.keys("y", "Enter")
	tt.waitText("│got y")
	tt.waitText("the job has ended")
	tt.keys("Escape")
	tt.waitText("Jobs · 0 running")
	time.Sleep(100 * time.Millisecond) // an Esc right after another reads as alt+esc
	tt.keys("Escape")
	scr = tt.waitText("Message the agent")
	if strings.Contains(scr, "1 job") {
		t.Errorf("the ended job is still counted:\n%s", scr)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// ctrl+b while the model's foreground bash call runs: the call returns to
// the model as job 1, which goes on with its answer.
func TestTUICtrlBMovesModelCallToJob(t *testing.T) {
	tag := proctest.SleepTag()
	call, _ := json.Marshal(map[string]any{"command": "sleep " + tag})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			w.bash("call_1", string(call))
			return
		}
		w.answer("The server runs as job 1.")
	})
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.typeLine("start the server")
	tt.waitText("$ sleep " + tag)
	tt.waitProcess(tag)

	tt.keys("C-b")
	scr := tt.waitText("The server runs as job 1.")
	const moved = "The user moved the command to the background: it became job 1."
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !strings.Contains(got, moved) {
		t.Errorf("the model's tool result %q lacks %q", got, moved)
	}
	for _, want := range []string{"→ $ sleep " + tag, moved + " Job 1 is running.", " · 1 job"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
	if len(proctest.WithArg(tag)) == 0 {
		t.Errorf("the job's sleep is gone:\n%s", scr)
	}

	tt.keys("C-d")
	tt.waitText("1 job running — quit and stop it? y/n")
	tt.keys("y")
	tt.waitExit()
	tt.assertNoProcesses()
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("the job's sleep survived agentsh: %v", left)
	}
}
