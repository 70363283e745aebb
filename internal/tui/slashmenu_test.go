package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

// withModel gives the harness a model on a fake model server that
// answers every request with "answer N"; a /model of the same provider
// goes to the same server.
func withModel(h *harness, spec string) *fakemodel.Server {
	srv := fakemodel.New(h.t, func(n int, w *fakemodel.Writer) { w.Answer(fmt.Sprintf("answer %d", n)) })
	env := map[string]string{}
	for _, kv := range srv.OpenAIEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	p, name, err := llm.FromEnv(spec, func(k string) string { return env[k] })
	if err != nil {
		h.t.Fatal(err)
	}
	h.m.cfg.Models = agent.ModelsOf(p, name)
	return srv
}

// sendLine types text and presses enter.
func (h *harness) sendLine(text string) tea.Cmd {
	h.typeText(text)
	return h.press(tea.KeyEnter, 0)
}

func (h *harness) agentIdle() bool { return !h.m.runner.Busy() }

// prompts is the user texts of every request the server got.
func prompts(srv *fakemodel.Server) []string {
	var out []string
	for _, b := range srv.Bodies() {
		raw, _ := json.Marshal(b["messages"])
		out = append(out, string(raw))
	}
	return out
}

func TestSlashMenuOpensFiltersAndRuns(t *testing.T) {
	h := newHarness(t, 80, 30)
	// Above the status line, whose no-model hint names "provider/model".
	if above, _, _ := strings.Cut(h.screen(), h.statusLine()); strings.Contains(above, "/model") {
		t.Fatal("the menu shows before / is typed")
	}
	h.typeText("/")
	scr := h.screen()
	for _, c := range slashCommands() {
		if !strings.Contains(scr, c.name) {
			t.Errorf("the open menu lacks %s:\n%s", c.name, scr)
		}
	}
	if !strings.Contains(scr, "/resume                 resumes a saved session") {
		t.Errorf("the menu lacks /resume:\n%s", scr)
	}
	h.typeText("mo")
	scr = h.screen()
	if !strings.Contains(scr, "› /model") || strings.Contains(scr, "lists keys and commands") || strings.Contains(scr, "/exit") {
		t.Errorf("/mo does not narrow the menu to /model:\n%s", scr)
	}
	// The menu is drawn just above the editor.
	lines := strings.Split(scr, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "╭") && !strings.Contains(lines[i-1], "esc closes") {
			t.Errorf("the row above the editor is %q, want the menu's footer", lines[i-1])
		}
	}
	// Backspace widens it again, esc closes it and keeps the text.
	h.press(tea.KeyBackspace, 0)
	h.press(tea.KeyBackspace, 0)
	if !h.m.menu.visible() || len(h.m.menu.matches) != len(slashCommands()) {
		t.Fatalf("after backspaces the menu has %d commands", len(h.m.menu.matches))
	}
	h.press(tea.KeyEscape, 0)
	if h.m.menu.visible() || h.m.editor.Value() != "/" || strings.Contains(h.screen(), "esc closes") {
		t.Fatalf("esc: menu %v, editor %q", h.m.menu.visible(), h.m.editor.Value())
	}
	h.typeText("h")
	if h.m.menu.visible() {
		t.Fatal("the closed menu reopened on typing")
	}

	// Up and down move the choice (wrapping), enter runs it.
	h.m.editor.Reset()
	h.typeText("/")
	h.press(tea.KeyUp, 0)
	if got := h.m.menu.selected().name; got != "/quit" {
		t.Fatalf("up from the first command chose %s", got)
	}
	h.press(tea.KeyDown, 0)
	h.press(tea.KeyDown, 0)
	if got := h.m.menu.selected().name; got != "/new" {
		t.Fatalf("down, down chose %s", got)
	}
	h.m.editor.Reset()
	h.update(tea.KeyPressMsg{}) // an unrelated message: the emptied editor closes the menu
	h.typeText("/he")
	h.press(tea.KeyEnter, 0)
	if h.m.editor.Value() != "" || h.m.menu.visible() {
		t.Fatalf("after enter: editor %q, menu %v", h.m.editor.Value(), h.m.menu.visible())
	}
	scr = h.screen()
	if !strings.Contains(scr, "Commands (typed in the editor") || !strings.Contains(scr, "/model [provider/name]") {
		t.Errorf("/he + enter does not show the help from its top:\n%s", scr)
	}
	// What comes next follows the end again.
	h.sendLine("/nope")
	if scr = h.screen(); !strings.Contains(scr, "Unknown command /nope") || strings.Contains(scr, "more lines below") {
		t.Errorf("the next notice is not shown at the end:\n%s", scr)
	}
}

// tab puts the chosen name in the editor: with a space when the command
// takes an argument, and the menu closes.
func TestSlashMenuTabCompletes(t *testing.T) {
	h := newHarness(t, 80, 30)
	h.typeText("/m")
	h.press(tea.KeyTab, 0)
	if v := h.m.editor.Value(); v != "/model " || h.m.menu.visible() {
		t.Fatalf("tab: editor %q, menu %v", v, h.m.menu.visible())
	}
	h.m.editor.Reset()
	h.typeText("/c")
	h.press(tea.KeyTab, 0)
	if v := h.m.editor.Value(); v != "/copy" {
		t.Fatalf("tab on /c: editor %q", v)
	}
	// A pasted path never opens the menu.
	h.m.editor.Reset()
	h.update(tea.PasteMsg{Content: "/usr/bin/x"})
	if h.m.menu.visible() {
		t.Fatal("a pasted path opened the menu")
	}
}

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		text        string
		name, arg   string
		known, isCm bool
	}{
		{"/help", "/help", "", true, true},
		{"  /model   openai/gpt-4.1 ", "/model", "openai/gpt-4.1", true, true},
		{"/model\topenai/x", "/model", "openai/x", true, true},
		{"/nope", "/nope", "", false, true},
		{"/usr/bin/x is broken", "", "", false, false},
		{"/tmp is full", "", "", false, false},
		{"/etc/hosts", "", "", false, false},
		{"/Help", "", "", false, false},
		{"why does /help fail", "", "", false, false},
	} {
		cmd, arg, known, isCmd := parseCommand(c.text)
		if cmd.name != c.name || arg != c.arg || known != c.known || isCmd != c.isCm {
			t.Errorf("parseCommand(%q) = %q %q %v %v", c.text, cmd.name, arg, known, isCmd)
		}
	}
}

// Commands, known or not, never reach the model; a message that starts
// with a path does.
func TestCommandsAreNeverSentToTheModel(t *testing.T) {
	h := newHarness(t, 80, 30)
	srv := withModel(h, "openai/model-a")
	h.sendLine("/nope")
	if !strings.Contains(h.screen(), "Unknown command /nope — /help lists them") {
		t.Errorf("/nope:\n%s", h.screen())
	}
	for _, c := range []string{"/help", "/model", "/copy", "/jobs"} {
		h.sendLine(c)
		if layerOn[*modelPicker](h) != nil {
			h.press(tea.KeyEscape, 0) // /model's picker: the next command goes to the editor
		}
	}
	if h.m.runner.Busy() || len(srv.Requests()) != 0 {
		t.Fatalf("a command went to the model: %d requests", len(srv.Requests()))
	}
	// A command that takes no argument does not run with one; the text
	// stays in the editor.
	var quit bool
	for _, msg := range runCmd(h.sendLine("/exit codes are wrong")) {
		_, ok := msg.(tea.QuitMsg)
		quit = quit || ok
	}
	if quit || h.m.editor.Value() != "/exit codes are wrong" || !strings.Contains(h.screen(), "/exit takes no argument.") {
		t.Fatalf("/exit with text: quit %v, editor %q\n%s", quit, h.m.editor.Value(), h.screen())
	}
	h.m.editor.Reset()
	h.sendLine("/usr/bin/x is broken")
	h.waitFor("the answer", h.agentIdle)
	ps := prompts(srv)
	if len(ps) != 1 || !strings.Contains(ps[0], "/usr/bin/x is broken") {
		t.Fatalf("requests %q, want one with the path message", ps)
	}
}

func TestNewCommandStartsAFreshSession(t *testing.T) {
	h := newHarness(t, 100, 30)
	srv := withModel(h, "openai/model-a")
	old := h.m.session()
	var made []*agent.AgentSession
	h.m.cfg.NewSession = func() (*agent.AgentSession, error) {
		s, err := agent.New(old.StartDir(), nil, h.ex, bash.ShellConfig{Path: h.m.cfg.ToolSettings.Shell.Path})
		made = append(made, s)
		return s, err
	}
	h.sendLine("first question")
	h.waitFor("the first answer", h.agentIdle)
	h.sendLine("!cd / && echo moved")
	h.waitFor("the bang command", h.bangIdle)

	// Not while something runs.
	h.sendLine("!sleep 30")
	h.sendLine("/new")
	if len(made) != 0 || !strings.Contains(h.screen(), "Something is still running: esc stops it") {
		t.Fatalf("/new during a command:\n%s", h.screen())
	}
	h.waitFor("the command to start", h.m.session().IsBashRunning) // an esc before it starts is lost
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)

	h.sendLine("/new")
	if len(made) != 1 || h.m.session() != made[0] {
		t.Fatal("/new did not switch the session")
	}
	scr := h.screen()
	if !strings.Contains(scr, "New session "+made[0].ID()) || strings.Contains(scr, "first question") || strings.Contains(scr, "moved") {
		t.Errorf("the transcript did not start over:\n%s", scr)
	}
	// The tools and the status line read the new session: its shell
	// starts where agentsh started, not where the old one's cd went.
	if cwd := made[0].Cwd(); cwd != old.StartDir() || !strings.Contains(h.statusLine(), "work") {
		t.Errorf("new session cwd %q, status %q", cwd, h.statusLine())
	}
	h.sendLine("second question")
	h.waitFor("the second answer", h.agentIdle)
	ps := prompts(srv)
	if len(ps) != 2 || strings.Contains(ps[1], "first question") || !strings.Contains(ps[1], "second question") {
		t.Fatalf("the model still sees the old conversation: %q", ps)
	}
	if n := len(made[0].Messages()); n != 2 || len(old.Messages()) < 2 {
		t.Errorf("messages: new session %d, old %d", n, len(old.Messages()))
	}
}

func TestCopyCommandSetsTheClipboard(t *testing.T) {
	h := newHarness(t, 100, 30)
	h.sendLine("/copy")
	if !strings.Contains(h.screen(), "No answer to copy yet.") {
		t.Errorf("/copy without an answer:\n%s", h.screen())
	}
	h.add(&textItem{kind: kindAssistant, text: "first answer"})
	h.add(&textItem{kind: kindUser, text: "more"})
	h.add(&textItem{kind: kindAssistant, text: "the **last** answer\nline two"})
	cmd := h.sendLine("/copy")
	var copied []string
	for _, msg := range runCmd(cmd) {
		if fmt.Sprintf("%T", msg) == "tea.setClipboardMsg" {
			copied = append(copied, fmt.Sprint(msg))
		}
	}
	if len(copied) != 1 || copied[0] != "the **last** answer\nline two" {
		t.Fatalf("clipboard writes %q", copied)
	}
	if !strings.Contains(h.screen(), "Copied the last answer (2 lines) to the clipboard") {
		t.Errorf("no notice:\n%s", h.screen())
	}
}

func TestExitCommandQuits(t *testing.T) {
	h := newHarness(t, 80, 30)
	mgr := withJobs(h)
	j := startJob(t, mgr, "cat")
	waitJob(t, j, "waiting for input")
	h.sendLine("/exit")
	if layerOn[*quitConfirm](h) == nil {
		t.Fatalf("/exit with a running job does not ask:\n%s", h.screen())
	}
	h.press('n', 0)
	j.Kill()
	waitJob(t, j, "killed")
	var quit bool
	for _, msg := range runCmd(h.sendLine("/exit")) {
		_, ok := msg.(tea.QuitMsg)
		quit = quit || ok
	}
	if !quit {
		t.Fatal("/exit did not quit")
	}
}

func TestJobsCommandOpensThePanel(t *testing.T) {
	h := newHarness(t, 80, 30)
	withJobs(h)
	h.typeText("/jo")
	h.press(tea.KeyEnter, 0)
	if layerOn[*jobsPanel](h) == nil {
		t.Fatalf("/jo + enter did not open the jobs panel:\n%s", h.screen())
	}
}
