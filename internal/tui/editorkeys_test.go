package tui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/proctest"
	"agentsh/internal/session"
	"agentsh/internal/testkit"
)

// lastUserText is the last user message of the server's last request.
func lastUserText(t *testing.T, srv *fakemodel.Server) string {
	t.Helper()
	bodies := srv.Bodies()
	if len(bodies) == 0 {
		t.Fatal("the model got no request")
	}
	var last string
	for _, m := range fakemodel.OpenAIMessages(bodies[len(bodies)-1]) {
		if m.Role == "user" {
			last = m.Content
		}
	}
	return last
}

// editorRows are the editor box's text rows on screen (between its
// borders), trimmed.
func editorRows(h *harness) []string {
	lines := strings.Split(h.screen(), "\n")
	var rows []string
	in := false
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "╭"):
			in = true
		case strings.HasPrefix(l, "╰"):
			in = false
		case in:
			rows = append(rows, strings.TrimSpace(strings.Trim(l, "│")))
		}
	}
	return rows
}

// checkWidths fails when a screen row is wider than the window.
func checkWidths(t *testing.T, h *harness, width int) {
	t.Helper()
	for i, l := range strings.Split(h.screen(), "\n") {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("row %d is %d cells wide (window %d): %q", i, w, width, l)
		}
	}
}

// A pasted tab stays a tab in what the model gets and in the session; the
// editor and the transcript show it as spaces.
func TestPastedTabsReachTheModel(t *testing.T) {
	h := newHarness(t, 60, 24)
	srv := withModel(h, "openai/test")
	h.typeText("columns: ")
	h.update(tea.PasteMsg{Content: "name\tsize\nfoo\t12\n"})
	if got := h.m.editor.Value(); got != "columns: name\tsize\nfoo\t12" {
		t.Fatalf("editor value %q", got)
	}
	if rows := editorRows(h); len(rows) != 2 || rows[0] != "columns: name    size" || rows[1] != "foo    12" {
		t.Errorf("editor rows %q", rows)
	}
	// The cursor stands after the last tab's four cells and the 12.
	if c := h.m.View().Cursor; c == nil || c.X != editorFrameW/2+len("foo    12") {
		t.Errorf("cursor %+v, want x %d", c, editorFrameW/2+len("foo    12"))
	}
	checkWidths(t, h, 60)
	h.press(tea.KeyEnter, 0)
	h.waitFor("the answer", h.agentIdle)
	if got := lastUserText(t, srv); got != "columns: name\tsize\nfoo\t12" {
		t.Errorf("the model got %q", got)
	}
	if u, ok := h.m.session().Messages()[0].(*session.UserMessage); !ok || u.Text != "columns: name\tsize\nfoo\t12" {
		t.Errorf("session message %#v", h.m.session().Messages()[0])
	}
	if s := h.screen(); !strings.Contains(s, "columns: name    size\n") || strings.Contains(s, "\t") {
		t.Errorf("transcript:\n%s", s)
	}
	checkWidths(t, h, 60)
	// Recalled, the tabs are still tabs.
	h.press(tea.KeyUp, 0)
	if got := h.m.editor.Value(); got != "columns: name\tsize\nfoo\t12" {
		t.Errorf("recalled %q", got)
	}
}

// numbered is n lines "line 1" … "line n".
func numbered(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = "line " + strconv.Itoa(i+1)
	}
	return strings.Join(lines, "\n")
}

// A long paste shows as one marker; the model gets the whole text; the
// history brings the marker back; up and the text around it edit as usual.
func TestLongPasteCollapses(t *testing.T) {
	h := newHarness(t, 60, 24)
	srv := withModel(h, "openai/test")
	long := numbered(300)
	h.typeText("look: ")
	h.update(tea.PasteMsg{Content: long + "\n"})
	h.typeText(" thanks")
	if rows := editorRows(h); len(rows) != 1 || rows[0] != "look: [pasted 300 lines] thanks" {
		t.Fatalf("editor rows %q", rows)
	}
	if c := h.m.View().Cursor; c == nil || c.X != editorFrameW/2+len("look: [pasted 300 lines] thanks") {
		t.Errorf("cursor %+v", c)
	}
	if got := h.m.editor.Value(); got != "look: "+long+" thanks" {
		t.Errorf("editor value is %d bytes, want the paste in full", len(got))
	}
	h.press(tea.KeyEnter, 0)
	h.waitFor("the answer", h.agentIdle)
	if got := lastUserText(t, srv); got != "look: "+long+" thanks" {
		t.Errorf("the model got %d bytes: %.80q…", len(got), got)
	}
	checkWidths(t, h, 60)

	h.press(tea.KeyUp, 0)
	if rows := editorRows(h); len(rows) != 1 || rows[0] != "look: [pasted 300 lines] thanks" {
		t.Errorf("recalled rows %q", rows)
	}
	if got := h.m.editor.Value(); got != "look: "+long+" thanks" {
		t.Errorf("recalled value is %d bytes, want the paste in full", len(got))
	}
}

// Backspace right after the marker takes the whole paste out; delete
// before it too; the text around it stays.
func TestPasteMarkerDeletes(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("a ")
	h.update(tea.PasteMsg{Content: numbered(11)})
	h.typeText(" b")
	h.press(tea.KeyLeft, 0)
	h.press(tea.KeyLeft, 0)
	h.press(tea.KeyBackspace, 0)
	if got := h.m.editor.Value(); got != "a  b" {
		t.Errorf("after backspace on the marker: %q", got)
	}
	if rows := editorRows(h); len(rows) != 1 || rows[0] != "a  b" {
		t.Errorf("rows %q", rows)
	}

	h.m.editor.Reset()
	h.update(tea.PasteMsg{Content: strings.Repeat("x", 2000)})
	if rows := editorRows(h); len(rows) != 1 || rows[0] != "[pasted 2000 characters]" {
		t.Errorf("one long line shows %q", rows)
	}
	h.press(tea.KeyHome, 0)
	h.press(tea.KeyDelete, 0)
	if got := h.m.editor.Value(); got != "" {
		t.Errorf("after delete before the marker: %q", got)
	}
}

// A paste at the limits shows as it is; text that holds a marker's rune
// (no keyboard makes one) does not become a paste.
func TestShortPasteStaysAndMarkerRunesGo(t *testing.T) {
	h := newHarness(t, 80, 30)
	ten := numbered(10)
	h.update(tea.PasteMsg{Content: ten})
	if got := h.m.editor.Value(); got != ten || strings.Contains(h.screen(), "[pasted") {
		t.Errorf("a 10-line paste: %q\n%s", got, h.screen())
	}
	h.m.editor.Reset()
	h.update(tea.PasteMsg{Content: strings.Repeat("y", 1000)})
	if strings.Contains(h.screen(), "[pasted") {
		t.Errorf("a 1000-character paste collapsed:\n%s", h.screen())
	}

	h.m.editor.Reset()
	h.update(tea.PasteMsg{Content: numbered(20)}) // known marker pasteFirst
	h.m.editor.Reset()
	h.update(tea.PasteMsg{Content: "x" + string(pasteFirst) + "y"})
	h.typeText(string(pasteFirst + 1))
	if got := h.m.editor.Value(); got != "xy" {
		t.Errorf("marker runes typed or pasted: %q", got)
	}
}

// Up recalls a prompt with the cursor at its end, as a shell does: typing
// goes on after it, and up again goes further back.
func TestHistoryRecallPutsCursorAtEnd(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.sendLine("!echo first")
	h.waitFor("the first command", h.bangIdle)
	h.sendLine("!echo second")
	h.waitFor("the second command", h.bangIdle)

	h.press(tea.KeyUp, 0)
	if c := h.m.View().Cursor; c == nil || c.X != editorFrameW/2+len("!echo second") {
		t.Errorf("cursor after up: %+v, want x %d", c, editorFrameW/2+len("!echo second"))
	}
	h.typeText("X")
	if got := h.m.editor.Value(); got != "!echo secondX" {
		t.Errorf("typed after the recall: %q", got)
	}
	h.press(tea.KeyBackspace, 0)
	h.press(tea.KeyUp, 0)
	if got := h.m.editor.Value(); got != "!echo first" {
		t.Errorf("up again: %q", got)
	}
	h.typeText("Y")
	if got := h.m.editor.Value(); got != "!echo firstY" {
		t.Errorf("typed after the second recall: %q", got)
	}

	// A prompt of two lines: the cursor at the end of the second; up
	// moves to the first line, and only then further back.
	h.m.editor.Reset()
	h.m.histPos = len(h.m.history)
	h.update(tea.PasteMsg{Content: "!echo one\necho two"})
	h.press(tea.KeyEnter, 0)
	h.waitFor("the two-line command", h.bangIdle)
	h.press(tea.KeyUp, 0)
	h.typeText("Z")
	if got := h.m.editor.Value(); got != "!echo one\necho twoZ" {
		t.Errorf("typed after the two-line recall: %q", got)
	}
	h.press(tea.KeyUp, 0)
	if got := h.m.editor.Value(); got != "!echo one\necho twoZ" {
		t.Errorf("up on the last line recalled: %q", got)
	}
	h.press(tea.KeyUp, 0)
	if got := h.m.editor.Value(); got != "!echo second" {
		t.Errorf("up on the first line: %q", got)
	}
}

// waitGone waits until no process has arg as an argument, and for the
// model's goroutines (Run waits for them the same way); the hang guard
// prints what is left.
func waitGone(t *testing.T, h *harness, arg string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		h.m.wg.Wait()
		close(done)
	}()
	testkit.Eventually(t, 0, "the model's goroutines and processes to end after quitting", func() (bool, string) {
		ended, pids := chanClosed(done), proctest.WithArg(arg)
		return ended && len(pids) == 0, fmt.Sprintf("goroutines done %v, processes %v", ended, pids)
	})
}

func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// ctrl+d on an empty editor while the agent works asks first, as with jobs;
// yes stops the turn and its command.
func TestCtrlDMidTurnAsks(t *testing.T) {
	tag := proctest.SleepTag()
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Bash("call_1", `{"command":"echo started; sleep `+tag+`"}`)
			return
		}
		w.Answer("done")
	})
	h := newHarness(t, 100, 24)
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test"}), "test")
	h.sendLine("sleep please")
	h.waitFor("the command to run", func() bool {
		return strings.Contains(h.screen(), "\n  started\n") && len(proctest.WithArg(tag)) > 0
	})

	ask := "the agent is working — quit and stop it? y/n"
	if msgs := runCmd(h.press('d', tea.ModCtrl)); hasMsg[tea.QuitMsg](msgs) || h.m.quitting {
		t.Fatal("ctrl+d quit mid-turn without asking")
	}
	if s := h.statusLine(); !strings.Contains(s, ask) {
		t.Fatalf("status line %q, want %q", s, ask)
	}
	h.press('n', 0)
	if s := h.statusLine(); strings.Contains(s, "quit") || !h.m.runner.Busy() || len(proctest.WithArg(tag)) == 0 {
		t.Fatalf("after n: status %q, turn running %v, sleep %v", s, h.m.runner.Busy(), proctest.WithArg(tag))
	}
	// /exit asks the same.
	h.sendLine("/exit")
	if s := h.statusLine(); !strings.Contains(s, ask) || h.m.quitting {
		t.Fatalf("/exit mid-turn: status %q", s)
	}
	if msgs := runCmd(h.update(tea.KeyPressMsg{Code: 'y', Text: "y"})); !hasMsg[tea.QuitMsg](msgs) || !h.m.quitting {
		t.Fatalf("y did not quit: %v", msgs)
	}
	waitGone(t, h, tag)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests: the turn went on after quitting", n)
	}
}

// The same for a `!` command, with jobs running beside it.
func TestCtrlDDuringBangAsks(t *testing.T) {
	h := newHarness(t, 120, 24)
	mgr := withJobs(h)
	startJob(t, mgr, "sleep 60")
	tag := proctest.SleepTag()
	h.sendLine("!sleep " + tag)
	h.waitFor("the command to run", func() bool { return len(proctest.WithArg(tag)) > 0 })
	h.press('d', tea.ModCtrl)
	if s, ask := h.statusLine(), "a command is running and 1 job running — quit and stop them? y/n"; !strings.Contains(s, ask) || h.m.quitting {
		t.Fatalf("status line %q, want %q", s, ask)
	}
	if msgs := runCmd(h.update(tea.KeyPressMsg{Code: 'y', Text: "y"})); !hasMsg[tea.QuitMsg](msgs) {
		t.Fatalf("y did not quit: %v", msgs)
	}
	waitGone(t, h, tag)
}

// Queued messages taken back (esc) show their long pastes as markers again.
func TestQueuedPasteComesBackCollapsed(t *testing.T) {
	h, f := newModelHarness(t)
	h.send("first")
	h.waitFor("the first request", func() bool { return len(f.requests()) == 1 })
	long := numbered(11) // short in bytes, long in lines
	h.typeText("then: ")
	h.update(tea.PasteMsg{Content: long})
	h.press(tea.KeyEnter, 0)
	if steer, follow := h.m.session().QueuedInput(); len(steer) != 0 || len(follow) != 1 || follow[0] != "then: "+long {
		t.Fatalf("queued %q %q", steer, follow)
	}
	h.press(tea.KeyEscape, 0)
	if rows := editorRows(h); len(rows) != 1 || rows[0] != "then: [pasted 11 lines]" {
		t.Errorf("taken back: %q", rows)
	}
	if got := h.m.editor.Value(); got != "then: "+long {
		t.Errorf("taken back value %q", got)
	}
	f.release <- struct{}{}
	h.waitFor("the turn to end", h.agentIdle)
}

// BenchmarkKeyAfterLongPaste is one typed key and its frame with a
// 20,000-line paste in the editor.
func BenchmarkKeyAfterLongPaste(b *testing.B) {
	m := newBenchModel(b)
	m.Update(tea.PasteMsg{Content: numbered(20_000)})
	for b.Loop() {
		m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
		m.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
		m.View()
	}
}
