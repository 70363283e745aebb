package sink

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var sgrRE = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// stripSGR removes the SGR sequences a KeepSGR Sanitizer writes.
func stripSGR(s string) string { return sgrRE.ReplaceAllString(s, "") }

// feedStyled sanitizes the pieces as one stream with KeepSGR.
func feedStyled(pieces ...[]byte) string {
	z := Sanitizer{KeepSGR: true}
	var out []byte
	for _, p := range pieces {
		out = append(out, z.Process(p)...)
	}
	return string(z.Flush(out))
}

func TestKeepSGR(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\x1b[31mred\x1b[0m plain\n", "\x1b[31mred\x1b[0m plain\n"},
		{"\x1b[1;32m✓\x1b[m ok", "\x1b[1;32m✓\x1b[m ok"},
		{"\x1b[38:2::255:0:0mx\x1b[m", "\x1b[38:2::255:0:0mx\x1b[m"},
		{"\x1b[38;5;208mo\x1b[39m", "\x1b[38;5;208mo\x1b[39m"},
		// Never cursor movement, erasing, modes, titles or links.
		{"\x1b[2J\x1b[H\x1b[3Ax\x1b[K", "x"},
		{"\x1b[?25lhidden\x1b[?25h", "hidden"},
		{"\x1b[>4;2mx", "x"},
		{"\x1b[1 qx", "x"},
		{"\x1b]0;title\x07\x1b]8;;http://x\x07link\x1b]8;;\x07", "link"},
		{"\x1b[31\x18x", "x"},
		{"\x1b[3\x9bmx", "\uFFFDmx"},
		{"\x1b[" + strings.Repeat("1;", 40) + "mx", "x"},
		// LF inside a sequence is executed; the sequence goes on.
		{"\x1b[3\n1mX", "\n\x1b[31mX"},
		// A CR held before a sequence is settled by the text, as in the
		// plain stream.
		{"abc\r\x1b[0m\n", "abc\x1b[0m\n"},
		{"abc\r\x1b[32mX", "abc\x1b[32m\rX"},
	} {
		got := feedStyled([]byte(c.in))
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		if plain := feed([]byte(c.in)); stripSGR(got) != plain {
			t.Errorf("%q: without SGR %q, plain %q", c.in, stripSGR(got), plain)
		}
	}
	// Overwritten lines keep their colours for the text after the CR.
	if got := SanitizeStyled("\x1b[32m 10%\r 50%\r\x1b[1m100%\x1b[0m\n"); got != "\x1b[32m\x1b[1m100%\x1b[0m\n" {
		t.Errorf("final state: %q", got)
	}
	var b strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&b, "\r\x1b[3%dm%d%%", i%8, i)
	}
	if got := SanitizeStyled(b.String()); len(got) > maxKeptSGR+20 || stripSGR(got) != "9999%" {
		t.Errorf("colour runs pile up: %d bytes %.80q", len(got), got)
	}
}

// TestSinkStyled: the coloured copy is the plain output with the SGR
// sequences kept, also when the tail begins in the middle of a coloured
// stretch and when lines are overwritten; OnStyledChunk gets the coloured
// stream, OnChunk still the plain one.
func TestSinkStyled(t *testing.T) {
	raw, clean := spillInput()
	for _, maxChunk := range []int{1, 13, 4096, len(raw)} {
		var plain, styled bytes.Buffer
		s := New(Options{OnChunk: func(b []byte) { plain.Write(b) }, OnStyledChunk: func(b []byte) { styled.Write(b) }})
		writeChunks(t, s, raw, maxChunk, 3)
		got := s.Dump("Command cancelled")
		if plain.String() != clean || stripSGR(styled.String()) != clean || !strings.Contains(styled.String(), "\x1b[33mline 00003\x1b[0m") {
			t.Fatalf("chunks of %d: the streams differ", maxChunk)
		}
		if got.Styled == "" || stripSGR(got.Styled) != got.Output || !strings.HasPrefix(got.Styled, "[Command cancelled]\n") ||
			!strings.HasSuffix(got.Styled, "\x1b[37mline 09999\x1b[0m ✓ ünïcödé 日本\n") {
			t.Fatalf("chunks of %d: styled %.120q…", maxChunk, got.Styled)
		}
	}
	// The style in force where the tail starts comes first.
	s := New(Options{MaxBytes: 10, Styled: true})
	_, _ = s.Write([]byte("\x1b[1;31m" + strings.Repeat("x", 100) + "\x1b[0m"))
	if got := s.Dump(""); got.Styled != "\x1b[1;31m"+strings.Repeat("x", 10)+"\x1b[0m" {
		t.Errorf("state at the start: %q", got.Styled)
	}
	// No colour, no copy; no request, no copy.
	s = New(Options{Styled: true})
	_, _ = s.Write([]byte("plain\n"))
	if got := s.Dump(""); got.Styled != "" {
		t.Errorf("styled copy of plain output: %q", got.Styled)
	}
	s = New(Options{})
	_, _ = s.Write([]byte("\x1b[31mred\x1b[0m\n"))
	if got := s.Dump(""); got.Styled != "" || got.Output != "red\n" {
		t.Errorf("unrequested copy: %+v", got)
	}
}

// TestSinkStylesFile: a coloured output that spills leaves the artifact
// plain and its SGR sequences in the styles file beside it, at the
// artifact's offsets; plain, small or capped output leaves none.
func TestSinkStylesFile(t *testing.T) {
	raw, clean := spillInput()
	dir := t.TempDir()
	path := filepath.Join(dir, "4.bash.log")
	s := New(Options{ArtifactPath: path, ArtifactID: "4", Styled: true})
	writeChunks(t, s, raw, 777, 9)
	if sum := s.Dump(""); sum.ArtifactID != "4" {
		t.Fatalf("%+v", short(sum))
	}
	if b, _ := os.ReadFile(path); string(b) != clean {
		t.Fatal("the artifact is not the plain output")
	}
	st, err := ReadStyles(path)
	if err != nil || st == nil {
		t.Fatalf("styles: %v, %v", st, err)
	}
	lines := strings.SplitAfter(clean, "\n")
	off := int64(0)
	for k, l := range lines[:len(lines)-1] {
		state, in := st.Range(off, off+int64(len(l)))
		want := []Mark{{off, fmt.Sprintf("\x1b[3%dm", k%8)}, {off + 10, "\x1b[0m"}}
		if state != "" || len(in) != 2 || in[0] != want[0] || in[1] != want[1] {
			t.Fatalf("line %d: state %q, marks %+v", k, state, in)
		}
		off += int64(len(l))
	}
	// In the middle of a coloured stretch, the state says which colour.
	if state, in := st.Range(3, 8); state != "\x1b[30m" || len(in) != 0 {
		t.Fatalf("inside line 0: %q %+v", state, in)
	}

	for name, o := range map[string]Options{
		"plain":  {Styled: true},
		"small":  {Styled: true},
		"capped": {Styled: true, ArtifactMaxBytes: MinArtifactMaxBytes},
		"no ui":  {},
	} {
		p := filepath.Join(dir, name+".log")
		o.ArtifactPath, o.ArtifactID = p, "1"
		s := New(o)
		switch name {
		case "plain":
			_, _ = s.Write(bytes.Repeat([]byte("plain text\n"), 10000))
		case "small":
			_, _ = s.Write([]byte("\x1b[31mred\x1b[0m\n"))
		default:
			_, _ = s.Write(raw)
		}
		s.Dump("")
		if _, err := os.Stat(p + StylesSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a styles file: %v", name, err)
		}
	}
}
