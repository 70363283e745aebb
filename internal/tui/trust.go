package tui

import (
	"agentsh/internal/config"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The trust question: a project's .agentsh/settings.json lies
// where the model may write, so what it loosens (yolo, the sandbox keys,
// allow rules, shell.path/prefix/env/scrubEnv) applies only once the user
// trusts the folder for those values. Asked before the TUI starts
// (AskTrust) and, when the file changes during the session, as a layer.

// trustChoice is the trust question's answer.
type trustChoice int

const (
	trustUndecided trustChoice = iota
	trustYes
	trustNo
)

// trustQuestion shows the folder, the file and every loosening value,
// with two choices: trust this folder, or don't (the loosening values are
// ignored, the rest of the file applies). ↑/↓ and enter choose; 1/y and
// 2/n answer at once; esc is "don't trust".
type trustQuestion struct {
	p      *config.ProjectTrust
	sel    int // 0: trust, 1: don't
	choice trustChoice
}

func newTrustQuestion(p *config.ProjectTrust) *trustQuestion {
	return &trustQuestion{p: p, sel: 1} // the safe answer is the default
}

// trustAnswer is the question's action: the user answered.
type trustAnswer struct {
	p     *config.ProjectTrust
	trust bool
}

// Texts of the question.
const (
	trustTitle    = "Do you trust this folder?"
	trustYesLabel = "Yes, trust this folder"
	trustNoLabel  = "No, don't trust it (ignore these settings)"
)

// update implements layer; the answer is a trustAnswer action.
func (q *trustQuestion) update(msg tea.Msg) (action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if _, wheel := msg.(tea.MouseWheelMsg); wheel {
			return passOn{}, nil
		}
		return nil, nil
	}
	tk := keys.Trust
	switch name := keyName(k.String()); {
	case is(name, tk.Up):
		q.sel = 0
	case is(name, tk.Down):
		q.sel = 1
	case is(name, tk.Choose):
		return q.answer(q.sel == 0)
	case is(name, tk.Yes):
		return q.answer(true)
	case is(name, tk.No):
		return q.answer(false)
	}
	return nil, nil
}

func (q *trustQuestion) answer(trust bool) (action, tea.Cmd) {
	q.choice = trustNo
	if trust {
		q.choice = trustYes
	}
	return trustAnswer{p: q.p, trust: trust}, nil
}

// lines are the question's text, unstyled: the title, the body before
// and after the loosening values, the values and the two choices. The
// folder, the file and the values are shown with their control and
// format characters escaped (session.Printable): the model wrote them.
func (q *trustQuestion) lines() (title string, head, values, tail, choices []string) {
	head = []string{
		config.Printable(q.p.Folder),
		"",
		config.Printable(q.p.File) + " loosens your own settings:",
	}
	for _, l := range q.p.Loosens {
		values = append(values, "  "+l.String())
	}
	tail = []string{"",
		"The model can write files in this folder, so it could have written these.",
		"Trust it only if you wrote or checked them. Your answer is kept in agentsh's config folder;" +
			" a change of these values asks again."}
	for i, c := range []string{trustYesLabel, trustNoLabel} {
		mark := "  "
		if i == q.sel {
			mark = "> "
		}
		choices = append(choices, fmt.Sprintf("%s%d. %s", mark, i+1, c))
	}
	return trustTitle, head, values, tail, choices
}

// view implements layer: the whole window (nothing else may be answered
// before it).
func (q *trustQuestion) view(width, height int, st *styles) surface {
	title, head, values, tail, choices := q.lines()
	inner := max(width-2, 1)
	wrap := func(ls []string) []string {
		var out []string
		for _, l := range ls {
			for _, w := range strings.Split(ansi.Wrap(l, inner, " "), "\n") {
				out = append(out, " "+w)
			}
		}
		return out
	}
	rows := []string{" " + st.overlayTitle.Render(title), ""}
	rows = append(rows, wrap(head)...)
	// The values the window cannot hold are counted, so that the
	// choices stay on screen and no value is taken for the last.
	after := append(wrap(tail), "")
	room := height - 1 - len(rows) - len(after) - len(choices)
	var shown []string
	for i, v := range values {
		w := wrap([]string{v})
		if len(shown)+len(w) > room || (i < len(values)-1 && len(shown)+len(w) > room-1) {
			more := wrap([]string{"  … " + strconv.Itoa(len(values)-i) + " more: see " + config.Printable(q.p.File)})
			shown = append(shown, more[:min(len(more), max(room-len(shown), 0))]...)
			break
		}
		shown = append(shown, w...)
	}
	rows = append(append(rows, shown...), after...)
	for i, c := range choices {
		c = ansi.Truncate(c, inner, "…")
		if i == q.sel {
			c = st.selected.Render(c)
		}
		rows = append(rows, " "+c)
	}
	tk := keys.Trust
	footer := helpLine(entry{Key: name(tk.Up) + name(tk.Down), Desc: "select"}, help(tk.Choose), help(tk.Yes), help(tk.No))
	for len(rows) < height-1 {
		rows = append(rows, "")
	}
	rows = append(rows[:max(height-1, 0)], st.overlayFooter.Render(ansi.Truncate(footer, width, "…")))
	return surface{content: strings.Join(rows, "\n")}
}

// covers implements layer.
func (q *trustQuestion) covers() bool { return true }

// TrustConfig is what AskTrust shows.
type TrustConfig struct {
	Project *config.ProjectTrust
	NoColor bool

	// Input and Output default to the process's terminal; tests set them.
	Input  io.Reader
	Output io.Writer
}

// AskTrust asks the trust question full-screen before the TUI starts;
// trust is the answer, ok false when the user left without one (ctrl+c,
// a signal).
func AskTrust(ctx context.Context, cfg TrustConfig) (trust, ok bool, err error) {
	app := &trustApp{q: newTrustQuestion(cfg.Project), st: newStyles(cfg.NoColor)}
	if err := runAlone(ctx, app, cfg.Input, cfg.Output); err != nil {
		if ctx.Err() != nil {
			return false, false, nil
		}
		return false, false, fmt.Errorf("trust question: %w", err)
	}
	return app.q.choice == trustYes, app.q.choice != trustUndecided, nil
}

// trustApp runs the question as a program of its own.
type trustApp struct {
	q    *trustQuestion
	st   *styles
	w, h int
}

func (a *trustApp) Init() tea.Cmd { return nil }

func (a *trustApp) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		a.w, a.h = ws.Width, ws.Height
		return a, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && is(keyName(k.String()), keys.Trust.Leave) {
		return a, tea.Quit // undecided: nothing trusted
	}
	if act, _ := a.q.update(msg); act != nil {
		if _, ok := act.(trustAnswer); ok {
			return a, tea.Quit
		}
	}
	return a, nil
}

func (a *trustApp) View() tea.View {
	if a.w <= 0 || a.h <= 0 {
		return tea.NewView("")
	}
	v := tea.NewView(a.q.view(a.w, a.h, a.st).content)
	v.AltScreen = true
	v.WindowTitle = "agentsh"
	return v
}

// trustAskMsg: the project file changed during the session to loosen
// something the folder is not trusted for; the question comes up again.
type trustAskMsg struct{ p *config.ProjectTrust }

// trustDoneMsg: a trust answer was recorded (err: it could not be).
type trustDoneMsg struct {
	p     *config.ProjectTrust
	trust bool
	err   error
}

// followTrust makes a change of the project's settings that the folder
// is not trusted for bring the question up. The settings are read by a
// model's bash call, a `!` command, or anything that reads them from
// Update itself, where a blocking send would wait on its own loop: the
// message goes from a goroutine of its own, joined with the others at exit.
func (m *model) followTrust(live *config.LiveSettings) {
	m.cfg.Settings = live
	if live != nil {
		live.OnUntrusted(func(p *config.ProjectTrust) { m.wg.Go(func() { m.send(trustAskMsg{p: p}) }) })
	}
}

// askTrust shows the question again, unless one for the same values is
// up already.
func (m *model) askTrust(p *config.ProjectTrust) {
	for _, l := range m.layers {
		if q, ok := l.(*trustQuestion); ok && q.p.Hash == p.Hash {
			return
		}
	}
	m.push(newTrustQuestion(p))
}

// trustAnswered records the answer (file I/O: in a command).
func (m *model) trustAnswered(l layer, a trustAnswer) tea.Cmd {
	m.removeLayer(l)
	live := m.cfg.Settings
	return func() tea.Msg {
		if !a.trust || live == nil {
			return trustDoneMsg{p: a.p}
		}
		return trustDoneMsg{p: a.p, trust: true, err: live.Trust(a.p)}
	}
}

// trustDone tells what the answer did.
func (m *model) trustDone(msg trustDoneMsg) {
	switch {
	case msg.err != nil:
		m.tr.notice(kindError, "Could not record the trust: "+msg.err.Error())
	case msg.trust:
		m.tr.notice(kindInfo, TrustedNotice(msg.p, false))
	default:
		m.tr.notice(kindInfo, config.UntrustedNotice(msg.p))
	}
}

// TrustedNotice is the line shown once the user trusted the folder: at
// start, or during the session (when the sandbox, read at start, keeps
// its values until the next start).
func TrustedNotice(p *config.ProjectTrust, atStart bool) string {
	s := "Trusted " + p.Folder + ": " + p.Keys() + " from " + p.File + " now apply"
	if !atStart {
		for _, l := range p.Loosens {
			if l.Key == "yolo" || strings.HasPrefix(l.Key, "sandbox.") {
				return s + " (the sandbox keys from the next start)."
			}
		}
	}
	return s + "."
}
