package pager

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/sink"
)

// tabStop is the distance between tab stops.
const tabStop = 8

const (
	cellCtrl  = 1 << iota // a control character shown as ^X
	cellNote              // the "line truncated" note
	cellMatch             // inside a search match
)

// cell is one grapheme of a display line: text[off:next.off], w columns.
type cell struct {
	off  int32
	w    int8
	kind uint8
	sty  uint16 // the command's colour: an index into dline.styles, 0 = none
}

// dline is a line decoded for display: sanitised text and its cells.
type dline struct {
	text     []byte
	cells    []cell
	from     int  // columns before this are counted, not kept
	startCol int  // the column of cells[0]
	width    int  // columns decoded, kept or not
	full     bool // every byte of the line was decoded
	noteAt   int  // len(text) before the note
	unusual  bool // has non-ASCII text, whose width is worth checking

	// The command's colours (the artifact's styles file): the style in
	// force where the line starts, the marks inside it (offsets from
	// markBase, the line's offset in the file), and the styles the cells
	// use, the first one none.
	state    string
	marks    []sink.Mark
	markBase int64
	mi       int
	sty      uint16
	styles   []string
}

// applyMarks moves the current style past the marks up to byte i.
func (d *dline) applyMarks(i int) {
	cur := d.styles[d.sty]
	for d.mi < len(d.marks) && d.marks[d.mi].Off <= d.markBase+int64(i) {
		cur = sink.SGRState(cur + d.marks[d.mi].Seq)
		d.mi++
	}
	d.setStyle(cur)
}

func (d *dline) setStyle(st string) {
	for k, s := range d.styles {
		if s == st {
			d.sty = uint16(k)
			return
		}
	}
	if len(d.styles) == 1<<16-1 {
		return
	}
	d.sty = uint16(len(d.styles))
	d.styles = append(d.styles, st)
}

func (d *dline) add(s []byte, w int, kind uint8) {
	if d.width < d.from {
		d.width += w
		d.startCol = d.width
		return
	}
	d.cells = append(d.cells, cell{off: int32(len(d.text)), w: int8(w), kind: kind, sty: d.sty})
	d.text = append(d.text, s...)
	d.width += w
}

// cellEnd is the end of cell k's text.
func (d *dline) cellEnd(k int) int {
	if k+1 < len(d.cells) {
		return int(d.cells[k+1].off)
	}
	return len(d.text)
}

var replacementChar = []byte("\uFFFD")

// decode turns raw (one line, without its newline) into display cells until
// limit columns are filled, keeping those from column from on: escape
// sequences are dropped, tabs expanded, control characters shown as ^X,
// invalid UTF-8 replaced. more > 0 is how much of the line raw leaves out;
// it is noted at the end.
func (d *dline) decode(raw []byte, from, limit int, more int64) {
	d.text, d.cells, d.width, d.full = d.text[:0], d.cells[:0], 0, false
	d.from, d.startCol, d.unusual = from, 0, false
	d.styles, d.sty, d.mi = append(d.styles[:0], ""), 0, 0
	if d.state != "" {
		d.setStyle(d.state)
	}
	i := 0
	for i < len(raw) && d.width < limit {
		if d.mi < len(d.marks) && d.marks[d.mi].Off <= d.markBase+int64(i) {
			d.applyMarks(i)
		}
		if d.width < from { // the fast way through plain text to skip
			j, stop := i, min(i+from-d.width, len(raw))
			for j < stop && raw[j] >= 0x20 && raw[j] < 0x7f {
				j++
			}
			if j < len(raw) && raw[j] >= utf8.RuneSelf && j > i {
				j-- // it may start a grapheme cluster
			}
			if j > i {
				d.width += j - i
				d.startCol = d.width
				i = j
				continue
			}
		}
		c := raw[i]
		switch {
		case c == 0x1b:
			i = skipEscape(raw, i)
		case c == '\t':
			for n := tabStop - d.width%tabStop; n > 0; n-- {
				d.add([]byte{' '}, 1, 0)
			}
			i++
		case c < 0x20 || c == 0x7f:
			d.add([]byte{'^'}, 1, cellCtrl)
			d.add([]byte{c ^ 0x40}, 1, cellCtrl)
			i++
		case c < utf8.RuneSelf && (i+1 == len(raw) || raw[i+1] < utf8.RuneSelf):
			d.add(raw[i:i+1], 1, 0)
			i++
		default:
			d.unusual = true
			r, sz := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && sz <= 1 {
				d.add(replacementChar, 1, 0)
				i++
				continue
			}
			if hiddenRune(r) {
				i += sz
				continue
			}
			cl, w := ansi.FirstGraphemeCluster(raw[i:], ansi.GraphemeWidth)
			if len(cl) < sz || !cleanCluster(cl) {
				cl, w = raw[i:i+sz], max(ansi.StringWidth(string(raw[i:i+sz])), 0)
			}
			d.add(cl, min(w, 2), 0)
			i += len(cl)
		}
	}
	d.full = i >= len(raw)
	d.noteAt = len(d.text)
	d.sty = 0
	if d.full && more > 0 {
		for _, r := range fmt.Sprintf(" … [+%s not shown]", HumanSize(more)) {
			d.add([]byte(string(r)), 1, cellNote)
		}
	}
}

// hiddenRune reports runes that are dropped: C1 controls and the
// bidirectional formatting characters, which would reorder the screen.
func hiddenRune(r rune) bool {
	switch {
	case r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// cleanCluster reports whether a grapheme cluster is valid UTF-8 without
// control or hidden characters.
func cleanCluster(cl []byte) bool {
	for len(cl) > 0 {
		r, sz := utf8.DecodeRune(cl)
		if (r == utf8.RuneError && sz <= 1) || r < 0x20 || r == 0x7f || hiddenRune(r) {
			return false
		}
		cl = cl[sz:]
	}
	return true
}

// skipEscape returns the index just past the escape sequence that starts
// at b[i] (an ESC). Sequences never run past a newline.
func skipEscape(b []byte, i int) int {
	i++
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '[': // CSI: parameters, intermediates, final byte
		for i++; i < len(b); i++ {
			c := b[i]
			if c >= 0x40 && c <= 0x7e {
				return i + 1
			}
			if c < 0x20 || c > 0x7e {
				return i
			}
		}
		return i
	case ']', 'P', 'X', '^', '_': // strings ended by BEL or ST
		for i++; i < len(b); i++ {
			switch b[i] {
			case 0x07:
				return i + 1
			case '\n':
				return i
			case 0x1b:
				if i+1 < len(b) && b[i+1] == '\\' {
					return i + 2
				}
				return i
			}
		}
		return i
	}
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
		i++
	}
	if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7e {
		return i + 1
	}
	return i
}

// stripEscapes appends src without its escape sequences to dst.
func stripEscapes(dst, src []byte) []byte {
	for {
		j := bytes.IndexByte(src, 0x1b)
		if j < 0 {
			return append(dst, src...)
		}
		dst = append(dst, src[:j]...)
		src = src[skipEscape(src, j):]
	}
}

// sanitize is s as one display line of at most limit columns.
func sanitize(s string, limit int) string {
	var d dline
	d.decode([]byte(s), 0, limit, 0)
	for len(d.cells) > 0 && d.width > limit {
		d.width -= int(d.cells[len(d.cells)-1].w)
		d.text = d.text[:d.cells[len(d.cells)-1].off]
		d.cells = d.cells[:len(d.cells)-1]
	}
	return string(d.text)
}

// HumanSize is n bytes as the pager's notes say it ("131.3 KB").
func HumanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
