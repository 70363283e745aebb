package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestStatusMessageWords: a status message too long for the line loses
// whole words, with an ellipsis, and never runs into the cwd.
func TestStatusMessageWords(t *testing.T) {
	const msg = "No truncated output to view (ctrl+g opens the full output of a truncated result)."
	for _, w := range []int{30, 40, 60, 80, 100, 120, 200} {
		h := newHarness(t, w, 20)
		h.m.flash = msg
		s := ansi.Strip(h.m.statusView())
		if ansi.StringWidth(s) > w {
			t.Errorf("width %d: %d cells: %q", w, ansi.StringWidth(s), s)
		}
		i := strings.Index(s, "No truncated")
		if i < 0 {
			t.Fatalf("width %d: the message is gone: %q", w, s)
		}
		if left := s[:i]; left != "" && !strings.HasSuffix(left, "  ") {
			t.Errorf("width %d: the message is glued to the cwd: %q", w, s)
		}
		shown := strings.TrimRight(s[i:], " ")
		if shown != msg && (!strings.HasSuffix(shown, "…") || !strings.HasPrefix(msg, strings.TrimSuffix(shown, "…")+" ")) {
			t.Errorf("width %d: cut inside a word: %q", w, shown)
		}
	}
}
