package tui

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/tools"
)

// quitArmWindow is how long a first ctrl+c on an idle editor waits for the
// second one before it stops meaning "quit".
const quitArmWindow = 2 * time.Second

// quitDisarmMsg is the arm-expiry tick of the ctrl+c that armed quitting
// as number gen; a later arm has a new number, so an old tick cannot cut
// it short.
type quitDisarmMsg struct{ gen int }

// queueShown is how many queued messages get a line of their own above the
// editor; the rest are counted on one more line.
const queueShown = 3

// interruptKey is ctrl+c outside the layers: it takes the queued messages
// back, else interrupts the running turn or `!` command as esc does, else
// clears the editor and arms quitting; armed, it quits.
func (m *model) interruptKey() tea.Cmd {
	if m.takeBackQueued() {
		return nil
	}
	if m.runner.Busy() || m.bangRunning {
		m.quitArmed = false
		m.abort()
		return nil
	}
	if m.quitArmed {
		m.quitArmed = false
		return m.requestQuit()
	}
	m.editor.Reset()
	m.histPos = len(m.history)
	m.quitArmed = true
	m.quitGen++
	gen := m.quitGen
	return tea.Tick(quitArmWindow, func(time.Time) tea.Msg { return quitDisarmMsg{gen: gen} })
}

// disarmOn ends the armed quit on any key but ctrl+c and on a paste,
// whichever surface takes them.
func (m *model) disarmOn(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if !is(keyName(msg.String()), keys.Main.Quit) {
			m.quitArmed = false
		}
	case tea.PasteMsg:
		m.quitArmed = false
	}
}

// queue sends a message typed while the agent works to the session's
// queue: a follow-up, taken when the agent would stop (one per turn, in the
// order typed), or a steer, taken at its next step.
func (m *model) queue(text string, steer bool) {
	m.pushHistory(text)
	m.editor.Reset()
	if steer {
		m.session().Steer(text)
	} else {
		m.session().FollowUp(text)
	}
}

// takeBackQueued puts every queued message back into the editor (steers,
// which would have gone first, then follow-ups, each oldest first) before
// what is being typed, and reports whether there was one.
func (m *model) takeBackQueued() bool {
	steer, follow := m.session().TakeQueuedInput()
	parts := append(steer, follow...)
	if len(parts) == 0 {
		return false
	}
	if draft := m.editor.Value(); draft != "" {
		parts = append(parts, draft)
	}
	m.editor.SetValue(strings.Join(parts, "\n"))
	m.histPos = len(m.history)
	return true
}

// sendQueued is told that a run ended. The run took the queued messages
// itself; one that came after its last look at the queue starts a run on
// it. A run that failed or was aborted sends nothing: its queue goes back
// into the editor, so the user decides.
func (m *model) sendQueued(err error) tea.Cmd {
	if m.runner.Busy() || m.session().QueuedInputCount() == 0 {
		return nil
	}
	if err != nil {
		m.takeBackQueued()
		if !errors.Is(err, context.Canceled) {
			m.flash = "the turn failed: the queued messages are back in the editor"
		}
		return nil
	}
	provider, modelName, _ := m.modelNow()
	return m.startRun(func(ctx context.Context, sess *agent.AgentSession, reg *tools.Registry, emit func(agent.Event)) error {
		return sess.Continue(ctx, provider, modelName, reg, emit)
	})
}

// queueLines is the dim block above the editor that shows the queued
// messages, one line each; nil when nothing waits.
func (m *model) queueLines() []string {
	steer, follow := m.session().QueuedInput()
	var all []string
	for _, q := range steer {
		all = append(all, "steering: "+q)
	}
	for _, q := range follow {
		all = append(all, "queued: "+q)
	}
	n := len(all)
	if n == 0 || m.width <= 0 {
		return nil
	}
	var lines []string
	for i, q := range all {
		if i == queueShown && n > queueShown+1 {
			lines = append(lines, "queued: "+strconv.Itoa(n-queueShown)+" more messages")
			break
		}
		lines = append(lines, strings.Join(strings.Fields(q), " "))
	}
	back := " · " + name(keys.Main.Cancel) + " takes it back"
	if n > 1 {
		back = " · " + name(keys.Main.Cancel) + " takes them back"
	}
	for i, l := range lines {
		if i == len(lines)-1 {
			// The message gives way to the hint, which says how to undo.
			l = ansi.Truncate(l, max(m.width-ansi.StringWidth(back), 1), "…") + back
		}
		lines[i] = m.st.dim.Render(ansi.Truncate(l, m.width, "…"))
	}
	return lines
}
