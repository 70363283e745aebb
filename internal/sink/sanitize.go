package sink

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi/parser"
)

// MaxSequenceBytes bounds one escape sequence. A stray "ESC ]" with no
// terminator would otherwise swallow the rest of the stream; after this many
// bytes the sequence is dropped and the bytes that follow count as text again.
const MaxSequenceBytes = 64 << 10

const (
	ground = parser.GroundState
	// stateMask keeps table indexes provably in range, so the hot loop has no
	// bounds check; every parser state fits in 4 bits.
	stateMask = parser.TransitionStateMask
)

// seqTable is x/ansi's DEC VT500 transition table adapted to UTF-8 streams,
// where raw bytes >= 0x80 are parts of characters, never 8-bit C1 controls:
//   - inside string sequences (OSC, DCS, SOS, PM, APC) they are payload.
//     Upstream lets a raw 0x9C end the string and, for SOS/PM/APC, lets a
//     UTF-8 lead byte abort it; "✳" (E2 9C B3), a common window-title prefix,
//     would cut the title short and leak its rest as text.
//   - in every other sequence state they abort the sequence and are then
//     decoded as text (upstream starts new sequences on 0x9B, 0x9D, ...).
//     The marker for "abort and reprocess" is a transition to Utf8State, which
//     upstream already uses for UTF-8 lead bytes.
var seqTable = func() (t [parser.DefaultTableSize]byte) {
	copy(t[:], parser.GenerateTransitionTable())
	for st := parser.CsiEntryState; st <= parser.ApcStringState; st++ {
		v := parser.NoneAction<<parser.TransitionActionShift | parser.Utf8State
		switch st {
		case parser.OscStringState, parser.DcsStringState,
			parser.SosStringState, parser.PmStringState, parser.ApcStringState:
			v = parser.PutAction<<parser.TransitionActionShift | st
		}
		for c := 0x80; c <= 0xFF; c++ {
			t[int(st)<<parser.IndexStateShift|c] = v
		}
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// cleanPrefix returns the length of the longest prefix of p made only of
// printable ASCII, '\n' and '\t' - the bytes that pass through unchanged.
// It tests 32 bytes per step with four word-wide masks; loads are
// little-endian on every platform, so the lowest flagged lane is the first
// dirty byte.
func cleanPrefix(p []byte) int {
	i := 0
	for ; i+32 <= len(p); i += 32 {
		w := (*[32]byte)(p[i : i+32])
		m0 := dirtyMask(binary.LittleEndian.Uint64(w[0:]))
		m1 := dirtyMask(binary.LittleEndian.Uint64(w[8:]))
		m2 := dirtyMask(binary.LittleEndian.Uint64(w[16:]))
		m3 := dirtyMask(binary.LittleEndian.Uint64(w[24:]))
		if m0|m1|m2|m3 != 0 {
			break
		}
	}
	for ; i+8 <= len(p); i += 8 {
		if m := dirtyMask(binary.LittleEndian.Uint64(p[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(p); i++ {
		if !isClean(p[i]) {
			return i
		}
	}
	return i
}

// cleanString reports whether cleanPrefix would accept all of s, without
// converting s to a slice.
func cleanString(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if dirtyMask(x) != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if !isClean(s[i]) {
			return false
		}
	}
	return true
}

func isClean(c byte) bool { return c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' }

// textPrefix is cleanPrefix with bytes >= 0x80 counted as clean: the length
// of the prefix of p free of ASCII controls (other than LF and TAB) and DEL.
func textPrefix(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if m := ctlMask(binary.LittleEndian.Uint64(p[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(p); i++ {
		if c := p[i]; !isClean(c) && c < utf8.RuneSelf {
			return i
		}
	}
	return i
}

// ctlMask is dirtyMask without the lanes >= 0x80.
func ctlMask(x uint64) uint64 {
	return (dirtyMask(x) &^ x) & msb
}

// dirtyMask sets the high bit of every lane of x that needs attention: C0
// controls other than LF and TAB, DEL, and every byte >= 0x80. All sums are
// taken on 7-bit lanes and stay below 0x100, so no carry crosses lanes.
func dirtyMask(x uint64) uint64 {
	y := x &^ msb
	ctl := y + 0x60*lsb                      // high bit clear iff y < 0x20
	keep := (y + 0x77*lsb) &^ (y + 0x75*lsb) // high bit set iff y is TAB or LF
	del := y + lsb                           // high bit set iff y == 0x7f
	return (x | del | ^(ctl | keep)) & msb
}

// Sanitizer turns a raw terminal byte stream into plain UTF-8 text. It keeps
// state across calls, so a chunk boundary may fall anywhere, including inside
// an escape sequence, a character or a CRLF pair. The zero value is ready to
// use; a Sanitizer is not safe for concurrent use. Process is the zero-copy
// entry point for stream consumers, Append the plain one.
//
// The rules, applied to the stream as a whole:
//   - escape sequences (CSI, OSC, DCS, SOS, PM, APC, two-byte ESC) are
//     removed, as recognised by x/ansi's DEC parser table; a sequence still
//     unterminated after MaxSequenceBytes is dropped and text resumes;
//   - C0 controls other than LF and TAB, DEL and the C1 code points
//     U+0080..U+009F are removed; LF, TAB and CR that a terminal would
//     execute inside a sequence are kept;
//   - CRLF becomes LF, and a lone CR stays: it returns to the start of the
//     line, so the text after it overwrites the line (a progress bar). The
//     pairing looks at the text that survives, so "\r\x1b[K\n" is one line
//     break, as on a terminal; CRs in a row count as one, and a CR that
//     nothing follows at the end of the stream changes nothing and is
//     dropped. So every CR of the output is followed by a character other
//     than CR and LF. FinalState turns the stream into each line's final
//     state; Sanitize does both;
//   - invalid UTF-8 follows utf8.DecodeRune: each byte at which no valid
//     character starts becomes one U+FFFD, as a []rune conversion does; an
//     incomplete character at the end of the stream is one U+FFFD per byte.
type Sanitizer struct {
	held    [utf8.UTFMax]byte // incomplete trailing character
	nheld   int
	state   parser.State // escape parser state; ground means text
	seqLen  int          // bytes of the current escape sequence so far
	heldCR  bool         // a CR is waiting: kept if anything but LF comes next
	crs     int          // CRs written to the output so far
	scratch []byte       // output of Process when p cannot be returned as is

	// KeepSGR keeps the SGR sequences (colours and text attributes,
	// CSI ... m with numeric parameters) in the output, for a UI that shows
	// them; every other sequence is still removed, and removing the SGR
	// sequences from the output gives exactly the plain output. Set it
	// before the first call.
	KeepSGR bool
	sgr     [maxSGR]byte // parameters of the CSI sequence being parsed
	sgrLen  int
	sgrOK   bool // the sequence so far can be an SGR sequence
	sgrs    int  // SGR sequences written to the output so far
}

// maxSGR bounds the parameters of a kept SGR sequence; a longer one is
// dropped like any other sequence.
const maxSGR = 64

// Process returns the sanitized form of p. When p passes through unchanged
// (the common case) the result is p itself, or a subslice of it, without
// copying; otherwise it is an internal buffer. Either way it is valid only
// until the next call and must not be modified.
func (z *Sanitizer) Process(p []byte) []byte {
	out, aliased := z.run(z.scratch[:0], p, true)
	if !aliased {
		z.scratch = out[:0]
	}
	return out
}

// Append appends the sanitized form of p to dst and returns the result.
func (z *Sanitizer) Append(dst, p []byte) []byte {
	out, _ := z.run(dst, p, false)
	return out
}

// Flush appends what the end of the stream decides: a held CR is dropped
// (nothing overwrites the line), an incomplete character becomes U+FFFD
// per byte, and an unterminated escape sequence is dropped. The Sanitizer
// is then ready for a new stream.
func (z *Sanitizer) Flush(dst []byte) []byte {
	if z.nheld > 0 {
		dst = z.put(dst, bytes.Repeat(replacement, z.nheld))
	}
	z.heldCR, z.nheld, z.state, z.seqLen = false, 0, ground, 0
	return dst
}

// CRs is how many CRs the Sanitizer has written to its output: a consumer
// that compares it before and after a call knows whether that output may
// overwrite a line, without scanning it.
func (z *Sanitizer) CRs() int { return z.crs }

// SanitizeStyled is Sanitize with the SGR sequences kept (KeepSGR): the
// text a UI shows in colour. Removing its SGR sequences gives Sanitize(s).
func SanitizeStyled(s string) string {
	z := Sanitizer{KeepSGR: true}
	out := z.Append(make([]byte, 0, len(s)+8), []byte(s))
	out = z.Flush(out)
	if z.crs > 0 {
		out = appendFinalStyled(out[:0:0], out)
	}
	return string(out)
}

// Sanitize returns the plain text of a complete string: sanitized, with
// each line in its final state (FinalState), so it holds no control
// character but LF and TAB.
func Sanitize(s string) string {
	if cleanString(s) {
		return s
	}
	var z Sanitizer
	out := z.Append(make([]byte, 0, len(s)+8), []byte(s))
	out = z.Flush(out)
	if z.crs > 0 {
		out = AppendFinal(out[:0:0], out)
	}
	return string(out)
}

// FinalState returns text with each line in its final state, as a terminal
// shows it: a CR that is not part of a CRLF returns to the start of the
// line, and the text after it replaces the whole line (progress bars print
// each frame over the previous one, and the erase-line sequences they send
// are gone from sanitized text). A CR that nothing follows changes nothing.
// Text without CR is returned as is.
func FinalState(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return string(AppendFinal(make([]byte, 0, len(s)), []byte(s)))
}

// AppendFinal appends FinalState(b) to dst; the line that a CR in b
// overwrites starts after the last LF of dst (or at dst's start).
func AppendFinal(dst, b []byte) []byte { return appendFinal(dst, b, false) }

// appendFinalStyled is AppendFinal for text with SGR sequences
// (KeepSGR): a line that a CR overwrites leaves its SGR sequences, whose
// style still applies to the text after the CR, as a terminal's would.
func appendFinalStyled(dst, b []byte) []byte { return appendFinal(dst, b, true) }

func appendFinal(dst, b []byte, styled bool) []byte {
	for {
		i := bytes.IndexByte(b, '\r')
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i]...)
		for i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] != '\n' {
			ls := lineStart(dst)
			if styled {
				dst = append(dst[:ls], appendSGRs(nil, dst[ls:])...)
			} else {
				dst = dst[:ls]
			}
		}
		b = b[i:]
	}
}

// SGRState returns the SGR sequences of styled text (KeepSGR) that are in
// force at its end: those from the last reset on (at most a few hundred
// bytes of them). Put in front of text cut from later in the same stream,
// they give it its colour.
func SGRState(styled string) string {
	if strings.IndexByte(styled, 0x1b) < 0 {
		return ""
	}
	st := appendSGRs(nil, []byte(styled))
	// A reset in front undoes nothing here: the state starts plain.
	for _, r := range []string{"\x1b[m", "\x1b[0m"} {
		for bytes.HasPrefix(st, []byte(r)) {
			st = st[len(r):]
		}
	}
	return string(st)
}

// maxKeptSGR bounds the SGR sequences an overwritten line leaves: a
// progress bar of 100 000 coloured frames must not pile them up.
const maxKeptSGR = 256

// appendSGRs appends the SGR sequences of styled text b to dst: only those
// from the last reset on matter, and at most maxKeptSGR bytes of them.
func appendSGRs(dst, b []byte) []byte {
	start := len(dst)
	for {
		i := bytes.IndexByte(b, 0x1b)
		if i < 0 {
			break
		}
		b = b[i:]
		j := bytes.IndexByte(b, 'm')
		if j < 0 || len(b) < 2 || b[1] != '[' {
			b = b[1:]
			continue
		}
		seq := b[:j+1]
		if p := seq[2:j]; len(p) == 0 || string(p) == "0" || bytes.HasPrefix(p, []byte("0;")) {
			dst = dst[:start] // a reset: what came before no longer applies
		}
		dst = append(dst, seq...)
		b = b[j+1:]
	}
	if n := len(dst) - start; n > maxKeptSGR {
		k := start + n - maxKeptSGR
		k += bytes.IndexByte(dst[k:], 0x1b)
		dst = append(dst[:start], dst[k:]...)
	}
	return dst
}

// lineStart is the offset in b where its last line starts.
func lineStart(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 }

var replacement = []byte(string(utf8.RuneError))

// run sanitizes p onto out. With alias set, and out empty, it returns a
// subslice of p instead (aliased == true) when the whole output is one
// unchanged run of p.
func (z *Sanitizer) run(out, p []byte, alias bool) (_ []byte, aliased bool) {
	if len(p) == 0 {
		return out, false
	}
	i := 0
	if z.nheld > 0 {
		var done bool
		if out, i, done = z.resumeRune(out, p); done {
			return out, false
		}
	}
	start := i // start of the current run of bytes that pass unchanged
	for i < len(p) {
		if z.state != ground {
			out, i = z.sequence(out, p, i)
			start = i
			continue
		}
		j := i
		if isClean(p[i]) { // back-to-back sequences need no scan
			j += cleanPrefix(p[i:])
		}
		if j == len(p) {
			i = j
			break
		}
		c := p[j]
		if c >= utf8.RuneSelf {
			// Check the whole stretch up to the next ASCII control at once;
			// only text with invalid bytes or C1 controls goes rune by rune.
			e := j + textPrefix(p[j:])
			seg := p[j:e]
			if e == len(p) {
				seg = seg[:len(seg)-incompleteTail(seg)]
			}
			if utf8.Valid(seg) && !hasC1(seg) {
				i = j + len(seg)
			} else {
				out, start, i = z.slowText(out, p, start, j, e)
			}
			if i < e { // an incomplete character ends p
				z.nheld = copy(z.held[:], p[i:])
				return z.finish(out, p, start, i, alias)
			}
			continue
		}
		out = z.put(out, p[start:j])
		switch c {
		case '\r':
			out = z.carriageReturn(out)
		case 0x1b:
			z.state, z.seqLen = parser.EscapeState, 1
		} // other C0 controls and DEL are dropped
		i = j + 1
		start = i
	}
	return z.finish(out, p, start, i, alias)
}

// slowText handles p[j:e], a stretch without ASCII controls that holds
// invalid UTF-8 or C1 controls, one character at a time. It returns the
// start of the current unchanged run and where it stopped: e, or the start
// of an incomplete character at the end of p.
func (z *Sanitizer) slowText(out, p []byte, start, j, e int) ([]byte, int, int) {
	for k := j; k < e; {
		if p[k] < utf8.RuneSelf {
			k++
			continue
		}
		r, size := utf8.DecodeRune(p[k:e])
		switch {
		case size > 2 || size == 2 && r >= 0xA0:
			k += size // valid and not C1: part of the run
			continue
		case size == 1 && !utf8.FullRune(p[k:]):
			return out, start, k
		}
		out = z.put(out, p[start:k])
		if size == 1 {
			out = z.put(out, replacement)
		} // else a C1 control U+0080..U+009F, dropped
		k += size
		start = k
	}
	return out, start, e
}

// incompleteTail returns how many bytes at the end of b are the beginning
// of a character that the next chunk may complete.
func incompleteTail(b []byte) int {
	for k := 1; k <= min(len(b), utf8.UTFMax-1); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// hasC1 reports whether valid UTF-8 text b holds a C1 control, encoded as
// C2 80..C2 9F.
func hasC1(b []byte) bool {
	for {
		k := bytes.IndexByte(b, 0xC2)
		if k < 0 || k+1 >= len(b) {
			return false
		}
		if b[k+1] < 0xA0 {
			return true
		}
		b = b[k+2:]
	}
}

// put appends b, first settling a held CR: it vanishes before an LF and is
// kept before anything else.
func (z *Sanitizer) put(out, b []byte) []byte {
	if len(b) == 0 {
		return out
	}
	if z.heldCR {
		z.heldCR = false
		if b[0] != '\n' {
			out = append(out, '\r')
			z.crs++
		}
	}
	return append(out, b...)
}

// carriageReturn holds a CR until the next surviving byte shows whether it
// is half of a CRLF pair; a CR while one is held adds nothing (the cursor
// is at the line's start already).
func (z *Sanitizer) carriageReturn(out []byte) []byte {
	z.heldCR = true
	return out
}

// finish appends the final run p[start:end], or returns it as is when
// aliasing is allowed and nothing else is part of the output.
func (z *Sanitizer) finish(out, p []byte, start, end int, alias bool) ([]byte, bool) {
	if end == start {
		return out, false
	}
	if alias && len(out) == 0 && (!z.heldCR || p[start] == '\n') {
		z.heldCR = false
		return p[start:end:end], true
	}
	return z.put(out, p[start:end]), false
}

// resumeRune completes the character held from the previous chunk with the
// first bytes of p. It returns how many bytes of p it consumed and whether p
// was used up (the character is still incomplete).
func (z *Sanitizer) resumeRune(out, p []byte) ([]byte, int, bool) {
	var tmp [2 * utf8.UTFMax]byte
	n := copy(tmp[:], z.held[:z.nheld])
	// UTFMax-1 more bytes give every start inside the held bytes a full
	// UTFMax window, so FullRune fails only when p is exhausted.
	k := copy(tmp[n:], p[:min(len(p), utf8.UTFMax-1)])
	buf := tmp[:n+k]
	z.nheld = 0
	off := 0
	for off < n {
		if !utf8.FullRune(buf[off:]) {
			z.nheld = copy(z.held[:], buf[off:])
			return out, len(p), true
		}
		r, size := utf8.DecodeRune(buf[off:])
		switch {
		case size == 1:
			out = z.put(out, replacement)
		case size == 2 && r < 0xA0: // C1 control
		default:
			out = z.put(out, buf[off:off+size])
		}
		off += size
	}
	return out, off - n, false
}

// keepSGR follows one transition of the escape parser for KeepSGR: it
// collects the parameters of a CSI sequence and writes the sequence when it
// ends as SGR. The sequence is written as is, without settling a held CR,
// so the text around it is exactly the plain output's.
func (z *Sanitizer) keepSGR(out []byte, st, next parser.State, action parser.Action, c byte) []byte {
	switch {
	case st == parser.EscapeState && next == parser.CsiEntryState:
		z.sgrLen, z.sgrOK = 0, true
	case st < parser.CsiEntryState || st > parser.CsiParamState, action == parser.ExecuteAction:
	case action == parser.ParamAction:
		if z.sgrLen == maxSGR {
			z.sgrOK = false
			break
		}
		z.sgr[z.sgrLen] = c
		z.sgrLen++
	case action == parser.DispatchAction && c == 'm' && z.sgrOK:
		out = append(out, "\x1b["...)
		out = append(out, z.sgr[:z.sgrLen]...)
		out = append(out, 'm')
		z.sgrs++
		z.sgrOK = false
	default: // a private marker, an intermediate byte, another final byte
		z.sgrOK = false
	}
	return out
}

// SGRs is how many SGR sequences a KeepSGR Sanitizer has written.
func (z *Sanitizer) SGRs() int { return z.sgrs }

// sequence feeds p[i:] to the escape parser until the sequence ends,
// returning the index of the first byte after it. Sequences are dropped;
// only LF, TAB and CR that the parser executes inside them (as a terminal
// would) are kept.
func (z *Sanitizer) sequence(out, p []byte, i int) ([]byte, int) {
	st, n := z.state, z.seqLen
	keep := z.KeepSGR // a local: the plain loop must not reload it per byte
	for i < len(p) {
		c := p[i]
		v := seqTable[int(st&stateMask)<<parser.IndexStateShift|int(c)]
		next, action := v&parser.TransitionStateMask, v>>parser.TransitionActionShift
		if next == parser.Utf8State {
			// A non-ASCII byte aborts the sequence; it is text, so reprocess it.
			st, n = ground, 0
			break
		}
		if keep {
			out = z.keepSGR(out, st, next, action, c)
		}
		switch action {
		case parser.ExecuteAction:
			switch c {
			case '\n', '\t':
				out = z.put(out, p[i:i+1])
			case '\r':
				out = z.carriageReturn(out)
			}
		case parser.DispatchAction:
			n = 0 // a terminator may start the next sequence (OSC ... ESC \)
		}
		st = next
		n++
		i++
		if st == ground {
			n = 0
			break
		}
		if n >= MaxSequenceBytes {
			st, n = ground, 0
			break
		}
	}
	z.state, z.seqLen = st, n
	return out, i
}
