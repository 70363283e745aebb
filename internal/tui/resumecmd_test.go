package tui

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/session"
)

// saveSession writes a session of cwd holding msgs, last written at mod.
func saveSession(t *testing.T, cwd string, mod time.Time, msgs ...session.Message) session.Info {
	t.Helper()
	st, err := session.Create(cwd)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := st.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(st.Path(), mod, mod); err != nil {
		t.Fatal(err)
	}
	return session.Info{ID: st.ID(), Path: st.Path()}
}

// switchRecorder wires /resume's and /new's hooks as agentsh does, on the
// harness's executor, and records what the TUI said it left.
type switchRecorder struct {
	h      *harness
	opened []*agent.AgentSession
	left   [][2]*agent.AgentSession // left, current
}

func withResume(h *harness) *switchRecorder {
	r := &switchRecorder{h: h}
	cwd := h.m.session().StartDir()
	shell := h.m.cfg.ToolSettings.Shell
	h.m.cfg.ListSessions = func() ([]session.Info, error) { return session.List(cwd) }
	h.m.cfg.OpenSession = func(info session.Info) (*agent.AgentSession, string, error) {
		st, _, err := session.Open(info.Path)
		if err != nil {
			return nil, "", err
		}
		h.t.Cleanup(func() { _ = st.Close() })
		s, err := agent.New(cwd, st, h.ex, shell)
		r.opened = append(r.opened, s)
		return s, "", err
	}
	h.m.cfg.LeftSession = func(left, current *agent.AgentSession) {
		r.left = append(r.left, [2]*agent.AgentSession{left, current})
		h.ex.CloseSession(left.ID())
	}
	return r
}

// run feeds what cmd answers back to Update, as the program would (but
// for the spinner's ticks).
func (h *harness) run(cmd tea.Cmd) {
	for _, msg := range runCmd(cmd) {
		if _, tick := msg.(tickMsg); msg != nil && !tick {
			h.run(h.update(msg))
		}
	}
}

// twoSessions saves an older and a newer session in the harness's
// directory.
func twoSessions(t *testing.T, h *harness) (older, newer session.Info) {
	t.Helper()
	cwd := h.m.session().StartDir()
	code := 0
	base := time.Now().Add(-3 * time.Hour)
	older = saveSession(t, cwd, base,
		&session.UserMessage{Text: "the older task"},
		&session.AssistantMessage{Text: "The older answer."},
		&session.BashExecutionMessage{Command: "echo older-bang", Output: "older-bang\n", ExitCode: &code})
	newer = saveSession(t, cwd, base.Add(time.Hour),
		&session.UserMessage{Text: "the newer task"},
		&session.AssistantMessage{Text: "The newer answer."})
	return older, newer
}

// /resume opens the picker over the transcript with the directory's
// sessions, newest first; esc closes it and nothing changed.
func TestResumeCommandOpensThePickerAndEscCloses(t *testing.T) {
	h := newHarness(t, 100, 30)
	r := withResume(h)
	twoSessions(t, h)
	h.add(&textItem{kind: kindUser, text: "the conversation on screen"})
	before, sess := h.screen(), h.m.session()

	cmd := h.sendLine("/resume")
	p := layerOn[*resumePicker](h)
	if p == nil {
		t.Fatalf("/resume opened no picker:\n%s", h.screen())
	}
	if s := h.screen(); !strings.Contains(s, "Resume a session") || !strings.Contains(s, "Reading the sessions…") {
		t.Errorf("before the list is read:\n%s", s)
	}
	h.run(cmd)
	scr := h.screen()
	newer, older := strings.Index(scr, "the newer task"), strings.Index(scr, "the older task")
	if newer < 0 || older < newer || !strings.Contains(scr, "2 messages  the newer task") ||
		!strings.Contains(scr, "3 messages  the older task") || strings.Contains(scr, "the conversation on screen") {
		t.Fatalf("the picker does not cover the transcript with both sessions, newest first:\n%s", scr)
	}
	if !strings.Contains(scr, "› ") || !strings.Contains(scr, pickerHelp()) {
		t.Errorf("no selection or footer:\n%s", scr)
	}
	h.press(tea.KeyDown, 0)
	h.press(tea.KeyEscape, 0)
	if layerOn[*resumePicker](h) != nil {
		t.Fatal("esc did not close the picker")
	}
	if h.screen() != before || h.m.session() != sess || len(r.opened) != 0 || len(r.left) != 0 {
		t.Errorf("esc changed something: opened %d, left %d\n%s", len(r.opened), len(r.left), h.screen())
	}
}

// Choosing a session switches the screen to it in place: its transcript as
// agentsh -r draws it, the model's next turn gets its history, the tools
// and the ! commands run in its shell state, and the old session is left.
func TestResumeCommandSwitchesInPlace(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Bash("call_0", `{"command":"pwd; echo \"mark=$RESUME_MARK\""}`)
			return
		}
		w.Answer("answer " + strconv.Itoa(n))
	})
	h := newHarness(t, 100, 40)
	zero := 0
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero}), "test")
	r := withResume(h)
	older, _ := twoSessions(t, h)
	work := h.m.session().StartDir()
	// agentsh runs in the directory its sessions start in, and a
	// session's first ! command starts its shell there.
	t.Chdir(work)
	first := h.m.session()
	reportUsage(h, 15000, 360)
	if st := h.statusLine(); !strings.Contains(st, "15.4k tokens") {
		t.Fatalf("no token count before /resume: %q", st)
	}

	// The session on screen moves its shell away and marks it.
	h.sendLine("!cd / && export RESUME_MARK=first")
	h.waitFor("the cd", h.bangIdle)
	h.run(h.sendLine("/resume"))
	h.press(tea.KeyDown, 0)
	h.run(h.press(tea.KeyEnter, 0))

	if layerOn[*resumePicker](h) != nil || len(r.opened) != 1 || h.m.session() != r.opened[0] || h.m.session().ID() != older.ID {
		t.Fatalf("enter did not switch to the older session:\n%s", h.screen())
	}
	if len(r.left) != 1 || r.left[0][0] != first || r.left[0][1] != r.opened[0] {
		t.Errorf("LeftSession calls %v, want (first, resumed)", r.left)
	}
	// The transcript is what agentsh -r ID shows at start.
	ref, err := newModel(context.Background(), Config{Session: r.opened[0], Executor: h.ex, NoColor: true,
		ToolSettings: h.m.cfg.ToolSettings}, func(tea.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	got, want := views(h.m.tr.items, 100, h.m.st), views(ref.tr.items, 100, ref.st)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the switched transcript differs from a start on the session:\n--- got ---\n%s\n--- want ---\n%s",
			ansi.Strip(strings.Join(got, "\n")), ansi.Strip(strings.Join(want, "\n")))
	}
	scr := h.screen()
	for _, w := range []string{"resumed " + older.ID + " · 3 messages", "the older task", "The older answer.", "$ echo older-bang"} {
		if !strings.Contains(scr, w) {
			t.Errorf("the switched screen lacks %q:\n%s", w, scr)
		}
	}
	if strings.Contains(scr, "RESUME_MARK=first") {
		t.Errorf("the old transcript is still shown:\n%s", scr)
	}
	if st := h.statusLine(); strings.Contains(st, "tokens") {
		t.Errorf("the status line still counts the old conversation: %q", st)
	}

	// ! commands and the model's bash calls run in the resumed session's
	// state: where agentsh started, without the old session's export.
	h.sendLine(`!pwd; echo "mark=$RESUME_MARK"`)
	h.waitFor("the bang command", h.bangIdle)
	if scr := h.screen(); !strings.Contains(scr, "\n"+work+"\nmark=\n") {
		t.Errorf("the ! command did not run in the resumed session's shell:\n%s", scr)
	}
	h.sendLine("what now?")
	h.waitFor("the turn", h.agentIdle)
	bodies := srv.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	if res := fakemodel.LastToolResult(bodies[1]); !strings.Contains(res, work+"\nmark=\n") {
		t.Errorf("the model's bash call ran in the old session's state: %q", res)
	}
	var wire []string
	for _, m := range fakemodel.OpenAIMessages(bodies[0]) {
		wire = append(wire, m.Role+": "+m.Content)
	}
	if got := strings.Join(wire, "|"); !strings.Contains(got, "user: the older task|assistant: The older answer.|") ||
		!strings.HasSuffix(got, "user: what now?") || strings.Contains(got, "RESUME_MARK=first") {
		t.Errorf("the model's request %q lacks the resumed history (or has the old one)", got)
	}
	// 3 saved, the ! command, the prompt, the call, its result, the answer.
	if n := len(r.opened[0].Messages()); n != 8 {
		t.Errorf("the resumed session holds %d messages, want 8", n)
	}
}

// The session on screen is marked in the list; choosing it changes
// nothing. The selection starts on the session before it.
func TestResumeCurrentSessionIsMarkedAndANoOp(t *testing.T) {
	h, f := newModelHarness(t)
	r := withResume(h)
	older, newer := twoSessions(t, h)
	h.run(h.sendLine("/resume"))
	h.press(tea.KeyDown, 0)
	h.run(h.press(tea.KeyEnter, 0))
	if h.m.session().ID() != older.ID {
		t.Fatalf("not switched to %s", older.ID)
	}
	// A message makes the resumed session the newest.
	f.release <- struct{}{}
	h.send("one more")
	h.waitFor("the answer", h.agentIdle)

	h.run(h.sendLine("/resume"))
	scr := h.screen()
	if !strings.Contains(scr, "(current) the older task") || strings.Contains(scr, "(current) the newer task") {
		t.Fatalf("the session on screen is not marked:\n%s", scr)
	}
	if p := layerOn[*resumePicker](h); p == nil || p.p.list[p.p.sel].ID != newer.ID {
		t.Fatalf("the selection does not start on the session before the current one:\n%s", scr)
	}
	h.press(tea.KeyUp, 0)
	h.run(h.press(tea.KeyEnter, 0))
	if layerOn[*resumePicker](h) != nil || h.m.session().ID() != older.ID || len(r.opened) != 1 || len(r.left) != 1 {
		t.Fatalf("choosing the current session: session %s, opened %d, left %d", h.m.session().ID(), len(r.opened), len(r.left))
	}
	if scr := h.screen(); !strings.Contains(scr, "Already in session "+older.ID+": nothing changed.") || !strings.Contains(scr, "one more") {
		t.Errorf("no notice, or the transcript changed:\n%s", scr)
	}
}

// /resume is refused while a turn or a ! command runs, and where the TUI
// has no sessions to list; a session that cannot be opened is said so.
func TestResumeRefusals(t *testing.T) {
	h, f := newModelHarness(t)
	h.sendLine("/resume")
	if !strings.Contains(h.screen(), "/resume is not available here.") || layerOn[*resumePicker](h) != nil {
		t.Fatalf("/resume without the hooks:\n%s", h.screen())
	}
	r := withResume(h)
	older, _ := twoSessions(t, h)

	h.sendLine("a question")
	h.sendLine("/resume")
	if layerOn[*resumePicker](h) != nil || !strings.Contains(h.screen(), "Something is still running: esc stops it, then /resume lists the sessions.") {
		t.Fatalf("/resume during a turn:\n%s", h.screen())
	}
	f.release <- struct{}{}
	h.waitFor("the answer", h.agentIdle)

	h.sendLine("!sleep 30")
	h.sendLine("/resume")
	if layerOn[*resumePicker](h) != nil {
		t.Fatalf("/resume during a ! command opened the picker:\n%s", h.screen())
	}
	// The open answers after a ! command started: the screen stays, and
	// the opened session is handed back.
	sess := h.m.session()
	opened, _, err := h.m.cfg.OpenSession(older)
	if err != nil {
		t.Fatal(err)
	}
	h.update(sessionOpenedMsg{info: older, sess: opened})
	if h.m.session() != sess || len(r.left) != 1 || r.left[0][0] != opened || r.left[0][1] != sess {
		t.Errorf("an open that came too late switched (left %v)", r.left)
	}
	h.waitFor("the command to start", h.m.session().IsBashRunning)
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)

	h.m.cfg.OpenSession = func(session.Info) (*agent.AgentSession, string, error) {
		return nil, "", errors.New("permission denied")
	}
	h.run(h.sendLine("/resume"))
	h.press(tea.KeyDown, 0)
	h.run(h.press(tea.KeyEnter, 0))
	if h.m.session() != sess || !strings.Contains(h.screen(), "Cannot resume "+older.ID+": permission denied") {
		t.Errorf("a failed open:\n%s", h.screen())
	}
}

// /new hands the session it leaves to LeftSession, which ends its shell,
// and the old conversation's token count goes.
func TestNewCommandLeavesTheOldSession(t *testing.T) {
	h := newHarness(t, 100, 30)
	r := withResume(h)
	old := h.m.session()
	var made *agent.AgentSession
	h.m.cfg.NewSession = func() (*agent.AgentSession, error) {
		s, err := agent.New(old.StartDir(), nil, h.ex, h.m.cfg.ToolSettings.Shell)
		made = s
		return s, err
	}
	h.sendLine("!echo shell=$$")
	h.waitFor("the command", h.bangIdle)
	m := regexp.MustCompile(`shell=(\d+)`).FindStringSubmatch(h.screen())
	if m == nil {
		t.Fatalf("no shell pid:\n%s", h.screen())
	}
	if _, err := os.Stat("/proc/" + m[1]); err != nil {
		t.Fatalf("the session's shell %s is not running: %v", m[1], err)
	}
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{}), "gpt-4o")
	reportUsage(h, 15000, 360)
	if st := h.statusLine(); !strings.Contains(st, "15.4k tokens") {
		t.Fatalf("no token count before /new: %q", st)
	}
	h.sendLine("/new")
	if len(r.left) != 1 || r.left[0][0] != old || r.left[0][1] != made {
		t.Fatalf("LeftSession calls %v, want (old, new)", r.left)
	}
	if st := h.statusLine(); strings.Contains(st, "tokens") {
		t.Errorf("the status line still counts the old conversation after /new: %q", st)
	}
	if _, err := os.Stat("/proc/" + m[1]); err == nil {
		t.Errorf("the left session's shell %s still runs", m[1])
	}
}

// The picker over the TUI looks like -r's, with the session on screen
// marked.
func TestGoldenResumePicker(t *testing.T) {
	for _, sz := range screenSizes {
		h := goldenHarness(t, sz[0], sz[1], false)
		list := pickerList(6)
		h.m.cfg.ListSessions = func() ([]session.Info, error) { return list, nil }
		h.m.cfg.OpenSession = func(session.Info) (*agent.AgentSession, string, error) {
			return nil, "", errors.New("not opened in this test")
		}
		list[1].ID = h.m.session().ID()
		h.sendLine("/resume")
		layerOn[*resumePicker](h).p.loc = time.UTC
		h.run(h.update(sessionsLoadedMsg{list: list}))
		h.press(tea.KeyDown, 0)
		screen := strings.ReplaceAll(h.screen(), h.m.session().ID(), "0123456789abcdef")
		checkScreen(t, "resume_picker_"+strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), screen, sz[0], sz[1])
	}
}

// The picker's footer comes from the key map.
func TestPickerFooterFollowsTheKeyMap(t *testing.T) {
	t.Cleanup(func() { keys = newKeyMap() })
	if got := pickerHelp(); got != "↑↓ select · enter resume · esc cancel" {
		t.Errorf("footer %q", got)
	}
	keys.Picker.Cancel = bind("ctrl+x", "cancel", "ctrl+x")
	p := newSessionPicker("~/work", pickerList(2))
	if s := ansi.Strip(p.view(80, 10, newStyles(true))); !strings.HasSuffix(s, "ctrl+x cancel") {
		t.Errorf("the footer does not follow the map:\n%s", s)
	}
	if _, ok := p.update(tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl}).(pickerCancel); !ok {
		t.Error("the rebound key does not cancel")
	}
}
