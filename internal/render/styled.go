package render

import (
	"strings"

	"agentsh/internal/sink"
)

// sgrReset ends every style a line of command output opened, so colours
// never reach the next line, the frame or the next block.
const sgrReset = "\x1b[m"

// overlayStyled lays the colours of styled over text. styled is the
// coloured form of a command's output (sink.Summary.Styled: without its
// SGR sequences it is the output) and text what a block shows of it: the
// output, after its first line (an annotation the block shows elsewhere)
// or not, followed by more text or cut short at its end. ok is false when
// text is not such a piece of the output (a head/tail window): the block
// is then drawn plain.
func overlayStyled(text, styled string) (string, bool) {
	s := sink.SanitizeStyled(styled) // it may come from a session file
	plain := stripSGR(s)
	offs := []int{0}
	if i := strings.IndexByte(plain, '\n'); i >= 0 {
		offs = append(offs, i+1)
	}
	for _, off := range offs {
		q := plain[off:]
		switch {
		case q == "":
		case strings.HasPrefix(text, q):
			return styledRange(s, off, len(plain)) + text[len(q):], true
		case strings.HasPrefix(q, text) && text != "":
			return styledRange(s, off, off+len(text)), true
		}
	}
	return "", false
}

// overlayCache keeps the last overlayStyled: it does not depend on the
// width, and a resize redraws every block.
type overlayCache struct {
	text, styled, out string
	ok, valid         bool
}

func (c *overlayCache) get(text, styled string) (string, bool) {
	if !c.valid || c.text != text || c.styled != styled {
		out, ok := overlayStyled(text, styled)
		*c = overlayCache{text: text, styled: styled, out: out, ok: ok, valid: true}
	}
	return c.out, c.ok
}

// styledRange returns the part of styled text s that holds bytes
// [from, to) of its plain text, with the style in force at from in front
// and the sequences right after to.
func styledRange(s string, from, to int) string {
	start, end := styledOffset(s, from), styledOffset(s, to)
	for end < len(s) && s[end] == 0x1b { // sequences at the cut: keep them (a reset)
		end += strings.IndexByte(s[end:], 'm') + 1
	}
	return sink.SGRState(s[:start]) + s[start:end]
}

// styledOffset is the index in styled text s of its plain byte n: past n
// bytes of text, before any sequence that follows them.
func styledOffset(s string, n int) int {
	i := 0
	for n > 0 && i < len(s) {
		if s[i] == 0x1b {
			i += strings.IndexByte(s[i:], 'm') + 1
			continue
		}
		i++
		n--
	}
	return i
}

// stripSGR removes the SGR sequences of styled text.
func stripSGR(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return b.String()
		}
		s = s[i+j+1:]
	}
}

// selfContained makes each of a run of styled lines (or rows) carry its
// own style: the style in force where it starts in front, and a reset at
// its end when a style is still open. Lines without any style around them
// stay as they are.
// The slice is copied before its first change.
func selfContained(lines []string) []string {
	state := ""
	var out []string
	for i, l := range lines {
		if state == "" && strings.IndexByte(l, 0x1b) < 0 {
			continue
		}
		if out == nil {
			out = append([]string(nil), lines...)
		}
		full := state + l
		if state = sink.SGRState(full); state != "" {
			full += sgrReset
		}
		out[i] = full
	}
	if out == nil {
		return lines
	}
	return out
}

// plainLines removes the SGR sequences of styled lines (NO_COLOR).
func plainLines(lines []string) []string {
	var out []string
	for i, l := range lines {
		if strings.IndexByte(l, 0x1b) < 0 {
			continue
		}
		if out == nil {
			out = append([]string(nil), lines...)
		}
		out[i] = stripSGR(l)
	}
	if out == nil {
		return lines
	}
	return out
}

// capStyledLine is capLine for a line that may hold SGR sequences: a line
// over the cap loses its colours rather than have a sequence cut.
func capStyledLine(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return capLine(s)
	}
	if p := stripSGR(s); capLine(p) != p {
		return capLine(p)
	}
	return s
}

// hasStyle reports whether a row carries SGR sequences.
func hasStyle(s string) bool { return strings.IndexByte(s, 0x1b) >= 0 }
