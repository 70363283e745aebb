package main

import (
	"strings"
	"testing"
)

// TestTUIMouseCaptureToggle asks tmux whether the real binary has turned
// mouse reporting on: not at start (the terminal's own drag-to-select and
// copy work), on after alt+m, off again after /mouse.
func TestTUIMouseCaptureToggle(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)
	mouse := func() string {
		return strings.TrimSpace(tt.tmux("display-message", "-p", "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}"))
	}
	if got := mouse(); got != "000" {
		t.Fatalf("mouse reporting at start: %q, want none", got)
	}
	tt.keys("M-m")
	tt.waitText("mouse on: a click selects")
	if got := mouse(); got != "110" {
		t.Fatalf("after alt+m mouse flags = %q, want some reporting, button-event tracking (110)", got)
	}
	tt.typeLine("/mouse")
	tt.waitText("mouse off: the terminal selects")
	if got := mouse(); got != "000" {
		t.Errorf("after /mouse mouse flags = %q, want none", got)
	}
}
