package tui

import (
	"slices"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// editor is the multi-line prompt editor. It is small on purpose: the
// bubbles textarea pulls in a clipboard module this build does not carry,
// and the TUI needs exact control of enter, up/down (history) and the
// cursor position anyway.
type editor struct {
	lines   [][]rune
	row     int // logical line of the cursor
	col     int // rune index in lines[row]
	width   int // content width in cells
	maxRows int // visible rows at most; more scroll
	top     int // first visible visual row
	wantX   int // preferred column for up/down, -1 = none
	// pastes are the long pastes collapsed to one marker rune each in
	// lines (see collapse); they stay known after the marker is deleted,
	// as a recalled prompt may hold it again.
	pastes    map[rune]pasted
	nextPaste rune
}

// pasted is one collapsed paste: its text, and the label its marker shows.
type pasted struct{ text, label string }

// A long paste shows as one marker in the editor, "[pasted 300 lines]", as
// Claude Code does: the prompt stays readable and editable around it, one
// backspace takes the whole paste back out, and the full text is what is
// sent. A marker is one rune of Unicode's last private use plane, which no
// font or keyboard produces, so text typed or pasted never holds one.
const (
	pasteFirst rune = 0x10F000 // the first marker rune
	pasteLast  rune = 0x10FFFD // the last private use code point
	// pasteMaxLines and pasteMaxRunes are the most a paste may be and
	// still be shown as it is.
	pasteMaxLines = 10
	pasteMaxRunes = 1000
	// tabCells is how wide the editor shows a tab, which it keeps in the
	// text (a pasted Makefile or TSV reaches the model as it was).
	tabCells = 4
)

func isMarker(r rune) bool { return r >= pasteFirst && r <= pasteLast }

func newEditor() *editor {
	return &editor{lines: [][]rune{nil}, width: 40, maxRows: 10, wantX: -1}
}

// Value is the text typed so far, each collapsed paste in full: what is
// sent.
func (e *editor) Value() string {
	if len(e.pastes) == 0 {
		return e.Raw()
	}
	var b strings.Builder
	for i, l := range e.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, r := range l {
			if p, ok := e.pastes[r]; ok && isMarker(r) {
				b.WriteString(p.text)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// Raw is the text with each collapsed paste as its marker.
func (e *editor) Raw() string {
	parts := make([]string, len(e.lines))
	for i, l := range e.lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "\n")
}

// SetValue replaces the text (as Value or Raw gives it) and puts the
// cursor at its end. The editor's long pastes show as their markers again,
// whichever way the text comes back (the history, queued messages taken
// back).
func (e *editor) SetValue(s string) {
	e.lines = nil
	for _, l := range strings.Split(e.collapse(e.clean(s, true)), "\n") {
		e.lines = append(e.lines, []rune(l))
	}
	e.row = len(e.lines) - 1
	e.col = len(e.lines[e.row])
	e.top, e.wantX = 0, -1
	e.scrollToCursor()
}

// Reset empties the editor.
func (e *editor) Reset() { e.SetValue("") }

// SetWidth sets the content width in cells.
func (e *editor) SetWidth(w int) {
	e.width = max(w, 1)
	e.scrollToCursor()
}

// collapse puts the markers of the editor's pastes in s for their texts,
// the longest first (a paste may hold an earlier one).
func (e *editor) collapse(s string) string {
	if len(e.pastes) == 0 {
		return s
	}
	markers := make([]rune, 0, len(e.pastes))
	for r := range e.pastes {
		markers = append(markers, r)
	}
	slices.SortFunc(markers, func(a, b rune) int { return len(e.pastes[b].text) - len(e.pastes[a].text) })
	for _, r := range markers {
		s = strings.ReplaceAll(s, e.pastes[r].text, string(r))
	}
	return s
}

// clean normalizes typed, pasted or recalled text: CRLF and CR become LF,
// and control characters but the newline and the tab go, so every rune has
// a known width. Marker runes go too, but those of the editor's own pastes
// when markers is set (a recalled prompt).
func (e *editor) clean(s string, markers bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Map(func(r rune) rune {
		if isMarker(r) {
			if _, ok := e.pastes[r]; markers && ok {
				return r
			}
			return -1
		}
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == 0x7f) {
			return -1
		}
		return r
	}, s)
}

// InsertString inserts s at the cursor.
func (e *editor) InsertString(s string) {
	e.insert(e.clean(s, false))
}

// insert inserts clean text at the cursor.
func (e *editor) insert(s string) {
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			e.newline()
		}
		rs := []rune(part)
		line := e.lines[e.row]
		nl := make([]rune, 0, len(line)+len(rs))
		nl = append(nl, line[:e.col]...)
		nl = append(nl, rs...)
		nl = append(nl, line[e.col:]...)
		e.lines[e.row] = nl
		e.col += len(rs)
	}
	e.wantX = -1
	e.scrollToCursor()
}

// Paste inserts pasted text at the cursor, a long one as one marker. The
// line break a copied line or block ends with is dropped: kept, it would
// leave an empty line under the text and the cursor on it.
func (e *editor) Paste(s string) {
	s = strings.TrimRight(e.clean(s, false), "\n")
	lines, runes := strings.Count(s, "\n")+1, len([]rune(s))
	if (lines <= pasteMaxLines && runes <= pasteMaxRunes) || e.nextPaste > pasteLast-pasteFirst {
		e.insert(s)
		return
	}
	label := "[pasted " + plural(lines, "line") + "]"
	if lines == 1 {
		label = "[pasted " + plural(runes, "character") + "]"
	}
	if e.pastes == nil {
		e.pastes = map[rune]pasted{}
	}
	r := pasteFirst + e.nextPaste
	e.nextPaste++
	e.pastes[r] = pasted{text: s, label: label}
	e.insert(string(r))
}

func (e *editor) newline() {
	line := e.lines[e.row]
	head := append([]rune(nil), line[:e.col]...)
	tail := append([]rune(nil), line[e.col:]...)
	e.lines[e.row] = head
	e.lines = append(e.lines[:e.row+1], append([][]rune{tail}, e.lines[e.row+1:]...)...)
	e.row++
	e.col = 0
}

// segment is one visual row: runes [start, end) of a logical line.
type segment struct{ row, start, end int }

func runeWidth(r rune) int {
	if r < 0x80 {
		return 1
	}
	return max(ansi.StringWidth(string(r)), 0)
}

// cells is how wide the editor shows r: a tab as tabCells spaces, a
// paste's marker as its label.
func (e *editor) cells(r rune) int {
	switch {
	case r == '\t':
		return tabCells
	case isMarker(r):
		return ansi.StringWidth(e.pastes[r].label)
	}
	return runeWidth(r)
}

// shown is how the editor draws runes: tabs as spaces, markers as labels.
func (e *editor) shown(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		switch {
		case r == '\t':
			b.WriteString(strings.Repeat(" ", tabCells))
		case isMarker(r):
			b.WriteString(e.pastes[r].label)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// layout wraps every logical line to the width. A line whose width is an
// exact multiple of it gets an empty last row, so the cursor after its last
// rune has a cell to sit on.
func (e *editor) layout() []segment {
	var segs []segment
	for row, l := range e.lines {
		start, w := 0, 0
		for i, r := range l {
			rw := e.cells(r)
			if w+rw > e.width && i > start {
				segs = append(segs, segment{row, start, i})
				start, w = i, 0
			}
			w += rw
		}
		segs = append(segs, segment{row, start, len(l)})
		if w >= e.width && len(l) > 0 {
			segs = append(segs, segment{row, len(l), len(l)})
		}
	}
	return segs
}

// cursorPos is the cursor's visual row (in the layout) and column.
func (e *editor) cursorPos(segs []segment) (vrow, x int) {
	for i, s := range segs {
		if s.row != e.row {
			continue
		}
		last := i+1 >= len(segs) || segs[i+1].row != e.row
		if e.col >= s.start && (e.col < s.end || last) {
			for _, r := range e.lines[e.row][s.start:e.col] {
				x += e.cells(r)
			}
			return i, x
		}
	}
	return 0, 0
}

// OnFirstRow reports whether the cursor is on the first visual row (up
// then recalls history).
func (e *editor) OnFirstRow() bool {
	v, _ := e.cursorPos(e.layout())
	return v == 0
}

// OnLastRow reports whether the cursor is on the last visual row.
func (e *editor) OnLastRow() bool {
	segs := e.layout()
	v, _ := e.cursorPos(segs)
	return v == len(segs)-1
}

// Height is the number of rows the editor shows.
func (e *editor) Height() int {
	return min(max(len(e.layout()), 1), e.maxRows)
}

func (e *editor) scrollToCursor() {
	segs := e.layout()
	v, _ := e.cursorPos(segs)
	h := min(len(segs), e.maxRows)
	if v < e.top {
		e.top = v
	}
	if v >= e.top+h {
		e.top = v - h + 1
	}
	e.top = max(min(e.top, len(segs)-h), 0)
}

// moveVertical moves the cursor by dy visual rows, keeping the column.
func (e *editor) moveVertical(dy int) {
	segs := e.layout()
	v, x := e.cursorPos(segs)
	if e.wantX >= 0 {
		x = e.wantX
	}
	nv := v + dy
	if nv < 0 || nv >= len(segs) {
		return
	}
	s := segs[nv]
	col, w := s.start, 0
	for col < s.end {
		rw := e.cells(e.lines[s.row][col])
		if w+rw > x {
			break
		}
		w += rw
		col++
	}
	e.row, e.col, e.wantX = s.row, col, x
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// Update applies an editing key; it reports whether the key was used.
func (e *editor) Update(k tea.KeyPressMsg) bool {
	key := k.Key()
	keepX := false
	switch kn, ek := keyName(k.String()), keys.Editor; {
	case is(kn, ek.Newline):
		e.newline()
	case is(kn, ek.Backspace):
		switch {
		case e.col > 0:
			l := e.lines[e.row]
			e.lines[e.row] = append(l[:e.col-1:e.col-1], l[e.col:]...)
			e.col--
		case e.row > 0:
			prev := e.lines[e.row-1]
			e.col = len(prev)
			e.lines[e.row-1] = append(prev[:len(prev):len(prev)], e.lines[e.row]...)
			e.lines = append(e.lines[:e.row], e.lines[e.row+1:]...)
			e.row--
		}
	case is(kn, ek.Delete):
		l := e.lines[e.row]
		switch {
		case e.col < len(l):
			e.lines[e.row] = append(l[:e.col:e.col], l[e.col+1:]...)
		case e.row+1 < len(e.lines):
			e.lines[e.row] = append(l[:len(l):len(l)], e.lines[e.row+1]...)
			e.lines = append(e.lines[:e.row+1], e.lines[e.row+2:]...)
		}
	case is(kn, ek.Left):
		switch {
		case e.col > 0:
			e.col--
		case e.row > 0:
			e.row--
			e.col = len(e.lines[e.row])
		}
	case is(kn, ek.Right):
		switch {
		case e.col < len(e.lines[e.row]):
			e.col++
		case e.row+1 < len(e.lines):
			e.row++
			e.col = 0
		}
	case is(kn, ek.Up):
		e.moveVertical(-1)
		keepX = true
	case is(kn, ek.Down):
		e.moveVertical(1)
		keepX = true
	case is(kn, ek.LineStart):
		e.col = 0
	case is(kn, ek.LineEnd):
		e.col = len(e.lines[e.row])
	case is(kn, ek.TextStart):
		e.row, e.col = 0, 0
	case is(kn, ek.TextEnd):
		e.row = len(e.lines) - 1
		e.col = len(e.lines[e.row])
	case is(kn, ek.KillBefore):
		e.lines[e.row] = append([]rune(nil), e.lines[e.row][e.col:]...)
		e.col = 0
	case is(kn, ek.KillAfter):
		e.lines[e.row] = e.lines[e.row][:e.col:e.col]
	case is(kn, ek.DeleteWord):
		l := e.lines[e.row]
		i := e.col
		for i > 0 && !isWordRune(l[i-1]) {
			i--
		}
		for i > 0 && isWordRune(l[i-1]) {
			i--
		}
		e.lines[e.row] = append(l[:i:i], l[e.col:]...)
		e.col = i
	case is(kn, ek.WordLeft):
		l := e.lines[e.row]
		for e.col > 0 && !isWordRune(l[e.col-1]) {
			e.col--
		}
		for e.col > 0 && isWordRune(l[e.col-1]) {
			e.col--
		}
	case is(kn, ek.WordRight):
		l := e.lines[e.row]
		for e.col < len(l) && !isWordRune(l[e.col]) {
			e.col++
		}
		for e.col < len(l) && isWordRune(l[e.col]) {
			e.col++
		}
	case is(kn, ek.Tab):
		e.InsertString("    ")
		return true
	default:
		if key.Text == "" || key.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModMeta|tea.ModSuper) != 0 {
			return false
		}
		e.InsertString(key.Text)
		return true
	}
	if !keepX {
		e.wantX = -1
	}
	e.scrollToCursor()
	return true
}

// View renders the visible rows, each padded to the width, and the cursor
// position within them.
func (e *editor) View(placeholder string) (string, int, int) {
	segs := e.layout()
	v, x := e.cursorPos(segs)
	h := min(len(segs), e.maxRows)
	rows := make([]string, 0, h)
	if len(e.lines) == 1 && len(e.lines[0]) == 0 && placeholder != "" {
		p := ansi.Truncate(placeholder, e.width, "…")
		rows = append(rows, p+strings.Repeat(" ", max(e.width-ansi.StringWidth(p), 0)))
		return strings.Join(rows, "\n"), 0, 0
	}
	for i := e.top; i < e.top+h && i < len(segs); i++ {
		s := segs[i]
		// A marker wider than the editor has a row of its own, cut.
		text := ansi.Truncate(e.shown(e.lines[s.row][s.start:s.end]), e.width, "…")
		rows = append(rows, text+strings.Repeat(" ", max(e.width-ansi.StringWidth(text), 0)))
	}
	return strings.Join(rows, "\n"), x, v - e.top
}
