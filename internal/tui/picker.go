package tui

// The session picker: `agentsh -r` without an id lists the sessions of the
// directory to resume one. It is a component with its own update and view
// answering with action values: the TUI opens it over the transcript as a
// layer (/resume, resumecmd.go), and PickSession runs it alone, before the
// TUI starts.

import (
	"charm.land/bubbles/v2/key"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/session"
)

// currentMark starts the first prompt of the session on screen in
// /resume's list.
const currentMark = "(current) "

// pickerHelp is the picker's footer.
func pickerHelp() string {
	k := keys.Picker
	return helpLine(entry{Key: name(k.Up) + name(k.Down), Desc: "select"}, help(k.Choose), help(k.Cancel))
}

// The picker's answers to a key.
type (
	pickerCancel struct{}
	pickerChoose struct{ info session.Info }
)

// sessionsLoadedMsg carries session.List's answer to the picker's load.
type sessionsLoadedMsg struct {
	list []session.Info
	err  error
}

// sessionPicker lists saved sessions, newest first: one row each with the
// date of the last write, the message count and the first prompt.
type sessionPicker struct {
	cwd    string
	list   []session.Info
	loaded bool
	err    error
	sel    int
	loc    *time.Location // dates are shown in it; time.Local unless a test says otherwise
	// current is the id of the session on screen (/resume), marked in
	// the list; "" for -r, before any session is open.
	current string
}

// newSessionPicker makes a picker for the sessions of cwd; with list nil it
// loads them itself (load), else it shows list.
func newSessionPicker(cwd string, list []session.Info) *sessionPicker {
	return &sessionPicker{cwd: cwd, list: list, loaded: list != nil, loc: time.Local}
}

// load is the command that reads the sessions (file I/O: never in update).
func (p *sessionPicker) load() tea.Cmd {
	if p.loaded {
		return nil
	}
	cwd := p.cwd
	return func() tea.Msg {
		list, err := session.List(cwd)
		return sessionsLoadedMsg{list: list, err: err}
	}
}

// update handles a key or the loaded list; the answer is nil, pickerCancel
// or pickerChoose.
func (p *sessionPicker) update(msg tea.Msg) any {
	switch msg := msg.(type) {
	case sessionsLoadedMsg:
		p.list, p.err, p.loaded = msg.list, msg.err, true
		return nil
	case tea.KeyPressMsg:
		k := keys.Picker
		var moved bool
		if p.sel, moved = k.move(msg, p.sel, len(p.list)); moved {
			return nil
		}
		switch {
		case key.Matches(msg, k.Cancel):
			return pickerCancel{}
		case key.Matches(msg, k.Choose):
			if len(p.list) > 0 {
				return pickerChoose{info: p.list[p.sel]}
			}
		}
	}
	return nil
}

// view draws the picker in exactly height lines of at most width cells.
func (p *sessionPicker) view(width, height int, st *styles) string {
	lines := make([]string, 0, height)
	add := func(s string) {
		if ansi.StringWidth(s) > width {
			s = ansi.Truncate(s, width, "…")
		}
		lines = append(lines, s)
	}
	add(st.overlayTitle.Render("Resume a session") + st.dim.Render(" · "+p.cwd))
	add("")
	switch {
	case !p.loaded:
		add(st.dim.Render("Reading the sessions…"))
	case p.err != nil:
		add(st.errorText.Render("Cannot list the sessions: " + p.err.Error()))
	case len(p.list) == 0:
		add(st.dim.Render("No saved session in this directory."))
	default:
		listH := max(height-len(lines)-2, 1)
		first := min(max(p.sel-listH+1, 0), max(len(p.list)-listH, 0))
		for i := first; i < min(first+listH, len(p.list)); i++ {
			s := p.list[i]
			mark := "  "
			if i == p.sel {
				mark = "› "
			}
			prompt := s.FirstPrompt
			if s.Name != "" { // named (an RPC client's set_session_name)
				prompt = s.Name + " · " + prompt
			}
			if s.ID == p.current && p.current != "" {
				prompt = currentMark + prompt
			}
			add(pickerRow(fmt.Sprintf("%s%s  %s  %s", mark, s.Modified.In(p.loc).Format("2006-01-02 15:04"),
				padLeft(countText(s.Messages), len("999 messages")), prompt), width, i == p.sel, st))
		}
	}
	return pickerFrame(lines, width, height, st.dim.Render(pickerHelp()))
}

// pickerRow is one row of a picker's list: cut to width, highlighted when
// selected.
func pickerRow(row string, width int, selected bool, st *styles) string {
	if ansi.StringWidth(row) > width {
		row = ansi.Truncate(row, width, "…")
	}
	if selected {
		row = st.selected.Render(row)
	}
	return row
}

// pickerFrame fills a picker's lines to height-1 (or cuts them there) and
// ends them with its footer, cut to width: exactly height lines.
func pickerFrame(lines []string, width, height int, footer string) string {
	if ansi.StringWidth(footer) > width {
		footer = ansi.Truncate(footer, width, "…")
	}
	for len(lines) < height-1 {
		lines = append(lines, "")
	}
	return strings.Join(append(lines[:max(height-1, 0)], footer), "\n")
}

func countText(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}

func padLeft(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// PickerConfig is what PickSession runs on.
type PickerConfig struct {
	Cwd      string         // whose sessions
	Sessions []session.Info // the list to show; nil: read with session.List
	NoColor  bool

	// Input and Output default to the process's terminal; tests set them.
	Input  io.Reader
	Output io.Writer
}

// PickSession shows the session picker full-screen until the user chooses
// a session (ok) or cancels.
func PickSession(ctx context.Context, cfg PickerConfig) (info session.Info, ok bool, err error) {
	app := &pickerApp{p: newSessionPicker(cfg.Cwd, cfg.Sessions), st: newStyles(cfg.NoColor)}
	if err := runAlone(ctx, app, cfg.Input, cfg.Output); err != nil {
		if ctx.Err() != nil {
			return session.Info{}, false, nil // a signal: as a cancel
		}
		return session.Info{}, false, fmt.Errorf("session picker: %w", err)
	}
	if app.chosen == nil {
		return session.Info{}, false, nil
	}
	return *app.chosen, true, nil
}

// pickerApp runs the picker as a program of its own.
type pickerApp struct {
	p      *sessionPicker
	st     *styles
	w, h   int
	chosen *session.Info
}

func (a *pickerApp) Init() tea.Cmd { return a.p.load() }

func (a *pickerApp) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		a.w, a.h = ws.Width, ws.Height
		return a, nil
	}
	switch act := a.p.update(msg).(type) {
	case pickerCancel:
		return a, tea.Quit
	case pickerChoose:
		a.chosen = &act.info
		return a, tea.Quit
	}
	return a, nil
}

func (a *pickerApp) View() tea.View {
	if a.w <= 0 || a.h <= 0 {
		return tea.NewView("")
	}
	v := tea.NewView(a.p.view(a.w, a.h, a.st))
	v.AltScreen = true
	v.WindowTitle = "agentsh"
	return v
}

// runAlone runs a surface that comes before the TUI (the session picker,
// the trust question) as a program of its own, on input and output when
// given (tests), else the terminal.
func runAlone(ctx context.Context, m tea.Model, input io.Reader, output io.Writer) error {
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if input != nil {
		opts = append(opts, tea.WithInput(input))
	}
	if output != nil {
		opts = append(opts, tea.WithOutput(output))
	}
	_, err := tea.NewProgram(m, opts...).Run()
	return err
}
