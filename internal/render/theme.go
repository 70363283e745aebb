// Package render draws the transcript's blocks as styled text: the model's
// bash calls (ToolCall; spec §5), its file tool calls (FileCall: read,
// write, edit, grep, find) and the user's `!` commands (Bang), with the
// hints and notices they share (text.go) and the colours of the Theme; and
// the one factory that decides how a tool call and its result are shown
// (toolview.go: NewToolView, NewToolBlock), for the live transcript, a
// resumed one and the export alike. It is pure string rendering with a
// cache per block, so the TUI can redraw a long transcript every frame
// cheaply.
package render

import "charm.land/lipgloss/v2"

// Theme holds the styles of the components. Colours are 256-colour indexes
// so that a terminal with fewer colours still gets a close match after
// Bubble Tea downsamples them.
type Theme struct {
	// NoColor makes every component emit plain text without any SGR
	// sequence, as NO_COLOR asks; the styles below are then ignored.
	NoColor bool

	Dim     lipgloss.Style // Dim is for hints and metadata that should recede.
	Warning lipgloss.Style // Warning marks truncation and cancellation.
	Error   lipgloss.Style // Error marks failed calls and non-zero exits.
	Success lipgloss.Style // Success marks the icon of a finished call.
	Bash    lipgloss.Style // Bash is the bang colour of `!` blocks and the editor border.
	Accent  lipgloss.Style // Accent marks running work.
	Border  lipgloss.Style // Border is for neutral frames.
	Bold    lipgloss.Style // Bold is for command headers.
}

// NewTheme returns the default theme, or the plain one when noColor is set.
func NewTheme(noColor bool) Theme {
	if noColor {
		// Empty styles, and paint short-circuits anyway: no bold either,
		// since NO_COLOR users often pipe captures into tools that choke
		// on any SGR.
		return Theme{NoColor: true}
	}
	c := lipgloss.Color
	return Theme{
		Dim:     lipgloss.NewStyle().Foreground(c("244")),
		Warning: lipgloss.NewStyle().Foreground(c("214")),
		Error:   lipgloss.NewStyle().Foreground(c("203")),
		Success: lipgloss.NewStyle().Foreground(c("114")),
		Bash:    lipgloss.NewStyle().Foreground(c("211")),
		Accent:  lipgloss.NewStyle().Foreground(c("75")),
		Border:  lipgloss.NewStyle().Foreground(c("240")),
		Bold:    lipgloss.NewStyle().Bold(true),
	}
}

// paint applies s to one line. It skips lipgloss entirely under NO_COLOR,
// which is both the guarantee of no SGR and the fast path.
func (th Theme) paint(s lipgloss.Style, text string) string {
	if th.NoColor || text == "" {
		return text
	}
	return s.Render(text)
}
