package sink

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// splitByCuts cuts data into pieces whose lengths come from cuts (a zero
// is an empty write); whatever is left is the last piece.
func splitByCuts(data, cuts []byte) [][]byte {
	var pieces [][]byte
	for _, c := range cuts {
		n := min(int(c), len(data))
		pieces = append(pieces, data[:n])
		data = data[n:]
	}
	return append(pieces, data)
}

// checkClean asserts the invariants of plain text: valid UTF-8 without
// controls but LF and TAB.
func checkClean(t *testing.T, out string) {
	t.Helper()
	checkStream(t, out)
	if i := strings.IndexByte(out, '\r'); i >= 0 {
		t.Fatalf("CR at %d in %q", i, out)
	}
}

// checkStream asserts the output invariants of the sanitizer: checkClean,
// but with CRs, each followed by a character other than CR and LF.
func checkStream(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 in %q", out)
	}
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c == '\r' && (i+1 == len(out) || out[i+1] == '\r' || out[i+1] == '\n') {
			t.Fatalf("CR at %d not followed by text in %q", i, out)
		}
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
			t.Fatalf("control byte %#x at %d in %q", c, i, out)
		}
	}
	for _, r := range out {
		if r >= 0x80 && r < 0xa0 {
			t.Fatalf("C1 control %U in %q", r, out)
		}
	}
}

func FuzzSanitizerSplit(f *testing.F) {
	for _, tc := range sanitizeCases {
		f.Add([]byte(tc.in), []byte{1, 2, 3})
	}
	f.Add([]byte("\x1b[1;3\n2m✓\x1b[0m ok\r\x1b[38:2::9:9:9mover\x1b[m\r\n"), []byte{2, 3, 1, 7})
	f.Add([]byte("a\r\x1b[0m\n\x1b[?25l\x1b[31\x18x"), []byte{2, 1, 1})
	f.Add([]byte("\x1b]0;✳ t\x07a\r\nb\xe2\x82\xac\xf0\x9f\x98\x80"), []byte{4, 0, 1, 1, 1, 9})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var z Sanitizer
		want := string(z.Flush(z.Append(nil, data)))
		checkStream(t, want)

		var zp, za Sanitizer
		var viaProcess, viaAppend []byte
		for _, p := range splitByCuts(data, cuts) {
			viaProcess = append(viaProcess, zp.Process(p)...)
			viaAppend = za.Append(viaAppend, p)
		}
		viaProcess, viaAppend = zp.Flush(viaProcess), za.Flush(viaAppend)
		if string(viaProcess) != want {
			t.Fatalf("split %v: Process gave %q, one-shot %q", cuts, viaProcess, want)
		}
		if string(viaAppend) != want {
			t.Fatalf("split %v: Append gave %q, one-shot %q", cuts, viaAppend, want)
		}
		final := Sanitize(string(data))
		checkClean(t, final)
		if final != FinalState(want) || final != finalOracle(want) {
			t.Fatalf("Sanitize %q, the final state of the stream %q", final, FinalState(want))
		}
		if Sanitize(final) != final {
			t.Fatalf("output is not a fixed point: %q -> %q", final, Sanitize(final))
		}
		if feed([]byte(want)) != want {
			t.Fatalf("the stream is not a fixed point: %q -> %q", want, feed([]byte(want)))
		}
		// KeepSGR: the same stream with SGR sequences, whatever the cuts.
		styled := feedStyled(data)
		var zs Sanitizer
		zs.KeepSGR = true
		var viaStyled []byte
		for _, p := range splitByCuts(data, cuts) {
			viaStyled = append(viaStyled, zs.Process(p)...)
		}
		if string(zs.Flush(viaStyled)) != styled || stripSGR(styled) != want {
			t.Fatalf("styled %q (split %q), plain %q", styled, zs.Flush(viaStyled), want)
		}
		if s := SanitizeStyled(string(data)); stripSGR(s) != final {
			t.Fatalf("SanitizeStyled %q, plain %q", s, final)
		}
		if bytes.IndexByte(data, 0x1b) < 0 {
			if o := textOracle(string(data)); o != want {
				t.Fatalf("text oracle %q, got %q", o, want)
			}
		}
		if isASCII(string(data)) && len(data) < MaxSequenceBytes {
			if o := stripOracle(string(data)); o != want {
				t.Fatalf("ansi.Strip oracle %q, got %q", o, want)
			}
		}
	})
}

func FuzzTailBuffer(f *testing.F) {
	f.Add([]byte("hello world"), []byte{3, 3}, uint16(5))
	f.Add([]byte("€€€€😀😀ab\n"), []byte{1, 1, 1, 1, 1}, uint16(7))
	f.Add([]byte("a\xff\xfeb"), []byte{}, uint16(2))
	f.Add([]byte("one\ntwo\r50%\r100%\nthree"), []byte{9, 1, 4}, uint16(6))
	f.Add([]byte("before\n"+strings.Repeat("x", 40)+"\rover"), []byte{3, 30, 10}, uint16(10))
	f.Add([]byte("a\r"), []byte{2}, uint16(3))
	f.Fuzz(func(t *testing.T, data, cuts []byte, max16 uint16) {
		max := int(max16%4096) + 1
		tb := NewTailBuffer(max)
		valid := utf8.Valid(data)
		written := 0
		for _, p := range splitByCuts(data, cuts) {
			_, _ = tb.Write(p)
			written += len(p)
			s := tb.String()
			if !utf8.ValidString(s) || len(s) > max || tb.Len() != len(s) {
				t.Fatalf("max %d: String() = %q (len %d), Len() = %d", max, s, len(s), tb.Len())
			}
			if strings.IndexByte(s, '\r') >= 0 {
				t.Fatalf("max %d: CR in String() = %q", max, s)
			}
			if valid {
				// The snapshot ends at the last complete character written.
				w := string(data[:written])
				for !utf8.ValidString(w) {
					w = w[:len(w)-1]
				}
				if want := refTail(finalOracle(w), max); s != want {
					t.Fatalf("max %d: String() = %q, want %q", max, s, want)
				}
			}
		}
	})
}

// FuzzOutputSink checks the sink against its specification: the kept tail
// is the end of the final state of the sanitized stream, the totals and
// OnChunk are the stream's, and a spilled artifact is the stream, for any
// write pattern.
func FuzzOutputSink(f *testing.F) {
	f.Add([]byte("line one\r\nline two €\n\x1b[31mred"), []byte{5, 5}, uint16(8))
	f.Add([]byte("get\n 10%\r 50%\r\x1b[K100%\r\ndone\n"), []byte{4, 3, 3, 1}, uint16(12))
	f.Add([]byte("head\n"+strings.Repeat("long", 20)+"\rshort\nnext"), []byte{2, 50, 1}, uint16(10))
	f.Add([]byte("a\rb\r\rc\r"), []byte{1, 1, 1, 1, 1}, uint16(1))
	f.Fuzz(func(t *testing.T, data, cuts []byte, max16 uint16) {
		max := int(max16%512) + 1
		var seen []byte
		art := filepath.Join(t.TempDir(), "1.bash.log")
		s := New(Options{MaxBytes: max, ArtifactPath: art, ArtifactID: "1", OnChunk: func(b []byte) {
			if len(b) == 0 {
				t.Fatal("empty OnChunk")
			}
			seen = append(seen, b...)
		}})
		for _, p := range splitByCuts(data, cuts) {
			_, _ = s.Write(p)
		}
		got := s.Dump("")
		stream := feed(data)
		final := finalOracle(stream)
		tail := refTail(final, max)
		want := Summary{
			Output: tail, Truncated: len(stream) > max,
			TotalLines: refLines(final), TotalBytes: len(stream),
			OutputLines: refLines(tail), OutputBytes: len(tail),
		}
		if want.Truncated {
			want.ArtifactID = "1"
		}
		if got != want || string(seen) != stream {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
		if b, err := os.ReadFile(art); want.Truncated && (err != nil || string(b) != stream) {
			t.Fatalf("artifact %q, %v; the stream %q", b, err, stream)
		}
	})
}

// FuzzOutputSinkStyled checks the coloured copy: without its SGR sequences
// it is the output, and it is there whenever the stream had colour and the
// coloured tail holds the plain one; OnStyledChunk is the coloured stream.
func FuzzOutputSinkStyled(f *testing.F) {
	f.Add([]byte("\x1b[31mred\x1b[0m\nplain \x1b[1mbold"), []byte{3, 9}, uint16(6))
	f.Add([]byte("\x1b[32m 10%\r 50%\r\x1b[1m100%\x1b[0m\ndone\n"), []byte{4, 4, 4}, uint16(5))
	f.Add([]byte("x\n\x1b[1;31m"+strings.Repeat("y", 60)+"\x1b[0m\rz"), []byte{10, 40}, uint16(8))
	f.Fuzz(func(t *testing.T, data, cuts []byte, max16 uint16) {
		max := int(max16%512) + 1
		var seen []byte
		s := New(Options{MaxBytes: max, OnStyledChunk: func(b []byte) { seen = append(seen, b...) }})
		for _, p := range splitByCuts(data, cuts) {
			_, _ = s.Write(p)
		}
		got := s.Dump("")
		if string(seen) != feedStyled(data) {
			t.Fatalf("OnStyledChunk %q, want %q", seen, feedStyled(data))
		}
		if got.Styled != "" && stripSGR(got.Styled) != got.Output {
			t.Fatalf("styled %q, output %q", got.Styled, got.Output)
		}
		styled := feedStyled(data)
		if got.Styled == "" && styled != stripSGR(styled) && len(styled) <= styledMaxFactor*max/2 {
			t.Fatalf("no styled copy of %q (output %q)", styled, got.Output)
		}
	})
}
