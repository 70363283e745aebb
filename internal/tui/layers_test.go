package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/jobs"
	"agentsh/internal/pty"
)

// startCat runs cat in a PTY session shown by the model's terminal host, as
// a tool call on the PTY path would, and waits until its overlay is there.
func startCat(t *testing.T, h *harness, title string) *pty.Session {
	t.Helper()
	s := pty.Start(context.Background(), pty.Options{Shell: "/bin/sh", Command: "cat", Cols: 78, Rows: 20})
	t.Cleanup(func() { s.Close() })
	h.m.host.AttachPTY(s, title)
	h.waitFor("the overlay of "+title, func() bool {
		for _, l := range h.m.layers {
			if o, ok := l.(*overlay); ok && o.s == s {
				return true
			}
		}
		return false
	})
	return s
}

// A program the model starts while the user reads the pager does not pop
// up over it: the pager keeps the screen and the keys; closing it shows the
// program, which then takes the keys (esc kills it).
func TestOverlayStaysUnderThePager(t *testing.T) {
	h := newHarnessStore(t, 80, 24, true)
	h.typeText("!seq 1 100000")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the command to finish", h.bangIdle)
	h.press('g', tea.ModCtrl)
	if layerOn[*pagerLayer](h) == nil {
		t.Fatalf("ctrl+g did not open the pager:\n%s", h.screen())
	}
	s := startCat(t, h, "cat-under-pager")
	if scr := h.screen(); strings.Contains(scr, "cat-under-pager") || !strings.Contains(scr, "artifact://0") {
		t.Fatalf("the overlay came over the pager:\n%s", scr)
	}
	h.typeText("G") // the pager's key: to its end
	if scr := h.screen(); !strings.Contains(scr, "100000") {
		t.Errorf("G did not reach the pager:\n%s", scr)
	}
	h.typeText("q")
	scr := h.screen()
	if layerOn[*pagerLayer](h) != nil || !strings.Contains(scr, "$ cat-under-pager") || !strings.Contains(scr, overlayFooterText(false, false)) {
		t.Fatalf("after q the program's overlay is not shown:\n%s", scr)
	}
	h.typeText("abc")
	h.press(tea.KeyEnter, 0)
	h.waitFor("cat to echo", func() bool { return strings.Count(h.screen(), "abc") >= 2 })
	if v := h.m.editor.Value(); v != "" {
		t.Errorf("keys for the program reached the editor: %q", v)
	}
	h.press(tea.KeyEscape, 0)
	h.waitFor("the overlay to close", func() bool { return layerOn[*overlay](h) == nil })
	if r := s.Wait(); !r.Cancelled {
		t.Errorf("esc did not kill the program: %+v", r)
	}
}

// Two programs on the screen at once are two layers: esc kills the top
// one, and the one below it is shown again and takes the keys (one overlay
// field would have lost the first program: on screen nowhere, esc unable to
// reach it).
func TestOverlaysStack(t *testing.T) {
	h := newHarness(t, 80, 30)
	first := startCat(t, h, "cat-first")
	second := startCat(t, h, "cat-second")
	if scr := h.screen(); !strings.Contains(scr, "$ cat-second") {
		t.Fatalf("the newer program is not on top:\n%s", scr)
	}
	h.press(tea.KeyEscape, 0)
	h.waitFor("the second overlay to close", func() bool { return !strings.Contains(h.screen(), "$ cat-second") })
	if r := second.Wait(); !r.Cancelled {
		t.Errorf("esc did not kill the top program: %+v", r)
	}
	if scr := h.screen(); !strings.Contains(scr, "$ cat-first") {
		t.Fatalf("the first program's overlay is not back:\n%s", scr)
	}
	h.typeText("hello")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the first cat to echo", func() bool { return strings.Count(h.screen(), "hello") >= 2 })
	h.press(tea.KeyEscape, 0)
	h.waitFor("the first overlay to close", func() bool { return layerOn[*overlay](h) == nil })
	if r := first.Wait(); !r.Cancelled {
		t.Errorf("esc did not kill the first program: %+v", r)
	}
}

// The layers answer with action values; the model carries them out.
func TestLayerActions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.log")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pg, err := openPager(path, "artifact://0", 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.stop()
	mgr := jobs.NewManager()
	defer mgr.Close()
	for _, c := range []struct {
		name  string
		l     layer
		msg   tea.Msg
		want  action
		cover bool
	}{
		{"quit question, y", &quitConfirm{running: 1}, tea.KeyPressMsg{Code: 'y', Text: "y"}, quitNow{}, false},
		{"quit question, n", &quitConfirm{running: 1}, tea.KeyPressMsg{Code: 'n', Text: "n"}, closeLayer{}, false},
		{"quit question, x", &quitConfirm{running: 1}, tea.KeyPressMsg{Code: 'x', Text: "x"}, nil, false},
		{"quit question, paste", &quitConfirm{running: 1}, tea.PasteMsg{Content: "x"}, passOn{}, false},
		{"pager, j", pg, tea.KeyPressMsg{Code: 'j', Text: "j"}, nil, true},
		{"pager, wheel", pg, tea.MouseWheelMsg{Button: tea.MouseWheelDown}, nil, true},
		{"pager, q", pg, tea.KeyPressMsg{Code: 'q', Text: "q"}, closeLayer{}, true},
		{"jobs panel, wheel", newJobsPanel(mgr), tea.MouseWheelMsg{Button: tea.MouseWheelUp}, passOn{}, true},
		{"jobs panel, paste", newJobsPanel(mgr), tea.PasteMsg{Content: "x"}, nil, true},
		{"jobs panel, esc", newJobsPanel(mgr), tea.KeyPressMsg{Code: tea.KeyEscape}, closeLayer{}, true},
	} {
		a, _ := c.l.update(c.msg)
		if a != c.want {
			t.Errorf("%s: %#v, want %#v", c.name, a, c.want)
		}
		if c.l.covers() != c.cover {
			t.Errorf("%s: covers %v", c.name, c.l.covers())
		}
	}
}
