package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/jobs"
	"agentsh/internal/proctest"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// newJobsAgent is newLoopAgent with a job manager: the model's bash takes
// background: true and the job tools are registered.
func newJobsAgent(t *testing.T) (*AgentSession, *jobs.Manager, *tools.Registry) {
	t.Helper()
	a, _ := newAgent(t)
	jm := jobs.NewManager()
	t.Cleanup(jm.Close)
	a.SetJobs(jm)
	reg, err := NewTools(ToolsConfig{Current: func() *AgentSession { return a }, Executor: a.exec, Jobs: jm})
	if err != nil {
		t.Fatal(err)
	}
	return a, jm, reg
}

// gatedJob is a background command that ends only once the test creates
// its gate file, so it cannot end within the bash call's settle time.
func gatedJob(t *testing.T) (args, gate string) {
	gate = filepath.Join(t.TempDir(), "gate")
	b, _ := json.Marshal(map[string]any{
		"command":    "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo compiling; echo built",
		"background": true,
	})
	return string(b), gate
}

// endJob opens the gate and waits until job 1 has ended.
func endJob(t *testing.T, jm *jobs.Manager, gate string) {
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Error(err)
	}
	j, ok := jm.Get("1")
	if !ok {
		t.Error("no job 1")
		return
	}
	j.Final()
}

func countIn(msgs []string, sub string) int {
	n := 0
	for _, m := range msgs {
		n += strings.Count(m, sub)
	}
	return n
}

// TestPromptJobEndNotice: a background job that ends while the model works
// is told to it at its next request, once, as a user note after the tool
// results with the job's id, exit status, command and output tail.
func TestPromptJobEndNotice(t *testing.T) {
	a, jm, reg := newJobsAgent(t)
	args, gate := gatedJob(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			w.ToolCall(0, "call_bg", "bash", args)
			w.Finish("tool_calls")
		case 1:
			// The job is still running while this request is built; it
			// ends now, while the model "thinks" and calls another tool.
			endJob(t, jm, gate)
			w.ToolCall(0, "call_2", "bash", `{"command":"echo other"}`)
			w.Finish("tool_calls")
		case 2:
			w.ToolCall(0, "call_3", "bash", `{"command":"echo third"}`)
			w.Finish("tool_calls")
		default:
			w.Answer("done")
		}
	})
	if err := promptWithGuard(t, context.Background(), a, "build it", openAIProvider(srv), reg, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Bodies()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	cmd := "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo compiling; echo built"
	want := "user: [Job 1 exited with code 0: " + cmd + "]\ncompiling\nbuilt"
	if got := countIn(wireMessages(t, reqs[1]), "[Job 1 exited"); got != 0 {
		t.Errorf("request 1 (job running) has %d notices", got)
	}
	msgs := wireMessages(t, reqs[2])
	if last := msgs[len(msgs)-1]; last != want {
		t.Errorf("request 2 ends with %q, want %q", last, want)
	}
	for i := 2; i < 4; i++ {
		if got := countIn(wireMessages(t, reqs[i]), "[Job 1 exited"); got != 1 {
			t.Errorf("request %d has %d notices, want 1", i, got)
		}
	}
	// The note stays in the session, where the next requests read it.
	var notes int
	for _, m := range a.Messages() {
		if u, ok := m.(*session.UserMessage); ok && strings.HasPrefix(u.Text, "[Job 1 exited") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d notes in the session, want 1", notes)
	}
}

// TestPromptJobEndReadNoNotice: a job whose end the model read with
// job_output is not announced again.
func TestPromptJobEndReadNoNotice(t *testing.T) {
	a, jm, reg := newJobsAgent(t)
	args, gate := gatedJob(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			w.ToolCall(0, "call_bg", "bash", args)
			w.Finish("tool_calls")
		case 1:
			endJob(t, jm, gate)
			w.ToolCall(0, "call_out", "job_output", `{"id": 1}`)
			w.Finish("tool_calls")
		default:
			w.Answer("done")
		}
	})
	if err := promptWithGuard(t, context.Background(), a, "build it", openAIProvider(srv), reg, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Bodies()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	msgs := wireMessages(t, reqs[2])
	if last := msgs[len(msgs)-1]; last != "tool: (call_out) Job 1 exited with code 0.\ncompiling\nbuilt" {
		t.Errorf("job_output result %q", last)
	}
	if got := countIn(msgs, "[Job 1 exited"); got != 0 {
		t.Errorf("%d notices after job_output read the end", got)
	}
}

// TestJobNoticeTail: a long output is cut to its last 20 lines with a word
// on how to read the rest; jobs that ended before SetJobs are not told.
func TestJobNoticeTail(t *testing.T) {
	a, _ := newAgent(t)
	jm := jobs.NewManager()
	t.Cleanup(jm.Close)
	old, err := jm.Start(jobs.Spec{Command: "echo old"})
	if err != nil {
		t.Fatal(err)
	}
	old.Final()
	a.SetJobs(jm)
	j, err := jm.Start(jobs.Spec{Command: "seq 1 100; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	j.Final()
	var lines []string
	for i := 81; i <= 100; i++ {
		lines = append(lines, fmt.Sprint(i))
	}
	want := "[Job 2 exited with code 3: seq 1 100; exit 3]\n" + strings.Join(lines, "\n") +
		"\n[Only the last lines of its output; job_output {\"id\": \"2\"} shows what you have not read]"
	if got := a.JobNotice(); got != want {
		t.Errorf("notice\n got  %q\n want %q", got, want)
	}
	if got := a.JobNotice(); got != "" {
		t.Errorf("second notice %q, want none", got)
	}
}

// TestBangBackgroundNowBeforeStart: a ctrl+b pressed before the `!`
// command even started (its channel already closed) is not lost: the
// command becomes a job at once, the recorded output says so, and killing
// the job leaves nothing.
func TestBangBackgroundNowBeforeStart(t *testing.T) {
	a, jm, _ := newJobsAgent(t)
	tag := proctest.SleepTag()
	now := make(chan struct{})
	close(now)
	res, err := a.ExecuteBash(context.Background(), "sleep "+tag, nil, BashOptions{BackgroundNow: now})
	if err != nil || res.Job == nil || res.JobReason != bash.DetachUser {
		t.Fatalf("not a job: %+v, %v", res, err)
	}
	const notice = "[The user moved the command to the background: it became job 1.]"
	if res.Output != notice {
		t.Errorf("output %q", res.Output)
	}
	msgs := a.Messages()
	if b, ok := msgs[len(msgs)-1].(*session.BashExecutionMessage); !ok || b.Output != notice || b.ExitCode != nil {
		t.Errorf("recorded %#v", msgs[len(msgs)-1])
	}
	if j, ok := jm.Get("1"); !ok || j != res.Job {
		t.Fatalf("job 1 is not the session manager's")
	}
	res.Job.Kill()
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("left after kill: %v", left)
	}
}
