package sink

import (
	"bytes"
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

// checkClean asserts the output invariants of the sanitizer.
func checkClean(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 in %q", out)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
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
	f.Add([]byte("\x1b]0;✳ t\x07a\r\nb\xe2\x82\xac\xf0\x9f\x98\x80"), []byte{4, 0, 1, 1, 1, 9})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var z Sanitizer
		want := string(z.Flush(z.Append(nil, data)))
		checkClean(t, want)

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
		if Sanitize(string(data)) != want {
			t.Fatal("Sanitize differs from Append")
		}
		if Sanitize(want) != want {
			t.Fatalf("output is not a fixed point: %q -> %q", want, Sanitize(want))
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
			if valid {
				// The snapshot ends at the last complete character written.
				w := string(data[:written])
				for !utf8.ValidString(w) {
					w = w[:len(w)-1]
				}
				if s != refTail(w, max) {
					t.Fatalf("max %d: String() = %q, want %q", max, s, refTail(w, max))
				}
			}
		}
	})
}

// FuzzOutputSink checks the sink against its specification: the kept tail
// and the totals of the one-shot sanitized stream, for any write pattern.
func FuzzOutputSink(f *testing.F) {
	f.Add([]byte("line one\r\nline two €\n\x1b[31mred"), []byte{5, 5}, uint16(8))
	f.Fuzz(func(t *testing.T, data, cuts []byte, max16 uint16) {
		max := int(max16%512) + 1
		var seen []byte
		s := New(Options{MaxBytes: max, OnChunk: func(b []byte) {
			if len(b) == 0 {
				t.Fatal("empty OnChunk")
			}
			seen = append(seen, b...)
		}})
		for _, p := range splitByCuts(data, cuts) {
			_, _ = s.Write(p)
		}
		got := s.Dump("")
		clean := Sanitize(string(data))
		tail := refTail(clean, max)
		want := Summary{
			Output: tail, Truncated: len(clean) > max,
			TotalLines: refLines(clean), TotalBytes: len(clean),
			OutputLines: refLines(tail), OutputBytes: len(tail),
		}
		if got != want || string(seen) != clean {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	})
}
