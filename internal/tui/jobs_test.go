package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/jobs"
	"agentsh/internal/pty"
	"agentsh/internal/testkit"
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
	var st jobs.State
	testkit.Eventually(t, jobsHangGuard, fmt.Sprintf("job %s to be %q", j.ID(), want), func() (bool, string) {
		// Wait returns at once for a job waiting or ended, else at its
		// next such state or after a moment.
		st = j.Wait(context.Background(), 50*time.Millisecond)
		return st.String() == want || st.Ended(), fmt.Sprintf("%q; screen:\n%s", st, strings.Join(j.Screen().Text(), "\n"))
	})
	if st.String() != want {
		t.Fatalf("job %s is %q, want %q", j.ID(), st, want)
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

// waitScreenText waits until the job's terminal shows want.
func waitScreenText(t *testing.T, j *jobs.Job, want string) {
	t.Helper()
	testkit.Eventually(t, jobsHangGuard, fmt.Sprintf("job %s to show %q", j.ID(), want), func() (bool, string) {
		text := strings.Join(j.Screen().Text(), "\n")
		return strings.Contains(text, want), "screen:\n" + text
	})
}

// checkPanel asserts the panel fills the screen, no wider than it.
func checkPanel(t *testing.T, h *harness, w, ht int) string {
	t.Helper()
	s := h.screen()
	lines := strings.Split(s, "\n")
	if len(lines) != ht {
		t.Errorf("panel has %d lines, want %d:\n%s", len(lines), ht, s)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("panel line %d is %d wide: %q", i, lw, l)
		}
	}
	return s
}

func TestJobsPanel(t *testing.T) {
	const w, ht = 90, 16
	h := newHarness(t, w, ht)
	mgr := withJobs(h)
	server := startJob(t, mgr, "echo hello-from-job; sleep 60")
	done := startJob(t, mgr, "echo done-job")
	waitScreenText(t, server, "hello-from-job")
	if st := done.Final(); st.String() != "exited 0" {
		t.Fatalf("job 2 ended %q", st)
	}

	// /jobs opens the panel on the newest job still running.
	h.typeText("/jobs")
	h.press(tea.KeyEnter, 0)
	if layerOn[*jobsPanel](h) == nil {
		t.Fatal("/jobs did not open the panel")
	}
	s := checkPanel(t, h, w, ht)
	lines := strings.Split(s, "\n")
	for _, want := range []string{
		"Jobs · 1 running",
		"ID   STATE               RUNTIME     OUTPUT  COMMAND",
		"── last output of job 1 ",
		"hello-from-job",
		jobsPanelHelp(),
	} {
		if !strings.Contains(s, want) {
			t.Errorf("panel lacks %q:\n%s", want, s)
		}
	}
	row := func(id string) string {
		for _, l := range lines {
			if f := strings.Fields(strings.TrimPrefix(l, "›")); len(f) > 0 && f[0] == id {
				return l
			}
		}
		t.Fatalf("no row for job %s:\n%s", id, s)
		return ""
	}
	if r := row("1"); !strings.HasPrefix(r, "› 1    running") || !strings.HasSuffix(r, "echo hello-from-job; sleep 60") ||
		!strings.Contains(r, "bytes") {
		t.Errorf("row of job 1 = %q", r)
	}
	if r := row("2"); !strings.HasPrefix(r, "  2    exited 0") || !strings.HasSuffix(r, "echo done-job") {
		t.Errorf("row of job 2 = %q", r)
	}

	// ↓ selects job 2: its output shows; k on it says it has ended.
	h.press(tea.KeyDown, 0)
	s = checkPanel(t, h, w, ht)
	if !strings.Contains(s, "── last output of job 2 ") || !strings.Contains(s, "done-job") {
		t.Errorf("after ↓, panel:\n%s", s)
	}
	if cmd := h.update(tea.KeyPressMsg{Code: 'k', Text: "k"}); cmd != nil {
		t.Error("k on an ended job asks for a kill")
	}
	if s := h.screen(); !strings.Contains(s, "job 2 has already ended (exited 0)") {
		t.Errorf("k on an ended job:\n%s", s)
	}
	// enter on a job whose output fits its screen: no output file.
	h.press(tea.KeyEnter, 0)
	if layerOn[*pagerLayer](h) != nil || !strings.Contains(h.screen(), "job 2 has no output file yet") {
		t.Errorf("enter without an artifact:\n%s", h.screen())
	}

	// ↑ and k kill job 1; the panel says so and the row shows it.
	h.press(tea.KeyUp, 0)
	msgs := runCmd(h.update(tea.KeyPressMsg{Code: 'k', Text: "k"}))
	if !strings.Contains(h.screen(), "killing job 1…") {
		t.Errorf("no kill note:\n%s", h.screen())
	}
	for _, msg := range msgs {
		h.update(msg)
	}
	if st := server.State(); st.String() != "killed" {
		t.Fatalf("job 1 is %q after k", st)
	}
	s = checkPanel(t, h, w, ht)
	if !strings.Contains(s, "job 1 killed") || !strings.Contains(s, "Jobs · 0 running") {
		t.Errorf("after the kill:\n%s", s)
	}

	// esc closes; ctrl+t opens it again.
	h.press(tea.KeyEscape, 0)
	if layerOn[*jobsPanel](h) != nil || strings.Contains(h.screen(), "Jobs ·") {
		t.Fatalf("esc did not close the panel:\n%s", h.screen())
	}
	h.press('t', tea.ModCtrl)
	if layerOn[*jobsPanel](h) == nil {
		t.Fatal("ctrl+t did not open the panel")
	}
}

// enter in the panel opens a job's whole output, once it has an output
// file, in the pager; q returns to the panel.
func TestJobsPanelOpensOutputInPager(t *testing.T) {
	const w, ht = 90, 16
	h := newHarnessStore(t, w, ht, true)
	mgr := withJobs(h)
	arts := h.m.cfg.Session.Artifacts()
	if arts == nil {
		t.Fatal("a stored session has no artifact folder")
	}
	id, path, err := arts.Allocate("bash")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	// 108,894 bytes: more than a job keeps in memory, so the file holds it.
	j, err := mgr.Start(jobs.Spec{Command: "seq 1 20000", Shell: sh, Cwd: t.TempDir(),
		Env:          pty.BuildEnv(os.Environ(), map[string]string{"HOME": t.TempDir()}),
		ArtifactPath: path, ArtifactID: id})
	if err != nil {
		t.Fatal(err)
	}
	if st := j.Final(); st.String() != "exited 0" {
		t.Fatalf("job ended %q", st)
	}
	if j.ArtifactID() != id {
		t.Fatalf("job's artifact %q, want %q", j.ArtifactID(), id)
	}
	h.press('t', tea.ModCtrl)
	h.press(tea.KeyEnter, 0)
	if layerOn[*pagerLayer](h) == nil {
		t.Fatalf("enter did not open the pager:\n%s", h.screen())
	}
	s := h.screen()
	if !strings.Contains(s, "artifact://"+id+" · job 1: seq 1 20000") || !strings.Contains(s, "of 20000") {
		t.Errorf("pager:\n%s", s)
	}
	h.update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if layerOn[*pagerLayer](h) != nil || layerOn[*jobsPanel](h) == nil || !strings.Contains(h.screen(), "Jobs · 0 running") {
		t.Errorf("q did not return to the panel:\n%s", h.screen())
	}
}

// TestJobEndAnnounced: a job that ends is said once in the transcript at
// the next jobs tick ("Job 1 exited with code 3: …"), as the model is told
// at its next step.
func TestJobEndAnnounced(t *testing.T) {
	h := newHarness(t, 100, 16)
	mgr := withJobs(h)
	j := startJob(t, mgr, "echo built; exit 3")
	if st := j.Final(); st.String() != "exited 3" {
		t.Fatalf("job ended %q", st)
	}
	h.update(jobsTickMsg{})
	want := "Job 1 exited with code 3: echo built; exit 3"
	if n := strings.Count(h.screen(), want); n != 1 {
		t.Fatalf("%q appears %d times:\n%s", want, n, h.screen())
	}
	h.update(jobsTickMsg{})
	if n := strings.Count(h.screen(), want); n != 1 {
		t.Errorf("announced again: %d times", n)
	}
}
