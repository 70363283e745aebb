package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

var moreBelow = regexp.MustCompile(`↓ (\d+) more lines below`)

// linesBelow is the "↓ N more lines below" of the screen, 0 without one.
func linesBelow(t *testing.T, screen string) int {
	t.Helper()
	m := moreBelow.FindStringSubmatch(screen)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Keys that arrive faster than frames are drawn: pgup past the top stops
// at the top at once, so the next pgdn moves down a page without first
// working off the overshoot. The scroll position is settled in Update, not
// by the next View.
func TestScrollSettlesWithoutView(t *testing.T) {
	h := newHarness(t, 60, 20)
	h.add(finishedBang("seq 1 60", 1, 60))
	h.press('o', tea.ModCtrl)
	page := max(h.m.transcriptHeight()-2, 1)
	for range 20 {
		h.press(tea.KeyPgUp, 0)
	}
	h.press(tea.KeyPgDown, 0)
	afterDown := linesBelow(t, h.screen())

	for range 20 {
		h.press(tea.KeyPgUp, 0)
	}
	top := h.screen()
	if !strings.Contains(top, "$ seq 1 60") {
		t.Fatalf("20 × pgup does not reach the top:\n%s", top)
	}
	if want := linesBelow(t, top) - page; afterDown != want {
		t.Errorf("pgdn after overshooting the top: %d lines below, want %d (the top's %d minus a page of %d)",
			afterDown, want, linesBelow(t, top), page)
	}
}

// View is a pure function of the model: drawing any number of frames
// changes neither the screen nor the transcript's state (scroll position,
// anchor, the rows clicks are matched against).
func TestViewOnlyReads(t *testing.T) {
	h := newHarness(t, 60, 20)
	for i := range 4 {
		h.add(finishedBang("seq "+strconv.Itoa(i), i*100, i*100+30))
	}
	h.press(tea.KeyUp, tea.ModAlt)
	h.press('o', tea.ModCtrl)
	for range 3 {
		h.press(tea.KeyPgUp, 0)
	}
	type state struct {
		scroll, anchorOff int
		anchor, selected  item
		placed            string
	}
	snap := func() state {
		tr := h.m.tr
		var b strings.Builder
		for _, p := range tr.placed {
			b.WriteString(strconv.Itoa(p.top) + "-" + strconv.Itoa(p.bottom) + " ")
		}
		return state{tr.scroll, tr.anchorOff, tr.anchor, tr.selected, b.String()}
	}
	before, first := snap(), h.screen()
	if before.scroll == 0 || before.anchor == nil {
		t.Fatalf("not scrolled up: %+v", before)
	}
	for range 3 {
		if s := h.screen(); s != first {
			t.Fatalf("a second View differs:\n%s\n---\n%s", first, s)
		}
	}
	if after := snap(); after != before {
		t.Errorf("View changed the transcript: %+v, was %+v", after, before)
	}
}
