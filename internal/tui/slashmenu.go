package tui

import (
	"agentsh/internal/agent"
	"regexp"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// slashCommand is one command typed as /name in the editor. Commands run
// in the TUI and are never sent to the model.
type slashCommand struct {
	name string // with the slash
	args string // what it takes, for the menu and /help ("" = nothing)
	desc string
	run  func(m *model, arg string) tea.Cmd
}

// slashRuns is what each command of session.SlashCommands (the one list,
// which an RPC client reads too) does here.
// (A func, not a var: /help's text is made of the commands.)
func slashRuns() map[string]func(m *model, arg string) tea.Cmd {
	return map[string]func(m *model, arg string) tea.Cmd{
		"/help":        (*model).cmdHelp,
		"/new":         (*model).cmdNew,
		"/resume":      (*model).cmdResume,
		"/model":       (*model).cmdModel,
		"/jobs":        (*model).cmdJobs,
		"/permissions": (*model).cmdPermissions,
		"/copy":        (*model).cmdCopy,
		"/export":      (*model).cmdExport,
		"/compact":     (*model).cmdCompact,
		mouseCommand:   (*model).cmdMouse,
		"/status":      (*model).cmdStatus,
		"/clear":       (*model).cmdClear,
		"/exit":        (*model).cmdExit,
		"/quit":        (*model).cmdExit,
	}
}

// slashCommands is every command, in the menu's order.
func slashCommands() []slashCommand {
	runs := slashRuns()
	out := make([]slashCommand, 0, len(agent.SlashCommands))
	for _, c := range agent.SlashCommands {
		name := "/" + c.Name
		out = append(out, slashCommand{name: name, args: c.Args, desc: c.Description, run: runs[name]})
	}
	return out
}

// commandWord is what a command's first word looks like. A message is a
// command when its first word is a known command; a single word of this
// shape that is not one is an unknown command. Anything else (a path such
// as /usr/bin/x, or "/tmp is full") is a message for the model.
var commandWord = regexp.MustCompile(`^/[a-z][a-z0-9-]*$`)

// parseCommand splits text into a command and its argument. known is false
// for an unknown command; isCmd is false when text is a message.
func parseCommand(text string) (cmd slashCommand, arg string, known, isCmd bool) {
	text = strings.TrimSpace(text)
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return slashCommand{}, "", false, false
	}
	word := fields[0]
	rest := text[len(word):]
	for _, c := range slashCommands() {
		if c.name == word {
			return c, strings.TrimSpace(rest), true, true
		}
	}
	if commandWord.MatchString(text) {
		return slashCommand{name: text}, "", false, true
	}
	return slashCommand{}, "", false, false
}

// slashMenu is the completion list above the editor: typing / in an empty
// editor opens it, the commands whose names start with what follows the
// slash are listed, and it closes when the text stops being a command name
// (a space, the slash erased), on esc, or when a command is chosen.
type slashMenu struct {
	open    bool
	matches []slashCommand
	sel     int
}

// menuPrefix is the editor text the menu filters by: a slash and what
// could begin a command's name.
var menuPrefix = regexp.MustCompile(`^/[a-z0-9-]*$`)

// start opens the menu, when the key just typed made an empty editor "/".
func (s *slashMenu) start(before, after string) {
	if before == "" && after == "/" {
		s.open, s.sel = true, 0
	}
	s.filter(after)
}

// filter narrows the list to what the editor holds; no match, or a text
// that cannot be a command's name, closes the menu.
func (s *slashMenu) filter(text string) {
	if !s.open {
		return
	}
	if !menuPrefix.MatchString(text) {
		s.close()
		return
	}
	var prev string
	if s.sel < len(s.matches) {
		prev = s.matches[s.sel].name
	}
	s.matches, s.sel = s.matches[:0], 0
	for _, c := range slashCommands() {
		if strings.HasPrefix(c.name, text) {
			if c.name == prev {
				s.sel = len(s.matches)
			}
			s.matches = append(s.matches, c)
		}
	}
}

// visible reports whether the menu shows (open with at least one match).
func (s *slashMenu) visible() bool { return s.open && len(s.matches) > 0 }

func (s *slashMenu) close() { s.open, s.matches, s.sel = false, nil, 0 }

// menuChoice is the menu's answer to a key.
type menuChoice int

const (
	menuPass     menuChoice = iota // not the menu's key: the editor gets it
	menuMoved                      // the selection moved, or the menu closed
	menuComplete                   // put the selected name in the editor
	menuRun                        // run the selected command
)

// key handles a key while the menu shows.
func (s *slashMenu) key(k keyName) menuChoice {
	if !s.visible() {
		return menuPass
	}
	mk := keys.Menu
	switch {
	case is(k, mk.Up):
		s.sel = (s.sel + len(s.matches) - 1) % len(s.matches)
	case is(k, mk.Down):
		s.sel = (s.sel + 1) % len(s.matches)
	case is(k, mk.Complete):
		return menuComplete
	case is(k, mk.Run):
		return menuRun
	case is(k, mk.Close):
		s.close()
	default:
		return menuPass
	}
	return menuMoved
}

// selected is the highlighted command.
func (s *slashMenu) selected() slashCommand { return s.matches[s.sel] }

// view draws the list, one command a row, as wide as the window; the
// selected row is highlighted.
func (s *slashMenu) view(width int, st *styles) string {
	w := 0
	for _, c := range s.matches {
		w = max(w, len(c.name)+len(c.args)+1)
	}
	rows := make([]string, 0, len(s.matches)+1)
	for i, c := range s.matches {
		label := c.name
		if c.args != "" {
			label += " " + c.args
		}
		mark := "  "
		if i == s.sel {
			mark = "› "
		}
		line := mark + label + strings.Repeat(" ", w-len(label)+2) + c.desc
		line = ansi.Truncate(line, width, "…")
		line += strings.Repeat(" ", max(width-ansi.StringWidth(line), 0))
		if i == s.sel {
			line = st.menuSelected.Render(line)
		} else {
			line = st.menu.Render(line)
		}
		rows = append(rows, line)
	}
	hint := ansi.Truncate("  "+helpLine(menuHelp()...), width, "…")
	rows = append(rows, st.dim.Render(hint+strings.Repeat(" ", max(width-ansi.StringWidth(hint), 0))))
	return strings.Join(rows, "\n")
}

// menuHelp is the menu's footer: how to choose.
func menuHelp() []entry {
	mk := keys.Menu
	return []entry{{Key: name(mk.Up) + name(mk.Down), Desc: "choose"}, help(mk.Complete), help(mk.Run), help(mk.Close)}
}
