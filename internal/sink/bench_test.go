package sink

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

const benchChunk = 1 << 20

// repeatTo fills a benchChunk buffer with copies of unit.
func repeatTo(unit string) []byte {
	b := bytes.Repeat([]byte(unit), benchChunk/len(unit)+1)
	return b[:benchChunk]
}

func benchProcess(b *testing.B, chunk []byte) {
	var z Sanitizer
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		_ = z.Process(chunk)
	}
}

func BenchmarkSanitizeASCII(b *testing.B) {
	benchProcess(b, repeatTo("0123456789abcdef\n"))
}

func BenchmarkSanitizeANSI(b *testing.B) {
	var s bytes.Buffer
	for i := range 64 {
		fmt.Fprintf(&s, "\x1b[1m\x1b[32m✓\x1b[0m test_%02d passed \x1b[2m(%dms)\x1b[0m\r\n", i, i*7)
	}
	benchProcess(b, repeatTo(s.String()))
}

func BenchmarkSanitizeUTF8(b *testing.B) {
	benchProcess(b, repeatTo("日本語のテキスト, ünïcödé ✓ 😀 text\n"))
}

// benchSink pushes 1 MiB chunks through an OutputSink, starting a new sink
// (and artifact) every 512 MiB so the benchmark does not fill the disk.
func benchSink(b *testing.B, spill bool) {
	chunk := repeatTo("0123456789abcdef\n")
	dir := b.TempDir()
	newSink := func() *OutputSink {
		o := Options{}
		if spill {
			o.ArtifactPath, o.ArtifactID = filepath.Join(dir, "1.bash.log"), "1"
		}
		return New(o)
	}
	s := newSink()
	b.SetBytes(benchChunk)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		_, _ = s.Write(chunk)
		if n++; n%512 == 0 {
			s.Dump("")
			s = newSink()
		}
	}
	if sum := s.Dump(""); spill && sum.ArtifactID == "" && sum.Truncated {
		b.Fatal("artifact lost")
	}
	_ = os.Remove(filepath.Join(dir, "1.bash.log"))
}

func BenchmarkSinkSpill(b *testing.B)   { benchSink(b, true) }
func BenchmarkSinkNoSpill(b *testing.B) { benchSink(b, false) }

func BenchmarkTailBufferWrite(b *testing.B) {
	tb := NewTailBuffer(0)
	chunk := repeatTo("0123456789abcdef\n")[:4096]
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = tb.Write(chunk)
	}
}

// benchSinkStyled is benchSink without spill for a UI that asks for
// colours: the second, SGR-keeping sanitizer and the coloured tail.
func benchSinkStyled(b *testing.B, chunk []byte) {
	s := New(Options{Styled: true})
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		_, _ = s.Write(chunk)
		if n++; n%512 == 0 {
			s.Dump("")
			s = New(Options{Styled: true})
		}
	}
	s.Dump("")
}

func BenchmarkSinkStyledASCII(b *testing.B) { benchSinkStyled(b, repeatTo("0123456789abcdef\n")) }

func BenchmarkSinkStyledANSI(b *testing.B) {
	var s bytes.Buffer
	for i := range 64 {
		fmt.Fprintf(&s, "\x1b[1m\x1b[32m✓\x1b[0m test_%02d passed \x1b[2m(%dms)\x1b[0m\r\n", i, i*7)
	}
	benchSinkStyled(b, repeatTo(s.String()))
}

// BenchmarkSinkNoSpillANSI is the plain path on coloured output.
func BenchmarkSinkNoSpillANSI(b *testing.B) {
	var buf bytes.Buffer
	for i := range 64 {
		fmt.Fprintf(&buf, "\x1b[1m\x1b[32m✓\x1b[0m test_%02d passed \x1b[2m(%dms)\x1b[0m\r\n", i, i*7)
	}
	chunk := repeatTo(buf.String())
	s := New(Options{})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = s.Write(chunk)
	}
	s.Dump("")
}

// BenchmarkSinkProgress is a progress bar: a CR and a frame at a time.
func BenchmarkSinkProgress(b *testing.B) {
	chunk := repeatTo("\r 42% [#########           ] 1.2 MB/s")
	s := New(Options{})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = s.Write(chunk)
	}
	s.Dump("")
}
