package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestMouseCaptureOffByDefaultAndToggles(t *testing.T) {
	h := newHarness(t, 100, 20)
	if mm := h.m.View().MouseMode; mm != tea.MouseModeNone {
		t.Fatalf("mouse mode at start = %v, want none (the terminal keeps text selection)", mm)
	}
	h.press('m', tea.ModAlt)
	if mm := h.m.View().MouseMode; mm != tea.MouseModeCellMotion {
		t.Fatalf("after alt+m mouse mode = %v, want cell motion", mm)
	}
	if s := h.screen(); !strings.Contains(s, "mouse on: a click selects") {
		t.Errorf("no word of the switch:\n%s", s)
	}
	if h.m.editor.Value() != "" {
		t.Errorf("alt+m typed into the editor: %q", h.m.editor.Value())
	}
	h.typeText("/mouse")
	h.press(tea.KeyEnter, 0)
	if mm := h.m.View().MouseMode; mm != tea.MouseModeNone {
		t.Fatalf("after /mouse mouse mode = %v, want none", mm)
	}
	s := h.screen()
	if !strings.Contains(s, "mouse off: the terminal selects and copies text") || strings.Contains(s, "No model configured") {
		t.Errorf("/mouse was not taken as the toggle:\n%s", s)
	}
	if h.m.editor.Value() != "" {
		t.Errorf("/mouse stayed in the editor: %q", h.m.editor.Value())
	}
}
