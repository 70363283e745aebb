package tui

import (
	"os"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/render"
	"agentsh/internal/session"
)

// The status line's room rules: the message on the right keeps its words
// and a clear gap from the left part, which goes when less than minLeft
// cells of it would be left; a long cwd gives way down to minCwd cells and
// the model's label down to minLabel before the usage does.
const (
	minGap, minLeft = 2, 12
	minCwd          = 12
	minLabel        = 16
)

// statusView is the last row: the cwd, the sandbox, the model and its
// usage on the left; what runs (or a question, a hint) and the jobs on the
// right.
func (m *model) statusView() string {
	right := m.statusRight()
	if right == "" {
		left, cut := m.statusLeft(m.width, false)
		if cut {
			return left
		}
		return left + strings.Repeat(" ", max(m.width-lipgloss.Width(left), 0))
	}
	rw := lipgloss.Width(right)
	room := m.width - rw - minGap
	left, cut := m.statusLeft(max(room, 0), true)
	if room < minLeft && cut {
		// Too little of the left part would be left: the message alone.
		left = ""
		right = render.TruncateWords(right, m.width)
		rw = lipgloss.Width(right)
	}
	return left + strings.Repeat(" ", max(m.width-lipgloss.Width(left)-rw, 0)) + right
}

// statusLeft is the status line's left part in at most room cells. What
// gives way first when it does not fit: the cwd from its start ("…/app"),
// the token count (the "% context left" stays), the end of the model's
// label; then the end of the line (cut with "…" before a message on the
// right, else at a word); cut says whether the end went.
func (m *model) statusLeft(room int, beforeRight bool) (s string, cut bool) {
	cwd := m.session().Cwd()
	if home, err := os.UserHomeDir(); err == nil && home != "" && (cwd == home || strings.HasPrefix(cwd, home+"/")) {
		cwd = "~" + strings.TrimPrefix(cwd, home)
	}
	provider, _, label := m.modelNow()
	if th := m.thinkingStatus(); th != "" {
		label += " · " + th
	}
	sep := m.st.status.Render(" · ")
	// The sandbox comes before the model, whose text may be long: a cut
	// line still shows it.
	sandbox := ""
	if m.cfg.Sandbox != nil {
		if text, warn := m.cfg.Sandbox(); text != "" {
			style := m.st.status
			if warn {
				style = m.st.warning
			}
			sandbox = style.Render(text) + sep
		}
	}
	noModel := provider == nil
	if noModel {
		label = noModelStatus(m.cfg)
	}
	tokens, left := m.usage.parts()
	line := func() string {
		model := m.st.statusModel.Render(label)
		if noModel {
			model = m.st.warning.Render(label)
		}
		s := m.st.status.Render(cwd) + sep + sandbox + model
		for _, u := range []string{tokens, left} {
			if u != "" {
				s += m.st.status.Render(" · " + u)
			}
		}
		return s
	}
	s = line()
	if over, w := lipgloss.Width(s)-room, ansi.StringWidth(cwd); over > 0 && w > minCwd {
		cwd = ansi.TruncateLeft(cwd, min(over, w-minCwd)+1, "…")
		s = line()
	}
	if lipgloss.Width(s) > room && left != "" {
		tokens = ""
		s = line()
	}
	if over, w := lipgloss.Width(s)-room, ansi.StringWidth(label); over > 0 && w > minLabel && !noModel {
		label = ansi.Truncate(label, max(w-over, minLabel), "…")
		s = line()
	}
	switch {
	case lipgloss.Width(s) <= room:
		return s, false
	case beforeRight:
		return ansi.Truncate(s, room, "…"), true
	}
	return render.TruncateWords(s, room), true
}

// statusRight is the status line's right part: a question or hint, what
// runs, then the jobs; "" when there is nothing to say.
func (m *model) statusRight() string {
	var right string
	spinner := spinnerFrames[m.spin]
	busy := m.runner.Busy()
	confirm, overlay := findLayer[*quitConfirm](m.layers), findLayer[*overlay](m.layers)
	switch {
	case confirm != nil:
		right = m.st.warning.Render(confirm.question())
	case m.quitArmed:
		right = m.st.warning.Render("press " + name(keys.Main.Quit) + " again to quit")
	case m.flash != "":
		right = m.st.warning.Render(m.flash)
	case overlay != nil:
		right = m.st.statusRunning.Render(spinner + " terminal: " + oneLine(overlay.command) + " (" + name(overlay.killKey()) + " kills)")
	case m.compacting || busy && m.tr.compacting:
		right = m.st.statusRunning.Render(spinner + " compacting the conversation… (" + name(keys.Main.Cancel) + " to abort)")
	case findLayer[*approval](m.layers) != nil:
		right = m.st.warning.Render(approvalStatus) // approval.go
	case busy && m.tr.runningTools() > 0:
		right = m.st.statusRunning.Render(spinner + " running tool… (" + name(keys.Main.Cancel) + " to abort)")
	case busy:
		right = m.st.statusRunning.Render(spinner + " working…" + m.waiting.text(m.tr.now, m.session().RequestTimeout(),
			name(keys.Main.Cancel)+" to abort"))
	case m.bangRunning && m.bang != nil:
		right = m.st.statusRunning.Render(spinner + " $ " + oneLine(m.bang.bang.Command) + " (" + name(keys.Main.Cancel) + " to cancel)")
	case m.tr.selected != nil:
		hint := "selected · " + name(keys.Main.Expand) + " expand"
		if id, _ := artifactOf(m.tr.selected); id != "" {
			hint += " · " + name(keys.Main.Pager) + " full output"
		}
		right = m.st.status.Render(hint + " · " + name(keys.Main.Cancel) + " deselect")
	case m.settings.status != "":
		right = m.st.warning.Render(m.settings.status) // settingswarn.go
	}
	if js := m.jobsStatus(); js != "" && confirm == nil {
		if right != "" {
			right += m.st.status.Render(" · ")
		}
		right += js
	}
	return right
}

// requestClock follows the model call under way: when the last sign of
// life of its answer came (its start, or its latest piece), which is what
// the request timeout counts from.
type requestClock struct {
	since time.Time
	on    bool // a call is under way
}

// observe takes an event of the agent at now.
func (c *requestClock) observe(e agent.Event, now time.Time) {
	switch e.Type {
	case agent.EventMessageStart, agent.EventMessageUpdate:
		if _, ok := e.Message.(*session.AssistantMessage); ok {
			c.since, c.on = now, true
		}
	case agent.EventMessageEnd:
		if _, ok := e.Message.(*session.AssistantMessage); ok || e.Message == nil {
			c.on = false
		}
	}
}

// text follows `working…`: ` (esc to abort)` (hint) while the answer
// streams, and once the call has been silent a second or more at now how
// long, with the timeout (0: none) that would end it:
// ` 42s (timeout 10m; esc to abort)`.
func (c *requestClock) text(now time.Time, timeout time.Duration, hint string) string {
	if !c.on || now.Sub(c.since) < time.Second {
		return " (" + hint + ")"
	}
	s := " " + render.FormatElapsed(now.Sub(c.since)) + " ("
	if timeout > 0 {
		s += "timeout " + agent.FormatTimeout(timeout) + "; "
	}
	return s + hint + ")"
}
