package tui

// /resume: the session picker (picker.go) as a layer over the transcript.
// The chosen session replaces the one on screen in place: its conversation
// is drawn as `agentsh -r ID` draws it at start, the model's next turn
// gets its history, and the tools follow it (they read the current session
// on each call). The session left behind is ended at once (LeftSession).

import (
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/session"
)

// resumeSession is the /resume picker's action (see layers.go): switch to
// the chosen saved session.
type resumeSession struct{ info session.Info }

// sessionOpenedMsg carries Config.OpenSession's answer.
type sessionOpenedMsg struct {
	info    session.Info
	sess    *agent.AgentSession
	warning string
	err     error
}

// resumePicker is the session picker as a layer: it covers the window
// until a session is chosen (resumeSession) or esc closes it with nothing
// changed.
type resumePicker struct{ p *sessionPicker }

func (r *resumePicker) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case sessionsLoadedMsg:
		r.p.update(msg)
		// The session on screen is usually the newest: the one to go
		// back to is the next.
		if len(r.p.list) > 1 && r.p.list[0].ID == r.p.current {
			r.p.sel = 1
		}
	case tea.KeyPressMsg:
		switch a := r.p.update(msg).(type) {
		case pickerCancel:
			return closeLayer{}, nil
		case pickerChoose:
			return resumeSession(a), nil
		}
	}
	return nil, nil // a paste or a click goes nowhere while the list shows
}

func (r *resumePicker) view(width, height int, st *styles) surface {
	return surface{content: r.p.view(width, height, st)}
}

func (r *resumePicker) covers() bool { return true }

// somethingRuns is the notice /new and /resume give while a turn or a `!`
// command runs: they belong to the session on screen.
func somethingRuns(then string) string {
	return "Something is still running: " + name(keys.Main.Cancel) + " stops it, then " + then + "."
}

// cmdResume is /resume: the picker of the directory's sessions, read in a
// command.
func (m *model) cmdResume(string) tea.Cmd {
	if m.cfg.ListSessions == nil || m.cfg.OpenSession == nil {
		m.tr.notice(kindWarning, "/resume is not available here.")
		return nil
	}
	if m.runner.Busy() || m.bangRunning {
		m.tr.notice(kindWarning, somethingRuns("/resume lists the sessions"))
		return nil
	}
	p := newSessionPicker(tildePath(m.session().StartDir()), nil)
	p.current = m.session().ID()
	m.push(&resumePicker{p: p})
	list := m.cfg.ListSessions
	return func() tea.Msg {
		l, err := list()
		return sessionsLoadedMsg{list: l, err: err}
	}
}

// resumeChosen opens the chosen session in a command; choosing the
// session on screen changes nothing.
func (m *model) resumeChosen(info session.Info) tea.Cmd {
	if info.ID == m.session().ID() {
		m.tr.notice(kindInfo, "Already in session "+info.ID+": nothing changed.")
		return nil
	}
	if m.runner.Busy() || m.bangRunning {
		m.tr.notice(kindWarning, somethingRuns("/resume lists the sessions"))
		return nil
	}
	open := m.cfg.OpenSession
	return func() tea.Msg {
		s, warning, err := open(info)
		return sessionOpenedMsg{info: info, sess: s, warning: warning, err: err}
	}
}

// sessionOpened switches to the opened session: the transcript starts over
// as agentsh -r draws it, and the session left behind is ended.
func (m *model) sessionOpened(msg sessionOpenedMsg) {
	if msg.err != nil {
		m.tr.notice(kindError, "Cannot resume "+msg.info.ID+": "+msg.err.Error())
		return
	}
	if m.runner.Busy() || m.bangRunning {
		// Something started while the file was read: it belongs to the
		// session on screen, which stays.
		m.leave(msg.sess)
		m.tr.notice(kindWarning, somethingRuns("/resume lists the sessions"))
		return
	}
	old := m.enter(msg.sess)
	m.tr.notice(kindInfo, welcomeText())
	m.redraw(msg.sess)
	if msg.warning != "" {
		m.tr.notice(kindWarning, msg.warning)
	}
	m.leave(old)
}

// enter makes s the session on screen, with a transcript to start over
// and the old conversation's token count gone; it returns the session it
// replaced.
func (m *model) enter(s *agent.AgentSession) (old *agent.AgentSession) {
	old = m.session()
	m.current.Store(s)
	m.tr = newTranscript()
	m.usage = usage{}
	return old
}

// leave hands a session the TUI is done with to LeftSession, which ends it.
func (m *model) leave(s *agent.AgentSession) {
	if m.cfg.LeftSession != nil && s != nil && s != m.session() {
		m.cfg.LeftSession(s, m.session())
	}
}

// tildePath shows a path under the home directory as ~/…, as the status
// line shows the cwd.
func tildePath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}
