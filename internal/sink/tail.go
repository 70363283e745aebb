package sink

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// tail keeps the last max bytes of a text stream in its final state: a CR
// returns to the start of the line and the next character other than LF
// overwrites the whole line (see FinalState), so a progress bar of 100 000
// frames is one line, not 100 000. It trims lazily: the buffer may grow to
// 3×max before it is shifted, so each byte is copied about once more however
// small the writes are.
//
// An overwrite uncovers what came before the line, so the tail keeps the
// last max bytes before the current line as well: in buf while the line is
// short, in prev once the line alone fills the window.
type tail struct {
	buf  []byte
	max  int
	prev []byte // the last max bytes before the current line, when buf starts inside it
	cr   bool   // the last write ended with a CR: the next byte but LF overwrites the line
	raw  bool   // CRs are kept as bytes, for a terminal emulator to draw
	sgr  bool   // styled text: an overwritten line leaves its SGR sequences
	lead []byte // styled: the SGR sequences in force where buf starts
	// scratch is reused by add to fold dropped text into lead.
	scratch []byte
}

// write appends p, which may hold CRs.
func (t *tail) write(p []byte) {
	if t.raw {
		t.add(p)
		return
	}
	for len(p) > 0 {
		if t.cr {
			if p[0] == '\r' {
				p = p[1:]
				continue
			}
			t.cr = false
			if p[0] != '\n' {
				t.cutLine()
			}
		}
		i := bytes.IndexByte(p, '\r')
		if i < 0 {
			t.add(p)
			return
		}
		t.add(p[:i])
		t.cr = true
		p = p[i+1:]
	}
}

// cutLine removes the current line, uncovering the text before it.
func (t *tail) cutLine() {
	ls := lineStart(t.buf)
	var kept []byte
	if t.sgr {
		kept = appendSGRs(nil, t.buf[ls:])
	}
	if ls > 0 {
		t.buf, t.prev = append(t.buf[:ls], kept...), nil
		return
	}
	t.buf = append(append(t.buf[:0], t.prev...), kept...)
	t.prev = nil
}

// add appends p, which holds no CR.
func (t *tail) add(p []byte) {
	n := len(t.buf) + len(p)
	if n <= 3*t.max {
		t.buf = append(t.buf, p...)
		return
	}
	// Keep the last max bytes, and the last max before the current line:
	// in buf when the line is shorter than max, in prev otherwise.
	keep := n - t.max
	ls := -1 // start of the current line in buf+p; -1 when before buf
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		ls = len(t.buf) + i + 1
	} else if i := bytes.LastIndexByte(t.buf, '\n'); i >= 0 {
		ls = i + 1
	}
	switch {
	case ls > keep:
		keep = max(ls-t.max, 0)
		t.prev = nil
	case ls >= 0:
		from := max(ls-t.max, 0)
		if t.sgr {
			from = min(seqEnd(t.buf, p, from), ls)
		}
		t.prev = appendRange(t.prev[:0], t.buf, p, from, ls)
	}
	if t.sgr {
		keep = seqEnd(t.buf, p, keep)
		// Fold the dropped text into lead through a reused buffer: a
		// fresh one per trim was as much garbage as the output itself.
		t.scratch = appendRange(append(t.scratch[:0], t.lead...), t.buf, p, 0, keep)
		t.lead = appendSGRs(t.lead[:0], t.scratch)
	}
	if keep >= len(t.buf) {
		t.buf = append(t.buf[:0], p[keep-len(t.buf):]...)
		return
	}
	t.buf = append(t.buf[:copy(t.buf, t.buf[keep:])], p...)
}

// seqEnd moves i, an offset in styled text a+b, past the SGR sequence it
// falls inside, if any, so a cut there leaves no piece of a sequence. An
// ESC before i with no 'm' after it is a sequence still open at i: styled
// text has ESC only in sequences and no 'm' inside one, which is at most
// maxSGR+3 bytes long.
func seqEnd(a, b []byte, i int) int {
	at := func(k int) byte {
		if k < len(a) {
			return a[k]
		}
		return b[k-len(a)]
	}
	n := len(a) + len(b)
	for k := i - 1; k >= 0 && k >= i-maxSGR-3; k-- {
		switch at(k) {
		case 'm':
			return i
		case 0x1b:
			for ; i < n; i++ {
				if at(i) == 'm' {
					return i + 1
				}
			}
			return n
		}
	}
	return i
}

// appendRange appends bytes [from, to) of a+b to dst.
func appendRange(dst, a, b []byte, from, to int) []byte {
	if from < len(a) {
		dst = append(dst, a[from:min(to, len(a))]...)
	}
	if to > len(a) {
		dst = append(dst, b[max(from-len(a), 0):to-len(a)]...)
	}
	return dst
}

// bytes returns the kept tail: the longest suffix of the stream that has at
// most max bytes and starts on a character boundary (and, styled, not
// inside a sequence).
func (t *tail) bytes() []byte { return t.suffix(t.buf, t.max) }

// styled is bytes() for a styled tail, with the SGR sequences in force
// where it starts in front.
func (t *tail) styled(b []byte, limit int) []byte {
	s := t.suffix(b, limit)
	state := appendSGRs(nil, append(append([]byte(nil), t.lead...), b[:len(b)-len(s)]...))
	return append(state, s...)
}

func (t *tail) suffix(b []byte, limit int) []byte {
	s := runeSuffix(b, limit)
	if t.sgr {
		s = b[seqEnd(b, nil, len(b)-len(s)):]
	}
	return s
}

// runeSuffix returns the last limit bytes of b, moved forward past UTF-8
// continuation bytes so that no character is split.
func runeSuffix(b []byte, limit int) []byte {
	start := max(0, len(b)-limit)
	for start < len(b) && !utf8.RuneStart(b[start]) {
		start++
	}
	return b[start:]
}

// TailBuffer is a UTF-8-safe rolling tail of a text stream, for live
// progress snapshots, with each line in its final state (a CR returns to
// the line's start, as in OutputSink). It is safe for concurrent use, so
// one goroutine may write while another takes snapshots.
type TailBuffer struct {
	mu  sync.Mutex
	t   tail // keeps max+UTFMax-1 bytes, so an incomplete last character
	max int  // does not cost the snapshot any complete ones
}

// NewTailBuffer returns a TailBuffer keeping at most max bytes
// (DefaultMaxBytes when max <= 0).
func NewTailBuffer(max int) *TailBuffer {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	return &TailBuffer{t: tail{max: max + utf8.UTFMax - 1}, max: max}
}

// NewRawTailBuffer is NewTailBuffer for a terminal emulator: it keeps the
// CRs of the stream, which the emulator draws itself, instead of each
// line's final state.
func NewRawTailBuffer(max int) *TailBuffer {
	t := NewTailBuffer(max)
	t.t.raw = true
	return t
}

// NewStyledTailBuffer is NewTailBuffer for styled text (see
// Sanitizer.KeepSGR): a line that a CR overwrites leaves its SGR
// sequences, so the text after the CR keeps its colour.
func NewStyledTailBuffer(max int) *TailBuffer {
	t := NewTailBuffer(max)
	t.t.sgr = true
	return t
}

// Write appends p to the stream; it never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.t.write(p)
	t.mu.Unlock()
	return len(p), nil
}

// String returns the current tail: the last at most max bytes of valid
// UTF-8, never starting inside a character. A character whose last bytes
// have not been written yet is left out until they arrive. The stream should
// already be valid UTF-8 (sanitized); if it is not, invalid bytes read as
// U+FFFD.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.view()
	if utf8.Valid(v) {
		return string(v)
	}
	// []rune conversion applies the same one-U+FFFD-per-byte rule as the
	// Sanitizer; the repaired text can be longer, so trim it again.
	return string(runeSuffix([]byte(string([]rune(string(v)))), t.max))
}

// Len returns len(t.String()), without copying when the stream is valid UTF-8.
func (t *TailBuffer) Len() int {
	t.mu.Lock()
	v := t.view()
	valid := utf8.Valid(v)
	t.mu.Unlock()
	if valid {
		return len(v)
	}
	return len(t.String())
}

// view is the tail without an incomplete trailing character.
func (t *TailBuffer) view() []byte {
	b := t.t.buf
	b = b[:len(b)-incompleteTail(b)]
	if t.t.sgr {
		return t.t.styled(b, t.max)
	}
	return t.t.suffix(b, t.max)
}
