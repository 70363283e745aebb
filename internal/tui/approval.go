package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
)

// approvalAskMsg brings a question of the model's bash call (an ask rule,
// a sandbox denial) to the screen; the answer goes back on reply.
type approvalAskMsg struct {
	q     agent.ApprovalQuestion
	reply chan agent.ApprovalAnswer
}

// approvalGoneMsg: the call stopped waiting (the turn was cancelled); its
// question leaves the screen.
type approvalGoneMsg struct{ reply chan agent.ApprovalAnswer }

// approver is the session's Approver in the TUI: called from the tool's
// goroutine, it hands the question to the program and waits for the
// answer.
type approver struct{ send func(tea.Msg) }

// Approve implements session.Approver.
func (a approver) Approve(ctx context.Context, q agent.ApprovalQuestion) agent.ApprovalAnswer {
	reply := make(chan agent.ApprovalAnswer, 1) // the layer never waits on it
	a.send(approvalAskMsg{q: q, reply: reply})
	select {
	case ans := <-reply:
		return ans
	case <-ctx.Done():
		go a.send(approvalGoneMsg{reply: reply})
		return agent.Decline
	}
}

// approvalGrace is how long a new question takes no key, and how long the
// user's typing must have paused before a key answers it: the question
// pops up while the user types the next prompt (which the README
// invites), and a key meant for the editor must never run a command.
const approvalGrace = 500 * time.Millisecond

// maxApprovalCommandLines bounds the command shown in the box, in rows
// once its long lines are wrapped; a longer one scrolls.
const maxApprovalCommandLines = 16

// minApprovalBox is the narrowest window the question has a frame in.
const minApprovalBox = 10

// approvalStatus is the status line's while a question waits.
const approvalStatus = "waiting for your answer"

// approvalStopped is the transcript's notice after "No".
const approvalStopped = "You said no, and the turn stopped: tell the model what to do differently."

// approvalTickMsg tells question a that its grace period may be over.
type approvalTickMsg struct{ a *approval }

// declineAndStop is the approval's action for "No": the call is declined
// and the turn stops, so the user can tell the model what to do instead.
type declineAndStop struct{ reply chan agent.ApprovalAnswer }

// approvalChoice is one row of the question's menu.
type approvalChoice struct {
	label  string
	answer agent.ApprovalAnswer
}

// The choices' texts; the "always" one names the prefix it saves.
const (
	approvalYesAsk    = "Yes, run it"
	approvalYesDenial = "Yes, run it again outside the sandbox, this once"
	approvalAlways    = "Yes, and from now on run commands starting with %s outside the sandbox in this project"
	approvalNo        = "No, and tell the model what to do differently"
)

// approval asks the user about one command, in a box above the editor: a
// menu of the answers the session takes (run it once; for a sandbox
// denial with a prefix, also always; no), one highlighted. Only enter on
// the highlighted choice, a choice's digit, or esc / ctrl+c (no) answer,
// and only once the question has been up for approvalGrace and the
// user's typing has paused as long: every other key, and every key
// before then, goes on to the editor, unchanged and in order. "No"
// declines the call and stops the turn (declineAndStop). Yes runs it
// (session.Once), always also saves the prefix among the folder's outside
// commands in the user's own config (session.SaveOutsideRule).
type approval struct {
	q       agent.ApprovalQuestion
	reply   chan agent.ApprovalAnswer
	dir     string // where the command runs, as shown
	choices []approvalChoice
	sel     int // the highlighted choice
	scroll  int // the first command row shown

	// now is the model's clock (tests move it by hand); opened and
	// lastKey are when the question opened and when the last key it
	// passed on came.
	now             func() time.Time
	opened, lastKey time.Time
	// moved is when ↑/↓ last moved the highlight: enter runs the
	// command only once it has rested there (↑ enter, which sends the
	// last message again, must not).
	moved time.Time
	// live: the grace period was over at the last key or tick (for
	// the view; keys read the clock).
	live    bool
	ticking bool // an approvalTickMsg is on its way
	// covered: a layer the user types into (a program's window, an
	// attached job, a screen) lies over the question; its keys are not
	// answers, and the grace period starts again once it closes.
	covered bool
	// editorEmpty reports whether the editor holds no text: only then
	// does a digit answer, since in a message ("fix issue 1") it is the
	// message's.
	editorEmpty func() bool

	width int
	// top is the row the box ends above: the editor's first.
	top func() int
}

// newApproval is the question q, answered on reply, about a command that
// runs in dir; now is the clock, width the window's, top the editor's
// first row.
func newApproval(q agent.ApprovalQuestion, reply chan agent.ApprovalAnswer, dir string, now func() time.Time,
	width int, top func() int, editorEmpty func() bool) *approval {
	a := &approval{q: q, reply: reply, dir: dir, now: now, opened: now(), width: width, top: top, editorEmpty: editorEmpty}
	yes := approvalYesAsk
	if q.Kind == agent.SandboxDenial {
		yes = approvalYesDenial
	}
	a.choices = append(a.choices, approvalChoice{label: yes, answer: agent.Once})
	if a.offersAlways() {
		a.choices = append(a.choices, approvalChoice{label: fmt.Sprintf(approvalAlways, strconv.Quote(q.Prefix)),
			answer: agent.Always})
	}
	a.choices = append(a.choices, approvalChoice{label: approvalNo + " (" + name(keys.Approval.No) + ")",
		answer: agent.Decline})
	a.sel = len(a.choices) - 1 // the safe answer is the default
	return a
}

// armed reports whether a key at now may answer: the grace period is
// over and the typing has paused.
func (a *approval) armed(now time.Time) bool {
	return !a.covered && now.Sub(a.opened) >= approvalGrace && now.Sub(a.lastKey) >= approvalGrace
}

// tick asks for an approvalTickMsg when the grace period would end, so the
// view shows the question live; one at a time.
func (a *approval) tick() tea.Cmd {
	if a.ticking {
		return nil
	}
	a.ticking = true
	wait := max(a.opened.Add(approvalGrace).Sub(a.now()), a.lastKey.Add(approvalGrace).Sub(a.now()), time.Millisecond)
	return tea.Tick(wait, func(time.Time) tea.Msg { return approvalTickMsg{a: a} })
}

// settling reports whether the highlight rests on a choice that runs the
// command for less than approvalGrace: enter does not answer it yet (↑
// then enter, the habit that resends a message, never says yes).
func (a *approval) settling() bool {
	return a.choices[a.sel].answer != agent.Decline && a.now().Sub(a.moved) < approvalGrace
}

// settleTick redraws the footer once a moved highlight has rested.
func (a *approval) settleTick() tea.Cmd {
	if !a.settling() {
		return nil
	}
	return tea.Tick(approvalGrace, func(time.Time) tea.Msg { return approvalTickMsg{a: a} })
}

// typed passes a key (or paste) on to the editor: the user is typing, so
// the question waits for a pause again, and the highlight goes back to
// the safe "No": ↑ pressed while typing, then enter after a pause, never
// runs the command.
func (a *approval) typed() (action, tea.Cmd) {
	a.lastKey, a.live = a.now(), false
	a.sel = len(a.choices) - 1
	if a.covered {
		return passOn{}, nil
	}
	return passOn{}, a.tick()
}

// uncover tells the question whether a layer the user types into lies
// over it; once none does, the grace period starts again, as for a
// question that just opened.
func (a *approval) uncover(covered bool) tea.Cmd {
	if covered == a.covered {
		return nil
	}
	a.covered, a.live = covered, false
	if covered {
		return nil
	}
	a.opened = a.now()
	a.sel = len(a.choices) - 1
	return a.tick()
}

// update implements layer.
func (a *approval) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case approvalGoneMsg:
		if msg.reply == a.reply {
			return closeLayer{}, nil
		}
	case approvalTickMsg:
		if msg.a == a {
			a.ticking = false
			if a.covered {
				return nil, nil // uncover ticks again
			}
			if a.live = a.armed(a.now()); !a.live {
				return nil, a.tick()
			}
		}
	case tea.WindowSizeMsg:
		a.width = msg.Width
	case tea.MouseWheelMsg, tea.MouseClickMsg:
		return passOn{}, nil // the transcript still scrolls behind
	case tea.PasteMsg:
		return a.typed()
	case tea.KeyPressMsg:
		if !a.armed(a.now()) {
			return a.typed()
		}
		a.live = true
		k, ak := keyName(msg.String()), keys.Approval
		switch {
		case is(k, ak.Choose):
			if a.settling() {
				return nil, nil
			}
			return a.choose(a.sel)
		case is(k, ak.No):
			return a.choose(len(a.choices) - 1)
		case is(k, ak.Number) && int(k[0]-'1') < len(a.choices) && a.editorEmpty():
			return a.choose(int(k[0] - '1'))
		case is(k, ak.Up):
			a.sel, a.moved = max(a.sel-1, 0), a.now()
			return nil, a.settleTick()
		case is(k, ak.Down):
			a.sel, a.moved = min(a.sel+1, len(a.choices)-1), a.now()
			return nil, a.settleTick()
		case is(k, ak.ScrollUp, ak.ScrollDown):
			rows, window := a.commandRows()
			if len(rows) <= window {
				return passOn{}, nil // nothing to scroll: the transcript's
			}
			step := max(window-1, 1)
			if is(k, ak.ScrollUp) {
				step = -step
			}
			a.scroll = min(max(a.scroll+step, 0), len(rows)-window)
			return nil, nil
		}
		return a.typed()
	}
	return nil, nil
}

// choose answers choice i.
func (a *approval) choose(i int) (action, tea.Cmd) {
	if ans := a.choices[i].answer; ans != agent.Decline {
		a.reply <- ans
		return closeLayer{}, nil
	}
	return declineAndStop{reply: a.reply}, nil
}

// declineAndStop carries out "No": the turn is cancelled first, then the
// call gets its Decline, so the call's result is always the refusal
// followed by the loop's "Command aborted", and the model reads both at
// the next prompt. What was typed stays in the editor.
func (m *model) declineAndStop(d declineAndStop) {
	m.runner.Abort()
	select {
	case d.reply <- agent.Decline:
	default:
	}
	m.tr.notice(kindInfo, approvalStopped)
}

// stop implements stopper: quitting answers no.
func (a *approval) stop() {
	select {
	case a.reply <- agent.Decline:
	default:
	}
}

func (a *approval) offersAlways() bool {
	return a.q.Kind == agent.SandboxDenial && a.q.Prefix != ""
}

// title is the question, with its reason.
func (a *approval) title() string {
	if a.q.Kind == agent.AskRule {
		switch {
		case a.q.Unknown && a.q.Matched != "":
			return "Run this command? " + quoteCmd(a.q.Matched) + " cannot be read before it runs, so it counts as matching the bash.patterns rule " + a.q.Rule.String() + "."
		case a.q.Matched != "" && strings.TrimSpace(a.q.Matched) != strings.TrimSpace(a.q.Command):
			return "Run this command? Its part " + quoteCmd(a.q.Matched) + " matches the bash.patterns rule " + a.q.Rule.String() + "."
		}
		return "Run this command? It matches the bash.patterns rule " + a.q.Rule.String() + "."
	}
	return "The sandbox refused " + a.q.Reason + ". Run it again outside the sandbox?"
}

// quoteCmd is a part of the command as the title names it: one line,
// every character shown, cut when long (the box shows the whole command).
func quoteCmd(c string) string {
	return "`" + ansi.Truncate(config.Printable(strings.Join(strings.Fields(c), " ")), 60, "…") + "`"
}

// inner is the box's text width.
func (a *approval) inner() int { return max(a.width-4, 1) }

// commandRows are the command's rows, every character shown (escaped
// when the model put control or format characters in it) and wrapped,
// never cut; window is how many of them the box shows at once.
func (a *approval) commandRows() (rows []string, window int) {
	w := max(a.inner()-2, 1)
	for _, l := range strings.Split(strings.TrimRight(a.q.Command, "\n"), "\n") {
		rows = append(rows, strings.Split(ansi.Hardwrap(config.Printable(l), w, true), "\n")...)
	}
	fixed := len(a.wrap(a.title())) + len(a.note()) + 1 + 1 + len(a.choiceRows(nil)) + 1 + 2 + 1
	return rows, min(maxApprovalCommandLines, max(a.top()-fixed, 3))
}

// note says where the command runs and, for a re-run outside the sandbox,
// how.
func (a *approval) note() []string {
	n := a.wrap("Directory: " + config.Printable(tildePath(a.dir)))
	if a.q.Kind == agent.SandboxDenial {
		n = append(n, a.wrap(a.q.OutsideNote())...)
	}
	return n
}

func (a *approval) wrap(s string) []string {
	return strings.Split(ansi.Wrap(s, a.inner(), " "), "\n")
}

// choiceRows are the menu, each choice wrapped under its own indent; the
// highlighted one has the cursor mark, and st's selected style once the
// question takes keys (st nil: no style).
func (a *approval) choiceRows(st *styles) (rows []string) {
	for i, c := range a.choices {
		prefix := "  "
		if i == a.sel {
			prefix = "❯ "
		}
		label := strconv.Itoa(i+1) + ". " + c.label
		for j, l := range strings.Split(ansi.Wrap(label, max(a.inner()-5, 1), " "), "\n") {
			if j > 0 {
				prefix = "     "
			}
			l = prefix + l
			if st != nil && a.live && i == a.sel {
				l = st.selected.Render(l)
			}
			rows = append(rows, l)
		}
	}
	return rows
}

// footer says how to answer, or, while keys still go to the editor, so.
func (a *approval) footer() string {
	if a.covered {
		return "The question takes keys once the window over it closes."
	}
	if !a.live {
		return "Typing goes to the editor; the question takes keys once you pause."
	}
	ak := keys.Approval
	answer := "answer"
	if a.settling() {
		answer = "answers in a moment"
	}
	es := []entry{{Key: name(ak.Up) + name(ak.Down), Desc: "choose"}, {Key: name(ak.Choose), Desc: answer}}
	if a.editorEmpty() {
		es = append(es, entry{Key: "1–" + strconv.Itoa(len(a.choices)), Desc: "answer that one"})
	}
	es = append(es, entry{Key: name(ak.No), Desc: "no"})
	if rows, window := a.commandRows(); len(rows) > window {
		es = append(es, entry{Key: name(ak.ScrollUp) + "/" + name(ak.ScrollDown), Desc: "scroll the command"})
	}
	return helpLine(es...)
}

// view implements layer: a box just above the editor, which keeps its
// cursor, since what is typed goes there.
func (a *approval) view(width, height int, st *styles) surface {
	inner := a.inner()
	var rows []string
	for _, l := range a.wrap(a.title()) {
		rows = append(rows, st.overlayTitle.Render(l))
	}
	cmd, window := a.commandRows()
	start := min(a.scroll, max(len(cmd)-window, 0))
	for _, l := range cmd[start:min(start+window, len(cmd))] {
		rows = append(rows, st.theme.Bash.Render("  "+l))
	}
	if len(cmd) > window {
		more := fmt.Sprintf("  lines %d–%d of %d", start+1, min(start+window, len(cmd)), len(cmd))
		rows = append(rows, st.overlayFooter.Render(ansi.Truncate(more, inner, "…")))
	}
	for _, l := range a.note() {
		rows = append(rows, st.overlayFooter.Render(l))
	}
	rows = append(rows, "")
	rows = append(rows, a.choiceRows(st)...)
	for _, l := range a.wrap(a.footer()) {
		rows = append(rows, st.overlayFooter.Render(l))
	}
	var box []string
	if width < minApprovalBox {
		for _, r := range rows { // no room for a frame
			box = append(box, ansi.Truncate(r, max(width, 0), ""))
		}
	} else {
		box = strings.Split(st.overlay.Padding(0, 1).Width(width).Render(strings.Join(rows, "\n")), "\n")
	}
	if len(box) > height {
		// A window too small for the box keeps its bottom: the choices.
		box = box[len(box)-max(height, 0):]
	}
	return surface{content: strings.Join(box, "\n"), y: max(min(a.top(), height-1)-len(box), 0), below: true}
}

// covers implements layer.
func (a *approval) covers() bool { return false }

// askApproval shows a question of the model's call, above the editor; the
// call's block says it waits (transcript.waitFor), so the events that
// started it are brought in first.
func (m *model) askApproval(msg approvalAskMsg) tea.Cmd {
	if m.quitting {
		msg.reply <- agent.Decline
		return nil
	}
	m.applyPump()
	dir := msg.q.Dir
	if dir == "" {
		dir = m.session().Cwd()
	}
	a := newApproval(msg.q, msg.reply, dir, func() time.Time { return m.tr.clock() }, m.width, m.transcriptHeight,
		func() bool { return m.editor.Value() == "" })
	m.pushUnderTyping(a)
	return tea.Batch(a.tick(), m.uncoverApprovals())
}

// pushUnderTyping puts question a under the lowest layer the user types
// into or reads (a program's window, an attached job, a screen): keys
// meant for it must never answer a question that popped up over it.
func (m *model) pushUnderTyping(a *approval) {
	for i, x := range m.layers {
		switch x.(type) {
		case *overlay, *jobAttach:
		default:
			if !x.covers() {
				continue
			}
		}
		m.layers = append(m.layers[:i], append([]layer{a}, m.layers[i:]...)...)
		return
	}
	m.push(a)
}

// uncoverApprovals tells each question whether a layer lies over it
// (after every message: layers open and close); the top one takes keys.
func (m *model) uncoverApprovals() tea.Cmd {
	var cmds []tea.Cmd
	for i, l := range m.layers {
		if a, ok := l.(*approval); ok {
			cmds = append(cmds, a.uncover(i < len(m.layers)-1))
		}
	}
	return tea.Batch(cmds...)
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
		for _, r := range config.OutsideRules(folder) {
			outside = append(outside, r.Pattern)
		}
		rules, err := config.ProjectPatternRules(path)
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
				if err := config.RemoveOutsideRule(folder, prefix); err != nil {
					return permissionsLoadedMsg{err: err}
				}
				return loadPermissions(folder, path, "removed outside "+strconv.Quote(prefix))()
			}
		case is(k, pk.Remove) && p.sel < p.rows():
			i := p.sel - len(p.outside)
			r, folder, path := p.rules[i], p.folder, p.path
			return nil, func() tea.Msg {
				if err := config.RemovePatternRule(path, i, r); err != nil {
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
	p := &permissions{folder: dir, path: config.ProjectSettingsPath(dir)}
	m.push(p)
	return loadPermissions(p.folder, p.path, "")
}
