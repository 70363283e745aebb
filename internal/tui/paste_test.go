package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestPasteEndingInNewline(t *testing.T) {
	for _, c := range []struct{ paste, want string }{
		{"ls -la\n", "ls -la"},
		{"one\ntwo\n", "one\ntwo"},
		{"crlf\r\n", "crlf"},
		{"blank lines\n\n\n", "blank lines"},
		{"inner\n\nkept", "inner\n\nkept"},
	} {
		h := newHarness(t, 80, 24)
		h.typeText("$ ")
		h.update(tea.PasteMsg{Content: c.paste})
		if got := h.m.editor.Value(); got != "$ "+c.want {
			t.Errorf("paste %q: editor = %q, want %q", c.paste, got, "$ "+c.want)
		}
		// The cursor stays on the pasted text's last line: typing goes on it.
		h.typeText("!")
		lines := strings.Split(h.m.editor.Value(), "\n")
		if last := lines[len(lines)-1]; !strings.HasSuffix(last, "!") || last == "!" {
			t.Errorf("paste %q: typing after it went to %q", c.paste, last)
		}
	}
}
