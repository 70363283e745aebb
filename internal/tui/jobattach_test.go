package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/jobs"
)

// runWatch runs an attached view's watch command, within the hang guard.
func runWatch(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case msg := <-got:
		return msg
	case <-time.After(jobsHangGuard):
		t.Fatal("the attached view's watch never reported")
		return nil
	}
}

// a in the jobs panel shows the job's screen in the overlay, sized to it;
// keys reach the program, esc included, without killing it; ctrl+z returns
// to the panel with the job still running at its own size again.
func TestAttachToJob(t *testing.T) {
	const w, ht = 90, 20
	h := newHarness(t, w, ht)
	mgr := withJobs(h)
	j := startJob(t, mgr, `IFS= read -r -p "name? " n; printf 'got %q size %s\n' "$n" "$(stty size)"; `+
		`read -p "more? " m; echo "bye $m $(stty size)"`)
	waitJob(t, j, "waiting for input")

	h.press('t', tea.ModCtrl)
	if s := h.screen(); !strings.Contains(s, "a attach") {
		t.Errorf("the panel's help does not name a:\n%s", s)
	}
	watch := h.update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if layerOn[*jobAttach](h) == nil || watch == nil {
		t.Fatalf("a did not attach (watch %v):\n%s", watch, h.screen())
	}
	if c, r := j.Size(); c != w-2 || r != ht*4/5-overlayChrome {
		t.Errorf("attached job's terminal is %dx%d, want the overlay's %dx%d", c, r, w-2, ht*4/5-overlayChrome)
	}
	s := h.screen()
	lines := strings.Split(s, "\n")
	if len(lines) != ht {
		t.Errorf("screen has %d lines, want %d", len(lines), ht)
	}
	for _, want := range []string{"Jobs · 1 running", "job 1 · $ IFS= read", "waiting for input", "│name?", attachFooterText()} {
		if !strings.Contains(s, want) {
			t.Errorf("attached screen lacks %q:\n%s", want, s)
		}
	}
	// The watch reports the resize and is followed by the next one.
	if msg := runWatch(t, watch); msg == nil {
		t.Fatal("the watch reported nothing while attached")
	} else if watch = h.update(msg); watch == nil {
		t.Fatal("no next watch while the job runs")
	}

	// A bigger window: the job follows the overlay.
	h.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	h.press(tea.KeyEscape, 0)
	h.typeText("bob")
	h.press(tea.KeyEnter, 0)
	want := `got $'\Ebob' size 20 98`
	waitScreenText(t, j, want)
	if s := h.screen(); !strings.Contains(s, want) || !strings.Contains(s, "more?") {
		t.Errorf("the overlay does not show the answer %q:\n%s", want, s)
	}
	if msg := runWatch(t, watch); msg == nil {
		t.Error("the watch did not report the program's output")
	}

	// ctrl+z detaches: the panel again, the job runs on at 120x40.
	h.press('z', tea.ModCtrl)
	if layerOn[*jobAttach](h) != nil || layerOn[*jobsPanel](h) == nil {
		t.Fatalf("ctrl+z did not return to the panel:\n%s", h.screen())
	}
	s = h.screen()
	if !strings.Contains(s, "detached from job 1: it keeps running") || strings.Contains(s, attachFooterText()) {
		t.Errorf("after ctrl+z:\n%s", s)
	}
	if st := j.State(); st.Ended() {
		t.Fatalf("the job ended on detach: %s", st)
	}
	if err := j.Input(`later\n`); err != nil {
		t.Fatal(err)
	}
	waitScreenText(t, j, "bye later 40 120")
	if st := j.Final(); st.String() != "exited 0" {
		t.Errorf("job ended %q", st)
	}
}

// A job that ends while attached: the watch reports the end, the overlay
// says so, and any key returns to the panel.
func TestAttachedJobEnds(t *testing.T) {
	const w, ht = 90, 20
	h := newHarness(t, w, ht)
	mgr := withJobs(h)
	j := startJob(t, mgr, "cat")
	waitJob(t, j, "waiting for input")
	h.press('t', tea.ModCtrl)
	watch := h.update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if layerOn[*jobAttach](h) == nil {
		t.Fatal("a did not attach")
	}
	h.typeText("hello")
	h.press(tea.KeyEnter, 0)
	waitScreenText(t, j, "hello\nhello")
	h.press('d', tea.ModCtrl) // EOF: cat ends
	for watch != nil {
		watch = h.update(runWatch(t, watch))
	}
	if st := j.State(); st.String() != "exited 0" {
		t.Fatalf("after ctrl+d the job is %q", st)
	}
	s := h.screen()
	for _, want := range []string{"exited 0", attachEndedFooter(), "│hello"} {
		if !strings.Contains(s, want) {
			t.Errorf("the ended job's overlay lacks %q:\n%s", want, s)
		}
	}
	if h.m.View().Cursor != nil {
		t.Error("the cursor is still shown in an ended job's overlay")
	}
	h.update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if layerOn[*jobAttach](h) != nil || layerOn[*jobsPanel](h) == nil || !strings.Contains(h.screen(), "job 1 exited 0") {
		t.Errorf("a key did not close the ended job's overlay:\n%s", h.screen())
	}
}

// a on an ended job says so; a report from a detached view starts nothing.
func TestAttachRefusedAndStale(t *testing.T) {
	h := newHarness(t, 90, 20)
	mgr := withJobs(h)
	done := startJob(t, mgr, "echo over")
	if st := done.Final(); st.String() != "exited 0" {
		t.Fatalf("job ended %q", st)
	}
	h.press('t', tea.ModCtrl)
	if cmd := h.update(tea.KeyPressMsg{Code: 'a', Text: "a"}); cmd != nil || layerOn[*jobAttach](h) != nil {
		t.Fatal("a attached to an ended job")
	}
	if s := h.screen(); !strings.Contains(s, "job 1 has already ended (exited 0)") {
		t.Errorf("a on an ended job:\n%s", s)
	}

	j := startJob(t, mgr, "sleep 60")
	h.press(tea.KeyDown, 0)
	h.update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	a := layerOn[*jobAttach](h)
	if a == nil || a.job != j {
		t.Fatalf("a did not attach to job 2")
	}
	h.press('z', tea.ModCtrl)
	if cmd := h.update(attachChangedMsg{a: a}); cmd != nil {
		t.Error("a detached view's report started another watch")
	}
	if msg := runWatch(t, a.watch(false)); msg != nil {
		t.Errorf("a detached view's watch reported %T", msg)
	}
	if st := j.State(); st.Kind != jobs.Running {
		t.Errorf("job 2 is %s after detach", st)
	}
}
