package pty

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// scrRedrawFrame is what a full-screen program that does not scroll sends
// for one frame at cols×rows: home, then every row filled, with SGR changes.
func scrRedrawFrame(cols, rows, n int) []byte {
	var b bytes.Buffer
	b.WriteString("\x1b[H")
	for y := range rows {
		if y > 0 {
			b.WriteString("\r\n")
		}
		for x := 0; x < cols; x += 20 {
			fmt.Fprintf(&b, "\x1b[%d;3%dm", 1+(x/20)%2, (x/20+y+n)%8)
			for i := range 20 {
				b.WriteByte('a' + byte((x+y+i+n)%26))
			}
		}
		b.WriteString("\x1b[0m")
	}
	return b.Bytes()
}

func BenchmarkScreenRedraw(b *testing.B) {
	s := NewScreen(200, 50, nil)
	defer s.Close()
	frames := [][]byte{scrRedrawFrame(200, 50, 0), scrRedrawFrame(200, 50, 1)}
	b.SetBytes(int64(len(frames[0])))
	i := 0
	for b.Loop() {
		s.Feed(frames[i%2])
		i++
	}
	if s.SkippedBytes() != 0 {
		b.Fatal("a redraw was skipped")
	}
}

// BenchmarkScreenScrollFlood feeds `seq`-like lines at 200×50 in 64 KiB
// batches cut anywhere, as the PTY reader hands them over, with skip-ahead
// on and off.
func BenchmarkScreenScrollFlood(b *testing.B) {
	const batch = 64 << 10
	data := scrSeq(1, 1_500_000) // about 10 MB
	for _, c := range []struct {
		name    string
		skipMin int
	}{{"skip", skipMinBytes}, {"noskip", math.MaxInt}} {
		b.Run(c.name, func(b *testing.B) {
			s := NewScreen(200, 50, nil)
			defer s.Close()
			s.skipMin = c.skipMin
			b.SetBytes(batch)
			off := 0
			for b.Loop() {
				if off+batch > len(data) {
					off = 0
				}
				s.Feed(data[off : off+batch])
				off += batch
			}
			b.ReportMetric(float64(s.SkippedBytes())/float64(b.N*batch)*100, "pct_skipped")
		})
	}
}

// BenchmarkScreenSkipScan measures planSkip alone, which must stay far
// faster than the emulator it saves work for.
func BenchmarkScreenSkipScan(b *testing.B) {
	data := scrSeq(1, 150_000)
	st := skipState{rows: 50, bot: 50, y0: 49, grid: true}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if planSkip(data, st).k == 0 {
			b.Fatal("no skip point")
		}
	}
}
