package main

import (
	"encoding/json"
	"strings"
	"testing"

	"agentsh/internal/proctest"
)

// TestPrintModeBackgroundJob: in print mode the model's bash call with
// background: true returns at once as a job, the model can read it with
// job_output, and the jobs still running at exit are stopped, with a word
// on stderr and no process left (issue 12).
func TestPrintModeBackgroundJob(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tag := proctest.SleepTag()
	cmd, _ := json.Marshal(map[string]any{"command": "echo started; sleep " + tag, "background": true})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n % 3 {
		case 0:
			w.bash("call_bg", string(cmd))
		case 1:
			w.tool("call_out", "job_output", `{"id": 1}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, []string{"OPENAI_API_KEY=test", "OPENAI_BASE_URL=" + srv.URL + "/v1"},
		"-p", "start a server", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" || !strings.Contains(r.stderr, "stopping 1 running job(s) at exit") {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !strings.HasPrefix(got, "Started job 1: echo started; sleep "+tag+"\nstarted") {
		t.Errorf("background result %q", got)
	}
	if got := lastToolResult(reqs[2]); !strings.HasPrefix(got, "Job 1 is running.") {
		t.Errorf("job_output result %q", got)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("the job's sleep survived agentsh: %v", left)
	}
}
