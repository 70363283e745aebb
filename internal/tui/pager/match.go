package pager

import (
	"bytes"
	"encoding/binary"
	"io"
	"sort"
	"unicode"
	"unicode/utf8"
)

// Search is a literal, smart-case substring search: the matcher folds the
// query and the text, and scan reads the file in chunks cut at newlines
// (or, in a long line, with an overlap that holds a match across the cut).

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

func (p *Pager) chunkSize() int {
	if p.chunk > 0 {
		return p.chunk
	}
	return scanChunk
}

// scan is the first (or, with last, the last) line in [a, b) holding a
// match, or -1. It reads the lines' bytes in chunks cut at newlines.
func (p *Pager) scan(a, b int, last bool) (int, error) {
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
func (p *Pager) scanBack(a, b int) (int, error) {
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
