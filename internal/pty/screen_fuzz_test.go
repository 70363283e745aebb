package pty

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// scrFuzzLayouts turns fuzz bytes into rounds of Feed batches. data is cut
// into pieces at up to seven points taken from cuts. Each of the eight
// rounds feeds every piece wrapped in generated CRLF lines of uneven length
// and kind, a number before and after it set by a nibble of shape, so that
// the fuzzed bytes land before, at and after skip points. A round may end
// with a resize (cuts' top byte).
//
// Rounds continue on the same two emulators: creating one costs
// milliseconds (x/vt allocates a 4 MB buffer), and an emulator that is equal
// to the reference after a round must stay so, whatever state it is in.
func scrFuzzLayouts(data []byte, cuts uint64, shape uint32) (rounds [][][]byte, sizes [][2]int) {
	var pieces [][]byte
	prev := 0
	for i := range 7 {
		if c := int(cuts >> (8 * i) & 0xff); c != 0 {
			pt := max(prev, c*len(data)/256)
			pieces = append(pieces, data[prev:pt])
			prev = pt
		}
	}
	pieces = append(pieces, data[prev:])
	line := func(b *bytes.Buffer, k, j int) {
		switch k % 6 {
		case 0:
			fmt.Fprintf(b, "%s%d\r\n", strings.Repeat("-", k%19), j)
		case 1:
			fmt.Fprintf(b, "\x1b[3%dmc%d\x1b[0m\tx\r\n", k%8, j)
		case 2:
			b.WriteString("\r\n")
		case 3:
			fmt.Fprintf(b, "日本%d\x1b[K\r\n", j)
		case 4:
			fmt.Fprintf(b, "%s\r%d\x1b[2C*\r\n", strings.Repeat("#", k%25), j)
		case 5:
			fmt.Fprintf(b, "e\u0301%d\x1b]8;;u%d\x07l\x1b]8;;\x07\r\n", j, k)
		}
	}
	// Big inputs (the 100 KB OSC seed and its mutants) get fewer rounds, or
	// the fuzzer spends its time minimising them.
	for r := range min(8, max(1, (16<<10)/(len(data)+1))) {
		nib := int(shape >> (4 * r) & 0xf)
		before := [4]int{0, 3, 9, 14}[nib&3] + r%3
		after := [4]int{0, 1, 4, 8}[nib>>2]
		var batches [][]byte
		for i, piece := range pieces {
			var b bytes.Buffer
			for j := range before {
				line(&b, r*7+i*13+j*5+int(cuts>>56), j)
			}
			b.Write(piece)
			for j := range after {
				line(&b, r*11+i*3+j*7+nib, before+j)
			}
			batches = append(batches, b.Bytes())
		}
		rounds = append(rounds, batches)
		size := [2]int{0, 0}
		if c := int(cuts >> 56); c&(1<<r) != 0 {
			size = [2]int{20 + (r*7+c)%11, 5 + (r+c)%4}
		}
		sizes = append(sizes, size)
	}
	return rounds, sizes
}

// FuzzScreenFeed checks that Screen never panics or hangs on any child
// output and that skip-ahead is exact: the screen (text, styles, cursor,
// title, modes) after skipping equals that of an emulator fed every byte,
// batch by batch.
//
// The reference is x/vt with the same guards (guardEmulator), because an
// unguarded x/vt stalls for minutes on some inputs and panics on others.
// Comparison stops when the reference panics anyway or Screen had to
// replace its emulator, as the two then diverge for reasons unrelated to
// skipping. Seeds are in testdata/fuzz/FuzzScreenFeed.
func FuzzScreenFeed(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, cuts uint64, shape uint32) {
		if len(data) > 128<<10 {
			return
		}
		rounds, sizes := scrFuzzLayouts(data, cuts, shape)
		done := make(chan string, 1)
		go func() {
			s := NewScreen(20, 5, nil)
			defer s.Close()
			s.skipMin = 64
			ref := newScrRef(t, 20, 5, true)
			for r, batches := range rounds {
				for _, b := range batches {
					s.Feed(b)
					if !scrRefWrite(ref, b) {
						done <- ""
						return
					}
				}
				if s.resets > 0 {
					break
				}
				if d := scrDiff(s, ref); d != "" {
					done <- fmt.Sprintf("round %d:\n%s", r, d)
					return
				}
				if sz := sizes[r]; sz[0] != 0 {
					if c, rows := s.Size(); c != sz[0] || rows != sz[1] {
						s.Resize(sz[0], sz[1])
						ref.Resize(sz[0], sz[1])
					}
				}
			}
			done <- ""
		}()
		select {
		case d := <-done:
			if d != "" {
				t.Fatalf("skip-ahead changed the screen, %s", d)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("Feed hung on %q…", scrTrimForLog(data))
		}
	})
}

func scrRefWrite(ref *scrRef, b []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, _ = ref.Write(b)
	return true
}

func scrTrimForLog(b []byte) string {
	s := string(b)
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.ToValidUTF8(s, "?")
}
