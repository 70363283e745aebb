package tui

import tea "charm.land/bubbletea/v2"

// startup is the transcript's first state after the welcome: the resumed
// conversation, a settings file that does not load, then the notice from the command line (e.g. that
// --continue found nothing to continue).
func (m *model) startup() {
	m.resume()
	m.settingsAtStart()
	if m.cfg.Notice != "" {
		m.tr.notice(kindWarning, m.cfg.Notice)
	}
}

// initialPrompt sends the prompt given on the command line (agentsh
// "prompt") as if it was typed and entered. Init calls it, so that the
// spinner it starts is scheduled by the program.
func (m *model) initialPrompt() tea.Cmd {
	if m.cfg.Prompt == "" {
		return nil
	}
	m.editor.SetValue(m.cfg.Prompt)
	return m.submit(false)
}
