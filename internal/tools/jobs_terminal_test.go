package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/proctest"
)

// endedWith returns the job's report once it has ended: r itself when the
// job_input that ended it said so, else job_output's wait (the program may
// take longer than job_input's second to exit on a loaded machine).
func (h *jobsHarness) endedWith(t *testing.T, id string, r Result) string {
	t.Helper()
	if !r.IsError && strings.HasPrefix(r.Content, "Job "+id+" exited ") {
		return r.Content
	}
	out := h.call(t, JobOutputName, map[string]any{"id": id, "wait_seconds": 30})
	if out.IsError || !strings.HasPrefix(out.Content, "Job "+id+" exited ") {
		t.Fatalf("the job did not end: %+v, then %+v", r, out)
	}
	return out.Content
}

// TestPythonREPLThroughTools: a program that needs a terminal works as a
// job: the python3 REPL, started in the background, shows its
// prompt, answers print(6*7) typed with job_input, and exit() ends it with
// code 0, leaving no process.
func TestPythonREPLThroughTools(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the REPL job test needs it")
	}
	h := newJobsHarness(t)
	cmd := py + " -q"
	r := h.call(t, "bash", map[string]any{"command": cmd, "background": true})
	if r.IsError || !strings.HasPrefix(r.Content, "Started job 1: "+cmd+"\n") {
		t.Fatalf("start: %+v", r)
	}
	if !strings.Contains(r.Content, ">>> ") {
		h.waitFor(t, "1", ">>> ")
	}
	in := h.call(t, JobInputName, map[string]any{"id": "1", "text": `print(6*7)\n`})
	if in.IsError {
		t.Fatalf("job_input: %+v", in)
	}
	if !strings.Contains(in.Content, "\n42\n") {
		// Slower than job_input's second: the answer comes with the next read.
		h.waitFor(t, "1", "\n42\n")
	}
	end := h.endedWith(t, "1", h.call(t, JobInputName, map[string]any{"id": "1", "text": `exit()\n`}))
	if !strings.HasPrefix(end, "Job 1 exited with code 0.\n") {
		t.Errorf("after exit(): %q", end)
	}
	if left := proctest.Marked(h.mark); len(left) > 0 {
		t.Errorf("processes left after the REPL exited: %v", left)
	}
}

// TestVimThroughTools: vim, a full-screen program, edits a file as a job:
// the keys typed with job_input (insert, escape, :wq) write the line, vim
// exits with code 0 and the file holds the line.
func TestVimThroughTools(t *testing.T) {
	vim, err := exec.LookPath("vim")
	if err != nil {
		t.Skip("vim not installed: the vim job test needs it")
	}
	h := newJobsHarness(t)
	file := filepath.Join(t.TempDir(), "note.txt")
	cmd := vim + " -u NONE -N " + file
	r := h.call(t, "bash", map[string]any{"command": cmd, "background": true})
	if r.IsError || !strings.HasPrefix(r.Content, "Started job 1: "+cmd+"\n") {
		t.Fatalf("start: %+v", r)
	}
	if !strings.Contains(r.Content, "[New]") {
		// vim's first screen names the new file; wait for it before typing.
		h.waitFor(t, "1", "[New]")
	}
	end := h.endedWith(t, "1", h.call(t, JobInputName, map[string]any{"id": "1", "text": `ihello\e:wq\n`}))
	if !strings.HasPrefix(end, "Job 1 exited with code 0.\n") {
		t.Errorf("after :wq: %q", end)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "hello\n" {
		t.Errorf("file %q (%v), want \"hello\\n\"", data, err)
	}
}
