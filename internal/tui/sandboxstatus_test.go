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
	s := h.statusLine()
	if !strings.HasPrefix(s, cwd+" · sandbox: workspace-write · no model") {
		t.Fatalf("status line %q", s)
	}
	// No model: its long hint is cut, the sandbox stays.
	if !strings.HasSuffix(strings.TrimSpace(s), "…") {
		t.Errorf("the model's hint was not the part cut: %q", s)
	}
	h.m.cfg.Sandbox = func() (string, bool) { return "YOLO", true }
	if s := h.statusLine(); !strings.HasPrefix(s, cwd+" · YOLO · no model") {
		t.Fatalf("status line %q", s)
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
