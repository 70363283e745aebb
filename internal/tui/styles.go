package tui

import (
	"charm.land/lipgloss/v2"

	"agentsh/internal/render"
)

// styles are the TUI's own styles; components get render.Theme. With
// NO_COLOR every style keeps its layout (borders, padding) and drops colour
// and emphasis, so the screen has the same shape either way.
type styles struct {
	theme render.Theme
	md    *markdown

	user, userBar   lipgloss.Style
	dim             lipgloss.Style
	warning         lipgloss.Style
	errorText       lipgloss.Style
	editor          lipgloss.Style // border colour: normal
	editorBang      lipgloss.Style // text starts with "!"
	editorBangDim   lipgloss.Style // text starts with "!!"
	status          lipgloss.Style
	statusModel     lipgloss.Style
	statusRunning   lipgloss.Style
	overlay         lipgloss.Style
	overlayTitle    lipgloss.Style
	badgeRunning    lipgloss.Style
	badgeDone       lipgloss.Style
	badgeFailed     lipgloss.Style
	overlayFooter   lipgloss.Style
	scrollIndicator lipgloss.Style
	selected        lipgloss.Style // the header of the selected output block
	menu            lipgloss.Style // the slash menu's rows
	menuSelected    lipgloss.Style // its chosen row
}

func newStyles(noColor bool) *styles {
	base := lipgloss.NewStyle()
	border := base.Border(lipgloss.RoundedBorder())
	editor := border.Padding(0, 1)
	st := &styles{
		theme:         render.NewTheme(noColor),
		md:            newMarkdown(noColor),
		editor:        editor,
		editorBang:    editor,
		editorBangDim: editor,
		overlay:       border,
		selected:      base.Reverse(true),
		menuSelected:  base.Reverse(true),
	}
	if noColor {
		st.user, st.userBar, st.dim, st.warning, st.errorText = base, base, base, base, base
		st.status, st.statusModel, st.statusRunning = base, base, base
		st.overlayTitle, st.badgeRunning, st.badgeDone, st.badgeFailed = base, base, base, base
		st.overlayFooter, st.scrollIndicator, st.menu = base, base, base
		return st
	}
	var (
		accent = lipgloss.Color("12")  // blue
		bang   = lipgloss.Color("214") // orange: the shell's colour
		muted  = lipgloss.Color("8")
		green  = lipgloss.Color("10")
		red    = lipgloss.Color("9")
		yellow = lipgloss.Color("11")
	)
	st.user = base.Bold(true)
	st.userBar = base.Foreground(accent)
	st.dim = base.Foreground(muted)
	st.warning = base.Foreground(yellow)
	st.errorText = base.Foreground(red)
	st.editor = editor.BorderForeground(accent)
	// The editor takes the bang blocks' colours, so `!` reads as "this
	// goes to the shell" before enter is pressed.
	st.editorBang = editor.BorderForeground(st.theme.Bash.GetForeground())
	st.editorBangDim = editor.BorderForeground(st.theme.Dim.GetForeground())
	st.status = base.Foreground(muted)
	st.statusModel = base.Foreground(accent)
	st.statusRunning = base.Foreground(bang)
	st.overlay = border.BorderForeground(bang)
	st.overlayTitle = base.Bold(true)
	st.badgeRunning = base.Foreground(lipgloss.Color("0")).Background(bang).Padding(0, 1)
	st.badgeDone = base.Foreground(lipgloss.Color("0")).Background(green).Padding(0, 1)
	st.badgeFailed = base.Foreground(lipgloss.Color("15")).Background(red).Padding(0, 1)
	st.overlayFooter = base.Foreground(muted)
	st.scrollIndicator = base.Foreground(muted)
	st.menu = base.Foreground(accent)
	st.menuSelected = base.Foreground(lipgloss.Color("0")).Background(accent)
	return st
}
