package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The pager answers the keys of the TUI's key map, not its own defaults:
// a rebinding reaches it, and its footer names the new key.
func TestPagerFollowsTheKeyMap(t *testing.T) {
	t.Cleanup(func() { keys = newKeyMap() })
	keys.Pager.Down = bind("x", "line down", "x")
	path := filepath.Join(t.TempDir(), "out.log")
	if err := os.WriteFile(path, []byte(strings.Repeat("line\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	pg, err := openPager(path, "artifact://0", 60, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.stop()
	st := newStyles(true)
	top := func() string { return strings.Split(pg.view(60, 10, st).content, "\n")[0] }
	if got := top(); !strings.Contains(got, "line 1–8 of 100") {
		t.Fatalf("header %q", got)
	}
	for _, k := range []tea.KeyPressMsg{{Code: 'j', Text: "j"}, {Code: 'x', Text: "x"}} {
		if a, _ := pg.update(k); a != nil {
			t.Fatalf("%s: action %#v", k, a)
		}
	}
	if got := top(); !strings.Contains(got, "line 2–9 of 100") {
		t.Errorf("after j (no longer bound) and x: header %q", got)
	}
	if footer := strings.Split(pg.view(60, 10, st).content, "\n")[9]; !strings.HasPrefix(footer, "↑x ") {
		t.Errorf("footer %q", footer)
	}
	// The layer follows the window's size.
	pg.update(tea.WindowSizeMsg{Width: 60, Height: 5})
	if got := strings.Split(pg.view(60, 5, st).content, "\n"); len(got) != 5 || !strings.Contains(got[0], "line 2–4 of 100") {
		t.Errorf("after a resize: %q", got)
	}
}
