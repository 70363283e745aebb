package tui

import (
	"context"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/bash"
	"agentsh/internal/session"
)

// approvalAskMsg brings a question of the model's bash call (an ask rule,
// a sandbox denial) to the screen; the answer goes back on reply.
type approvalAskMsg struct {
	q     session.ApprovalQuestion
	reply chan session.ApprovalAnswer
}

// approvalGoneMsg: the call stopped waiting (the turn was cancelled); its
// question leaves the screen.
type approvalGoneMsg struct{ reply chan session.ApprovalAnswer }

// approver is the session's Approver in the TUI: called from the tool's
// goroutine, it hands the question to the program and waits for the
// answer.
type approver struct{ send func(tea.Msg) }

// Approve implements session.Approver.
func (a approver) Approve(ctx context.Context, q session.ApprovalQuestion) session.ApprovalAnswer {
	reply := make(chan session.ApprovalAnswer, 1) // the layer never waits on it
	a.send(approvalAskMsg{q: q, reply: reply})
	select {
	case ans := <-reply:
		return ans
	case <-ctx.Done():
		go a.send(approvalGoneMsg{reply: reply})
		return session.Decline
	}
}

// approval asks the user about one command, in a box at the bottom of the
// screen: y runs it (once), a (sandbox denials with a prefix) runs it and
// saves the prefix among the folder's outside commands in the user's own
// config (session.SaveOutsideRule), n or esc refuses. Other keys are
// swallowed: the question stays until answered.
type approval struct {
	q     session.ApprovalQuestion
	reply chan session.ApprovalAnswer
}

// update implements layer.
func (a *approval) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case approvalGoneMsg:
		if msg.reply == a.reply {
			return closeLayer{}, nil
		}
		return nil, nil
	case tea.MouseWheelMsg:
		return passOn{}, nil // the transcript still scrolls behind
	case tea.KeyPressMsg:
		k, ak := keyName(msg.String()), keys.Approval
		switch {
		case is(k, ak.Once):
			return a.answer(session.Once)
		case is(k, ak.Always) && a.offersAlways():
			return a.answer(session.Always)
		case is(k, ak.No):
			return a.answer(session.Decline)
		}
	}
	return nil, nil
}

func (a *approval) answer(ans session.ApprovalAnswer) (action, tea.Cmd) {
	a.reply <- ans
	return closeLayer{}, nil
}

// stop implements stopper: quitting answers no.
func (a *approval) stop() {
	select {
	case a.reply <- session.Decline:
	default:
	}
}

func (a *approval) offersAlways() bool {
	return a.q.Kind == session.SandboxDenial && a.q.Prefix != ""
}

// lines are the question's text, unstyled: note says how a re-run
// outside the sandbox runs (below the command).
func (a *approval) lines() (title string, body []string, note, footer string) {
	ak := keys.Approval
	switch a.q.Kind {
	case session.AskRule:
		title = "Run this command? It matches the bash.patterns rule " + a.q.Rule.String() + "."
		footer = helpLine(entry{Key: name(ak.Once), Desc: "runs it"}, entry{Key: name(ak.No), Desc: "refuses"})
	default:
		title = "The sandbox refused " + a.q.Reason + ". Run it again outside the sandbox?"
		note = a.q.OutsideNote()
		es := []entry{{Key: name(ak.Once), Desc: "once"}}
		if a.offersAlways() {
			es = append(es, entry{Key: name(ak.Always), Desc: "always for commands starting with " +
				strconv.Quote(a.q.Prefix) + " in this project"})
		}
		footer = helpLine(append(es, entry{Key: name(ak.No), Desc: "no"})...)
	}
	for _, l := range strings.Split(strings.TrimRight(a.q.Command, "\n"), "\n") {
		body = append(body, "  "+session.Printable(l))
	}
	return title, body, note, footer
}

// maxApprovalCommandLines bounds the command shown in the box, in rows
// once its long lines are wrapped.
const maxApprovalCommandLines = 16

// view implements layer: a box over the bottom of the screen, just above
// the status line.
func (a *approval) view(width, height int, st *styles) surface {
	inner := max(width-4, 1)
	title, lines, note, footer := a.lines()
	// Wrapped, not cut: what is past the box's edge runs too.
	var body []string
	for _, l := range lines {
		for _, w := range strings.Split(ansi.Hardwrap(strings.TrimPrefix(l, "  "), max(inner-2, 1), true), "\n") {
			body = append(body, "  "+w)
		}
	}
	if len(body) > maxApprovalCommandLines {
		more := len(body) - maxApprovalCommandLines + 1
		body = append(body[:maxApprovalCommandLines-1], "  … "+plural(more, "more line"))
	}
	var rows []string
	for _, l := range strings.Split(ansi.Wrap(title, inner, " "), "\n") {
		rows = append(rows, st.overlayTitle.Render(l))
	}
	for _, l := range body {
		rows = append(rows, st.theme.Bash.Render(ansi.Truncate(l, inner, "…")))
	}
	if note != "" {
		for _, l := range strings.Split(ansi.Wrap(note, inner, " "), "\n") {
			rows = append(rows, st.overlayFooter.Render(l))
		}
	}
	for _, l := range strings.Split(ansi.Wrap(footer, inner, " "), "\n") {
		rows = append(rows, st.overlayFooter.Render(l))
	}
	box := st.overlay.Padding(0, 1).Width(width).Render(strings.Join(rows, "\n"))
	h := strings.Count(box, "\n") + 1
	return surface{content: box, y: max(height-1-h, 0)}
}

// covers implements layer.
func (a *approval) covers() bool { return false }

// askApproval shows a question of the model's call.
func (m *model) askApproval(msg approvalAskMsg) tea.Cmd {
	if m.quitting {
		msg.reply <- session.Decline
		return nil
	}
	m.pushUnderScreens(&approval{q: msg.q, reply: msg.reply})
	return nil
}

// permissionsLoadedMsg carries the rules to the /permissions layer (err:
// a file could not be read or changed).
type permissionsLoadedMsg struct {
	outside []string
	rules   []bash.PatternRule
	note    string
	err     error
}

// permissions is /permissions: the commands the user's "always" answers
// let run outside the sandbox in this folder (kept in the user's own
// config), then the bash.patterns rules of the project's settings file,
// one per row; d removes the selected one from its file.
type permissions struct {
	folder  string
	path    string
	outside []string
	rules   []bash.PatternRule
	loaded  bool
	sel     int
	note    string
}

// rows is the number of rules listed.
func (p *permissions) rows() int { return len(p.outside) + len(p.rules) }

// loadPermissions reads the rules of folder and of the project's file at
// path (a command: file I/O).
func loadPermissions(folder, path, note string) tea.Cmd {
	return func() tea.Msg {
		var outside []string
		for _, r := range session.OutsideRules(folder) {
			outside = append(outside, r.Pattern)
		}
		rules, err := session.ProjectPatternRules(path)
		return permissionsLoadedMsg{outside: outside, rules: rules, note: note, err: err}
	}
}

// update implements layer.
func (p *permissions) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case permissionsLoadedMsg:
		p.loaded = true
		p.note = msg.note
		if msg.err != nil {
			p.note = msg.err.Error()
			return nil, nil
		}
		p.outside, p.rules = msg.outside, msg.rules
		p.sel = min(max(p.sel, 0), max(p.rows()-1, 0))
		return nil, nil
	case tea.KeyPressMsg:
		k, pk := keyName(msg.String()), keys.Permissions
		switch {
		case is(k, pk.Close):
			return closeLayer{}, nil
		case is(k, pk.Up):
			p.sel = max(p.sel-1, 0)
		case is(k, pk.Down):
			p.sel = min(p.sel+1, max(p.rows()-1, 0))
		case is(k, pk.Remove) && p.sel < len(p.outside):
			prefix, folder, path := p.outside[p.sel], p.folder, p.path
			return nil, func() tea.Msg {
				if err := session.RemoveOutsideRule(folder, prefix); err != nil {
					return permissionsLoadedMsg{err: err}
				}
				return loadPermissions(folder, path, "removed outside "+strconv.Quote(prefix))()
			}
		case is(k, pk.Remove) && p.sel < p.rows():
			i := p.sel - len(p.outside)
			r, folder, path := p.rules[i], p.folder, p.path
			return nil, func() tea.Msg {
				if err := session.RemovePatternRule(path, i, r); err != nil {
					return permissionsLoadedMsg{err: err}
				}
				return loadPermissions(folder, path, "removed "+r.String())()
			}
		}
		return nil, nil
	case tea.MouseWheelMsg:
		return passOn{}, nil
	}
	return nil, nil
}

// view implements layer: the whole window.
func (p *permissions) view(width, height int, st *styles) surface {
	pk := keys.Permissions
	lines := []string{st.overlayTitle.Render("Permissions · " + p.folder), ""}
	row := func(i int, action, pattern string) {
		r := "  " + padRight(action, 7) + pattern
		if i == p.sel {
			r = st.selected.Render("> " + r[2:])
		}
		lines = append(lines, ansi.Truncate(r, width, "…"))
	}
	if !p.loaded {
		lines = append(lines, "reading…")
	} else {
		lines = append(lines, ansi.Truncate("Outside the sandbox without asking (your \"always\" answers):", width, "…"))
		if len(p.outside) == 0 {
			lines = append(lines, "  none. A sandbox question answered \"always\" saves one here.")
		}
		for i, o := range p.outside {
			row(i, "outside", o)
		}
		lines = append(lines, "", ansi.Truncate("bash.patterns in "+p.path+":", width, "…"))
		if len(p.rules) == 0 {
			lines = append(lines, "  none.")
		}
		for i, r := range p.rules {
			row(len(p.outside)+i, string(r.Action), r.Pattern)
		}
	}
	footer := helpLine(entry{Key: name(pk.Up) + name(pk.Down), Desc: "select"}, help(pk.Remove), help(pk.Close))
	if p.note != "" {
		footer = p.note
	}
	for len(lines) < height-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:max(height-1, 0)], st.overlayFooter.Render(ansi.Truncate(footer, width, "…")))
	return surface{content: strings.Join(lines, "\n")}
}

// covers implements layer.
func (p *permissions) covers() bool { return true }

func padRight(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}

// cmdPermissions is /permissions.
func (m *model) cmdPermissions(string) tea.Cmd {
	dir := m.session().StartDir()
	p := &permissions{folder: dir, path: session.ProjectSettingsPath(dir)}
	m.push(p)
	return loadPermissions(p.folder, p.path, "")
}
