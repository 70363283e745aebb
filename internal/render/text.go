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

// tabWidth is the distance of the tab stops used when replacing tabs: a
// terminal's, every 8 columns, so output that aligns columns with tabs
// (go test, ls -l, column) lines up as it does in the terminal.
const tabWidth = 8

// CollapsedHint is the dim line above a collapsed preview (spec §5): k
// earlier lines hidden, v shown, of t. The counts are logical lines of what
// the command printed, not of the tail kept in memory or of the rows on
// screen.
func CollapsedHint(k, v, t int) string { return EarlierHint(k, v, t, ExpandAction) }

// ExpandAction is what the hint of a collapsed block offers. Lines that
// only the artifact holds are offered by the warning line (PagerKey).
const ExpandAction = "ctrl+o to expand"

// EarlierHint is the one wording of hidden lines above what a block shows
// (bang blocks, tool blocks, the hint to the pager): "… (k earlier lines,
// showing v of t)", then " (action)" unless action is empty.
func EarlierHint(k, v, t int, action string) string {
	return hiddenHint("… (%d earlier lines, showing %d of %d)", k, v, t, action)
}

// LaterHint is EarlierHint for hidden lines below what a block shows.
func LaterHint(k, v, t int, action string) string {
	return hiddenHint("… (%d later lines, showing %d of %d)", k, v, t, action)
}

func hiddenHint(format string, k, v, t int, action string) string {
	s := fmt.Sprintf(format, k, v, t)
	if action != "" {
		s += " (" + action + ")"
	}
	return s
}

// TimeoutFooter is the metadata line of a call whose model passed a timeout;
// 'f'/-1 prints 60 as "60" and 1.5 as "1.5", never "6e+01".
func TimeoutFooter(seconds float64) string {
	return "⟦Timeout: " + strconv.FormatFloat(seconds, 'f', -1, 64) + "s⟧"
}

// PagerKey opens the full output of a truncated result in the TUI's pager.
const PagerKey = "ctrl+g"

// TruncationWarning is the warning line of a truncated result, shared by
// both components: the notice the model reads (bash.TruncationNotice), so
// the user and the model learn one wording, with the key that shows the
// artifact.
func TruncationWarning(t *bash.TruncationMeta) string {
	n := bash.TruncationNotice(t)
	if t.ArtifactID != "" {
		link := "artifact://" + t.ArtifactID
		n = strings.Replace(n, "Full: "+link, "Full output: "+link+" ("+PagerKey+" to view)", 1)
	}
	return "[" + n + "]"
}

// previewRows returns the last n visual rows of lines at width w, wrapping
// only the lines that show, and the index of the first line with a row on
// screen (a line cut by the limit counts as shown); cut reports that rows
// of that line are left out.
func previewRows(lines []string, w, n int) (rows []string, first int, cut bool) {
	shown := 0
	first = len(lines)
	for first > 0 && shown < n {
		first--
		shown += wrapRows(lines[first], w)
	}
	for _, l := range lines[first:] {
		rows = wrapLine(rows, l, w)
	}
	if len(rows) > n {
		rows, cut = rows[len(rows)-n:], true
	}
	return rows, first, cut
}

// hidden counts the lines of what a command printed that a block's text
// does not hold: before it and after it.
type hidden struct{ before, after int }

// cappedRows wraps each of lines at width w into at most perLine rows; a
// line that needs more shows its first rows, the last one ending in "…",
// and cut reports that one did.
func cappedRows(lines []string, w, perLine int) (rows []string, cut bool) {
	for _, l := range lines {
		n := len(rows)
		rows = wrapLine(rows, l, w)
		if len(rows)-n > perLine {
			rows = rows[:n+perLine]
			last := rows[len(rows)-1]
			rows[len(rows)-1] = ansi.Truncate(last, max(w-1, 0), "") + "…"
			cut = true
		}
	}
	return rows, cut
}

// layout is a block's output at width w: all rows when expanded, else the
// last maxRows rows of the last maxLines lines (0 = no line limit), or,
// with maxRows 0, the last maxLines lines at most lineRows rows each; with
// the hints of what is hidden above (top) and below (bottom); "" when
// nothing is.
func layout(lines []string, w, maxLines, maxRows, lineRows int, expanded bool, h hidden) (top string, rows []string, bottom string) {
	if expanded {
		for _, l := range lines {
			rows = wrapLine(rows, l, w)
		}
		v := len(lines)
		if h.before > 0 {
			top = EarlierHint(h.before, v, h.before+v+h.after, "")
		}
		if h.after > 0 {
			bottom = LaterHint(h.after, v, h.before+v+h.after, "")
		}
		return top, rows, bottom
	}
	start := 0
	if maxLines > 0 {
		start = max(0, len(lines)-maxLines)
	}
	var first int
	var cut bool
	if maxRows > 0 {
		rows, first, cut = previewRows(lines[start:], w, maxRows)
	} else {
		rows, cut = cappedRows(lines[start:], w, lineRows)
	}
	first += start
	k, v := h.before+first, len(lines)-first
	t := k + v + h.after
	action := ""
	if first > 0 || cut {
		action = ExpandAction
	}
	switch {
	case k > 0:
		top = EarlierHint(k, v, t, action)
	case cut:
		// Only the first shown line is cut: no line is hidden.
		top = "… (" + ExpandAction + ")"
	}
	if h.after > 0 {
		bottom = LaterHint(h.after, v, t, "")
	}
	return top, rows, bottom
}

// hiddenOf is what a truncated result's text leaves out of what the
// command printed: the lines before its shown range, and after it (a head
// range).
func hiddenOf(t *bash.TruncationMeta) hidden {
	if t == nil {
		return hidden{}
	}
	var h hidden
	if r := t.ShownRange; r.Start >= 1 && r.End >= r.Start {
		h.before, h.after = r.Start-1, max(t.TotalLines-r.End, 0)
	} else {
		h.before = max(t.TotalLines-t.OutputLines, 0)
	}
	return h
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

// TruncateWords cuts s (which may hold SGR sequences) to at most w cells
// for a one-line status: at a space, with an ellipsis, so that no word is
// cut in half, unless the space would leave less than half of the room
// (a long path or word is cut where it must).
func TruncateWords(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	t := ansi.Truncate(s, w-1, "")
	if i := strings.LastIndexByte(t, ' '); i >= 0 && ansi.StringWidth(t[:i]) >= (w-1)/2 {
		t = strings.TrimRight(t[:i], " ")
	}
	if strings.IndexByte(t, 0x1b) >= 0 {
		t += "\x1b[m" // a cut may leave a style open
	}
	return t + "…"
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
