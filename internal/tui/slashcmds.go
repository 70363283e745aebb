package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/export"
)

// unknownCommandText answers a /word that is no command.
func unknownCommandText(name string) string {
	return "Unknown command " + name + " — /help lists them"
}

// menuChose carries out the menu's answer to a key.
func (m *model) menuChose(c menuChoice) tea.Cmd {
	switch c {
	case menuComplete:
		sel := m.menu.selected()
		m.menu.close()
		if sel.args != "" {
			m.editor.SetValue(sel.name + " ")
		} else {
			m.editor.SetValue(sel.name)
		}
	case menuRun:
		sel := m.menu.selected()
		m.menu.close()
		m.pushHistory(sel.name)
		m.editor.Reset()
		return sel.run(m, "")
	}
	return nil
}

// withMenu draws the open slash menu over the bottom rows of the
// transcript (th rows), just above the editor.
func (m *model) withMenu(transcript string, th int) string {
	if !m.menu.visible() {
		return transcript
	}
	menu := strings.Split(m.menu.view(m.width, m.st), "\n")
	if len(menu) > th {
		menu = menu[:th]
	}
	rows := strings.Split(transcript, "\n")
	copy(rows[len(rows)-len(menu):], menu)
	return strings.Join(rows, "\n")
}

// cmdHelp is /help: every key and command, as an info block in the
// transcript shown from its top.
func (m *model) cmdHelp(string) tea.Cmd {
	it := &textItem{kind: kindInfo, text: strings.TrimRight(helpText(), "\n")}
	m.tr.add(it)
	m.layout()
	m.tr.reveal(it)
	return nil
}

// cmdNew is /new: a fresh session on the same job manager; the transcript
// starts over and the old session is ended. Not while a turn or a !
// command runs: they belong to the old session.
func (m *model) cmdNew(string) tea.Cmd { return m.newSession("/new") }

// cmdClear is /clear: /new under the name other agents give it.
func (m *model) cmdClear(string) tea.Cmd { return m.newSession("/clear") }

// newSession is /new and /clear (typed as command).
func (m *model) newSession(command string) tea.Cmd {
	if m.cfg.NewSession == nil {
		m.tr.notice(kindWarning, command+" is not available here.")
		return nil
	}
	if m.runner.Busy() || m.bangRunning {
		m.tr.notice(kindWarning, somethingRuns(command+" starts a fresh session"))
		return nil
	}
	sess, err := m.cfg.NewSession()
	if err != nil {
		m.tr.notice(kindError, "Cannot start a new session: "+err.Error())
		return nil
	}
	old := m.enter(sess)
	m.tr.notice(kindInfo, "New session "+sess.ID()+" · the model no longer sees the earlier conversation.")
	m.leave(old)
	return nil
}

// cmdJobs is /jobs.
// cmdMouse is /mouse: mouse capture on or off (mouse.go).
func (m *model) cmdMouse(string) tea.Cmd {
	m.toggleMouse()
	return nil
}

func (m *model) cmdJobs(string) tea.Cmd {
	m.openJobsPanel()
	return nil
}

// cmdCopy is /copy: the last answer goes to the clipboard through the
// terminal (OSC 52), which works over ssh too but only where the terminal
// allows it.
func (m *model) cmdCopy(string) tea.Cmd {
	text := m.tr.lastAnswer()
	if text == "" {
		m.tr.notice(kindWarning, "No answer to copy yet.")
		return nil
	}
	lines := strings.Count(text, "\n") + 1
	m.tr.notice(kindInfo, "Copied the last answer ("+plural(lines, "line")+") to the clipboard (OSC 52: the terminal must allow it).")
	return tea.SetClipboard(text)
}

// cmdExport is /export [path]: the session's transcript as one HTML file,
// at path (relative to the shell's directory, ~ for the home folder) or
// under its default name there.
func (m *model) cmdExport(arg string) tea.Cmd {
	if arg == "~" || strings.HasPrefix(arg, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			arg = filepath.Join(home, arg[1:])
		}
	}
	path, err := export.WriteSession(m.session(), arg)
	if err != nil {
		m.tr.notice(kindError, "Export failed: "+err.Error())
		return nil
	}
	m.tr.notice(kindInfo, "Exported the session to "+path)
	return nil
}

// cmdExit is /exit and /quit: quits, asking first while a turn, a `!`
// command or jobs run.
func (m *model) cmdExit(string) tea.Cmd { return m.requestQuit() }

func plural(n int, word string) string {
	s := strconv.Itoa(n) + " " + word
	if n != 1 {
		s += "s"
	}
	return s
}

// lastAnswer is the text of the newest assistant answer, "" when there is
// none.
func (t *transcript) lastAnswer() string {
	all := t.all()
	for i := len(all) - 1; i >= 0; i-- {
		if ti, ok := all[i].(*textItem); ok && ti.kind == kindAssistant && strings.TrimSpace(ti.text) != "" {
			return ti.text
		}
	}
	return ""
}
