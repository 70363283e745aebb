package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/confinedfs"
	"agentsh/internal/pty"
	"agentsh/internal/render"
	"agentsh/internal/session"
	"agentsh/internal/testkit"
	"agentsh/internal/tools"
)

// harness drives a model the way the program would: messages the
// background goroutines send are queued and fed to Update by pump.
type harness struct {
	t    *testing.T
	m    *model
	msgs chan tea.Msg
	ex   *bash.Executor
}

func newHarness(t *testing.T, width, height int) *harness {
	t.Helper()
	return newHarnessStore(t, width, height, false)
}

// newHarnessStore is newHarness with, when stored, a session file and so an
// artifact folder for truncated output.
func newHarnessStore(t *testing.T, width, height int, stored bool) *harness {
	t.Helper()
	return newHarnessWith(t, width, height, stored, false)
}

// newHarnessWith is newHarnessStore, in colour when color is set; opts
// change the model's Config before it is built.
func newHarnessWith(t *testing.T, width, height int, stored, color bool, opts ...func(*Config)) *harness {
	t.Helper()
	root := t.TempDir()
	for _, kv := range [][2]string{{"HOME", "home"}, {"XDG_DATA_HOME", "data"}, {"XDG_CONFIG_HOME", "config"}} {
		dir := filepath.Join(root, kv[1])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(kv[0], dir)
	}
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	shell, err := bash.ResolveShell("")
	if err != nil {
		t.Skipf("no shell: %v", err)
	}
	ex := bash.NewExecutor()
	var store *session.Store
	if stored {
		if store, err = session.CreateIn(filepath.Join(root, "sessions"), work); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
	}
	sess, err := agent.New(work, store, ex, bash.ShellConfig{Path: shell})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, msgs: make(chan tea.Msg, 4096), ex: ex}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Session: sess, Executor: ex, NoColor: !color,
		ToolSettings: bash.ToolSettings{Shell: bash.ShellConfig{Path: shell}}}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := newModel(ctx, cfg, func(msg tea.Msg) { h.msgs <- msg })
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	t.Cleanup(func() {
		cancel()
		m.abortAll()
		m.host.killAll()
		m.runner.Wait()
		m.wg.Wait()
		ex.Close()
		confinedfs.StopAll() // the @ completion's file helper
	})
	h.update(tea.WindowSizeMsg{Width: width, Height: height})
	return h
}

// add puts items at the end of the transcript, as the model's events or a
// bang command would, and lays the screen out as Update does.
func (h *harness) add(items ...item) {
	for _, it := range items {
		h.m.tr.add(it)
	}
	h.m.layout()
}

func (h *harness) update(msg tea.Msg) tea.Cmd {
	_, cmd := h.m.Update(msg)
	return cmd
}

// screen is the plain text of the current view.
func (h *harness) screen() string { return ansi.Strip(h.m.View().Content) }

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(code rune, mod tea.KeyMod) tea.Cmd {
	return h.update(tea.KeyPressMsg{Code: code, Mod: mod})
}

// waitFor feeds queued messages to Update until cond holds (a hang guard,
// scaled like testkit's).
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(testkit.Scale(20 * time.Second))
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.update(msg)
		case <-time.After(10 * time.Millisecond):
			h.update(flushMsg{})
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.screen())
		}
	}
}

// layerOn is the topmost layer of type T, or nil.
func layerOn[T layer](h *harness) T { return findLayer[T](h.m.layers) }

func (h *harness) bangIdle() bool { return !h.m.bangRunning }

func TestWindowSizeAndTyping(t *testing.T) {
	h := newHarness(t, 60, 20)
	h.typeText("hello wörld")
	s := h.screen()
	lines := strings.Split(s, "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines, want 20:\n%s", len(lines), s)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line %d is %d wide: %q", i, w, l)
		}
	}
	if !strings.Contains(s, "hello wörld") {
		t.Errorf("typed text not shown:\n%s", s)
	}
	if !strings.Contains(lines[19], "no model") {
		t.Errorf("status line %q lacks the no-model hint", lines[19])
	}
	// shift+enter inserts a newline; the editor grows by a row.
	h.press(tea.KeyEnter, tea.ModShift)
	h.typeText("second")
	if got := h.m.editor.Value(); got != "hello wörld\nsecond" {
		t.Errorf("editor = %q", got)
	}
	if h.m.editor.Height() != 2 {
		t.Errorf("editor height %d, want 2", h.m.editor.Height())
	}
	// Resizing reflows: nothing is wider than the new width.
	h.update(tea.WindowSizeMsg{Width: 30, Height: 10})
	for i, l := range strings.Split(h.screen(), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("after resize, line %d is %d wide: %q", i, w, l)
		}
	}
}

func TestBangEchoThroughSession(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("!echo hi")
	h.press(tea.KeyEnter, 0)
	if h.m.editor.Value() != "" {
		t.Errorf("editor not cleared: %q", h.m.editor.Value())
	}
	h.waitFor("the bang command to finish", h.bangIdle)
	s := h.screen()
	if !strings.Contains(s, "$ echo hi") || !strings.Contains(s, "\nhi\n") {
		t.Errorf("bang block missing:\n%s", s)
	}
	ms := h.m.cfg.Session.Messages()
	if len(ms) != 1 {
		t.Fatalf("session has %d messages, want 1", len(ms))
	}
	if b, ok := ms[0].(*session.BashExecutionMessage); !ok || b.Command != "echo hi" || b.ExcludeFromContext {
		t.Errorf("recorded %#v", ms[0])
	}
	// up recalls it.
	h.press(tea.KeyUp, 0)
	if got := h.m.editor.Value(); got != "!echo hi" {
		t.Errorf("history recall = %q", got)
	}
	h.press(tea.KeyDown, 0)
	if got := h.m.editor.Value(); got != "" {
		t.Errorf("down to the draft = %q", got)
	}
}

func TestExcludedBang(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("!!echo secret")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the bang command to finish", h.bangIdle)
	ms := h.m.cfg.Session.Messages()
	if len(ms) != 1 || !ms[0].(*session.BashExecutionMessage).ExcludeFromContext {
		t.Fatalf("messages %#v", ms)
	}
	if !strings.Contains(h.screen(), "secret") {
		t.Errorf("output not shown:\n%s", h.screen())
	}
}

func TestCtrlOExpandsLatest(t *testing.T) {
	h := newHarness(t, 80, 40)
	h.typeText("!seq 1 100")
	h.press(tea.KeyEnter, 0)
	h.waitFor("seq to finish", h.bangIdle)
	s := h.screen()
	if !strings.Contains(s, "$ seq 1 100\n"+render.CollapsedHint(80, 20, 100)+"\n81\n") || !strings.Contains(s, "\n100\n") ||
		strings.Contains(s, "\n80\n") {
		t.Fatalf("collapsed view wrong:\n%s", s)
	}
	h.press('o', tea.ModCtrl)
	s = h.screen()
	if strings.Contains(s, "earlier lines") || !strings.Contains(s, "\n80\n") {
		t.Fatalf("expanded view wrong:\n%s", s)
	}
	// pgup scrolls the expanded block into view.
	h.press(tea.KeyPgUp, 0)
	h.press(tea.KeyPgUp, 0)
	if s := h.screen(); !strings.Contains(s, "$ seq 1 100") || !strings.Contains(s, "more lines below") {
		t.Errorf("pgup did not scroll:\n%s", s)
	}
	h.press(tea.KeyPgDown, 0)
	h.press(tea.KeyPgDown, 0)
	if s := h.screen(); strings.Contains(s, "more lines below") {
		t.Errorf("pgdn did not return to the bottom:\n%s", s)
	}
	h.update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if s := h.screen(); !strings.Contains(s, "3 more lines below") {
		t.Errorf("the wheel did not scroll:\n%s", s)
	}
	h.update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	h.press('o', tea.ModCtrl)
	if s := h.screen(); !strings.Contains(s, render.CollapsedHint(80, 20, 100)) {
		t.Errorf("ctrl+o again did not collapse:\n%s", s)
	}
}

func TestCtrlCTwiceQuits(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("draft")
	// The first ctrl+c only arms quitting (its command is the arm's
	// 2 s expiry tick, not a quit).
	h.press('c', tea.ModCtrl)
	if h.m.quitting || !h.m.quitArmed {
		t.Fatalf("first ctrl+c quit or did not arm")
	}
	if h.m.editor.Value() != "" {
		t.Errorf("first ctrl+c did not clear: %q", h.m.editor.Value())
	}
	if !strings.Contains(h.screen(), "ctrl+c again") {
		t.Errorf("no quit hint:\n%s", h.screen())
	}
	cmd := h.press('c', tea.ModCtrl)
	if cmd == nil {
		t.Fatal("second ctrl+c did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("second ctrl+c gave %T", cmd())
	}
}

func TestCtrlDQuitsOnlyWhenEmpty(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("ab")
	h.press(tea.KeyLeft, 0)
	if cmd := h.press('d', tea.ModCtrl); cmd != nil {
		t.Fatal("ctrl+d quit with text in the editor")
	}
	if h.m.editor.Value() != "a" {
		t.Errorf("ctrl+d did not delete forward: %q", h.m.editor.Value())
	}
	h.press(tea.KeyBackspace, 0)
	cmd := h.press('d', tea.ModCtrl)
	if cmd == nil {
		t.Fatal("ctrl+d on an empty editor did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("ctrl+d gave %T", cmd())
	}
}

func TestSecondBangIsRefusedAndEscCancels(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeText("!sleep 30")
	h.press(tea.KeyEnter, 0)
	h.waitFor("sleep to run", func() bool { return h.m.cfg.Session.IsBashRunning() })
	h.typeText("!echo second")
	h.press(tea.KeyEnter, 0)
	if got := h.m.editor.Value(); got != "!echo second" {
		t.Errorf("editor lost the refused command: %q", got)
	}
	if s := h.screen(); !strings.Contains(s, "A bash command is already running. Press Esc to cancel it first.") {
		t.Errorf("no warning:\n%s", s)
	}
	start := time.Now()
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("esc took %v", d)
	}
	if s := h.screen(); !strings.Contains(s, "cancelled") {
		t.Errorf("no cancelled state:\n%s", s)
	}
	// The kept command now runs.
	h.press(tea.KeyEnter, 0)
	h.waitFor("the second command", h.bangIdle)
	if s := h.screen(); !strings.Contains(s, "$ echo second") {
		t.Errorf("second command not shown:\n%s", s)
	}
}

func TestPromptWithoutModel(t *testing.T) {
	h := newHarness(t, 100, 30)
	h.typeText("what is here?")
	h.press(tea.KeyEnter, 0)
	s := h.screen()
	if !strings.Contains(s, "what is here?") || !strings.Contains(s, "No model configured") ||
		!strings.Contains(s, "OPENAI_API_KEY") {
		t.Errorf("no-model hint missing:\n%s", s)
	}
}

func TestEditorBorderFollowsBang(t *testing.T) {
	st := newStyles(false)
	h := newHarness(t, 40, 12)
	h.m.st = st
	plain, _, _ := h.m.editorView()
	h.typeText("!ls")
	bang, _, _ := h.m.editorView()
	h.m.editor.SetValue("!!ls")
	dim, _, _ := h.m.editorView()
	if plain == bang || bang == dim || plain == dim {
		t.Errorf("the border colour does not change:\n%q\n%q\n%q", plain, bang, dim)
	}
}

func TestToolCallEventsStream(t *testing.T) {
	h := newHarness(t, 80, 30)
	h.holdTurn()
	args := json.RawMessage(`{"command":"make test","timeout":60}`)
	h.m.pump.event(agent.Event{Type: agent.EventMessageStart, Message: &session.AssistantMessage{}})
	h.m.pump.event(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateTextDelta,
		Message: &session.AssistantMessage{Text: "Running the **tests**."}})
	h.m.pump.event(agent.Event{Type: agent.EventMessageEnd, Message: &session.AssistantMessage{Text: "Running the **tests**."}})
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: tools.BashName, Args: args})
	for i := 1; i <= 30; i++ {
		var b strings.Builder
		for j := 1; j <= i; j++ {
			b.WriteString("line " + strings.Repeat("x", j%3) + "\n")
		}
		h.m.pump.event(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: "c1", ToolName: tools.BashName,
			Args: args, PartialResult: b.String() + "partial-" + string(rune('a'+i%26))})
	}
	// The updates coalesce: one flush applies only the newest snapshot.
	if n := len(h.m.pump.queue); n != 5 {
		t.Errorf("%d queued events, want 5 (updates merged)", n)
	}
	h.update(flushMsg{})
	s := h.screen()
	if !strings.Contains(s, "Running the tests.") || !strings.Contains(s, "$ make test") || !strings.Contains(s, "partial-e") {
		t.Errorf("live tool call missing:\n%s", s)
	}
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "c1", ToolName: tools.BashName,
		Result: &tools.Result{Content: "ok\n\nCommand exited with code 2", IsError: true}, IsError: true})
	h.update(flushMsg{})
	if s := h.screen(); !strings.Contains(s, "Command exited with code 2") || !strings.Contains(s, "Timeout: 60s") {
		t.Errorf("final tool result missing:\n%s", s)
	}
}

func TestPTYOverlay(t *testing.T) {
	h := newHarness(t, 80, 30)
	s := pty.Start(context.Background(), pty.Options{Shell: "/bin/sh", Command: "cat", Cols: 78, Rows: 20})
	defer s.Close()
	h.m.host.AttachPTY(s, "cat")
	h.waitFor("the overlay", func() bool { return layerOn[*overlay](h) != nil })
	cols, rows := s.Screen().Size()
	if wc, wr := ptyInnerSize(80, 30); cols != wc || rows != wr {
		t.Errorf("PTY size %dx%d, want %dx%d", cols, rows, wc, wr)
	}
	scr := h.screen()
	if !strings.Contains(scr, "$ cat") || !strings.Contains(scr, "running") || !strings.Contains(scr, overlayFooterText(false, false)) {
		t.Fatalf("overlay chrome missing:\n%s", scr)
	}
	h.typeText("abc")
	h.press(tea.KeyEnter, 0)
	h.waitFor("cat to echo", func() bool { return strings.Count(h.screen(), "abc") >= 2 })
	if h.m.editor.Value() != "" {
		t.Errorf("keys leaked into the editor: %q", h.m.editor.Value())
	}
	h.update(tea.WindowSizeMsg{Width: 70, Height: 25})
	if c, r := s.Screen().Size(); c != 68 || r != 16 {
		t.Errorf("after resize PTY is %dx%d, want 68x16", c, r)
	}
	h.press(tea.KeyEscape, 0)
	h.waitFor("the overlay to close", func() bool { return layerOn[*overlay](h) == nil })
	if r := s.Wait(); !r.Cancelled {
		t.Errorf("esc did not kill: %+v", r)
	}
}

func TestEncodeKey(t *testing.T) {
	for _, c := range []struct {
		key  tea.Key
		want string
	}{
		{tea.Key{Code: 'a', Text: "a"}, "a"},
		{tea.Key{Code: 'é', Text: "é"}, "é"},
		{tea.Key{Code: 'c', Mod: tea.ModCtrl}, "\x03"},
		{tea.Key{Code: 'x', Text: "x", Mod: tea.ModAlt}, "\x1bx"},
		{tea.Key{Code: tea.KeyEnter}, "\r"},
		{tea.Key{Code: tea.KeyUp}, "\x1b[A"},
		{tea.Key{Code: tea.KeyUp, Mod: tea.ModCtrl}, "\x1b[1;5A"},
		{tea.Key{Code: tea.KeyBackspace}, "\x7f"},
		{tea.Key{Code: tea.KeyTab, Mod: tea.ModShift}, "\x1b[Z"},
		{tea.Key{Code: tea.KeyF1}, "\x1bOP"},
		{tea.Key{Code: tea.KeyF5}, "\x1b[15~"},
		{tea.Key{Code: tea.KeyPgDown}, "\x1b[6~"},
		{tea.Key{Code: tea.KeyEnter, Mod: tea.ModCtrl}, "\r"}, // xterm has no ctrl+Enter
	} {
		if got := string(encodeKey(c.key, false)); got != c.want {
			t.Errorf("encodeKey(%v) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestEditorWrapsAndMoves(t *testing.T) {
	e := newEditor()
	e.SetWidth(5)
	e.InsertString("abcdefghij")
	if e.Height() != 3 { // two full rows and the cursor's empty row
		t.Errorf("height %d, want 3", e.Height())
	}
	e.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if e.col != 5 {
		t.Errorf("up from the end: col %d, want 5", e.col)
	}
	if e.OnFirstRow() {
		t.Error("on first row too early")
	}
	e.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if !e.OnFirstRow() || e.col != 0 {
		t.Errorf("second up: col %d", e.col)
	}
	e.Update(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	e.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	e.Update(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	if e.Value() != "" {
		t.Errorf("ctrl+w left %q", e.Value())
	}
}

func TestTranscriptRendersOnlyVisibleItems(t *testing.T) {
	h := newHarness(t, 80, 24)
	for i := 0; i < 1000; i++ {
		h.m.tr.add(&toolItem{id: "x", call: newFinishedCall(i)})
	}
	start := time.Now()
	for i := 0; i < 10; i++ {
		h.m.tr.dirty = true // a frame after a change
		h.m.layout()
		h.m.View()
	}
	if d := time.Since(start) / 10; d > 50*time.Millisecond {
		t.Errorf("a frame of 1000 tool results took %v", d)
	}
	rendered := 0
	for _, it := range h.m.tr.items {
		if ti, ok := it.(*toolItem); ok && ti.views > 0 {
			rendered++
		}
	}
	if rendered > 10 {
		t.Errorf("%d of 1000 items were rendered for a 24-row screen", rendered)
	}
}

func newFinishedCall(i int) *render.ToolCall {
	return &render.ToolCall{Command: "seq 1 " + strconv.Itoa(i), Output: strings.Repeat("line\n", i%30)}
}

// TestStatusLineFollowsBangCd: the status line shows the session's
// directory, which the user's !cd moves (spec §2.1).
func TestStatusLineFollowsBangCd(t *testing.T) {
	h := newHarness(t, 100, 24)
	dir := filepath.Join(t.TempDir(), "moved-here")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.typeText("!cd " + dir)
	h.press(tea.KeyEnter, 0)
	h.waitFor("the bang command to finish", h.bangIdle)
	lines := strings.Split(strings.TrimRight(h.screen(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "moved-here") {
		t.Fatalf("status line %q does not show the new directory", last)
	}
}
