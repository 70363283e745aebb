package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
)

// /clear starts a fresh session as /new does (under its own name in the
// answers), and /quit quits as /exit does, asking first while work runs.
func TestClearAndQuitAreAliases(t *testing.T) {
	h := newHarness(t, 100, 30)
	srv := withModel(h, "openai/model-a")
	old := h.m.session()

	h.sendLine("/clear")
	if s := h.screen(); !strings.Contains(s, "/clear is not available here.") {
		t.Errorf("/clear without sessions:\n%s", s)
	}
	var made []*agent.AgentSession
	h.m.cfg.NewSession = func() (*agent.AgentSession, error) {
		s, err := agent.New(old.StartDir(), nil, h.ex, bash.ShellConfig{Path: h.m.cfg.ToolSettings.Shell.Path})
		made = append(made, s)
		return s, err
	}
	h.sendLine("first question")
	h.waitFor("the first answer", h.agentIdle)
	h.sendLine("!sleep 30")
	h.sendLine("/clear")
	if s := h.screen(); len(made) != 0 || !strings.Contains(s, "Something is still running: esc stops it, then /clear starts a fresh session.") {
		t.Fatalf("/clear during a command:\n%s", s)
	}
	h.waitFor("the command to start", h.m.session().IsBashRunning)
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)
	h.sendLine("/clear")
	if len(made) != 1 || h.m.session() != made[0] {
		t.Fatal("/clear did not switch the session")
	}
	if s := h.screen(); !strings.Contains(s, "New session "+made[0].ID()) || strings.Contains(s, "first question") {
		t.Errorf("the transcript did not start over:\n%s", s)
	}
	h.sendLine("second question")
	h.waitFor("the second answer", h.agentIdle)
	if ps := prompts(srv); len(ps) != 2 || strings.Contains(ps[1], "first question") {
		t.Errorf("the model still sees the old conversation: %q", ps)
	}

	h.sendLine("/quit now")
	if h.m.quitting || h.m.editor.Value() != "/quit now" || !strings.Contains(h.screen(), "/quit takes no argument.") {
		t.Fatalf("/quit with a word: quitting %v, editor %q", h.m.quitting, h.m.editor.Value())
	}
	h.m.editor.Reset()
	h.sendLine("!sleep 30")
	h.waitFor("the command to start", h.m.session().IsBashRunning)
	if isQuit(h.sendLine("/quit")) || !strings.Contains(h.statusLine(), "a command is running — quit and stop it? y/n") {
		t.Fatalf("/quit during a command: %q", h.statusLine())
	}
	h.press('n', 0)
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)
	if !isQuit(h.sendLine("/quit")) || !h.m.quitting {
		t.Fatal("/quit did not quit")
	}
}

// /status tells the model, the session and its file, the folder, the
// sandbox, the context the next request takes, the jobs and what runs.
func TestStatusCommand(t *testing.T) {
	h := newHarnessStore(t, 220, 40, true)
	withModel(h, "openai/gpt-4o")
	h.m.cfg.Sandbox = func() (string, bool) { return "sandbox: workspace-write", false }
	mgr := withJobs(h)
	sess := h.m.session()

	h.sendLine("/status")
	want := "Status\n" +
		"  model    openai/gpt-4o\n" +
		"  session  " + sess.ID() + " · " + sess.Store().Path() + "\n" +
		"  folder   " + sess.Cwd() + "\n" +
		"  sandbox  sandbox: workspace-write\n" +
		"  context  about "
	s := h.screen()
	if !strings.Contains(s, want) {
		t.Fatalf("want\n%s\nin\n%s", want, s)
	}
	// The system prompt and the tools count before anything is said.
	if !strings.Contains(s, " tokens of 128k (") || !strings.Contains(s, "  jobs     none running\n  now      idle\n") {
		t.Errorf("/status:\n%s", s)
	}

	h.update(tea.PasteMsg{Content: strings.Repeat("many words here ", 2000)})
	h.press(tea.KeyEnter, 0)
	h.waitFor("the answer", h.agentIdle)
	startJob(t, mgr, "sleep 60")
	h.sendLine("!sleep 30")
	h.waitFor("the command to start", h.m.session().IsBashRunning)
	h.sendLine("/status")
	s = h.screen()
	if !strings.Contains(s, "  jobs     1 job running\n  now      a command is running\n") {
		t.Errorf("/status with a job and a command:\n%s", s)
	}
	if !strings.Contains(s, "k tokens of 128k (") {
		t.Errorf("the context does not count the long prompt:\n%s", s)
	}
	if h.m.editor.Value() != "" || len(h.m.session().Messages()) != 2 {
		t.Errorf("/status reached the session: %d messages", len(h.m.session().Messages()))
	}
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)
}
