package tui

import (
	"os"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// cmdStatus is /status: what the session runs with, as an info block in the
// transcript (the status line has room for only some of it).
func (m *model) cmdStatus(string) tea.Cmd {
	it := &textItem{kind: kindInfo, text: m.statusText()}
	m.tr.add(it)
	m.layout()
	m.tr.reveal(it)
	return nil
}

// statusText is /status's block: one aligned row per fact.
func (m *model) statusText() string {
	sess := m.session()
	provider, modelName, label := m.modelNow()
	model := label
	if provider == nil {
		model = noModelStatus(m.cfg)
	} else if th := m.thinkingStatus(); th != "" {
		model += " · " + th
	}
	file := "not saved (--no-session)"
	if st := sess.Store(); st != nil {
		file = homeTilde(st.Path())
	}
	sandbox := "not shown here"
	if m.cfg.Sandbox != nil {
		if text, _ := m.cfg.Sandbox(); text != "" {
			sandbox = text
		}
	}
	jobs := "none running"
	if running, waiting := jobCounts(m.cfg.Jobs); running > 0 {
		jobs = jobsWord(running) + " running"
		if waiting > 0 {
			jobs += " · " + strconv.Itoa(waiting) + " waiting for input"
		}
	}
	now := m.runningWork()
	if now == "" {
		now = "idle"
	}
	rows := [][2]string{
		{"model", model},
		{"session", sess.ID() + " · " + file},
		{"folder", homeTilde(sess.Cwd())},
		{"sandbox", sandbox},
		{"context", m.contextText(modelName)},
		{"jobs", jobs},
		{"now", now},
	}
	var b strings.Builder
	b.WriteString("Status")
	for _, r := range rows {
		b.WriteString("\n  " + r[0] + strings.Repeat(" ", 9-len(r[0])) + r[1])
	}
	return b.String()
}

// contextText is how much of the model's context the next request takes:
// the conversation, the system prompt and the tools, estimated as auto
// compaction estimates them.
func (m *model) contextText(modelName string) string {
	u := m.session().ContextUsage(modelName, m.reg)
	window := u.ContextWindow
	if window == 0 {
		if md, ok := m.cfg.Models.CurrentModel(); ok { // the provider's listing, when it was asked
			window = md.ContextWindow
		}
	}
	s := "about " + formatTokens(u.Tokens) + " tokens"
	if window <= 0 {
		return s + " (the model's context window is not known)"
	}
	pct := (u.Tokens*100 + int64(window)/2) / int64(window)
	return s + " of " + tokensShort(window) + " (" + strconv.FormatInt(pct, 10) + "%)"
}

// homeTilde writes a path under the home folder as ~/….
func homeTilde(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}
