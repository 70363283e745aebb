package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/proctest"
)

// terminalStdin is the modes' default: foreground commands read a terminal.
func terminalStdin(ts *bash.ToolSettings) { ts.Shell.TerminalStdin = true }

// TestForegroundPromptThroughTools: a foreground `read -p` returns as a
// job waiting for input with the prompt shown, instead of holding the call;
// job_input "y\n" answers it: "got y", exit 0.
func TestForegroundPromptThroughTools(t *testing.T) {
	h := newJobsHarnessWith(t, terminalStdin)
	start := time.Now()
	r := h.call(t, "bash", map[string]any{"command": `read -p "Proceed? [y/N] " a; echo "got $a"`})
	took := time.Since(start)
	want := "Proceed? [y/N] \n\nThe command is waiting for input, so it became job 1. Job 1 is waiting for input. " + hint1
	if r.IsError || r.Content != want {
		t.Fatalf("result %+v\nwant %q", r, want)
	}
	var d bash.ToolDetails
	if err := json.Unmarshal(r.Details, &d); err != nil || d.JobID != "1" || d.ExitCode != nil {
		t.Errorf("details %s", r.Details)
	}
	t.Logf("returned as a job after %v", took)
	in := h.call(t, JobInputName, map[string]any{"id": 1, "text": `y\n`})
	if in.IsError || in.Content != "Job 1 exited with code 0.\ny\ngot y" {
		t.Errorf("job_input: %q", in.Content)
	}
	if r := h.call(t, JobsName, nil); !strings.Contains(r.Content, "exited 0") {
		t.Errorf("jobs: %q", r.Content)
	}
}

// TestAutoBackgroundThroughTools: with bash.autoBackgroundSeconds 1, a
// build that takes longer becomes job 1 with its output so far; job_output
// with wait_seconds returns the rest and exit 0.
func TestAutoBackgroundThroughTools(t *testing.T) {
	h := newJobsHarnessWith(t, func(ts *bash.ToolSettings) {
		terminalStdin(ts)
		ts.AutoBackground = time.Second
	})
	r := h.call(t, "bash", map[string]any{"command": "echo compiling; sleep 3; echo built"})
	want := "compiling\n\nThe command is still running after 1.0s, so it became job 1 instead of holding the turn. Job 1 is running. " + hint1
	if r.IsError || r.Content != want {
		t.Fatalf("result %+v\nwant %q", r, want)
	}
	out := h.call(t, JobOutputName, map[string]any{"id": "1", "wait_seconds": 10})
	if out.IsError || out.Content != "Job 1 exited with code 0.\nbuilt" {
		t.Errorf("job_output: %q", out.Content)
	}
}

// TestAutoBackgroundKeepsModelTimeout: the model's timeout still kills a
// command that became a job, with nothing left.
func TestAutoBackgroundKeepsModelTimeout(t *testing.T) {
	h := newJobsHarnessWith(t, func(ts *bash.ToolSettings) {
		terminalStdin(ts)
		ts.AutoBackground = time.Second
	})
	tag := proctest.SleepTag()
	r := h.call(t, "bash", map[string]any{"command": "sleep " + tag, "timeout": 3})
	if r.IsError || !strings.Contains(r.Content, "it became job 1") {
		t.Fatalf("result %+v", r)
	}
	out := h.call(t, JobOutputName, map[string]any{"id": "1", "wait_seconds": 20})
	if !strings.HasPrefix(out.Content, "Job 1 timed out and was killed.") {
		t.Errorf("job_output: %q", out.Content)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Errorf("left after the timeout: %v", left)
	}
}

// TestStdinNullSetting: with bash.stdin "null" a command reading stdin
// gets EOF at once, as before.
func TestStdinNullSetting(t *testing.T) {
	h := newJobsHarness(t)
	r := h.call(t, "bash", map[string]any{"command": `cat; read -p "Proceed? " a; echo "rc=$? a=$a"`})
	if r.IsError || r.Content != "rc=1 a=\n" {
		t.Errorf("%+v", r)
	}
}

// TestInputToJobWithoutTerminal: with bash.stdin "null", a command that
// became a job after the auto-background threshold has no terminal:
// job_input says so at once instead of waiting for the job to end.
func TestInputToJobWithoutTerminal(t *testing.T) {
	h := newJobsHarnessWith(t, func(ts *bash.ToolSettings) { ts.AutoBackground = 300 * time.Millisecond })
	tag := proctest.SleepTag()
	if r := h.call(t, "bash", map[string]any{"command": "sleep " + tag}); r.IsError || !strings.Contains(r.Content, "it became job 1") {
		t.Fatalf("%+v", r)
	}
	in := h.call(t, JobInputName, map[string]any{"id": "1", "text": `y\n`})
	if !in.IsError || in.Content != `Job 1 takes no input: its stdin is not a terminal (bash.stdin is "null").` {
		t.Errorf("job_input: %+v", in)
	}
	if st := h.call(t, JobsName, nil); !strings.Contains(st.Content, "running") {
		t.Errorf("jobs: %q", st.Content)
	}
}
