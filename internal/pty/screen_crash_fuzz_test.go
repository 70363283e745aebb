package pty

import (
	"io"
	"sync"
	"testing"
)

// crashScreen is shared by every input of FuzzScreenNoPanic: a new x/vt
// emulator allocates a 4 MB parser buffer, which would hold the fuzzer to a
// few hundred inputs a second, while child output in a real session also
// lands on a screen in whatever state earlier output left it.
var (
	crashOnce   sync.Once
	crashScreen *Screen
)

// FuzzScreenNoPanic feeds arbitrary child output, cut into batches and mixed
// with resizes, into a long-lived Screen: x/vt must never panic (Feed would
// recover, but a recovery blanks the user's screen, so it counts as a
// failure here), every call must return, and the screen must stay
// consistent with its size.
func FuzzScreenNoPanic(f *testing.F) {
	for _, seed := range []string{
		"\x1b[-5@", "\x1b[2147483647I", "\x1b[2147483646b", "\x1b[1;1000r\x1b[5S",
		"\xe6\x97", "\xa5\xe6\x9c\xac", "\x1b[>1u\x1b[<u", "\x1b]2;" + string(make([]byte, 5000)) + "\x07",
		"\x1b[c\x1b[6n\x1b[?1$p", "\x1b[?1049h\x1b[2J\x1b[H hi \x1b[?1049l", "1\r\n2\r\n3\r\n",
		"\x1b[?6h\x1b[3;5r\x1b[99B\n\n\n", "\x1b[?69h\x1b[5;10s\x1b[2S", "\x1bP1$qm\x1b\\", "\x1b(0lqk\x1b(B",
	} {
		f.Add([]byte(seed), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, shape uint16) {
		crashOnce.Do(func() {
			skipMinBytes = 64 // exercise skipping on small inputs as well
			crashScreen = NewScreen(40, 10, io.Discard)
		})
		s := crashScreen
		s.mu.Lock()
		resets := s.resets
		s.mu.Unlock()
		// Up to four batches, cut where shape says.
		cuts := []int{int(shape&0xf) * len(data) / 16, int(shape>>4&0xf) * len(data) / 16, int(shape>>8&0xf) * len(data) / 16}
		prev := 0
		for _, c := range cuts {
			if c > prev {
				s.Feed(data[prev:c])
				prev = c
			}
		}
		s.Feed(data[prev:])
		if shape>>12 != 0 {
			s.Resize(20+int(shape>>12)*7, 5+int(shape>>12))
		}
		s.mu.Lock()
		recovered := s.resets != resets
		s.mu.Unlock()
		if recovered {
			t.Fatalf("x/vt panicked on %q", data)
		}
		cols, rows := s.Size()
		if txt := s.Text(); len(txt) != rows {
			t.Fatalf("Text has %d rows, screen %dx%d", len(txt), cols, rows)
		}
		if x, y, _ := s.Cursor(); x < 0 || y < 0 || x > cols || y >= rows {
			t.Fatalf("cursor %d,%d outside %dx%d", x, y, cols, rows)
		}
	})
}
