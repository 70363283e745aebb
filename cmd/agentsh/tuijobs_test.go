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
