package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/render"
	"agentsh/internal/session"
)

// reopen builds a new screen, as agentsh -r does, on the session of h
// opened again from its file; h then drives the new screen.
func reopen(t *testing.T, h *harness) *model {
	t.Helper()
	old := h.m.cfg.Session
	store, errs, err := session.Open(old.Store().Path())
	if err != nil || len(errs) != 0 {
		t.Fatalf("open the session again: %v %v", errs, err)
	}
	t.Cleanup(func() { _ = store.Close() })
	sess, err := agent.New(old.StartDir(), store, h.ex, h.m.cfg.ToolSettings.Shell)
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.m.cfg
	cfg.Session, cfg.Models = sess, nil
	m, err := newModel(context.Background(), cfg, func(msg tea.Msg) { h.msgs <- msg })
	if err != nil {
		t.Fatal(err)
	}
	w, hgt := h.m.width, h.m.height
	h.m = m
	h.update(tea.WindowSizeMsg{Width: w, Height: hgt})
	return m
}

// views renders items at width, one string per item.
func views(items []item, width int, st *styles) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.view(width, st, spinnerFrames[0])
	}
	return out
}

// A resumed session shows what the live one showed when its turn ended:
// the same blocks, collapsed as they were, with the resumed notice below.
func TestResumeRedrawsTheTranscriptAsItWas(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Text("Counting first.")
			w.ToolCall(0, "call_1", "bash", `{"command":"seq 1 200000","timeout":30}`)
			w.ToolCall(1, "call_2", "read", `{"path":"notes.txt"}`)
			w.ToolCall(2, "call_3", "bash", `{"command":"exit 3"}`)
			w.Finish("tool_calls")
			return
		}
		w.Answer("There are **200000** lines.\n\n- one\n- two")
	})
	h := newHarnessStore(t, 90, 60, true)
	cwd := h.m.cfg.Session.Cwd()
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := 0
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero}), "test")

	for _, line := range []string{"!seq 1 100000", "!!sh -c 'echo oops; exit 2'"} {
		h.typeText(line)
		h.press(tea.KeyEnter, 0)
		h.waitFor(line, h.bangIdle)
	}
	h.typeText("count the lines")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
	live := h.m.tr.items[1:] // after the welcome
	liveViews := views(live, 90, h.m.st)
	if n := len(live); n != 8 {
		t.Fatalf("live transcript has %d items, want 8 (2 bangs, prompt, text, 3 calls, answer):\n%s", n, h.screen())
	}
	id, n := h.m.cfg.Session.ID(), len(h.m.cfg.Session.Messages())

	m := reopen(t, h)
	if n != 8 || len(m.cfg.Session.Messages()) != n {
		t.Fatalf("%d messages live, %d resumed; want 8", n, len(m.cfg.Session.Messages()))
	}
	if _, ok := m.tr.items[0].(*textItem); !ok || m.tr.items[0].(*textItem).text != welcomeText() {
		t.Errorf("the welcome is not first")
	}
	resumed := m.tr.items[1 : len(m.tr.items)-1]
	got := views(resumed, 90, m.st)
	if len(got) != len(liveViews) {
		t.Fatalf("resumed transcript has %d items, live %d:\n%s", len(got), len(liveViews), h.screen())
	}
	for i := range got {
		if got[i] != liveViews[i] {
			t.Errorf("item %d differs:\n--- resumed ---\n%s\n--- live ---\n%s", i, ansi.Strip(got[i]), ansi.Strip(liveViews[i]))
		}
	}
	last, ok := m.tr.items[len(m.tr.items)-1].(*textItem)
	if want := "resumed " + id + " · 8 messages"; !ok || last.kind != kindInfo || last.text != want {
		t.Errorf("last item %#v, want the notice %q", m.tr.items[len(m.tr.items)-1], want)
	}
	// The notice is on screen above the editor, and ctrl+g still opens the
	// truncated call's full output from the session's artifacts.
	if s := h.screen(); !strings.Contains(s, "resumed "+id+" · 8 messages") {
		t.Errorf("notice not on screen:\n%s", s)
	}
	h.press('g', tea.ModCtrl)
	if layerOn[*pagerLayer](h) == nil {
		t.Fatalf("ctrl+g opened no pager: %q", h.m.flash)
	}
	if s := h.screen(); !strings.Contains(s, "$ seq 1 200000") {
		t.Errorf("pager is not the bash call's output:\n%s", s)
	}
}

// resumedScreen is a screen opened on a session holding msgs.
func resumedScreen(t *testing.T, w, hgt int, msgs []session.Message) *harness {
	h := goldenHarness(t, w, hgt, false)
	for _, m := range msgs {
		if err := h.m.cfg.Session.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	m, err := newModel(context.Background(), h.m.cfg, func(msg tea.Msg) { h.msgs <- msg })
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	h.update(tea.WindowSizeMsg{Width: w, Height: hgt})
	return h
}

// goldenConversation is a saved conversation with every kind of block.
func goldenConversation() []session.Message {
	code2, code0 := 2, 0
	details, _ := json.Marshal(bash.ToolDetails{Meta: &bash.OutputMeta{Truncation: &bash.TruncationMeta{
		TruncatedBy: "lines", TotalLines: 5000, OutputLines: 2000, ArtifactID: "3"}}})
	var out strings.Builder
	for i := 4901; i <= 5000; i++ {
		out.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return []session.Message{
		&session.BashExecutionMessage{Command: "make", Output: "make: *** No rule to make target 'all'.\n", ExitCode: &code2},
		&session.UserMessage{Text: "why does make fail?"},
		&session.AssistantMessage{Text: "Let me look.", ToolCalls: []session.ToolCall{
			{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la && cat build.log","timeout":60}`)},
			{ID: "c2", Name: "read", Arguments: json.RawMessage(`{"path":"Makefile"}`)},
		}},
		&session.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: out.String() + "\n[Showing lines 3001-5000 of 5000. Full: artifact://3]", Details: details},
		&session.ToolResultMessage{ToolCallID: "c2", ToolName: "read", Content: "1\tbuild:\n2\t\tgo build ./...\n"},
		&session.UserMessage{Text: "[Job 1 exited with code 0: go test ./...]\nok  agentsh 0.1s"},
		&session.AssistantMessage{Text: "The Makefile has no `all` target: run `make build`."},
		&session.BashExecutionMessage{Command: "git status --short", Output: " M Makefile\n", ExitCode: &code0, ExcludeFromContext: true},
	}
}

func TestGoldenResumed(t *testing.T) {
	for _, sz := range screenSizes {
		h := resumedScreen(t, sz[0], sz[1], goldenConversation())
		// The id is random: the golden has one of the same width.
		screen := strings.ReplaceAll(h.screen(), h.m.cfg.Session.ID(), "0123456789abcdef")
		checkScreen(t, "resumed_"+strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), screen, sz[0], sz[1])
	}
}

// Each saved message becomes its block: prompts, answers, calls with their
// results (finished, collapsed), ! blocks with their state, job notes.
func TestResumeItems(t *testing.T) {
	items := resumeItems(goldenConversation(), "/w")
	var kinds []string
	for _, it := range items {
		switch v := it.(type) {
		case *textItem:
			kinds = append(kinds, []string{"user", "answer", "info", "warning", "error"}[v.kind]+":"+v.text)
		case *toolItem:
			if v.file != nil {
				kinds = append(kinds, "file:"+v.file.Tool+":"+v.file.Output)
				if v.file.Running || v.file.Expanded {
					t.Errorf("file call running %v, expanded %v", v.file.Running, v.file.Expanded)
				}
				continue
			}
			c := v.call
			kinds = append(kinds, "bash:"+c.Command)
			if c.Running || c.Expanded || c.IsError || c.TimeoutSeconds != 60 || c.Truncation == nil || c.Truncation.ArtifactID != "3" {
				t.Errorf("bash call %+v", c)
			}
		case *bangItem:
			kinds = append(kinds, "bang:"+v.bang.Command+":"+strconv.FormatBool(v.bang.Excluded)+":"+strconv.Itoa(int(v.bang.State())))
		}
	}
	want := []string{
		"bang:make:false:" + strconv.Itoa(int(render.BangError)),
		"user:why does make fail?",
		"answer:Let me look.",
		"bash:ls -la && cat build.log",
		"file:read:1\tbuild:\n2\t\tgo build ./...\n",
		"info:Job 1 exited with code 0: go test ./...",
		"answer:The Makefile has no `all` target: run `make build`.",
		"bang:git status --short:true:" + strconv.Itoa(int(render.BangComplete)),
	}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}

	// A call whose result was never saved (agentsh was killed mid-call)
	// is shown finished, not spinning forever.
	items = resumeItems([]session.Message{&session.AssistantMessage{ToolCalls: []session.ToolCall{
		{ID: "x", Name: "bash", Arguments: json.RawMessage(`{"command":"sleep 100","cwd":"/w/sub"}`)}}}}, "/w")
	if c := items[0].(*toolItem).call; len(items) != 1 || c.Running || c.CwdRel != "sub" {
		t.Errorf("call without a result: %+v", c)
	}
	if got := resumedNotice("abc", 1); got != "resumed abc · 1 message" {
		t.Errorf("notice %q", got)
	}
}

// A new session shows the welcome alone; the command line's notice comes
// after it; the command line's prompt is entered when the program starts.
func TestStartupNoticeAndPrompt(t *testing.T) {
	h := newHarness(t, 80, 24)
	if len(h.m.tr.items) != 1 {
		t.Errorf("a new session shows %d items, want the welcome alone", len(h.m.tr.items))
	}
	cfg := h.m.cfg
	cfg.Notice = "No session to continue in /w: starting a new one."
	cfg.Prompt = "!echo from the command line"
	m, err := newModel(context.Background(), cfg, func(msg tea.Msg) { h.msgs <- msg })
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	h.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if s := h.screen(); !strings.Contains(s, "No session to continue in /w: starting a new one.") || strings.Contains(s, "from the command line") {
		t.Errorf("before Init:\n%s", s)
	}
	if cmd := m.Init(); cmd == nil {
		t.Fatal("Init started nothing")
	}
	h.waitFor("the prompt's command", h.bangIdle)
	s := h.screen()
	if !strings.Contains(s, "$ echo from the command line") || !strings.Contains(s, "\nfrom the command line\n") {
		t.Errorf("the command line's prompt did not run:\n%s", s)
	}
	if got := m.history; len(got) != 1 || got[0] != "!echo from the command line" {
		t.Errorf("history %q", got)
	}
}

// BenchmarkResumeFirstFrame is the cost of opening a long session: its
// transcript rebuilt from 2000 messages (500 turns with a 48 KB bash
// result each) and the first frame drawn. Only the items on screen render.
func BenchmarkResumeFirstFrame(b *testing.B) {
	out := strings.Repeat("output line\n", 4000)
	var msgs []session.Message
	for i := range 500 {
		id := "c" + strconv.Itoa(i)
		msgs = append(msgs,
			&session.UserMessage{Text: "prompt " + strconv.Itoa(i)},
			&session.AssistantMessage{ToolCalls: []session.ToolCall{{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"make test"}`)}}},
			&session.ToolResultMessage{ToolCallID: id, ToolName: "bash", Content: out},
			&session.AssistantMessage{Text: "Done **" + strconv.Itoa(i) + "**."})
	}
	st := newStyles(true)
	b.ResetTimer()
	for b.Loop() {
		tr := newTranscript()
		for _, it := range resumeItems(msgs, "/w") {
			tr.add(it)
		}
		tr.layout(100, 36, st, "")
		_ = tr.view()
	}
}
