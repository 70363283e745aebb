package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/bash"
)

// tabWidth is the tab stop used when replacing tabs: a tab has no width of
// its own in a cell grid, and 4 keeps indented code readable in narrow panes.
const tabWidth = 4

// CollapsedHint is the dim line above a collapsed tool-call preview; k, v
// and t count visual lines (hidden, shown, total).
func CollapsedHint(k, v, t int) string {
	return fmt.Sprintf("… (%d earlier lines, showing %d of %d) (ctrl+o to expand)", k, v, t)
}

// MoreLinesHint is the dim status of a collapsed bang block hiding n lines.
func MoreLinesHint(n int) string {
	return fmt.Sprintf("… %d more lines (ctrl+o to expand)", n)
}

// TimeoutFooter is the metadata line of a call whose model passed a timeout;
// 'f'/-1 prints 60 as "60" and 1.5 as "1.5", never "6e+01".
func TimeoutFooter(seconds float64) string {
	return "⟦Timeout: " + strconv.FormatFloat(seconds, 'f', -1, 64) + "s⟧"
}

// PagerKey opens the full output of a truncated result in the TUI's pager.
const PagerKey = "ctrl+g"

// TruncationWarning is the warning line of a truncated result, shared by
// both components so the user learns one format; with an artifact it names
// the key that shows it all.
func TruncationWarning(t *bash.TruncationMeta) string {
	var parts []string
	if t.ArtifactID != "" {
		parts = append(parts, "Full output: artifact://"+t.ArtifactID+" ("+PagerKey+" to view)")
	}
	if t.TruncatedBy == "lines" {
		parts = append(parts, fmt.Sprintf("Truncated: showing %d of %d lines", t.OutputLines, t.TotalLines))
	} else {
		parts = append(parts, fmt.Sprintf("Truncated: %d lines shown (%s limit)", t.OutputLines, bash.FormatSize(t.OutputBytes)))
	}
	return "[" + strings.Join(parts, ". ") + "]"
}

// noticeRE matches the model-facing notice bash.Finalize appends; anchored
// on the whole last line so ordinary output mentioning it survives.
var noticeRE = regexp.MustCompile(`^\[Showing (lines \d+-\d+ of \d+|\d+ of \d+ lines)( \([0-9.]+[KMG]?B limit\))?(\. Full: artifact://\S+)?\]$`)

// stripNotice removes the trailing `[Showing lines …]` notice: the renderer
// shows the same facts in its warning line, and the reference showed both.
func stripNotice(s string) string {
	t := strings.TrimRight(s, "\n")
	i := strings.LastIndexByte(t, '\n')
	last := t[i+1:]
	if !strings.HasPrefix(last, "[Showing ") || !noticeRE.MatchString(last) {
		return s
	}
	if i < 0 {
		return ""
	}
	// Finalize separates the notice with a blank line; drop it as well.
	return strings.TrimSuffix(t[:i], "\n")
}

// splitLines splits text into logical lines; a trailing newline ends the
// last line rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// expandTabs replaces tabs with spaces up to the next tab stop, measured in
// cells so columns after wide characters still line up.
func expandTabs(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	var b strings.Builder
	col := 0
	for {
		i := strings.IndexByte(s, '\t')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		seg := s[:i]
		b.WriteString(seg)
		col += ansi.StringWidth(seg)
		n := tabWidth - col%tabWidth
		b.WriteString(strings.Repeat(" ", n))
		col += n
		s = s[i+1:]
	}
}

// fit guarantees a line is at most w cells. Wrapping cannot split a wide
// character, so at w == 1 a CJK or emoji cell would overflow without it.
func fit(s string, w int) string {
	if len(s) <= w {
		// Bytes bound cells from above for text without escapes.
		return s
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "")
}

// wrapLine wraps one logical line (no newlines) into visual lines of at
// most w cells, appending them to dst.
func wrapLine(dst []string, line string, w int) []string {
	line = expandTabs(line)
	if len(line) <= w {
		return append(dst, line)
	}
	if ansi.StringWidth(line) <= w {
		return append(dst, line)
	}
	for _, part := range strings.Split(ansi.Wrap(line, w, ""), "\n") {
		dst = append(dst, fit(part, w))
	}
	return dst
}

// wrapText wraps text that may span several logical lines.
func wrapText(dst []string, s string, w int) []string {
	for _, l := range splitLines(s) {
		dst = wrapLine(dst, l, w)
	}
	return dst
}

// appendStyled wraps text to w cells and appends each piece styled and
// indented; styling after wrapping keeps SGR out of the width arithmetic.
func appendStyled(dst []string, th Theme, s lipgloss.Style, ind, text string, w int) []string {
	for _, l := range wrapText(nil, text, w) {
		dst = append(dst, ind+th.paint(s, l))
	}
	return dst
}

func itoa(n int) string { return strconv.Itoa(n) }
