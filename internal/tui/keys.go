package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"agentsh/internal/render"
	"agentsh/internal/tui/pager"
)

// JobsKey opens the jobs panel (as does /jobs typed in the editor).
const JobsKey = "ctrl+t"

// BackgroundKey moves the running `!` command or the model's running bash
// call into the background as a job, in the main view.
const BackgroundKey = "ctrl+b"

// ProgramBackgroundKey is BackgroundKey while a program has the terminal
// (the PTY overlay, an attached job): there ctrl+b is the program's (less
// and vim page back with it, readline moves left), and ctrl+z, which would
// stop a program no job control resumes, lets it run on as a job instead,
// as ctrl+z then bg does in a shell.
const ProgramBackgroundKey = "ctrl+z"

// DetachKey leaves a job's screen and returns to the jobs panel; the job
// keeps running. The same key moves a program in the overlay into the
// background, so it always means "let it run".
const DetachKey = ProgramBackgroundKey

// OverlayKillKey kills the program in the terminal overlay while it is on
// the alternate screen, where esc is the program's (vim's, less's): a
// chord such programs rarely need (in a terminal it sends SIGQUIT).
const OverlayKillKey = "ctrl+\\"

// keys is every key the TUI answers, by surface. Update matches keys
// against it, and every help text (the welcome line, the footers, the
// status hints, /help) is made from its help entries, so a key is named in
// one place.
var keys = newKeyMap()

// keyMap is the key bindings of each surface; the pager's (Pager, Prompt)
// are named in package pager, which gets them from here.
type keyMap struct {
	Main    mainKeys
	Editor  editorKeys
	Pager   pager.Keys
	Prompt  pager.PromptKeys
	Panel   panelKeys
	Attach  attachKeys
	Overlay overlayKeys
	Confirm confirmKeys
	Menu    menuKeys
	Picker  pickerKeys
	// Models choose in /model's picker (modelpicker.go).
	Models  pickerKeys
	Mention mentionKeys
	// Approval answers a question of the model's bash call;
	// Permissions works /permissions (approval.go).
	Approval    approvalKeys
	Permissions permissionsKeys
	// Trust answers the trust question of a project's settings (trust.go).
	Trust trustKeys
}

// mainKeys are the transcript's and the editor's when no layer is open.
type mainKeys struct {
	Send, Steer, Cancel, Expand, SelectPrev, SelectNext, Pager, PageUp, PageDown,
	Background, Jobs, Quit, QuitEmpty, HistoryPrev, HistoryNext, Mouse key.Binding
	// ThinkingLevel cycles the thinking level; Thinking shows every
	// thinking block in full or collapsed (thinking.go, modelpicker.go).
	ThinkingLevel, Thinking key.Binding
}

// editorKeys edit the prompt.
type editorKeys struct {
	Newline, Backspace, Delete, Left, Right, Up, Down, LineStart, LineEnd,
	TextStart, TextEnd, KillBefore, KillAfter, DeleteWord, WordLeft, WordRight, Tab key.Binding
}

// panelKeys act on the jobs panel's selected job.
type panelKeys struct {
	Close, Up, Down, Output, Attach, Kill key.Binding
}

// attachKeys: every other key goes to the attached job's program.
type attachKeys struct {
	Detach key.Binding
}

// overlayKeys: every other key goes to the program in the PTY overlay.
// Kill (esc) kills a plain program; a program on the alternate screen (vim,
// less, top) gets esc, and KillFull kills it (spec §3). KillFull kills a
// plain program too.
type overlayKeys struct {
	Kill, KillFull, Background key.Binding
}

// mentionKeys work the `@` file completion while it is open.
type mentionKeys struct {
	Accept, Close, Up, Down key.Binding
}

// pickerKeys choose in the session picker (picker.go) and the model
// picker (modelpicker.go).
type pickerKeys struct {
	Cancel, Up, Down, PageUp, PageDown, First, Last, Choose key.Binding
}

// move is where a list's selection goes for msg (n items, sel selected
// now), and whether msg was a movement key at all; the result is always a
// valid index (0 for an empty list).
func (k pickerKeys) move(msg tea.KeyPressMsg, sel, n int) (int, bool) {
	switch {
	case key.Matches(msg, k.Up):
		sel--
	case key.Matches(msg, k.Down):
		sel++
	case key.Matches(msg, k.PageUp):
		sel -= 10
	case key.Matches(msg, k.PageDown):
		sel += 10
	case key.Matches(msg, k.First):
		sel = 0
	case key.Matches(msg, k.Last):
		sel = n - 1
	default:
		return min(max(sel, 0), max(n-1, 0)), false
	}
	return min(max(sel, 0), max(n-1, 0)), true
}

// menuKeys choose in the slash menu (slashmenu.go).
type menuKeys struct {
	Up, Down, Complete, Run, Close key.Binding
}

// approvalKeys work the approval question's menu (approval.go): its
// choices are answered with Choose on the highlighted one or a Number,
// never a letter, which goes to the editor.
type approvalKeys struct {
	Up, Down, Choose, Number, No, ScrollUp, ScrollDown key.Binding
}

// trustKeys answer the trust question.
type trustKeys struct {
	Up, Down, Choose, Yes, No key.Binding
	// Leave ends agentsh at the question asked before the TUI starts.
	Leave key.Binding
}

// permissionsKeys work /permissions.
type permissionsKeys struct {
	Close, Up, Down, Remove key.Binding
}

// confirmKeys answer the quit question.
type confirmKeys struct {
	Yes, No key.Binding
}

func bind(help, desc string, ks ...string) key.Binding {
	return key.NewBinding(key.WithKeys(ks...), key.WithHelp(help, desc))
}

func newKeyMap() keyMap {
	pagerKeys := pager.DefaultKeyMap()
	return keyMap{
		Main: mainKeys{
			Send:          bind("enter", "sends (while the agent works: queued until it would stop)", "enter"),
			Steer:         bind("ctrl+s", "while the agent works: sends at its next step (steers)", "ctrl+s"),
			Cancel:        bind("esc", "cancels", "esc"),
			Expand:        bind("ctrl+o", "expands output", "ctrl+o"),
			SelectPrev:    bind("alt+↑", "selects the previous output", "alt+up", "ctrl+up"),
			SelectNext:    bind("alt+↓", "selects the next output", "alt+down", "ctrl+down"),
			Pager:         bind(render.PagerKey, "shows a truncated output in full", render.PagerKey),
			PageUp:        bind("pgup", "scrolls up", "pgup"),
			PageDown:      bind("pgdn", "scrolls down", "pgdown"),
			Background:    bind(BackgroundKey, "moves a running command to the background", BackgroundKey),
			Jobs:          bind(JobsKey+" or /jobs:", "jobs", JobsKey),
			Quit:          bind("ctrl+c", "interrupts like esc; twice on an idle editor quits", "ctrl+c"),
			QuitEmpty:     bind("ctrl+d", "quits on an empty editor (asks first while a turn, a command or jobs run)", "ctrl+d"),
			HistoryPrev:   bind("↑", "recalls the previous prompt", "up"),
			HistoryNext:   bind("↓", "recalls the next prompt", "down"),
			Mouse:         bind("alt+m", "toggles mouse capture (on: clicks and the wheel; off: the terminal selects text)", "alt+m"),
			ThinkingLevel: bind("shift+tab", "cycles the thinking level (off, minimal, low, medium, high, xhigh)", "shift+tab"),
			Thinking:      bind("alt+t", "shows the model's thinking in full, or collapsed", "alt+t"),
		},
		Editor: editorKeys{
			Newline:    bind("shift+enter", "newline", "shift+enter", "alt+enter", "ctrl+j"),
			Backspace:  bind("backspace", "deletes back", "backspace", "ctrl+h"),
			Delete:     bind("delete", "deletes forward", "delete", "ctrl+d"),
			Left:       bind("←", "moves left", "left", "ctrl+b"),
			Right:      bind("→", "moves right", "right", "ctrl+f"),
			Up:         bind("↑", "moves up", "up", "ctrl+p"),
			Down:       bind("↓", "moves down", "down", "ctrl+n"),
			LineStart:  bind("home", "goes to the line's start", "home", "ctrl+a"),
			LineEnd:    bind("end", "goes to the line's end", "end", "ctrl+e"),
			TextStart:  bind("ctrl+home", "goes to the start", "ctrl+home"),
			TextEnd:    bind("ctrl+end", "goes to the end", "ctrl+end"),
			KillBefore: bind("ctrl+u", "deletes to the line's start", "ctrl+u"),
			KillAfter:  bind("ctrl+k", "deletes to the line's end", "ctrl+k"),
			DeleteWord: bind("ctrl+w", "deletes a word back", "ctrl+w", "alt+backspace", "ctrl+backspace"),
			WordLeft:   bind("alt+←", "moves a word left", "alt+left", "ctrl+left", "alt+b"),
			WordRight:  bind("alt+→", "moves a word right", "alt+right", "ctrl+right", "alt+f"),
			Tab:        bind("tab", "inserts four spaces", "tab"),
		},
		Pager:  pagerKeys.Pager,
		Prompt: pagerKeys.Prompt,
		Panel: panelKeys{
			Close:  bind("esc", "close", "esc", "q", "ctrl+c", JobsKey),
			Up:     bind("↑", "previous job", "up", "ctrl+p"),
			Down:   bind("↓", "next job", "down", "ctrl+n"),
			Output: bind("enter/v", "full output", "enter", "v"),
			Attach: bind("a", "attach", "a"),
			Kill:   bind("k", "kill", "k"),
		},
		Attach: attachKeys{Detach: bind(DetachKey, "detach", DetachKey)},
		Overlay: overlayKeys{Kill: bind("esc", "force-kill", "esc"),
			KillFull:   bind(OverlayKillKey, "force-kill", OverlayKillKey),
			Background: bind(ProgramBackgroundKey, "background", ProgramBackgroundKey)},
		Confirm: confirmKeys{
			Yes: bind("y", "quits", "y", "Y"),
			No:  bind("n", "stays", "n", "N", "esc"),
		},
		Mention: mentionKeys{
			Accept: bind("tab/enter", "inserts the path", "tab", "enter"),
			Close:  bind("esc", "closes", "esc"),
			Up:     bind("↑", "previous file", "up", "ctrl+p"),
			Down:   bind("↓", "next file", "down", "ctrl+n"),
		},
		Picker: pickerKeys{
			Cancel:   bind("esc", "cancel", "esc", "q", "ctrl+c"),
			Up:       bind("↑", "newer", "up", "k", "ctrl+p"),
			Down:     bind("↓", "older", "down", "j", "ctrl+n"),
			PageUp:   bind("pgup", "page up", "pgup"),
			PageDown: bind("pgdn", "page down", "pgdown"),
			First:    bind("g", "newest", "home", "g"),
			Last:     bind("G", "oldest", "end", "G"),
			Choose:   bind("enter", "resume", "enter"),
		},
		Models: pickerKeys{
			Cancel:   bind("esc", "cancel", "esc", "q", "ctrl+c"),
			Up:       bind("↑", "previous", "up", "k", "ctrl+p"),
			Down:     bind("↓", "next", "down", "j", "ctrl+n"),
			PageUp:   bind("pgup", "page up", "pgup"),
			PageDown: bind("pgdn", "page down", "pgdown"),
			First:    bind("g", "first", "home", "g"),
			Last:     bind("G", "last", "end", "G"),
			Choose:   bind("enter", "switch", "enter"),
		},
		Approval: approvalKeys{
			Up:         bind("↑", "highlights the previous choice", "up"),
			Down:       bind("↓", "highlights the next choice", "down"),
			Choose:     bind("enter", "answers the highlighted choice", "enter"),
			Number:     bind("1–3", "answers that choice", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
			No:         bind("esc", "no: the model is told, the turn stops and you tell it what to do differently", "esc", "ctrl+c"),
			ScrollUp:   bind("pgup", "scrolls a long command up", "pgup"),
			ScrollDown: bind("pgdn", "scrolls it down", "pgdown"),
		},
		Trust: trustKeys{
			Up:     bind("↑", "the first choice", "up", "k"),
			Down:   bind("↓", "the second choice", "down", "j"),
			Choose: bind("enter", "answers the selected", "enter"),
			Yes:    bind("1", "trusts", "1", "y", "Y"),
			No:     bind("2", "does not trust", "2", "n", "N", "esc"),
			Leave:  bind("ctrl+c", "at start: leaves agentsh", "ctrl+c"),
		},
		Permissions: permissionsKeys{
			Close:  bind("esc", "close", "esc", "q", "ctrl+c"),
			Up:     bind("↑", "previous rule", "up", "k", "ctrl+p"),
			Down:   bind("↓", "next rule", "down", "j", "ctrl+n"),
			Remove: bind("d", "removes the rule", "d", "delete", "x"),
		},
		Menu: menuKeys{
			Up:       bind("↑", "previous command", "up", "ctrl+p", "shift+tab"),
			Down:     bind("↓", "next command", "down", "ctrl+n"),
			Complete: bind("tab", "completes", "tab"),
			Run:      bind("enter", "runs", "enter"),
			Close:    bind("esc", "closes", "esc"),
		},
	}
}

// keyName is a key press as the bindings spell it (tea.KeyPressMsg's
// String), worked out once per key instead of once per binding.
type keyName string

func (k keyName) String() string { return string(k) }

// is reports whether key k is one of the bindings'.
func is(k keyName, bs ...key.Binding) bool { return key.Matches(k, bs...) }

// name is how help texts name b's keys.
func name(b key.Binding) string { return b.Help().Key }

// entry is one entry of a help line: keys (or what stands for them) and
// what they do.
type entry = key.Help

// help is b's entry.
func help(b key.Binding) entry { return b.Help() }

// helpLine joins entries as "keys what · keys what".
func helpLine(es ...entry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Key + " " + e.Desc
	}
	return strings.Join(parts, " · ")
}

// The entries that stand for a group of bindings (or for no key at all).
func bangEntry() entry {
	return entry{Key: "!cmd", Desc: "runs in the shell (!!cmd keeps it from the model)"}
}

func pasteEntry() entry {
	return entry{Key: "a paste", Desc: "keeps its tabs; over " + strconv.Itoa(pasteMaxLines) + " lines or " +
		strconv.Itoa(pasteMaxRunes) + " characters it shows as [pasted N lines], which " + name(keys.Editor.Backspace) +
		" removes whole (the full text is sent)"}
}

// welcomeText is the transcript's first line: a short hint; /help has
// the rest.
func welcomeText() string {
	return "agentsh · " + helpLine(entry{Key: "/help", Desc: "for keys"}, entry{Key: "!cmd", Desc: "runs in the shell"})
}

// jobsPanelHelp is the jobs panel's footer.
func jobsPanelHelp() string {
	pk := keys.Panel
	return helpLine(entry{Key: name(pk.Up) + name(pk.Down), Desc: "select"}, help(pk.Attach), help(pk.Output),
		help(pk.Kill), help(pk.Close))
}

// attachFooterText is an attached job's footer while it runs.
func attachFooterText() string {
	return helpLine(help(keys.Attach.Detach), entry{Key: "esc, ctrl+c and every other key", Desc: "go to the program"})
}

// attachEndedFooter is an attached job's footer once it has ended.
func attachEndedFooter() string {
	return "the job has ended · " + helpLine(entry{Key: "any key", Desc: "returns to the jobs panel"})
}

// overlayFooterText is the PTY overlay's last line (spec §5); fullScreen:
// the program is on the alternate screen and esc is its key (spec §3).
// canBackground: the program can become a job (a `!` command);
// keys.Overlay.Background then moves a plain program to the background
// (ctrl+b is the program's in any case).
func overlayFooterText(fullScreen, canBackground bool) string {
	if fullScreen {
		return helpLine(help(keys.Overlay.KillFull), entry{Key: "esc and every other key", Desc: "go to the program"})
	}
	if canBackground {
		return helpLine(help(keys.Overlay.Kill), help(keys.Overlay.Background), entry{Key: "input", Desc: "forwarded to PTY"})
	}
	return helpLine(help(keys.Overlay.Kill), entry{Key: "input", Desc: "forwarded to PTY"})
}

// helpSection is one surface's keys, for /help.
type helpSection struct {
	title   string
	entries []entry
}

// helpSections lists every key of every surface with what it does: what
// /help shows.
func helpSections() []helpSection {
	km, ek, pk, qk, jk := keys.Main, keys.Editor, keys.Pager, keys.Prompt, keys.Panel
	var cmds []entry
	for _, c := range slashCommands() {
		k := c.name
		if c.args != "" {
			k += " " + c.args
		}
		cmds = append(cmds, entry{Key: k, Desc: c.desc})
	}
	mk := keys.Menu
	return []helpSection{
		{"Commands (typed in the editor; / opens the menu)", cmds},
		{"Conversation", []entry{help(km.Send), help(km.Steer), help(ek.Newline), bangEntry(), help(km.Cancel), help(km.Expand),
			help(km.SelectPrev), help(km.SelectNext), help(km.Pager), help(km.PageUp), help(km.PageDown),
			help(km.Background), {Key: km.Jobs.Keys()[0] + ", /jobs", Desc: "opens the jobs panel"},
			help(km.HistoryPrev), help(km.HistoryNext), {Key: name(km.Mouse) + ", /mouse", Desc: km.Mouse.Help().Desc},
			help(km.ThinkingLevel), help(km.Thinking), help(km.Quit), help(km.QuitEmpty)}},
		{"Command menu (/)", []entry{help(mk.Up), help(mk.Down), help(mk.Complete), help(mk.Run), help(mk.Close)}},
		{"Session picker (/resume)", []entry{help(keys.Picker.Up), help(keys.Picker.Down), help(keys.Picker.PageUp),
			help(keys.Picker.PageDown), help(keys.Picker.First), help(keys.Picker.Last), help(keys.Picker.Choose),
			help(keys.Picker.Cancel)}},
		{"Model picker (/model)", []entry{help(keys.Models.Up), help(keys.Models.Down), help(keys.Models.PageUp),
			help(keys.Models.PageDown), help(keys.Models.First), help(keys.Models.Last), help(keys.Models.Choose),
			help(keys.Models.Cancel)}},
		{"Editor", []entry{help(ek.Backspace), help(ek.Delete), help(ek.Left), help(ek.Right), help(ek.Up), help(ek.Down),
			help(ek.LineStart), help(ek.LineEnd), help(ek.TextStart), help(ek.TextEnd), help(ek.KillBefore),
			help(ek.KillAfter), help(ek.DeleteWord), help(ek.WordLeft), help(ek.WordRight), help(ek.Tab), pasteEntry()}},
		{"Full output (" + name(km.Pager) + ")", []entry{help(pk.Up), help(pk.Down), help(pk.PageUp), help(pk.PageDown),
			help(pk.HalfUp), help(pk.HalfDown), help(pk.Top), help(pk.Bottom), help(pk.Left), help(pk.Right),
			help(pk.Column0), help(pk.Wrap), help(pk.Search), help(pk.Next), help(pk.Prev), help(pk.Close)}},
		{"Search prompt", []entry{help(qk.Submit), help(qk.Erase), help(qk.Clear), help(qk.Cancel)}},
		{"Jobs panel (" + JobsKey + ")", []entry{help(jk.Up), help(jk.Down), help(jk.Attach), help(jk.Output),
			help(jk.Kill), help(jk.Close)}},
		{"Attached job", []entry{help(keys.Attach.Detach), {Key: "any other key", Desc: "goes to the program"}}},
		{"Terminal overlay", []entry{{Key: name(keys.Overlay.Kill), Desc: "kills a plain program"},
			{Key: name(keys.Overlay.KillFull), Desc: "kills it, also on the alternate screen (vim, less, top), where esc goes to the program"},
			{Key: name(keys.Overlay.Background), Desc: "moves a plain `!` program to the background as a job"},
			{Key: "any other key", Desc: "goes to the program (" + BackgroundKey + " too: it pages back in less)"}}},
		{"File completion (@ in the editor)", []entry{help(keys.Mention.Accept), help(keys.Mention.Up),
			help(keys.Mention.Down), help(keys.Mention.Close)}},
		{"Quit question", []entry{help(keys.Confirm.Yes), help(keys.Confirm.No)}},
		{"Approval question (a command the rules or the sandbox stopped; other keys go to the editor)", []entry{
			help(keys.Approval.Up), help(keys.Approval.Down), help(keys.Approval.Choose), help(keys.Approval.Number),
			help(keys.Approval.No), help(keys.Approval.ScrollUp), help(keys.Approval.ScrollDown)}},
		{"Trust question (a project's settings that loosen yours)", []entry{help(keys.Trust.Up), help(keys.Trust.Down),
			help(keys.Trust.Choose), help(keys.Trust.Yes), help(keys.Trust.No), help(keys.Trust.Leave)}},
		{"Permissions (/permissions)", []entry{help(keys.Permissions.Up), help(keys.Permissions.Down),
			help(keys.Permissions.Remove), help(keys.Permissions.Close)}},
	}
}

// helpText is /help: each section's keys in an aligned column.
func helpText() string {
	var b strings.Builder
	for i, s := range helpSections() {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.title + "\n")
		w := 0
		for _, e := range s.entries {
			w = max(w, len([]rune(e.Key)))
		}
		for _, e := range s.entries {
			b.WriteString("  " + e.Key + strings.Repeat(" ", w-len([]rune(e.Key))+2) + e.Desc + "\n")
		}
	}
	return b.String()
}
