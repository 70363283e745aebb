package tui

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/sink"
)

// The pager shows a bash output artifact (a file of any size) full-screen.
// It never holds the file in memory: a sparse line index is built in one
// pass, visible lines are read with ReadAt, and search scans the file in
// chunks.

const (
	// idxBlock is the most lines that share one checkpoint of the index.
	idxBlock = 64
	// blockSpan: every line start of a block lies within blockSpan bytes of
	// the block's start, so finding a line never reads more than that.
	blockSpan = 64 << 10
	// scanChunk is the read size of indexing and search.
	scanChunk = 1 << 20
	// lineCap is the most of one line that is read and shown; the rest is
	// summarised by a note.
	lineCap = 64 << 10
	// pagerWindow is how much text around the visible lines is read at once.
	pagerWindow = 256 << 10
	// pagerWheel is how many lines a mouse-wheel notch scrolls.
	pagerWheel = 3
	pagerTab   = 8
	// crProbe is how much of a line is searched for a CR.
	crProbe = 4 << 10
)

// pagerMatchStyle highlights search matches: reverse video without colour
// (an attribute, not a colour, like the selected block's header), black on
// yellow with it. The match line is also marked in the gutter.
func pagerMatchStyle(noColor bool) lipgloss.Style {
	if noColor {
		return lipgloss.NewStyle().Reverse(true)
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("11"))
}

// ---------------------------------------------------------------------------
// line index

// lineIndex maps line numbers to byte offsets. It keeps a checkpoint, the
// start of a block of lines, every idxBlock lines or sooner, so that all
// the line starts of a block lie within blockSpan bytes of its start: the
// starts inside a block are found by reading at most blockSpan bytes.
type lineIndex struct {
	r          io.ReaderAt
	size       int64 // bytes indexed
	n          int   // lines
	trailingNL bool  // the last byte is '\n'
	blocks     []int64
	first      []int // the number of each block's first line
	cache      [8]blockCache
	next       int
	buf        []byte
}

type blockCache struct {
	k      int // block number + 1; 0 is empty
	n      int
	starts [idxBlock]int64
}

// buildIndex reads size bytes of r once and indexes their lines.
func buildIndex(r io.ReaderAt, size int64) (*lineIndex, error) {
	x := &lineIndex{r: r}
	if size <= 0 {
		return x, nil
	}
	buf := make([]byte, min(int64(scanChunk), size))
	b := indexBuilder{x: x, size: size}
	x.blocks, x.first = append(x.blocks, 0), append(x.first, 0)
	var off int64
	var last byte
	for off < size {
		want := int(min(int64(len(buf)), size-off))
		m, err := r.ReadAt(buf[:want], off)
		if m < want {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			size = off + int64(m) // the file shrank
			b.size = size
		}
		if m == 0 {
			break
		}
		b.scan(buf[:m], off)
		last = buf[m-1]
		off += int64(m)
	}
	x.size = off
	if off == 0 {
		x.blocks, x.first = nil, nil
		return x, nil
	}
	x.trailingNL = last == '\n'
	x.n = b.nl + b.seen + 1
	if x.trailingNL {
		x.n--
	}
	return x, nil
}

// indexBuilder finds the checkpoints of a lineIndex.
type indexBuilder struct {
	x     *lineIndex
	size  int64
	start int64 // the current block's start
	seen  int   // newlines in it so far
	nl    int   // newlines before it
}

// newlines8 has the high bit set in each byte of b[:8] that is '\n'.
func newlines8(b []byte) uint64 {
	const lo7, nl8 = 0x7f7f7f7f7f7f7f7f, 0x0a0a0a0a0a0a0a0a
	t := binary.LittleEndian.Uint64(b) ^ nl8
	return ^((t&lo7 + lo7) | t | lo7)
}

// scan indexes chunk, the bytes at off.
func (b *indexBuilder) scan(chunk []byte, off int64) {
	i := 0
outer:
	for i < len(chunk) {
		// Newlines before lim start lines within blockSpan of the block.
		lim := int(min(max(b.start+blockSpan-off, 0), int64(len(chunk))))
		if i >= lim {
			j := bytes.IndexByte(chunk[i:], '\n')
			if j < 0 {
				return
			}
			i += j
			b.split(off + int64(i))
			i++
			continue
		}
		// Eight bytes at a time: newlines8 has the high bit of each '\n'
		// byte; the idxBlock-th newline of the block ends it.
		for ; i+32 <= lim; i += 32 {
			c := bits.OnesCount64(newlines8(chunk[i:])) + bits.OnesCount64(newlines8(chunk[i+8:])) +
				bits.OnesCount64(newlines8(chunk[i+16:])) + bits.OnesCount64(newlines8(chunk[i+24:]))
			if b.seen+c >= idxBlock {
				break // the end of the block is in these 32 bytes
			}
			b.seen += c
		}
		for ; i+8 <= lim; i += 8 {
			y := newlines8(chunk[i:])
			c := bits.OnesCount64(y)
			if b.seen+c < idxBlock {
				b.seen += c
				continue
			}
			for ; b.seen+1 < idxBlock; b.seen++ {
				y &= y - 1
			}
			i += bits.TrailingZeros64(y) >> 3
			b.split(off + int64(i))
			i++
			continue outer
		}
		for ; i < lim; i++ {
			if chunk[i] != '\n' {
				continue
			}
			if b.seen+1 == idxBlock {
				b.split(off + int64(i))
				i++
				continue outer
			}
			b.seen++
		}
	}
}

// split ends the current block with the newline at q.
func (b *indexBuilder) split(q int64) {
	b.nl += b.seen + 1
	b.seen = 0
	if q+1 < b.size {
		b.start = q + 1
		b.x.blocks = append(b.x.blocks, q+1)
		b.x.first = append(b.x.first, b.nl)
	}
}

// blockOf is the block holding line i.
func (x *lineIndex) blockOf(i int) int {
	return sort.Search(len(x.first), func(k int) bool { return x.first[k] > i }) - 1
}

// block returns the line starts of block k.
func (x *lineIndex) block(k int) []int64 {
	for i := range x.cache {
		if c := &x.cache[i]; c.k == k+1 {
			return c.starts[:c.n]
		}
	}
	lo, hi, last := x.blocks[k], x.size, x.n
	if k+1 < len(x.blocks) {
		hi, last = x.blocks[k+1], x.first[k+1]
	}
	if x.buf == nil {
		x.buf = make([]byte, blockSpan)
	}
	m, _ := x.r.ReadAt(x.buf[:min(hi-lo, blockSpan)], lo)
	data := x.buf[:m]
	c := &x.cache[x.next]
	x.next = (x.next + 1) % len(x.cache)
	c.k, c.n = k+1, last-x.first[k]
	c.starts[0] = lo
	i, got := 0, 1
	for got < c.n {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		c.starts[got] = lo + int64(i)
		got++
	}
	for ; got < c.n; got++ { // the file changed under us
		c.starts[got] = hi
	}
	return c.starts[:c.n]
}

// start is the offset of line i; start(n) is the size.
func (x *lineIndex) start(i int) int64 {
	if i >= x.n {
		return x.size
	}
	k := x.blockOf(i)
	return x.block(k)[i-x.first[k]]
}

// end is the offset just past line i's text, before its newline.
func (x *lineIndex) end(i int) int64 {
	if i+1 < x.n {
		return x.start(i+1) - 1
	}
	if x.trailingNL {
		return x.size - 1
	}
	return x.size
}

// lineOf is the line holding byte off.
func (x *lineIndex) lineOf(off int64) int {
	k := sort.Search(len(x.blocks), func(k int) bool { return x.blocks[k] > off }) - 1
	if k < 0 {
		return 0
	}
	st := x.block(k)
	j := sort.Search(len(st), func(j int) bool { return st[j] > off }) - 1
	return x.first[k] + max(j, 0)
}

// memory is roughly the bytes the index holds.
func (x *lineIndex) memory() int {
	return 8*cap(x.blocks) + 8*cap(x.first) + len(x.buf) + 8*idxBlock*len(x.cache)
}

// ---------------------------------------------------------------------------
// display decoding

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
			for n := pagerTab - d.width%pagerTab; n > 0; n-- {
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
		for _, r := range fmt.Sprintf(" … [+%s not shown]", humanSize(more)) {
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

func humanSize(n int64) string {
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

// ---------------------------------------------------------------------------
// search

type foldKind uint8

const (
	foldNone    foldKind = iota // case-sensitive, or nothing to fold
	foldASCII                   // an ASCII query: fold A-Z only
	foldUnicode                 // a query with non-ASCII letters
)

// matcher is a literal, smart-case substring search.
type matcher struct {
	query string
	pat   []byte // compared with prepared text
	qr    []rune // pat as runes, for foldUnicode highlights
	fold  foldKind
	esc   []byte
	buf   []byte
}

func newMatcher(q string) *matcher {
	m := &matcher{query: q, pat: []byte(q)}
	upper, letters, ascii := false, false, true
	for _, r := range q {
		if unicode.IsUpper(r) {
			upper = true
		}
		if unicode.SimpleFold(r) != r {
			letters = true
		}
		if r >= utf8.RuneSelf {
			ascii = false
		}
	}
	switch {
	case upper || !letters:
		m.fold = foldNone
	case ascii:
		m.fold = foldASCII
	default:
		m.fold = foldUnicode
		m.pat = lowerUnicode(nil, m.pat)
		m.qr = []rune(string(m.pat))
	}
	return m
}

// prepare is chunk without escape sequences and folded; newlines are kept,
// so line numbers can be counted in the result.
func (m *matcher) prepare(chunk []byte) []byte {
	t := chunk
	if bytes.IndexByte(t, 0x1b) >= 0 {
		m.esc = stripEscapes(m.esc[:0], t)
		t = m.esc
	}
	switch m.fold {
	case foldASCII:
		if cap(m.buf) < len(t) {
			m.buf = make([]byte, len(t))
		}
		m.buf = m.buf[:len(t)]
		lowerASCII(m.buf, t)
		t = m.buf
	case foldUnicode:
		m.buf = lowerUnicode(m.buf[:0], t)
		t = m.buf
	}
	return t
}

// lowerUnicode appends src lowered (unicode.ToLower) to dst; invalid UTF-8
// is kept as it is.
func lowerUnicode(dst, src []byte) []byte {
	const hi = 0x8080808080808080
	for i := 0; i < len(src); {
		j := i
		for j+8 <= len(src) && binary.LittleEndian.Uint64(src[j:])&hi == 0 {
			j += 8
		}
		for j < len(src) && src[j] < utf8.RuneSelf {
			j++
		}
		if j > i {
			n := len(dst)
			dst = append(dst, src[i:j]...)
			lowerASCII(dst[n:], dst[n:])
			i = j
			continue
		}
		r, sz := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && sz <= 1 {
			dst = append(dst, src[i])
		} else {
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
		i += sz
	}
	return dst
}

// lowerASCII writes src with A-Z lowered to dst, eight bytes at a time.
func lowerASCII(dst, src []byte) {
	const (
		ones = 0x0101010101010101
		hi   = 0x8080808080808080
	)
	n := len(src) &^ 7
	for i := 0; i < n; i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		v := x &^ hi
		upper := ((v + ones*(0x80-'A')) ^ (v + ones*(0x80-'Z'-1))) &^ x & hi
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for i := n; i < len(src); i++ {
		c := src[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}

// highlight marks the cells of d inside matches.
func (m *matcher) highlight(d *dline) {
	text := d.text[:d.noteAt]
	mark := func(s, e int) {
		k := sort.Search(len(d.cells), func(k int) bool { return d.cellEnd(k) > s })
		for ; k < len(d.cells) && int(d.cells[k].off) < e; k++ {
			d.cells[k].kind |= cellMatch
		}
	}
	if m.fold == foldUnicode {
		for i := 0; i < len(text); {
			if e := m.matchRunes(text, i); e > i {
				mark(i, e)
				i = e
				continue
			}
			_, sz := utf8.DecodeRune(text[i:])
			i += sz
		}
		return
	}
	t := text
	if m.fold == foldASCII {
		t = m.prepare(text)
	}
	for i := 0; i <= len(t)-len(m.pat); {
		j := bytes.Index(t[i:], m.pat)
		if j < 0 {
			break
		}
		mark(i+j, i+j+len(m.pat))
		i += j + len(m.pat)
	}
}

// matchRunes is the end of a fold match of the query at text[i:], or i.
func (m *matcher) matchRunes(text []byte, i int) int {
	j := i
	for _, q := range m.qr {
		if j >= len(text) {
			return i
		}
		r, sz := utf8.DecodeRune(text[j:])
		if unicode.ToLower(r) != q {
			return i
		}
		j += sz
	}
	return j
}

// ---------------------------------------------------------------------------
// pager

type pager struct {
	f     *os.File
	title string
	idx   *lineIndex

	top, topRow int // first visible line; in wrap mode its first visible row
	xOff        int // first visible column without wrap
	wrap        bool

	width, height int // of the last View, used for page moves

	prompt    bool
	input     string
	search    *matcher
	matchLine int // the current match, -1 if none
	msg       string
	msgErr    bool

	win     []byte // text read around the visible lines
	winOff  int64
	winBuf  []byte
	scanBuf []byte
	chunk   int // search read size; 0 is scanChunk (tests make it small)
	d       dline
	final   []byte // a line with CRs in its final state
	// styles are the command's colours (the artifact's styles file), shown
	// unless NO_COLOR (colors); rawInFile says the last rawLine is the
	// file's bytes, at the offsets the styles name (not a final state).
	styles    *sink.Styles
	colors    bool
	rawInFile bool
	rows      []int       // wrap: first cell of each row of d
	rowCols   []int       // wrap: first column of each row of d
	rowsOf    map[int]int // wrap: rows per line at rowsW
	rowsW     int
}

// openPager opens path for viewing; title is shown in the header (e.g.
// "artifact://3 · $ seq 1 1000000").
func openPager(path, title string) (*pager, error) {
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
	return &pager{f: f, title: title, idx: idx, width: 80, height: 24, matchLine: -1, styles: styles}, nil
}

// Close closes the file.
func (p *pager) Close() error { return p.f.Close() }

func (p *pager) bodyHeight() int {
	if p.height >= 3 {
		return p.height - 2
	}
	return 0
}

// pageHeight is the body height for moves: at least one line.
func (p *pager) pageHeight() int { return max(p.bodyHeight(), 1) }

// gutterWidth is the line-number column (with its trailing marker), or 0
// when the screen is too narrow for it.
func (p *pager) gutterWidth() int {
	g := len(strconv.Itoa(max(p.idx.n, 1))) + 1
	if p.width-g < 8 {
		return 0
	}
	return g
}

func (p *pager) textWidth() int { return max(p.width-p.gutterWidth(), 1) }

// rawLine is line i's bytes (at most lineCap, without the newline or a
// trailing CR) and how many bytes it leaves out.
func (p *pager) rawLine(i int) ([]byte, int64, error) {
	s, e := p.idx.start(i), p.idx.end(i)
	n := max(e-s, 0)
	want := min(n, lineCap)
	more := n - want
	if s < p.winOff || s+want > p.winOff+int64(len(p.win)) {
		sz := min(max(want, pagerWindow), p.idx.size-s)
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
func (p *pager) lineEnd(e int64) ([]byte, bool) {
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

// decodeLine decodes columns [from, limit) of line i into p.d and marks
// its matches.
func (p *pager) decodeLine(i, from, limit int) {
	raw, more, err := p.rawLine(i)
	p.d.state, p.d.marks = "", nil
	if err != nil {
		p.d.decode([]byte("(read error: "+err.Error()+")"), 0, limit, 0)
		return
	}
	if p.styles != nil && p.colors && p.rawInFile {
		s := p.idx.start(i)
		p.d.state, p.d.marks = p.styles.Range(s, s+int64(len(raw)))
		p.d.markBase = s
	}
	p.d.decode(raw, from, limit, more)
	if p.search != nil {
		p.search.highlight(&p.d)
	}
}

// wrapRows splits p.d into rows of width w, setting p.rows (the first
// cell of each row) and p.rowCols (the column where it starts).
func (p *pager) wrapRows(w int) {
	p.rows, p.rowCols = append(p.rows[:0], 0), append(p.rowCols[:0], 0)
	col, total := 0, 0
	for k, c := range p.d.cells {
		if col > 0 && col+int(c.w) > w {
			p.rows, p.rowCols = append(p.rows, k), append(p.rowCols, total)
			col = 0
		}
		col += int(c.w)
		total += int(c.w)
	}
}

// lineRows is how many rows line i takes with wrap on.
func (p *pager) lineRows(i int) int {
	w := p.textWidth()
	if p.rowsOf == nil || p.rowsW != w || len(p.rowsOf) > 1<<14 {
		p.rowsOf, p.rowsW = map[int]int{}, w
	}
	if r, ok := p.rowsOf[i]; ok {
		return r
	}
	p.decodeLine(i, 0, 1<<30)
	p.wrapRows(w)
	p.rowsOf[i] = len(p.rows)
	return len(p.rows)
}

// endPos is the last scroll position: the end of the file at the bottom.
func (p *pager) endPos() (line, row int) {
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
func (p *pager) clamp() {
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
func (p *pager) scroll(n int) {
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
func (p *pager) lastVisible() int {
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
func (p *pager) scrollRight(n int) {
	if p.wrap {
		return
	}
	w := p.textWidth()
	limit := p.xOff + n + w
	widest := 0
	for i, last := p.top, p.lastVisible(); i <= last; i++ {
		p.decodeLine(i, limit, limit)
		widest = max(widest, p.d.width)
	}
	p.xOff = max(p.xOff, min(p.xOff+n, widest-w))
}

// Update handles a key, mouse wheel or paste; closed reports that the
// pager wants to be closed.
func (p *pager) Update(msg tea.Msg) (closed bool) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if p.prompt {
			p.promptKey(msg)
			return false
		}
		return p.key(msg)
	case tea.PasteMsg:
		if p.prompt {
			p.input += promptText(msg.Content)
		}
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			p.scroll(-pagerWheel)
		case tea.MouseWheelDown:
			p.scroll(pagerWheel)
		case tea.MouseWheelLeft:
			p.xOff = max(p.xOff-pagerWheel*2, 0)
		case tea.MouseWheelRight:
			p.scrollRight(pagerWheel * 2)
		}
	}
	return false
}

func (p *pager) key(msg tea.KeyPressMsg) (closed bool) {
	p.msg, p.msgErr = "", false
	page := p.pageHeight()
	switch k, pk := keyName(msg.String()), keys.Pager; {
	case is(k, pk.Close):
		return true
	case is(k, pk.Up):
		p.scroll(-1)
	case is(k, pk.Down):
		p.scroll(1)
	case is(k, pk.PageUp):
		p.scroll(-page)
	case is(k, pk.PageDown):
		p.scroll(page)
	case is(k, pk.HalfUp):
		p.scroll(-max(page/2, 1))
	case is(k, pk.HalfDown):
		p.scroll(max(page/2, 1))
	case is(k, pk.Top):
		p.top, p.topRow = 0, 0
	case is(k, pk.Bottom):
		p.top, p.topRow = p.endPos()
	case is(k, pk.Left):
		p.xOff = max(p.xOff-max(p.textWidth()/2, 1), 0)
	case is(k, pk.Right):
		p.scrollRight(max(p.textWidth()/2, 1))
	case is(k, pk.Column0):
		p.xOff = 0
	case is(k, pk.Wrap):
		p.wrap = !p.wrap
		p.topRow = 0
		p.clamp()
	case is(k, pk.Search):
		p.prompt, p.input = true, ""
	case is(k, pk.Next):
		p.next(false)
	case is(k, pk.Prev):
		p.next(true)
	}
	return false
}

func (p *pager) promptKey(msg tea.KeyPressMsg) {
	switch k, qk := keyName(msg.String()), keys.Prompt; {
	case is(k, qk.Cancel):
		p.prompt = false
	case is(k, qk.Submit):
		p.prompt = false
		q := p.input
		if q == "" {
			if p.search == nil {
				return
			}
			q = p.search.query
		}
		p.search = newMatcher(q)
		p.matchLine = -1
		p.find(p.top, false)
	case is(k, qk.Erase):
		if p.input == "" {
			p.prompt = false
			return
		}
		_, sz := utf8.DecodeLastRuneInString(p.input)
		p.input = p.input[:len(p.input)-sz]
	case is(k, qk.Clear):
		p.input = ""
	default:
		if msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			p.input += promptText(msg.Text)
		}
	}
}

// promptText is typed or pasted text for the prompt: controls become spaces.
func promptText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || hiddenRune(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
}

// next goes to the next (or previous) match of the last search.
func (p *pager) next(back bool) {
	if p.search == nil {
		p.msg = "No previous search"
		return
	}
	from := p.top
	visible := p.matchLine >= p.top && p.matchLine <= p.lastVisible()
	switch {
	case visible && !back:
		from = p.matchLine + 1
	case visible && back:
		from = p.matchLine - 1
	case back:
		from = p.top - 1
	}
	p.find(from, back)
}

// find searches from line from (inclusive) forward or backward, wrapping
// around the file, and shows the match.
func (p *pager) find(from int, back bool) {
	n := p.idx.n
	if n == 0 || p.search.query == "" {
		p.msg = "Pattern not found: " + p.search.query
		return
	}
	from = ((from % n) + n) % n
	var line int
	var err error
	wrapped := false
	if !back {
		line, err = p.scan(from, n, false)
		if line < 0 && err == nil && from > 0 {
			line, err = p.scan(0, from, false)
			wrapped = true
		}
	} else {
		line, err = p.scanBack(0, from+1)
		if line < 0 && err == nil && from+1 < n {
			line, err = p.scanBack(from+1, n)
			wrapped = true
		}
	}
	switch {
	case err != nil:
		p.msg, p.msgErr = "search: "+err.Error(), true
		return
	case line < 0:
		p.msg, p.matchLine = "Pattern not found: "+p.search.query, -1
		return
	}
	if wrapped {
		if back {
			p.msg = "search hit TOP, continuing at BOTTOM"
		} else {
			p.msg = "search hit BOTTOM, continuing at TOP"
		}
	}
	p.matchLine = line
	p.reveal(line)
}

// reveal scrolls so that line (the match) is on screen, its match too.
func (p *pager) reveal(line int) {
	if line < p.top || line > p.lastVisible() || (line == p.top && p.topRow > 0) {
		p.top, p.topRow = line, 0
		p.scroll(-min(p.pageHeight()/4, 5))
		p.clamp()
	}
	if p.wrap {
		return
	}
	w := p.textWidth()
	p.decodeLine(line, 0, 1<<30)
	col := 0
	for _, c := range p.d.cells {
		if c.kind&cellMatch != 0 {
			if col < p.xOff || col >= p.xOff+w {
				p.xOff = max(col-w/4, 0)
			}
			return
		}
		col += int(c.w)
	}
}

// cutPoint is where the next chunk starts when b, a piece of a long line,
// is cut at its end: ov visible bytes (not counting escape sequences) before
// the end, and never after the start of an escape sequence the cut may split;
// 0 when b has too little text for that.
func cutPoint(b []byte, ov int) int {
	type run struct{ s, e int }
	var runs []run
	cut := len(b)
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], 0x1b)
		if j < 0 {
			runs = append(runs, run{i, len(b)})
			break
		}
		if j > 0 {
			runs = append(runs, run{i, i + j})
		}
		k := skipEscape(b, i+j)
		if k >= len(b) {
			cut = i + j
			break
		}
		i = k
	}
	need := ov
	for r := len(runs) - 1; r >= 0 && need > 0; r-- {
		if n := runs[r].e - runs[r].s; n < need {
			need -= n
			cut = runs[r].s
		} else {
			cut = runs[r].e - need
			need = 0
		}
	}
	if need > 0 {
		return 0 // too little text between escapes
	}
	return cut
}

func (p *pager) chunkSize() int {
	if p.chunk > 0 {
		return p.chunk
	}
	return scanChunk
}

// scan is the first (or, with last, the last) line in [a, b) holding a
// match, or -1. It reads the lines' bytes in chunks cut at newlines.
func (p *pager) scan(a, b int, last bool) (int, error) {
	m := p.search
	off, end := p.idx.start(a), p.idx.start(b)
	// A chunk cut inside a line overlaps the next one by ov bytes, which
	// holds any match across the cut; upper case may be longer than the
	// lower case of the folded query.
	ov := len(m.pat) - 1
	if m.fold == foldUnicode {
		ov = 3 * len(m.pat)
	}
	limit := max(p.chunkSize(), 4*(ov+1), 64)
	if len(p.scanBuf) < limit {
		p.scanBuf = make([]byte, limit)
	}
	line, found := a, -1
	size := max(limit/16, 2*(ov+1)) // grows: a near match costs little
	for off < end {
		n := int(min(int64(size), end-off))
		size = min(size*2, limit)
		got, err := p.f.ReadAt(p.scanBuf[:n], off)
		if got < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return -1, err
		}
		chunk, adv := p.scanBuf[:n], n
		if off+int64(n) < end {
			if k := bytes.LastIndexByte(chunk, '\n'); k >= 0 {
				chunk, adv = chunk[:k+1], k+1
			} else {
				adv = cutPoint(chunk, ov)
				if adv <= 0 && n < limit {
					continue // read more at once
				}
				if adv <= 0 {
					adv = n - ov // the overlap may split an escape sequence
				}
			}
		}
		t := m.prepare(chunk)
		if last {
			if j := bytes.LastIndex(t, m.pat); j >= 0 {
				found = line + bytes.Count(t[:j], []byte{'\n'})
			}
		} else if j := bytes.Index(t, m.pat); j >= 0 {
			return line + bytes.Count(t[:j], []byte{'\n'}), nil
		}
		line += bytes.Count(chunk[:adv], []byte{'\n'})
		off += int64(adv)
	}
	return found, nil
}

// scanBack is the last line in [a, b) holding a match, or -1; it scans
// windows of up to a chunk backwards from b.
func (p *pager) scanBack(a, b int) (int, error) {
	limit := int64(p.chunkSize())
	size := limit / 16
	for hi := b; hi > a; size = min(size*2, limit) {
		lo := a
		if off := p.idx.start(hi) - size; off > p.idx.start(a) {
			lo = min(max(p.idx.lineOf(off)+1, a), hi-1)
		}
		line, err := p.scan(lo, hi, true)
		if line >= 0 || err != nil {
			return line, err
		}
		hi = lo
	}
	return -1, nil
}

// View renders the pager: exactly height lines, each at most width cells.
func (p *pager) View(width, height int, st *styles) (content string) {
	if height <= 0 {
		return ""
	}
	if width <= 0 {
		return strings.Repeat("\n", height-1)
	}
	p.width, p.height = width, height
	p.colors = !st.theme.NoColor
	p.clamp()
	bodyH := p.bodyHeight()
	body, lastLine := p.body(bodyH, st)
	out := make([]string, 0, height)
	if height >= 2 {
		out = append(out, p.header(lastLine, st))
	}
	out = append(out, body...)
	out = append(out, p.footer(st))
	return strings.Join(out, "\n")
}

// fit pads or cuts s (styled) to exactly w columns.
func fit(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "")
		sw = ansi.StringWidth(s)
	}
	return s + strings.Repeat(" ", max(w-sw, 0))
}

func (p *pager) header(lastLine int, st *styles) string {
	w := p.width
	var right string
	if p.idx.n == 0 {
		right = "(empty)"
	} else {
		right = fmt.Sprintf("line %d–%d of %d  %d%%", p.top+1, lastLine+1, p.idx.n, (lastLine+1)*100/p.idx.n)
	}
	if p.wrap {
		right += "  wrap"
	} else if p.xOff > 0 {
		right += fmt.Sprintf("  col %d", p.xOff+1)
	}
	rw := ansi.StringWidth(right)
	if rw+2 > w {
		return fit(st.dim.Render(sanitize(right, w)), w)
	}
	title := truncText(p.title, w-rw-2)
	gap := w - ansi.StringWidth(title) - rw
	return st.overlayTitle.Render(title) + strings.Repeat(" ", max(gap, 0)) + st.dim.Render(right)
}

func (p *pager) footer(st *styles) string {
	w := p.width
	switch {
	case p.prompt:
		s := "/" + sanitize(p.input, 1<<20) + "█"
		if sw := ansi.StringWidth(s); sw > w {
			s = ansi.TruncateLeft(s, sw-w+1, "…")
		}
		return fit(s, w)
	case p.msg != "":
		style := st.warning
		if p.msgErr {
			style = st.errorText
		}
		return fit(style.Render(truncText(p.msg, w)), w)
	}
	return fit(st.dim.Render(truncText(pagerHelp(), w)), w)
}

// truncText is s sanitised and cut to w columns with an ellipsis.
func truncText(s string, w int) string {
	return ansi.Truncate(sanitize(s, 1<<20), w, "…")
}

// body renders the text rows and returns them with the last line shown.
func (p *pager) body(bodyH int, st *styles) ([]string, int) {
	rows := make([]string, 0, bodyH)
	if bodyH == 0 {
		return rows, p.lastVisible()
	}
	if p.idx.n == 0 {
		rows = append(rows, fit(st.dim.Render("(empty)"), p.width))
		for len(rows) < bodyH {
			rows = append(rows, strings.Repeat(" ", p.width))
		}
		return rows, -1
	}
	gw, tw := p.gutterWidth(), p.textWidth()
	r := rowRenderer{match: newWrapStyle(pagerMatchStyle(st.theme.NoColor)), dim: newWrapStyle(st.dim)}
	var nums, marks []string // the gutter, styled at once below
	var check []bool         // rows whose width is worth checking
	row := func(line int, first bool, text string) {
		num, mark := "", " "
		if first {
			num = strconv.Itoa(line + 1)
			if line == p.matchLine {
				mark = "▸"
			}
		}
		nums = append(nums, strings.Repeat(" ", max(gw-1-len(num), 0))+num)
		marks = append(marks, mark)
		rows = append(rows, text)
		check = append(check, p.d.unusual)
	}
	line := p.top
	if !p.wrap {
		extra := 0
		if p.search != nil {
			extra = len(p.search.pat)
		}
		from := max(p.xOff-2*extra-pagerTab, 0) // matches across the edge show
		for ; len(rows) < bodyH && line < p.idx.n; line++ {
			p.decodeLine(line, from, p.xOff+tw+extra)
			row(line, true, r.render(&p.d, 0, len(p.d.cells), p.d.startCol, p.xOff, tw))
		}
	} else {
		skip := p.topRow
		for ; len(rows) < bodyH && line < p.idx.n; line++ {
			p.decodeLine(line, 0, 1<<30)
			p.wrapRows(tw)
			for k := skip; k < len(p.rows) && len(rows) < bodyH; k++ {
				end := len(p.d.cells)
				if k+1 < len(p.rows) {
					end = p.rows[k+1]
				}
				row(line, k == 0, r.render(&p.d, p.rows[k], end, p.rowCols[k], p.rowCols[k], tw))
			}
			skip = 0
		}
	}
	last := line - 1
	if gw > 0 {
		styled := strings.Split(st.dim.Render(strings.Join(nums, "\n")), "\n")
		for i := range rows {
			g := nums[i]
			if len(styled) == len(rows) {
				g = styled[i]
			}
			rows[i] = g + marks[i] + rows[i]
		}
	}
	for i, row := range rows { // a guard against width disagreements
		if check[i] && ansi.StringWidth(row) > p.width {
			rows[i] = ansi.Truncate(row, p.width, "")
		}
	}
	for len(rows) < bodyH {
		rows = append(rows, strings.Repeat(" ", p.width))
	}
	return rows, last
}

type rowRenderer struct {
	match, dim wrapStyle
	sb         strings.Builder
}

// wrapStyle is a style as the codes around the text, worked out once: a
// row has many short segments, and rendering each through lipgloss is slow.
type wrapStyle struct {
	style     lipgloss.Style
	pre, post string
	ok        bool
}

func newWrapStyle(st lipgloss.Style) wrapStyle {
	w := wrapStyle{style: st}
	s := st.Render("x")
	if i := strings.IndexByte(s, 'x'); i >= 0 && ansi.Strip(s) == "x" {
		w.pre, w.post, w.ok = s[:i], s[i+1:], true
	}
	return w
}

func (w wrapStyle) write(sb *strings.Builder, text []byte) {
	if !w.ok {
		sb.WriteString(w.style.Render(string(text)))
		return
	}
	sb.WriteString(w.pre)
	sb.Write(text)
	sb.WriteString(w.post)
}

// render draws the cells [a, b) of d (cell a starting at column col) that
// fall in columns [x0, x0+w), padded to w columns.
func (r *rowRenderer) render(d *dline, a, b, col, x0, w int) string {
	r.sb.Reset()
	var seg []byte
	var segKind uint8
	var segSty uint16
	flush := func() {
		switch {
		case len(seg) == 0:
		case segKind&cellMatch != 0:
			r.match.write(&r.sb, seg)
		case segKind&(cellCtrl|cellNote) != 0:
			r.dim.write(&r.sb, seg)
		case segSty != 0:
			r.sb.WriteString(d.styles[segSty])
			r.sb.Write(seg)
			r.sb.WriteString("\x1b[m")
		default:
			r.sb.Write(seg)
		}
		seg = seg[:0]
	}
	out := 0
	for k := a; k < b; k++ {
		c := d.cells[k]
		cw := int(c.w)
		start, end := col, col+cw
		col = end
		if end <= x0 && cw > 0 || start < x0 && cw == 0 {
			continue
		}
		if start >= x0+w {
			break
		}
		kind := c.kind & (cellMatch | cellCtrl | cellNote)
		sty := c.sty
		if kind != 0 {
			sty = 0 // a match or a note has its own look
		}
		if kind != segKind || sty != segSty {
			flush()
			segKind, segSty = kind, sty
		}
		if start < x0 || end > x0+w { // a wide cell cut by an edge
			n := min(end, x0+w) - max(start, x0)
			seg = append(seg, strings.Repeat(" ", n)...)
			out += n
			continue
		}
		seg = append(seg, d.text[c.off:d.cellEnd(k)]...)
		out += cw
	}
	flush()
	r.sb.WriteString(strings.Repeat(" ", max(w-out, 0)))
	return r.sb.String()
}

// update implements layer: the pager takes all input; when it closes (q)
// it closes its file and leaves the stack.
func (p *pager) update(msg tea.Msg) (action, tea.Cmd) {
	if p.Update(msg) {
		_ = p.Close()
		return closeLayer{}, nil
	}
	return nil, nil
}

// view implements layer.
func (p *pager) view(width, height int, st *styles) surface {
	return surface{content: p.View(width, height, st)}
}

// covers implements layer.
func (p *pager) covers() bool { return true }

// stop implements stopper: quitting closes the file.
func (p *pager) stop() { _ = p.Close() }
