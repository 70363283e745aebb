package sink

import (
	"sync"
	"unicode/utf8"
)

// tail keeps the last max bytes of a stream. It trims lazily: the buffer may
// grow to 2×max before it is shifted, so each byte is copied about once more
// however small the writes are, and a write larger than max costs only the
// copy of its last max bytes.
type tail struct {
	buf []byte
	max int
}

func (t *tail) write(p []byte) {
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return
	}
	if n := len(t.buf) + len(p); n-t.max > t.max { // n > 2×max, without overflow
		drop := n - t.max // < len(t.buf), because len(p) < max
		t.buf = t.buf[:copy(t.buf, t.buf[drop:])]
	}
	t.buf = append(t.buf, p...)
}

// bytes returns the kept tail: the longest suffix of the stream that has at
// most max bytes and starts on a character boundary.
func (t *tail) bytes() []byte { return runeSuffix(t.buf, t.max) }

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
// progress snapshots. It is safe for concurrent use, so one goroutine may
// write while another takes snapshots.
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
	return runeSuffix(b[:len(b)-incompleteTail(b)], t.max)
}
