package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// fakeClock is the transcript's clock, moved by hand.
type fakeClock struct{ now time.Time }

func (c *fakeClock) get() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }
func withClock(h *harness) *fakeClock {
	c := &fakeClock{now: time.Unix(1e9, 0)}
	h.m.tr.clock = c.get
	return c
}

func TestBangShowsElapsedTime(t *testing.T) {
	h := newHarness(t, 70, 20)
	clock := withClock(h)
	h.typeText("!sleep 30")
	h.press(tea.KeyEnter, 0)
	h.waitFor("sleep to run", func() bool { return h.m.cfg.Session.IsBashRunning() })
	h.update(tickMsg{})
	if s := h.screen(); !strings.Contains(s, "Running… 0s · esc to cancel") {
		t.Fatalf("no elapsed time on the running block:\n%s", s)
	}
	clock.advance(72 * time.Second)
	h.update(tickMsg{})
	if s := h.screen(); !strings.Contains(s, "Running… 1m12s · esc to cancel") {
		t.Fatalf("elapsed time did not move:\n%s", s)
	}
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancelled command", h.bangIdle)
	if s := h.screen(); strings.Contains(s, "Running…") {
		t.Errorf("a finished block still says it runs:\n%s", s)
	}
}

func TestToolCallHeaderWhileArgumentsStream(t *testing.T) {
	h := newHarness(t, 70, 20)
	clock := withClock(h)
	h.holdTurn()
	ev := func(e agent.Event) {
		h.m.pump.event(e)
		h.update(flushMsg{})
	}
	ev(agent.Event{Type: agent.EventMessageStart, Message: &session.AssistantMessage{}})
	ev(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateToolCallStart,
		ToolCallID: "c1", ToolName: tools.BashName, Message: &session.AssistantMessage{}})
	if s := h.screen(); !strings.Contains(s, "○ $ writing command…") {
		t.Fatalf("no hint before the arguments:\n%s", s)
	}
	for _, piece := range []string{`{"comm`, `and": "go test`, ` ./internal/\u00e9`} {
		ev(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateToolCallDelta, Delta: piece,
			ToolCallID: "c1", ToolName: tools.BashName, Message: &session.AssistantMessage{}})
	}
	if s := h.screen(); !strings.Contains(s, "○ $ go test ./internal/é…") || strings.Contains(s, "Running…") {
		t.Fatalf("the partial command is not shown (or claims to run):\n%s", s)
	}
	args := json.RawMessage(`{"command":"go test ./internal/é"}`)
	ev(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: tools.BashName, Args: args})
	clock.advance(9 * time.Second)
	h.update(tickMsg{})
	s := h.screen()
	if strings.Count(s, "$ go test") != 1 || !strings.Contains(s, "○ $ go test ./internal/é\n") ||
		!strings.Contains(s, "Running… 9s · esc to cancel") {
		t.Fatalf("the streamed header did not become the running call:\n%s", s)
	}
}

func TestToolCallCutOffWhileStreamingIsRemoved(t *testing.T) {
	h := newHarness(t, 70, 20)
	end := h.holdTurn()
	h.m.pump.event(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateToolCallStart,
		ToolCallID: "c1", ToolName: tools.BashName, Message: &session.AssistantMessage{}})
	h.update(flushMsg{})
	if !strings.Contains(h.screen(), "writing command…") {
		t.Fatalf("no streaming header:\n%s", h.screen())
	}
	end()
	if s := h.screen(); strings.Contains(s, "writing command") || strings.Contains(s, "✓") {
		t.Errorf("a call that never ran stays on screen:\n%s", s)
	}
}

func TestPartialStringField(t *testing.T) {
	for in, want := range map[string]string{
		``:                               "",
		`{"comm`:                         "",
		`{"command":`:                    "",
		`{"command": "`:                  "",
		`{"command": "ls -l`:             "ls -l",
		`{"command":"a\nb\`:              "a\nb",
		`{"command":"x \u00`:             "x ",
		`{"command":"say \"hi\"", "t":1`: `say "hi"`,
		`{"timeout":3,"command":"make"}`: "make",
	} {
		if got := partialStringField([]byte(in), "command"); got != want {
			t.Errorf("partialStringField(%q) = %q, want %q", in, got, want)
		}
	}
}
