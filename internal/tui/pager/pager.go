// Package pager shows a bash output artifact (a file of any size)
// full-screen. It never holds the file in memory: a sparse line index is
// built in one pass (index.go), visible lines are read with ReadAt and
// decoded for display (decode.go), and search scans the file in chunks
// (match.go).
//
// The pager is a Bubble Tea component: Update takes every input and does
// every read, and leaves a frame (frame.go) of the decoded visible lines;
// View (view.go) only draws that frame and the pager's state, and changes
// nothing, so a redraw costs no read and no scroll position moves while
// drawing.
package pager

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"agentsh/internal/sink"
)

const (
	// lineCap is the most of one line that is read and shown; the rest is
	// summarised by a note.
	lineCap = 64 << 10
	// readWindow is how much text around the visible lines is read at once.
	readWindow = 256 << 10
	// wheelLines is how many lines a mouse-wheel notch scrolls.
	wheelLines = 3
	// crProbe is how much of a line is searched for a CR.
	crProbe = 4 << 10
)

// Pager is the full-screen view of one file.
type Pager struct {
	f     *os.File
	title string
	idx   *lineIndex
	keys  KeyMap

	top, topRow int // first visible line; in wrap mode its first visible row
	xOff        int // first visible column without wrap
	wrap        bool

	width, height int // the window's, set by SetSize; page moves use it

	prompt    bool
	input     string
	search    *matcher
	matchLine int // the current match, -1 if none
	msg       string
	msgErr    bool

	// fr is what View draws: the visible lines, decoded when the position,
	// the size or the search last changed.
	fr frame

	win     []byte // text read around the visible lines
	winOff  int64
	winBuf  []byte
	scanBuf []byte
	chunk   int    // search read size; 0 is scanChunk (tests make it small)
	d       dline  // a line decoded to measure, wrap or find a match in
	final   []byte // a line with CRs in its final state
	// styles are the command's colours (the artifact's styles file);
	// rawInFile says the last rawLine is the file's bytes, at the offsets
	// the styles name (not a final state).
	styles    *sink.Styles
	rawInFile bool
	rows      []int       // wrap: first cell of each row of a line
	rowCols   []int       // wrap: first column of each row of a line
	rowsOf    map[int]int // wrap: rows per line at rowsW
	rowsW     int
}

// Open opens path for viewing in a width × height window (80×24 for a
// window with no room yet); title is shown in the header (e.g.
// "artifact://3 · $ seq 1 1000000"), keys are the bindings it answers.
func Open(path, title string, keys KeyMap, width, height int) (*Pager, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", path)
	}
	idx, err := buildIndex(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	// Without its styles file (none, unreadable) the output shows plain.
	styles, _ := sink.ReadStyles(path)
	p := &Pager{f: f, title: title, idx: idx, keys: keys, width: 80, height: 24, matchLine: -1, styles: styles}
	if width > 0 && height > 0 {
		p.width, p.height = width, height
	}
	p.layout()
	return p, nil
}

// SetSize lays the pager out for a width × height window. A window with
// no room (a size of 0) keeps the last layout: nothing is drawn in it.
func (p *Pager) SetSize(width, height int) {
	if width <= 0 || height <= 0 {
		return
	}
	p.width, p.height = width, height
	p.layout()
}

// Close closes the file.
func (p *Pager) Close() error { return p.f.Close() }

func (p *Pager) bodyHeight() int {
	if p.height >= 3 {
		return p.height - 2
	}
	return 0
}

// pageHeight is the body height for moves: at least one line.
func (p *Pager) pageHeight() int { return max(p.bodyHeight(), 1) }

// gutterWidth is the line-number column (with its trailing marker), or 0
// when the screen is too narrow for it.
func (p *Pager) gutterWidth() int {
	g := len(strconv.Itoa(max(p.idx.n, 1))) + 1
	if p.width-g < 8 {
		return 0
	}
	return g
}

func (p *Pager) textWidth() int { return max(p.width-p.gutterWidth(), 1) }

// rawLine is line i's bytes (at most lineCap, without the newline or a
// trailing CR) and how many bytes it leaves out.
func (p *Pager) rawLine(i int) ([]byte, int64, error) {
	s, e := p.idx.start(i), p.idx.end(i)
	n := max(e-s, 0)
	want := min(n, lineCap)
	more := n - want
	if s < p.winOff || s+want > p.winOff+int64(len(p.win)) {
		sz := min(max(want, readWindow), p.idx.size-s)
		if more > 0 {
			sz = want // a long line: the lines around are far
		}
		if int64(cap(p.winBuf)) < sz {
			p.winBuf = make([]byte, sz)
		}
		m, err := p.f.ReadAt(p.winBuf[:sz], s)
		p.win, p.winOff = p.winBuf[:m], s
		if m < int(want) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			p.win = nil
			return nil, 0, err
		}
	}
	b := p.win[s-p.winOff : s-p.winOff+want]
	if more == 0 && len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	p.rawInFile = true
	// A progress bar has a CR every frame: in a long line, looking at its
	// start is enough, and looking at all of it costs every frame.
	hasCR := bytes.IndexByte(b[:min(len(b), crProbe)], '\r') >= 0
	if more > 0 && hasCR {
		// A long line with CRs is mostly a progress bar: its final
		// state is after its last CR, near its end.
		if end, ok := p.lineEnd(e); ok {
			p.rawInFile = false
			return end, 0, nil
		}
	}
	if hasCR {
		p.rawInFile = false
		// The artifact keeps every frame; the line shows its final state
		// (spec §4), as the transcript did.
		p.final = sink.AppendFinal(p.final[:0], b)
		b = p.final
	}
	return b, more, nil
}

// lineEnd is the text after the last CR among the lineCap bytes before
// offset e, the end of a long line; ok is false without such a CR.
func (p *Pager) lineEnd(e int64) ([]byte, bool) {
	if cap(p.final) < lineCap {
		p.final = make([]byte, lineCap)
	}
	buf := p.final[:lineCap]
	m, _ := p.f.ReadAt(buf, e-lineCap)
	k := bytes.LastIndexByte(buf[:m], '\r')
	if k < 0 || k+1 >= m {
		return nil, false
	}
	return buf[k+1 : m], true
}

// decodeLine decodes columns [from, limit) of line i into d and marks its
// matches. The command's colours are kept in the cells whether or not
// they are shown: View leaves them out under NO_COLOR.
func (p *Pager) decodeLine(d *dline, i, from, limit int) {
	raw, more, err := p.rawLine(i)
	d.state, d.marks = "", nil
	if err != nil {
		d.decode([]byte("(read error: "+err.Error()+")"), 0, limit, 0)
		return
	}
	if p.styles != nil && p.rawInFile {
		s := p.idx.start(i)
		d.state, d.marks = p.styles.Range(s, s+int64(len(raw)))
		d.markBase = s
	}
	d.decode(raw, from, limit, more)
	if p.search != nil {
		p.search.highlight(d)
	}
}

// wrapRows splits d into rows of width w, setting p.rows (the first cell
// of each row) and p.rowCols (the column where it starts).
func (p *Pager) wrapRows(d *dline, w int) {
	p.rows, p.rowCols = append(p.rows[:0], 0), append(p.rowCols[:0], 0)
	col, total := 0, 0
	for k, c := range d.cells {
		if col > 0 && col+int(c.w) > w {
			p.rows, p.rowCols = append(p.rows, k), append(p.rowCols, total)
			col = 0
		}
		col += int(c.w)
		total += int(c.w)
	}
}

// lineRows is how many rows line i takes with wrap on.
func (p *Pager) lineRows(i int) int {
	w := p.textWidth()
	if p.rowsOf == nil || p.rowsW != w || len(p.rowsOf) > 1<<14 {
		p.rowsOf, p.rowsW = map[int]int{}, w
	}
	if r, ok := p.rowsOf[i]; ok {
		return r
	}
	p.decodeLine(&p.d, i, 0, 1<<30)
	p.wrapRows(&p.d, w)
	p.rowsOf[i] = len(p.rows)
	return len(p.rows)
}

// endPos is the last scroll position: the end of the file at the bottom.
func (p *Pager) endPos() (line, row int) {
	need := p.pageHeight()
	if !p.wrap {
		return max(p.idx.n-need, 0), 0
	}
	for i := p.idx.n - 1; i >= 0; i-- {
		r := p.lineRows(i)
		if r >= need {
			return i, r - need
		}
		need -= r
	}
	return 0, 0
}

// clamp keeps the position inside the file.
func (p *Pager) clamp() {
	if !p.wrap {
		p.topRow = 0
	} else {
		p.xOff = 0
	}
	if p.top < 0 || p.idx.n == 0 {
		p.top, p.topRow = 0, 0
	}
	if p.top >= p.idx.n {
		p.top = max(p.idx.n-1, 0)
	}
	if p.wrap && p.idx.n > 0 {
		p.topRow = min(max(p.topRow, 0), p.lineRows(p.top)-1)
	}
	if p.idx.n-p.top > p.pageHeight() {
		return // a full page lies below the top
	}
	el, er := p.endPos()
	if p.top > el || (p.top == el && p.topRow > er) {
		p.top, p.topRow = el, er
	}
}

// scroll moves by n rows (lines without wrap).
func (p *Pager) scroll(n int) {
	if !p.wrap {
		p.top += n
		p.clamp()
		return
	}
	for n > 0 && p.top < p.idx.n {
		r := p.lineRows(p.top)
		if p.topRow+n < r {
			p.topRow += n
			break
		}
		n -= r - p.topRow
		if p.top+1 >= p.idx.n {
			p.topRow = r - 1
			break
		}
		p.top, p.topRow = p.top+1, 0
	}
	for n < 0 {
		if p.topRow >= -n {
			p.topRow += n
			break
		}
		n += p.topRow + 1
		if p.top == 0 {
			p.topRow = 0
			break
		}
		p.top--
		p.topRow = p.lineRows(p.top) - 1
	}
	p.clamp()
}

// lastVisible is the last line with a row on screen.
func (p *Pager) lastVisible() int {
	h := p.pageHeight()
	if !p.wrap {
		return min(p.top+h, p.idx.n) - 1
	}
	i, rows := p.top, -p.topRow
	for ; i < p.idx.n; i++ {
		rows += p.lineRows(i)
		if rows >= h {
			return i
		}
	}
	return p.idx.n - 1
}

// scrollRight moves the view right by n columns, but not past the widest
// visible line.
func (p *Pager) scrollRight(n int) {
	if p.wrap {
		return
	}
	w := p.textWidth()
	limit := p.xOff + n + w
	widest := 0
	for i, last := p.top, p.lastVisible(); i <= last; i++ {
		p.decodeLine(&p.d, i, limit, limit)
		widest = max(widest, p.d.width)
	}
	p.xOff = max(p.xOff, min(p.xOff+n, widest-w))
}
