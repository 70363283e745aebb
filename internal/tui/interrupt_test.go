package tui

import (
	"context"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/llm"
)

// heldModel is a model that answers each request with "answer N" once the
// test releases it (or fails with ctx.Err() when the turn is aborted), and
// records the last user message of every request.
type heldModel struct {
	release chan struct{}
	mu      sync.Mutex
	asked   []string
}

func newHeldModel() *heldModel { return &heldModel{release: make(chan struct{}, 16)} }

func (f *heldModel) Name() string { return "openai" }

func (f *heldModel) Stream(ctx context.Context, req llm.Request, emit func(llm.Event)) (llm.Message, string, error) {
	var last string
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleUser {
			last = msg.Text
		}
	}
	f.mu.Lock()
	f.asked = append(f.asked, last)
	n := len(f.asked)
	f.mu.Unlock()
	select {
	case <-f.release:
	case <-ctx.Done():
		return llm.Message{Role: llm.RoleAssistant}, llm.StopAborted, ctx.Err()
	}
	text := "answer " + string(rune('0'+n))
	emit(llm.Event{Kind: llm.TextDelta, Text: text})
	return llm.Message{Role: llm.RoleAssistant, Text: text}, llm.StopEnd, nil
}

func (f *heldModel) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// newModelHarness is a harness whose prompts go to a held model.
func newModelHarness(t *testing.T) (*harness, *heldModel) {
	t.Helper()
	h := newHarness(t, 100, 30)
	f := newHeldModel()
	h.m.cfg.Models = agent.ModelsOf(f, "fake")
	return h, f
}

func (h *harness) send(text string) {
	h.typeText(text)
	h.press(tea.KeyEnter, 0)
}

func (h *harness) ctrlC() tea.Cmd { return h.press('c', tea.ModCtrl) }

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestCtrlCArmExpires(t *testing.T) {
	h := newHarness(t, 80, 24)
	if cmd := h.ctrlC(); cmd == nil || h.m.quitting {
		t.Fatal("first ctrl+c quit or started no expiry tick")
	}
	if !strings.Contains(h.screen(), "press ctrl+c again to quit") {
		t.Fatalf("no quit hint:\n%s", h.screen())
	}
	// The tick the arm started arrives: the hint goes, and the next
	// ctrl+c only arms again.
	h.update(quitDisarmMsg{gen: h.m.quitGen})
	if strings.Contains(h.screen(), "again to quit") {
		t.Errorf("hint still shown after the arm expired:\n%s", h.screen())
	}
	h.ctrlC()
	if h.m.quitting {
		t.Fatal("ctrl+c after the arm expired quit")
	}
	if !strings.Contains(h.screen(), "press ctrl+c again to quit") {
		t.Errorf("ctrl+c after the expiry did not arm again:\n%s", h.screen())
	}
	if !isQuit(h.ctrlC()) {
		t.Error("ctrl+c twice did not quit")
	}
}

func TestCtrlCStaleExpiryKeepsANewArm(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.ctrlC()
	old := h.m.quitGen
	h.typeText("x") // disarms
	h.ctrlC()       // arms again
	h.update(quitDisarmMsg{gen: old})
	if !strings.Contains(h.screen(), "press ctrl+c again to quit") {
		t.Fatalf("the first arm's tick ended the second arm:\n%s", h.screen())
	}
	if !isQuit(h.ctrlC()) {
		t.Error("ctrl+c did not quit while armed")
	}
}

func TestCtrlCDisarmedByKeyOrPaste(t *testing.T) {
	for _, c := range []struct {
		name string
		msg  tea.Msg
	}{
		{"key", tea.KeyPressMsg{Code: 'a', Text: "a"}},
		{"arrow", tea.KeyPressMsg{Code: tea.KeyLeft}},
		{"paste", tea.PasteMsg{Content: "pasted"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 80, 24)
			h.ctrlC()
			h.update(c.msg)
			if strings.Contains(h.screen(), "again to quit") {
				t.Errorf("hint still shown after a %s:\n%s", c.name, h.screen())
			}
			h.ctrlC()
			if h.m.quitting {
				t.Fatalf("ctrl+c, %s, ctrl+c quit", c.name)
			}
		})
	}
}

func TestCtrlCInterruptsBang(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.send("!sleep 30")
	h.waitFor("sleep to run", func() bool { return h.m.cfg.Session.IsBashRunning() })
	h.typeText("draft")
	if cmd := h.ctrlC(); isQuit(cmd) || h.m.quitting {
		t.Fatal("ctrl+c during a ! command quit")
	}
	h.waitFor("the cancel", h.bangIdle)
	s := h.screen()
	if !strings.Contains(s, "cancelled") {
		t.Errorf("the command was not cancelled:\n%s", s)
	}
	if strings.Contains(s, "again to quit") {
		t.Errorf("interrupting armed quitting:\n%s", s)
	}
	if got := h.m.editor.Value(); got != "draft" {
		t.Errorf("ctrl+c during a command changed the editor: %q", got)
	}
	// Idle now: the first ctrl+c clears the editor, the second quits.
	if isQuit(h.ctrlC()) {
		t.Fatal("one ctrl+c on an idle editor quit")
	}
	if got := h.m.editor.Value(); got != "" {
		t.Errorf("ctrl+c on an idle editor did not clear it: %q", got)
	}
	if !isQuit(h.ctrlC()) {
		t.Error("ctrl+c twice on an idle editor did not quit")
	}
}

func TestCtrlCInterruptsTurn(t *testing.T) {
	h, f := newModelHarness(t)
	h.send("hello")
	h.waitFor("the request", func() bool { return len(f.requests()) == 1 })
	if isQuit(h.ctrlC()) || h.m.quitting {
		t.Fatal("ctrl+c during a turn quit")
	}
	h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
	if s := h.screen(); !strings.Contains(s, "Aborted.") {
		t.Errorf("the turn was not aborted:\n%s", s)
	}
	if strings.Contains(h.screen(), "again to quit") {
		t.Errorf("interrupting armed quitting:\n%s", h.screen())
	}
}

func TestSendWhileWorkingQueues(t *testing.T) {
	h, f := newModelHarness(t)
	h.send("first")
	h.waitFor("the first request", func() bool { return len(f.requests()) == 1 })
	h.send("second")
	h.send("third")
	s := h.screen()
	if strings.Contains(s, "still working") {
		t.Errorf("a refusal instead of a queue:\n%s", s)
	}
	if !strings.Contains(s, "queued: second") || !strings.Contains(s, "queued: third · esc takes them back") {
		t.Fatalf("queued messages not shown above the editor:\n%s", s)
	}
	if got := h.m.editor.Value(); got != "" {
		t.Errorf("the editor kept a queued message: %q", got)
	}
	// One turn per queued message, in order.
	f.release <- struct{}{}
	h.waitFor("the second request", func() bool { return len(f.requests()) == 2 })
	if s := h.screen(); strings.Contains(s, "queued: second") || !strings.Contains(s, "queued: third · esc takes it back") {
		t.Errorf("after the first turn, only third should wait:\n%s", s)
	}
	f.release <- struct{}{}
	h.waitFor("the third request", func() bool { return len(f.requests()) == 3 })
	f.release <- struct{}{}
	h.waitFor("the last turn to end", func() bool { return !h.m.runner.Busy() })
	if got, want := strings.Join(f.requests(), "|"), "first|second|third"; got != want {
		t.Errorf("the model saw %q, want %q", got, want)
	}
	s = h.screen()
	if strings.Contains(s, "queued:") {
		t.Errorf("queue still shown:\n%s", s)
	}
	// The transcript shows each prompt before its answer.
	order := []string{"first", "answer 1", "second", "answer 2", "third", "answer 3"}
	at := 0
	for _, w := range order {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order:\n%s", w, s)
		}
		at += i + len(w)
	}
}

func TestEscAndCtrlCTakeQueuedBack(t *testing.T) {
	for _, c := range []struct {
		name  string
		press func(h *harness)
	}{
		{"esc", func(h *harness) { h.press(tea.KeyEscape, 0) }},
		{"ctrl+c", func(h *harness) { h.ctrlC() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, f := newModelHarness(t)
			h.send("first")
			h.waitFor("the first request", func() bool { return len(f.requests()) == 1 })
			h.send("second")
			h.send("third")
			h.typeText("draft")
			c.press(h)
			if got, want := h.m.editor.Value(), "second\nthird\ndraft"; got != want {
				t.Errorf("editor after %s = %q, want %q", c.name, got, want)
			}
			if s := h.screen(); strings.Contains(s, "queued:") {
				t.Errorf("queue still shown:\n%s", s)
			}
			if !h.m.runner.Busy() || h.m.quitting {
				t.Fatalf("taking the queue back stopped the turn or quit")
			}
			f.release <- struct{}{}
			h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
			if got := f.requests(); len(got) != 1 {
				t.Errorf("a taken-back message was sent: %q", got)
			}
		})
	}
}

func TestAbortedTurnPutsQueueBack(t *testing.T) {
	h, f := newModelHarness(t)
	h.send("first")
	h.waitFor("the first request", func() bool { return len(f.requests()) == 1 })
	h.send("second")
	h.m.abort() // as if the turn was cancelled another way
	h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
	if got := h.m.editor.Value(); got != "second" {
		t.Errorf("editor = %q, want the queued message back", got)
	}
	if got := f.requests(); len(got) != 1 {
		t.Errorf("the queued message was sent after an abort: %q", got)
	}
}

// ctrl+s while the agent works steers: the message goes at the agent's
// next step, before the follow-ups typed earlier with enter, and is shown
// as steering until then.
func TestSteerKeyWhileWorking(t *testing.T) {
	h, f := newModelHarness(t)
	h.send("first")
	h.waitFor("the first request", func() bool { return len(f.requests()) == 1 })
	h.send("later")
	h.typeText("now")
	h.press('s', tea.ModCtrl)
	s := h.screen()
	if !strings.Contains(s, "steering: now") || !strings.Contains(s, "queued: later · esc takes them back") {
		t.Fatalf("queue not shown:\n%s", s)
	}
	if got := h.m.editor.Value(); got != "" {
		t.Errorf("the editor kept the steer: %q", got)
	}
	for range 3 {
		f.release <- struct{}{}
	}
	h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
	if got, want := strings.Join(f.requests(), "|"), "first|now|later"; got != want {
		t.Errorf("the model saw %q, want %q", got, want)
	}
	s = h.screen()
	at := 0
	for _, w := range []string{"first", "answer 1", "now", "answer 2", "later", "answer 3"} {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order:\n%s", w, s)
		}
		at += i + len(w)
	}
	if strings.Contains(s, "steering:") || strings.Contains(s, "queued:") {
		t.Errorf("queue still shown:\n%s", s)
	}
	// Idle, ctrl+s sends as enter does.
	h.typeText("again")
	h.press('s', tea.ModCtrl)
	h.waitFor("the next request", func() bool { return len(f.requests()) == 4 })
	f.release <- struct{}{}
	h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
}
