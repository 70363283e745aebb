package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/session"
)

func pickerList(n int) []session.Info {
	base := time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC)
	prompts := []string{"fix the failing parser test", "why is the build slow on CI? look at the workflow and the Makefile and tell me what to cut", "!make bench"}
	var out []session.Info
	for i := range n {
		out = append(out, session.Info{ID: strconv.Itoa(1000 + i), Path: "/s/" + strconv.Itoa(i) + ".jsonl",
			Modified: base.Add(-time.Duration(i) * 90 * time.Minute), FirstPrompt: prompts[i%len(prompts)], Messages: 1 + i*7})
	}
	return out
}

func pressKey(s string) tea.KeyPressMsg {
	switch s {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

// The picker moves within the list and answers enter with the selected
// session, esc with a cancel.
func TestPickerKeys(t *testing.T) {
	p := newSessionPicker("/w", pickerList(5))
	if p.load() != nil {
		t.Error("a picker given its list loads again")
	}
	for _, k := range []string{"up", "down", "down", "j", "k", "down"} {
		if a := p.update(pressKey(k)); a != nil {
			t.Fatalf("%s answered %#v", k, a)
		}
	}
	if a, ok := p.update(pressKey("enter")).(pickerChoose); !ok || a.info.ID != "1003" {
		t.Errorf("enter on the fourth row answered %#v", a)
	}
	p.update(pressKey("end"))
	p.update(pressKey("down"))
	if a, ok := p.update(pressKey("enter")).(pickerChoose); !ok || a.info.ID != "1004" {
		t.Errorf("enter past the end answered %#v", a)
	}
	for _, k := range []string{"esc", "q"} {
		if _, ok := p.update(pressKey(k)).(pickerCancel); !ok {
			t.Errorf("%s does not cancel", k)
		}
	}
	empty := newSessionPicker("/w", []session.Info{})
	if a := empty.update(pressKey("enter")); a != nil {
		t.Errorf("enter on an empty list answered %#v", a)
	}
}

// Opened without a list, the picker reads the sessions in a command and
// shows them when they arrive.
func TestPickerLoads(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	cwd := t.TempDir()
	st, err := session.Create(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(&session.UserMessage{Text: "the only prompt"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	p := newSessionPicker(cwd, nil)
	if s := ansi.Strip(p.view(80, 10, newStyles(true))); !strings.Contains(s, "Reading the sessions…") {
		t.Errorf("before the load:\n%s", s)
	}
	cmd := p.load()
	if cmd == nil {
		t.Fatal("no load command")
	}
	p.update(cmd())
	if s := ansi.Strip(p.view(80, 10, newStyles(true))); !strings.Contains(s, "1 message  the only prompt") {
		t.Errorf("after the load:\n%s", s)
	}
	if a, ok := p.update(pressKey("enter")).(pickerChoose); !ok || a.info.ID != st.ID() {
		t.Errorf("enter answered %#v", a)
	}
}

func TestGoldenPicker(t *testing.T) {
	for _, sz := range screenSizes {
		// More sessions than rows: the list scrolls with the selection.
		p := newSessionPicker("~/work", pickerList(40))
		p.loc = time.UTC
		for range 30 {
			p.update(pressKey("down"))
		}
		screen := ansi.Strip(p.view(sz[0], sz[1], newStyles(true)))
		checkScreen(t, "picker_"+strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), screen, sz[0], sz[1])
		if !strings.Contains(screen, "› ") {
			t.Errorf("the selected row is off screen:\n%s", screen)
		}
	}
	p := newSessionPicker("~/work", []session.Info{})
	if s := ansi.Strip(p.view(60, 8, newStyles(true))); !strings.Contains(s, "No saved session in this directory.") {
		t.Errorf("empty list:\n%s", s)
	}
}

// A named session shows its name before its first prompt.
func TestPickerShowsName(t *testing.T) {
	list := pickerList(2)
	list[1].Name = "parser work"
	p := newSessionPicker("/w", list)
	s := ansi.Strip(p.view(120, 10, newStyles(true)))
	if !strings.Contains(s, "parser work · why is the build slow") || strings.Contains(s, "· fix the failing") {
		t.Errorf("picker:\n%s", s)
	}
}
