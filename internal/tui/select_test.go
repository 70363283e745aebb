package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/render"
	"agentsh/internal/tools"
)

// finishedBang is a completed `!cmd` whose output is the numbers from..to.
func finishedBang(cmd string, from, to int) *bangItem {
	b := render.NewBang(cmd, false)
	var sb strings.Builder
	for i := from; i <= to; i++ {
		sb.WriteString(strconv.Itoa(i) + "\n")
	}
	zero := 0
	b.Finish(sb.String(), &zero, false, nil)
	return &bangItem{bang: b}
}

func TestSelectOutputAndToggle(t *testing.T) {
	h := newHarness(t, 70, 40)
	a, b, c := finishedBang("seq a", 1, 30), finishedBang("seq b", 101, 130), finishedBang("seq c", 201, 230)
	for _, it := range []item{a, b, c} {
		h.add(it)
	}
	h.press(tea.KeyUp, tea.ModAlt)
	if h.m.tr.selected != c {
		t.Fatalf("alt+up selected %v, want the newest block", h.m.tr.selected)
	}
	if s := h.screen(); !strings.Contains(s, "esc deselect") {
		t.Errorf("status does not show the selection:\n%s", s)
	}
	h.press(tea.KeyUp, tea.ModAlt)
	if h.m.tr.selected != b {
		t.Fatalf("second alt+up did not move to the previous block")
	}
	// The selected block is on screen and ctrl+o expands it, not the newest.
	if s := h.screen(); !strings.Contains(s, "$ seq b") {
		t.Errorf("selected block not revealed:\n%s", s)
	}
	h.press('o', tea.ModCtrl)
	if !b.bang.Expanded || c.bang.Expanded {
		t.Fatalf("ctrl+o toggled the wrong block: b=%v c=%v", b.bang.Expanded, c.bang.Expanded)
	}
	if s := h.screen(); !strings.Contains(s, "101") {
		t.Errorf("expanded selection does not show its first line:\n%s", s)
	}
	h.press(tea.KeyEscape, 0)
	if h.m.tr.selected != nil {
		t.Fatalf("esc kept the selection")
	}
	h.press('o', tea.ModCtrl)
	if !c.bang.Expanded {
		t.Fatalf("without a selection ctrl+o must toggle the newest block")
	}
	// Moving down past the newest clears the selection and follows the end.
	h.press(tea.KeyUp, tea.ModAlt)
	h.press(tea.KeyDown, tea.ModAlt)
	if h.m.tr.selected != nil || h.m.tr.scroll != 0 {
		t.Fatalf("alt+down past the newest: selected=%v scroll=%d", h.m.tr.selected, h.m.tr.scroll)
	}
}

func TestClickSelects(t *testing.T) {
	h := newHarness(t, 70, 40)
	a, b := finishedBang("seq a", 1, 3), finishedBang("seq b", 11, 13)
	h.add(a)
	h.add(b)
	lines := strings.Split(h.screen(), "\n")
	row := -1
	for i, l := range lines {
		if strings.Contains(l, "$ seq a") {
			row = i
		}
	}
	if row < 0 {
		t.Fatalf("block not on screen:\n%s", strings.Join(lines, "\n"))
	}
	h.update(tea.MouseClickMsg{X: 5, Y: row + 1, Button: tea.MouseLeft})
	if h.m.tr.selected != a {
		t.Fatalf("click on row %d did not select the block there", row+1)
	}
	h.update(tea.MouseClickMsg{X: 5, Y: row, Button: tea.MouseLeft})
	if !a.bang.Expanded {
		t.Fatalf("a click on the selected block must expand it")
	}
}

// Scrolled up, the text being read stays put while output streams in below
// and new items arrive.
func TestScrollAnchorWhileStreaming(t *testing.T) {
	h := newHarness(t, 60, 20)
	for i := range 4 {
		h.add(finishedBang("seq "+strconv.Itoa(i), i*100, i*100+30))
	}
	h.holdTurn()
	args := json.RawMessage(`{"command":"make test"}`)
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: tools.BashName, Args: args})
	h.update(flushMsg{})
	h.m.tr.tools["c1"].call.Expanded = true
	h.press(tea.KeyPgUp, 0)
	h.press(tea.KeyPgUp, 0)
	before := transcriptRows(h)
	if h.m.tr.scroll == 0 {
		t.Fatalf("pgup did not scroll")
	}
	var out strings.Builder
	for i := range 50 {
		out.WriteString("streamed " + strconv.Itoa(i) + "\n")
		h.m.pump.event(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: "c1", ToolName: tools.BashName,
			Args: args, PartialResult: out.String()})
		h.update(flushMsg{})
		if got := transcriptRows(h); got != before {
			t.Fatalf("after %d streamed lines the view moved:\nbefore:\n%s\nafter:\n%s", i+1, before, got)
		}
	}
	h.m.tr.notice(kindInfo, "a new notice")
	h.m.layout()
	if got := transcriptRows(h); got != before {
		t.Fatalf("a new item moved the view:\nbefore:\n%s\nafter:\n%s", before, got)
	}
	// Back at the bottom, the transcript follows the output again.
	for h.m.tr.scroll > 0 {
		h.press(tea.KeyPgDown, 0)
	}
	if s := h.screen(); !strings.Contains(s, "a new notice") {
		t.Fatalf("pgdn to the end does not show the newest item:\n%s", s)
	}
}

// transcriptRows is the screen above the editor without the last row (the
// "more lines below" indicator counts up as output arrives).
func transcriptRows(h *harness) string {
	lines := strings.Split(h.screen(), "\n")
	th := h.m.transcriptHeight()
	return strings.Join(lines[:th-1], "\n")
}

func TestPagerShowsArtifact(t *testing.T) {
	h := newHarnessStore(t, 80, 24, true)
	h.typeText("!seq 1 100000")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the command to finish", h.bangIdle)
	s := h.screen()
	if !strings.Contains(s, "of 100000 (50.0KB limit). Full output: artifact://0\n(ctrl+g to view)]") {
		t.Fatalf("no artifact link:\n%s", s)
	}
	h.press('g', tea.ModCtrl)
	if layerOn[*pagerLayer](h) == nil {
		t.Fatalf("ctrl+g did not open the pager; status:\n%s", h.screen())
	}
	s = h.screen()
	if !strings.Contains(s, "artifact://0") || !strings.Contains(s, "seq 1 100000") {
		t.Errorf("pager header missing:\n%s", s)
	}
	// The artifact is the whole output, from its first line.
	first := strings.Split(s, "\n")[1]
	if !strings.HasSuffix(strings.TrimSpace(first), " 1") {
		t.Errorf("pager does not start at line 1: %q\n%s", first, s)
	}
	h.typeText("G")
	if s := h.screen(); !strings.Contains(s, "100000") {
		t.Errorf("G does not reach the end:\n%s", s)
	}
	h.typeText("q")
	if layerOn[*pagerLayer](h) != nil {
		t.Fatalf("q did not close the pager")
	}
	if s := h.screen(); !strings.Contains(s, "(ctrl+g to view)") {
		t.Errorf("transcript not back after q:\n%s", s)
	}
	// The artifact on disk is all 100000 lines.
	arts, err := h.m.cfg.Session.Artifacts().List()
	if err != nil || len(arts) != 1 {
		t.Fatalf("artifacts %v %v", arts, err)
	}
	path, _ := h.m.cfg.Session.Artifacts().Resolve("artifact://0")
	data, err := os.ReadFile(path)
	if err != nil || strings.Count(string(data), "\n") != 100000 {
		t.Fatalf("artifact %s: %d lines, %v", filepath.Base(path), strings.Count(string(data), "\n"), err)
	}
}

func TestPagerWithoutTruncation(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.add(finishedBang("seq 3", 1, 3))
	h.press('g', tea.ModCtrl)
	if layerOn[*pagerLayer](h) != nil {
		t.Fatalf("a complete output has nothing to page")
	}
	if s := h.screen(); !strings.Contains(s, "No truncated output") {
		t.Errorf("no explanation in the status line:\n%s", s)
	}
	h.typeText("x")
	if s := h.screen(); strings.Contains(s, "No truncated output") {
		t.Errorf("the message outlives the next key:\n%s", s)
	}
}

// The file tools get their own compact renderer, and ctrl+o expands it.
func TestFileToolItems(t *testing.T) {
	h := newHarness(t, 80, 30)
	h.holdTurn()
	args := json.RawMessage(`{"path":"main.go"}`)
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "r1", ToolName: tools.ReadName, Args: args})
	h.update(flushMsg{})
	if s := h.screen(); !strings.Contains(s, "read main.go") {
		t.Fatalf("running read call missing:\n%s", s)
	}
	details, _ := json.Marshal(tools.ReadDetails{Path: "/w/main.go", StartLine: 1, EndLine: 3, TotalLines: 3})
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "r1", ToolName: tools.ReadName,
		Result: &tools.Result{Content: "     1\tpackage main\n     2\t\n     3\tfunc main() {}\n", Details: details}})
	h.update(flushMsg{})
	s := h.screen()
	if !strings.Contains(s, "read main.go") || strings.Contains(s, "package main") {
		t.Fatalf("finished read should be one header and a hint:\n%s", s)
	}
	h.press('o', tea.ModCtrl)
	if s := h.screen(); !strings.Contains(s, "package main") || !strings.Contains(s, "func main() {}") {
		t.Fatalf("ctrl+o did not expand the read:\n%s", s)
	}
}

// TestSelectionMarksTheCommand: the selected block's command line is the
// one marked, also for a `!!` block, whose rule carries a label.
func TestSelectionMarksTheCommand(t *testing.T) {
	st := newStyles(false)
	for _, excluded := range []bool{false, true} {
		b := render.NewBang("seq 3", excluded)
		zero := 0
		b.Finish("1\n2\n3\n", &zero, false, nil)
		ls := strings.Split((&bangItem{bang: b}).view(60, st, ""), "\n")
		got := highlight(ls, st)
		marked := -1
		for i := range ls {
			if got[i] != ls[i] {
				if marked >= 0 {
					t.Fatalf("excluded=%v: lines %d and %d both marked", excluded, marked, i)
				}
				marked = i
			}
		}
		if marked < 0 || ansi.Strip(got[marked]) != "$ seq 3" {
			t.Errorf("excluded=%v: marked line %d %q, want the command", excluded, marked, ansi.Strip(got[max(marked, 0)]))
		}
	}
}
