package main

import (
	"encoding/json"
	"strings"
	"testing"

	"agentsh/internal/proctest"
)

// The model starts two background jobs: the status line counts them, the
// jobs panel lists them, and quitting asks first; n goes back, y quits and
// stops them, nothing left (issue 12).
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
// ctrl+b (the job runs on) and kills it with k: nothing of it is left
// (issue 12).
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
	if !strings.Contains(scr, "ctrl+b detach") {
		t.Errorf("the attached overlay does not say how to detach:\n%s", scr)
	}
	tt.keys("y", "Enter")
	tt.waitText("│got y")

	tt.keys("C-b")
	scr = tt.waitText("detached from job 1: it keeps running")
	if strings.Contains(scr, "ctrl+b detach") || !strings.Contains(scr, "› 1    running") {
		t.Errorf("after ctrl+b:\n%s", scr)
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
