package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestStatusSandbox: the status line shows the sandbox after the cwd and
// before the model, so a long model text is cut first; a warning (YOLO,
// off) is drawn in the warning style; none configured shows nothing.
func TestStatusSandbox(t *testing.T) {
	h := newHarness(t, 90, 20)
	cwd := h.m.session().Cwd()
	if s := h.statusLine(); strings.Contains(s, "sandbox") || strings.Contains(s, "YOLO") {
		t.Fatalf("no sandbox configured, yet: %q", s)
	}
	h.m.cfg.Sandbox = func() (string, bool) { return "sandbox: workspace-write", false }
	// No model: the cwd gives way to 12 cells, then its long hint is cut;
	// the sandbox stays.
	short := "…" + cwd[len(cwd)-11:]
	s := h.statusLine()
	if !strings.HasPrefix(s, short+" · sandbox: workspace-write · no model") || !strings.HasSuffix(strings.TrimSpace(s), "…") {
		t.Fatalf("status line %q", s)
	}
	h.m.cfg.Sandbox = func() (string, bool) { return "YOLO", true }
	if s := h.statusLine(); !strings.HasPrefix(s, short+" · YOLO · no model") {
		t.Fatalf("status line %q", s)
	}

	// A little too narrow: the cwd gives way from its start, the words
	// after it stay whole.
	full := newHarness(t, 400, 20)
	full.m.cfg.Sandbox = h.m.cfg.Sandbox
	whole := strings.TrimRight(full.statusLine(), " ")
	n := newHarness(t, ansi.StringWidth(whole)-10, 20)
	n.m.cfg.Sandbox = h.m.cfg.Sandbox
	ncwd := n.m.session().Cwd()
	want := "…" + ncwd[11:] + strings.TrimPrefix(whole, full.m.session().Cwd())
	if got := strings.TrimRight(n.statusLine(), " "); got != want {
		t.Errorf("narrow status line:\n got  %q\n want %q", got, want)
	}

	c := newHarnessWith(t, 100, 20, false, true)
	styled := func(warn bool) string {
		c.m.cfg.Sandbox = func() (string, bool) { return "YOLO", warn }
		v := c.m.statusView()
		i := strings.Index(v, "YOLO")
		return v[max(0, i-30):i]
	}
	if plain, warn := styled(false), styled(true); plain == warn || !strings.Contains(ansi.Strip(c.m.statusView()), "YOLO") {
		t.Errorf("YOLO is not drawn as a warning: %q vs %q", plain, warn)
	}
}
