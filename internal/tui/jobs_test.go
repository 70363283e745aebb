package tui

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/jobs"
	"agentsh/internal/pty"
)

// jobsHangGuard bounds every wait on a job: only a hang trips it.
const jobsHangGuard = 30 * time.Second

// withJobs gives the harness's model a job manager of its own.
func withJobs(h *harness) *jobs.Manager {
	mgr := jobs.NewManager()
	h.t.Cleanup(mgr.Close)
	h.m.cfg.Jobs = mgr
	return mgr
}

// startJob runs command as a real job in bash.
func startJob(t *testing.T, mgr *jobs.Manager, command string) *jobs.Job {
	t.Helper()
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	j, err := mgr.Start(jobs.Spec{Command: command, Shell: sh, Cwd: t.TempDir(),
		Env: pty.BuildEnv(os.Environ(), map[string]string{"HOME": t.TempDir()})})
	if err != nil {
		t.Fatalf("start %q: %v", command, err)
	}
	return j
}

// waitJob waits until the job is in state want.
func waitJob(t *testing.T, j *jobs.Job, want string) {
	t.Helper()
	deadline := time.Now().Add(jobsHangGuard)
	for {
		st := j.Wait(context.Background(), time.Until(deadline))
		if st.String() == want {
			return
		}
		if st.Ended() || time.Now().After(deadline) {
			t.Fatalf("job %s is %q, want %q", j.ID(), st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) statusLine() string {
	lines := strings.Split(h.screen(), "\n")
	return lines[len(lines)-1]
}

// runCmd runs cmd (and a batch's commands) and returns the messages.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func hasMsg[T any](msgs []tea.Msg) bool {
	for _, m := range msgs {
		if _, ok := m.(T); ok {
			return true
		}
	}
	return false
}

func TestStatusLineJobs(t *testing.T) {
	h := newHarness(t, 100, 16)
	mgr := withJobs(h)
	if cmd := h.update(jobsTickMsg{}); cmd != nil {
		t.Errorf("a jobs tick with no job running asks for another")
	}
	if s := h.statusLine(); strings.Contains(s, "job") {
		t.Errorf("status line %q speaks of jobs with none", s)
	}

	sleeper := startJob(t, mgr, "sleep 60")
	// Any message notices the new job and starts the tick.
	cmd := h.update(tea.WindowSizeMsg{Width: 100, Height: 16})
	if msgs := runCmd(cmd); !hasMsg[jobsTickMsg](msgs) {
		t.Fatalf("no jobs tick with a job running: %v", msgs)
	}
	if cmd := h.update(tea.KeyPressMsg{Code: 'x', Text: "x"}); cmd != nil {
		t.Errorf("a second tick started while one is in flight")
	}
	if s := h.statusLine(); !strings.HasSuffix(strings.TrimSpace(s), "1 job") {
		t.Errorf("status line %q, want it to end with %q", s, "1 job")
	}

	asker := startJob(t, mgr, `read -p "Proceed? [y/N] " a; echo "got $a"`)
	waitJob(t, asker, "waiting for input")
	if cmd := h.update(jobsTickMsg{}); cmd == nil {
		t.Errorf("the tick stopped while jobs run")
	}
	if s := h.statusLine(); !strings.HasSuffix(strings.TrimSpace(s), "2 jobs · 1 waiting for input") {
		t.Errorf("status line %q, want %q at its end", s, "2 jobs · 1 waiting for input")
	}

	if err := asker.Input(`y\n`); err != nil {
		t.Fatal(err)
	}
	if st := asker.Final(); st.String() != "exited 0" {
		t.Fatalf("read job ended %q", st)
	}
	h.update(jobsTickMsg{})
	if s := h.statusLine(); !strings.HasSuffix(strings.TrimSpace(s), "1 job") || strings.Contains(s, "waiting") {
		t.Errorf("after the answer, status line %q, want it to end with %q", s, "1 job")
	}

	sleeper.Kill()
	if cmd := h.update(jobsTickMsg{}); cmd != nil {
		t.Errorf("the jobs tick goes on with every job ended")
	}
	if s := h.statusLine(); strings.Contains(s, "job") {
		t.Errorf("status line %q speaks of jobs with none running", s)
	}
}

func TestQuitAsksWhileJobsRun(t *testing.T) {
	h := newHarness(t, 100, 16)
	mgr := withJobs(h)
	ask := "2 jobs running — quit and stop them? y/n"

	// Without jobs, ctrl+d quits at once.
	if msgs := runCmd(h.press('d', tea.ModCtrl)); !hasMsg[tea.QuitMsg](msgs) {
		t.Fatalf("ctrl+d without jobs: %v, want quit", msgs)
	}
	h.m.quitting = false

	startJob(t, mgr, "sleep 60")
	startJob(t, mgr, "sleep 60")

	// ctrl+d asks; n answers no.
	if msgs := runCmd(h.press('d', tea.ModCtrl)); hasMsg[tea.QuitMsg](msgs) {
		t.Fatal("ctrl+d quit with jobs running without asking")
	}
	if s := h.statusLine(); !strings.Contains(s, ask) {
		t.Fatalf("status line %q, want %q", s, ask)
	}
	h.typeText("x") // other keys leave the question up and type nothing
	if s := h.statusLine(); !strings.Contains(s, ask) || h.m.editor.Value() != "" {
		t.Fatalf("after x: status %q, editor %q", s, h.m.editor.Value())
	}
	if msgs := runCmd(h.press('n', 0)); hasMsg[tea.QuitMsg](msgs) || h.m.quitting {
		t.Fatal("n quit")
	}
	if s := h.statusLine(); strings.Contains(s, "quit") {
		t.Fatalf("question still shown after n: %q", s)
	}

	// ctrl+c twice asks; esc answers no.
	h.press('c', tea.ModCtrl)
	if msgs := runCmd(h.press('c', tea.ModCtrl)); hasMsg[tea.QuitMsg](msgs) {
		t.Fatal("ctrl+c twice quit with jobs running without asking")
	}
	if s := h.statusLine(); !strings.Contains(s, ask) {
		t.Fatalf("after ctrl+c twice, status line %q, want %q", s, ask)
	}
	h.press(tea.KeyEscape, 0)
	if s := h.statusLine(); strings.Contains(s, "quit") || h.m.quitting {
		t.Fatalf("question still shown after esc: %q", s)
	}

	// y quits.
	h.press('c', tea.ModCtrl)
	h.press('c', tea.ModCtrl)
	if msgs := runCmd(h.update(tea.KeyPressMsg{Code: 'y', Text: "y"})); !hasMsg[tea.QuitMsg](msgs) || !h.m.quitting {
		t.Fatalf("y did not quit: %v", msgs)
	}
}
