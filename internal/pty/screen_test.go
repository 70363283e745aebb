package pty

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"agentsh/internal/testkit"
)

// scrSyncBuffer collects replies written from the reply goroutine.
type scrSyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *scrSyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *scrSyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// scrWaitFor waits (hang guard) until the replies written to out hold
// every one of want.
func scrWaitFor(t *testing.T, what string, out *scrSyncBuffer, want ...string) {
	t.Helper()
	testkit.Eventually(t, 0, what, func() (bool, string) {
		o := out.String()
		for _, w := range want {
			if !strings.Contains(o, w) {
				return false, fmt.Sprintf("replies %q", o)
			}
		}
		return true, ""
	})
}

// scrWithin fails the test if f does not return in time: Feed must never hang.
func scrWithin(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func scrFeed(s *Screen, parts ...string) {
	for _, p := range parts {
		s.Feed([]byte(p))
	}
}

// scrRef is a reference emulator that gets every byte, one Write per batch
// like the screen under test, with its replies drained.
type scrRef struct {
	*vt.Emulator
	title     string
	appCursor bool
}

func newScrRef(t testing.TB, cols, rows int, guarded bool) *scrRef {
	r := &scrRef{Emulator: vt.NewEmulator(cols, rows)}
	r.SetCallbacks(vt.Callbacks{
		Title: func(s string) { r.title = clipTitle(s) },
		EnableMode: func(m ansi.Mode) {
			if m == ansi.ModeCursorKeys {
				r.appCursor = true
			}
		},
		DisableMode: func(m ansi.Mode) {
			if m == ansi.ModeCursorKeys {
				r.appCursor = false
			}
		},
	})
	if guarded {
		guardEmulator(r.Emulator)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, r.Emulator)
	}()
	t.Cleanup(func() {
		closeEmulatorReplies(r.Emulator)
		<-done
	})
	return r
}

func (r *scrRef) text() []string { return strings.Split(r.String(), "\n") }

// scrDiff describes how s differs from ref, or returns "".
func scrDiff(s *Screen, ref *scrRef) string {
	var d strings.Builder
	got, want := s.Text(), ref.text()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		fmt.Fprintf(&d, "text:\n got %q\nwant %q\n", got, want)
	}
	x, y, vis := s.Cursor()
	pos := ref.CursorPosition()
	if x != pos.X || y != pos.Y || vis != !ref.CursorHidden() {
		fmt.Fprintf(&d, "cursor: got (%d,%d,%v) want (%d,%d,%v)\n", x, y, vis, pos.X, pos.Y, !ref.CursorHidden())
	}
	if g, w := s.Render(), ref.Render(); g != w {
		fmt.Fprintf(&d, "render:\n got %q\nwant %q\n", g, w)
	}
	if g, w := s.AltScreen(), ref.IsAltScreen(); g != w {
		fmt.Fprintf(&d, "alt screen: got %v want %v\n", g, w)
	}
	if g, w := s.Title(), ref.title; g != w {
		fmt.Fprintf(&d, "title: got %q want %q\n", g, w)
	}
	if g, w := s.AppCursor(), ref.appCursor; g != w {
		fmt.Fprintf(&d, "app cursor: got %v want %v\n", g, w)
	}
	return d.String()
}

// scrFeedBoth feeds data in batches of size to the screen and the reference
// and fails on any difference at the end.
func scrFeedBoth(t *testing.T, s *Screen, ref *scrRef, data []byte, size int) {
	t.Helper()
	for len(data) > 0 {
		n := min(size, len(data))
		s.Feed(data[:n])
		_, _ = ref.Write(data[:n])
		data = data[n:]
	}
	if d := scrDiff(s, ref); d != "" {
		t.Fatal(d)
	}
}

func scrSeq(from, to int) []byte {
	var b bytes.Buffer
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\r\n", i)
	}
	return b.Bytes()
}

func TestScreenRepliesToQueries(t *testing.T) {
	var out scrSyncBuffer
	s := NewScreen(80, 24, &out)
	defer s.Close()
	scrFeed(s, "\x1b[c", "\x1b[5;10H\x1b[6n", "\x1b[>c")
	da1 := ansi.PrimaryDeviceAttributes(62, 1, 6, 22)
	cpr := ansi.CursorPositionReport(5, 10)
	scrWaitFor(t, "DA1 and CPR replies", &out, da1, cpr, "\x1b[>")
	if o := out.String(); strings.Index(o, da1) > strings.Index(o, cpr) {
		t.Fatalf("replies out of order: %q", o)
	}
}

// scrBlockingWriter stands for a PTY that never takes input.
type scrBlockingWriter struct{ release chan struct{} }

func (w scrBlockingWriter) Write(p []byte) (int, error) {
	<-w.release
	return len(p), nil
}

func TestScreenFeedNeverWaitsForReplies(t *testing.T) {
	w := scrBlockingWriter{release: make(chan struct{})}
	s := NewScreen(80, 24, w)
	defer close(w.release) // after Close, so the abandoned writer can return
	defer s.Close()
	scrWithin(t, 10*time.Second, "Feed with a blocked replies writer", func() {
		for range 2000 {
			s.Feed([]byte("\x1b[c\x1b[6n\x1b]11;?\x07x"))
		}
	})
	if got := s.Text()[0]; !strings.HasPrefix(got, "xxxx") {
		t.Fatalf("screen did not keep up: %q", got)
	}
	scrWithin(t, 5*time.Second, "Close", s.Close)
}

func TestScreenAppCursor(t *testing.T) {
	s := NewScreen(80, 24, nil)
	defer s.Close()
	if s.AppCursor() {
		t.Fatal("DECCKM set on a new screen")
	}
	scrFeed(s, "\x1b[?1h")
	if !s.AppCursor() {
		t.Fatal("ESC[?1h did not set DECCKM")
	}
	scrFeed(s, "\x1b[?1l")
	if s.AppCursor() {
		t.Fatal("ESC[?1l did not reset DECCKM")
	}
	scrFeed(s, "\x1b[?1h", "\x1bc")
	if s.AppCursor() {
		t.Fatal("RIS did not reset DECCKM")
	}
}

func TestScreenAltScreen(t *testing.T) {
	s := NewScreen(40, 10, nil)
	defer s.Close()
	scrFeed(s, "main\r\n", "\x1b[?1049h")
	if !s.AltScreen() {
		t.Fatal("?1049h did not enter the alternate screen")
	}
	scrFeed(s, "alt")
	if got := s.Text()[0]; got != "alt" {
		t.Fatalf("alt screen row 0 = %q", got)
	}
	scrFeed(s, "\x1b[?1049l")
	if s.AltScreen() {
		t.Fatal("?1049l did not leave the alternate screen")
	}
	if got := s.Text()[0]; got != "main" {
		t.Fatalf("main screen row 0 = %q after leaving alt", got)
	}
}

func TestScreenTitle(t *testing.T) {
	s := NewScreen(40, 10, nil)
	defer s.Close()
	scrFeed(s, "\x1b]2;build: ok\x07")
	if got := s.Title(); got != "build: ok" {
		t.Fatalf("OSC 2 title = %q", got)
	}
	scrFeed(s, "\x1b]0;vim main.go\x1b\\")
	if got := s.Title(); got != "vim main.go" {
		t.Fatalf("OSC 0 title = %q", got)
	}
	scrFeed(s, "\x1b]2;"+strings.Repeat("é", 4000)+"\x07")
	if got := s.Title(); len(got) > maxTitleBytes || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("long title kept %d bytes", len(got))
	}
}

func TestScreenWideCharacters(t *testing.T) {
	s := NewScreen(40, 10, nil)
	defer s.Close()
	scrFeed(s, "日本語")
	if x, y, _ := s.Cursor(); x != 6 || y != 0 {
		t.Fatalf("cursor after 日本語 at (%d,%d), want (6,0)", x, y)
	}
	scrFeed(s, "|X\r\n👍")
	if x, _, _ := s.Cursor(); x != 2 {
		t.Fatalf("cursor after 👍 at column %d, want 2", x)
	}
	scrFeed(s, "|X")
	rows := s.Text()
	if rows[0] != "日本語|X" || rows[1] != "👍|X" {
		t.Fatalf("rows = %q", rows[:2])
	}
	if c := s.CellAt(0, 0); c.Content != "日" || c.Width != 2 {
		t.Fatalf("cell (0,0) = %+v", c)
	}
	if c := s.CellAt(1, 0); c.Content != "" || c.Width != 0 {
		t.Fatalf("continuation cell (1,0) = %+v", c)
	}
	if c := s.CellAt(-1, 99); c.Content != "" || c.Width != 0 {
		t.Fatalf("cell outside the screen = %+v", c)
	}
}

func TestScreenSplitUTF8(t *testing.T) {
	s := NewScreen(40, 10, nil)
	defer s.Close()
	b := []byte("a日b")
	s.Feed(b[:2])
	s.Feed(b[2:3])
	s.Feed(b[3:])
	if got := s.Text()[0]; got != "a日b" {
		t.Fatalf("row 0 = %q", got)
	}
}

func TestScreenTextTrimsTrailingSpaces(t *testing.T) {
	s := NewScreen(40, 10, nil)
	defer s.Close()
	scrFeed(s, "abc   \r\n  x  \r\n\x1b[41m   \x1b[0m")
	rows := s.Text()
	if len(rows) != 10 {
		t.Fatalf("%d rows, want 10", len(rows))
	}
	if rows[0] != "abc" || rows[1] != "  x" || rows[2] != "" || rows[9] != "" {
		t.Fatalf("rows = %q", rows)
	}
	if !strings.Contains(s.Render(), "\x1b[") {
		t.Fatalf("Render dropped the styling: %q", s.Render())
	}
}

func TestScreenResizeClamps(t *testing.T) {
	s := NewScreen(1, 1, nil)
	defer s.Close()
	if c, r := s.Size(); c != 20 || r != 5 {
		t.Fatalf("NewScreen(1,1) size %dx%d", c, r)
	}
	s.Resize(10000, 10000)
	if c, r := s.Size(); c != 400 || r != 200 {
		t.Fatalf("Resize(10000,10000) size %dx%d", c, r)
	}
	if got := len(s.Text()); got != 200 {
		t.Fatalf("%d text rows after resize", got)
	}
	<-s.Changed()
	s.Resize(30, 7)
	if c, r := s.Size(); c != 30 || r != 7 {
		t.Fatalf("Resize(30,7) size %dx%d", c, r)
	}
	select {
	case <-s.Changed():
	default:
		t.Fatal("Resize did not signal Changed")
	}
	s.Resize(30, 7)
	select {
	case <-s.Changed():
		t.Fatal("a no-op Resize signalled Changed")
	default:
	}
}

func TestScreenChangedAfterFeed(t *testing.T) {
	s := NewScreen(40, 10, nil)
	defer s.Close()
	scrFeed(s, "hi")
	select {
	case <-s.Changed():
	default:
		t.Fatal("Feed did not signal Changed")
	}
}

func TestScreenRecoversFromPanic(t *testing.T) {
	var out scrSyncBuffer
	s := NewScreen(40, 10, &out)
	defer s.Close()
	screenWriteHook = func(p []byte) {
		if bytes.Contains(p, []byte("BOOM")) {
			panic("injected")
		}
	}
	t.Cleanup(func() { screenWriteHook = nil })
	scrFeed(s, "before\r\n\x1b[?1h", "BOOM", "after")
	if s.resets != 1 {
		t.Fatalf("%d resets, want 1", s.resets)
	}
	if got := s.Text()[0]; got != "after" {
		t.Fatalf("row 0 after recovery = %q", got)
	}
	if c, r := s.Size(); c != 40 || r != 10 {
		t.Fatalf("size after recovery %dx%d", c, r)
	}
	if s.AppCursor() {
		t.Fatal("DECCKM survived the reset of the emulator")
	}
	scrFeed(s, "\x1b[?1h\x1b[c")
	if !s.AppCursor() {
		t.Fatal("callbacks not registered on the new emulator")
	}
	da1 := ansi.PrimaryDeviceAttributes(62, 1, 6, 22)
	scrWaitFor(t, "a DA1 reply from the new emulator", &out, da1)
}

// TestScreenGuards covers sequences that panic or stall x/vt v0.1.0 unguarded.
func TestScreenGuards(t *testing.T) {
	for _, in := range []string{
		"\x1b[1;1000r\x1b[5S",            // DECSTBM below the screen: index out of range
		"\x1b[1;1000r\x1bM",              // … and RI
		"\x1b[?69h\x1b[1;1000s\x1b[3S",   // DECSLRM right of the screen
		"\x1b[40G\x1b[2147483646I",       // CHT spins 2^31 times
		"\x1b[2147483646Z",               // CBT
		"\x1b[2147483646X",               // ECH fills 2^31 cells
		"ab\x1b[2147483646b",             // REP prints 2^31 characters
		"\x1b[-5@\x1b[2147483647I",       // vt10x's panic and hang
		"\x1b[1;2000000000r\r\n\r\n\r\n", // DECSTBM with a huge bottom
	} {
		s := NewScreen(80, 24, nil)
		scrWithin(t, 5*time.Second, fmt.Sprintf("Feed(%q)", in), func() {
			scrFeed(s, in, "ok\r\n")
		})
		if s.resets != 0 {
			t.Errorf("Feed(%q) crashed x/vt", in)
		}
		s.Close()
	}
}

// TestScreenGuardsAreExact checks that the clamped parameters give the same
// screen as x/vt running the full count.
func TestScreenGuardsAreExact(t *testing.T) {
	for _, in := range []string{
		"ab\x1b[5000b",
		"\x1b[3;5Hq\x1b[4999b",
		"\x1b[?7lxy\x1b[777b",
		"\x1b[2;4r\x1b[3;1Hz\x1b[3001b",
		"\x1b(0q\x1b[1234b\x1b(B",
		"\x1b[2;7H" + strings.Repeat("x", 30) + "\x1b[2;3H\x1b[100000X",
		"\x1b[3g\x1b[3;3H\x1bH\x1b[1;1H\x1b[100000I!\x1b[100000Z?",
	} {
		s := NewScreen(20, 5, nil)
		ref := newScrRef(t, 20, 5, false)
		scrFeedBoth(t, s, ref, []byte(in), len(in))
		s.Close()
	}
}

func TestScreenCloseIsIdempotent(t *testing.T) {
	s := NewScreen(40, 10, &scrSyncBuffer{})
	scrFeed(s, "hello")
	s.Close()
	s.Close()
	scrFeed(s, "\r\nworld")
	if got := s.Text(); got[0] != "hello" || got[1] != "" {
		t.Fatalf("Feed after Close changed the screen: %q", got[:2])
	}
	s.Resize(60, 20)
	if c, _ := s.Size(); c != 40 {
		t.Fatal("Resize after Close changed the size")
	}
}

func scrLowerSkipMin(t *testing.T, n int) {
	old := skipMinBytes
	skipMinBytes = n
	t.Cleanup(func() { skipMinBytes = old })
}

func TestScreenSkipSeqFlood(t *testing.T) {
	scrLowerSkipMin(t, 4<<10)
	s := NewScreen(80, 24, nil)
	defer s.Close()
	ref := newScrRef(t, 80, 24, false)
	data := scrSeq(1, 15000)
	scrFeedBoth(t, s, ref, data, 16<<10)
	if s.SkippedBytes() < int64(len(data))/2 {
		t.Fatalf("skipped only %d of %d bytes", s.SkippedBytes(), len(data))
	}
	if got := s.Text()[22]; got != "15000" {
		t.Fatalf("row 22 = %q", got)
	}
}

// TestScreenSkipFloodBatchesSplitAnywhere cuts the flood at every kind of
// place: inside a CRLF, inside a UTF-8 character, inside a sequence.
func TestScreenSkipFloodBatchesSplitAnywhere(t *testing.T) {
	var b bytes.Buffer
	for i := range 4000 {
		fmt.Fprintf(&b, "\x1b[3%dm%05d\x1b[0m 日本 é\x1b]8;;http://x/%d\x1b\\link\x1b]8;;\x1b\\\r\n", i%8, i, i)
	}
	data := b.Bytes()
	for _, size := range []int{997, 1000, 1024, 4099} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := NewScreen(30, 6, nil)
			defer s.Close()
			s.skipMin = 512
			ref := newScrRef(t, 30, 6, false)
			scrFeedBoth(t, s, ref, data, size)
			if s.SkippedBytes() == 0 {
				t.Fatal("nothing skipped")
			}
		})
	}
}

func TestScreenSkipFloodWithBarriers(t *testing.T) {
	flood := string(scrSeq(1, 1200))
	// Lines that leave a row longer than the next one (some wrap), so a row
	// that should have scrolled out shows through.
	var jag strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&jag, "%s%d\r\n", strings.Repeat("=", (i*37)%70), i)
	}
	empty := strings.Repeat("\r\n", 100)
	for _, c := range []struct {
		name, data string
		skips      bool
	}{
		{"plain", flood, true},
		{"jagged", jag.String(), true},
		{"jagged-tail", jag.String() + "no newline at the end", true},
		{"cup", flood + "\x1b[H" + flood, true},
		{"cuu", flood + "\x1b[5A" + flood + "\x1b[5Aup", true},
		{"clear", "\x1b[H\x1b[2J\x1b[3J" + flood, true},
		{"decsc", flood + "\x1b7" + flood + "\x1b8after", true},
		{"bare-lf", flood + "x\ny\n" + flood + "\n\n", true},
		{"stbm", "\x1b[2;10r\x1b[5;1H" + jag.String() + "\x1b[r" + flood, true},
		{"stbm-only", "\x1b[2;10r\x1b[5;1H" + jag.String(), true},
		{"stbm-below", "\x1b[2;6r\x1b[9;1H" + flood + "\x1b[r", false},
		{"stbm-origin", "\x1b[3;10r\x1b[?6h\x1b[4;1H" + flood + "\x1b[?6l\x1b[r" + flood, true},
		{"alt-in-out", flood + "\x1b[?1049h" + flood + "\x1b[?1049l" + flood, true},
		{"charset", strings.ReplaceAll(flood, "\r\n", "\x1b(0q\x1b(B\x0e\x0f\r\n"), true},
		{"rep", flood + "x\r\n" + empty + "\x1b[3b", true},
		{"rep-mark", flood + "x\r\nye\u0301\r\n" + empty + "\x1b[3b", true},
		{"rep-wide", flood + "x\r\n日\r\n" + empty + "\x1b[3b", true},
		{"no-print", flood + empty + "\x1b[3b", true},
		{"ss2", "\x1b*0" + flood + "\x8e" + empty + "q", true},
		{"ss2-unused", "\x1b*0\x8e" + strings.Repeat("\r\n", 1500) + "q", true},
		{"slrm-only", "\x1b[?69h\x1b[5;30s\x1b[1;10H" + flood, false},
		{"slrm", "\x1b[?69h\x1b[5;30s\x1b[1;10H" + flood + "\x1b[s\x1b[?69l" + flood, true},
		{"ris", flood + "\x1bc" + flood, true},
		{"queries", strings.ReplaceAll(flood, "9\r\n", "9\x1b[c\x1b[>c\x1b]10;?\x07\r\n") + "\x1b[6n", true},
		{"pen-blank", "\x1b[44m" + flood + "\x1b[m" + empty, true},
	} {
		for _, size := range []int{len(c.data), 4 << 10, 1501} {
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) {
				t.Parallel()
				s := NewScreen(40, 12, nil)
				defer s.Close()
				s.skipMin = 1024
				ref := newScrRef(t, 40, 12, false)
				scrFeedBoth(t, s, ref, []byte(c.data), size)
				if c.skips && size == len(c.data) && s.SkippedBytes() == 0 {
					t.Fatal("nothing skipped")
				}
			})
		}
	}
}

func TestScreenSkipKeepsStyleAndProgressBars(t *testing.T) {
	var b bytes.Buffer
	for i := range 3000 {
		for p := 0; p <= 100; p += 25 {
			fmt.Fprintf(&b, "\r\x1b[K\x1b[1;32m[%-10s]\x1b[0m %3d%%", strings.Repeat("#", p/10), p)
		}
		fmt.Fprintf(&b, "\r\n\x1b[38;5;%dmstep %d\x1b[m done \x1b[7m%c\x1b[27m\r\n", i%256, i, 'a'+i%26)
		if i%100 == 0 {
			fmt.Fprintf(&b, "\x1b]0;progress %d\x07\x1b[?25l", i)
		}
	}
	b.WriteString("\x1b[44mlast line with a blue pen ")
	data := b.Bytes()
	s := NewScreen(100, 30, nil)
	defer s.Close()
	s.skipMin = 8 << 10
	ref := newScrRef(t, 100, 30, false)
	scrFeedBoth(t, s, ref, data, 64<<10)
	if s.SkippedBytes() == 0 {
		t.Fatal("nothing skipped")
	}
	if _, _, vis := s.Cursor(); vis {
		t.Fatal("?25l in the skipped part was lost")
	}
}

func TestScreenNoSkipOnAltScreen(t *testing.T) {
	s := NewScreen(80, 24, nil)
	defer s.Close()
	s.skipMin = 1024
	ref := newScrRef(t, 80, 24, false)
	scrFeedBoth(t, s, ref, append([]byte("\x1b[?1049h"), scrSeq(1, 6000)...), 8<<10)
	if s.SkippedBytes() != 0 {
		t.Fatalf("skipped %d bytes on the alternate screen", s.SkippedBytes())
	}
}

// TestScreenSkipAcrossResize: a resize between batches must not let a plan
// made for the old size apply, nor lose exactness afterwards.
func TestScreenSkipAcrossResize(t *testing.T) {
	s := NewScreen(80, 24, nil)
	defer s.Close()
	s.skipMin = 1024
	ref := newScrRef(t, 80, 24, false)
	data := scrSeq(1, 20000)
	for i := 0; len(data) > 0; i++ {
		n := min(7000, len(data))
		s.Feed(data[:n])
		_, _ = ref.Write(data[:n])
		data = data[n:]
		cols, rows := 40+i%3*20, 10+i%4*5
		s.Resize(cols, rows)
		ref.Resize(cols, rows)
	}
	if d := scrDiff(s, ref); d != "" {
		t.Fatal(d)
	}
}

func TestPlanSkipNeedsEnoughLines(t *testing.T) {
	st := skipState{rows: 5, top: 0, bot: 5, y0: 0, grid: true}
	lines := func(n int) []byte { return bytes.Repeat([]byte("ab\r\n"), n) }
	// From row 0 the cursor needs 4 line feeds to reach the bottom, then 5
	// more lines must follow the skip point.
	if p := planSkip(lines(8), st); p.k != 0 {
		t.Fatalf("8 lines from row 0: skipped to %d", p.k)
	}
	if p := planSkip(lines(9), st); p.k != 4*4 {
		t.Fatalf("9 lines from row 0: k = %d, want 16", p.k)
	}
	st.y0 = 4
	if p := planSkip(lines(6), st); p.k != 4 {
		t.Fatalf("6 lines from the bottom row: k = %d, want 4", p.k)
	}
	// A grid item forgets where the cursor was.
	if p := planSkip(append([]byte("\x1b[H"), lines(9)...), st); p.k != 3+4*4 {
		t.Fatalf("after CUP: k = %d, want 19", p.k)
	}
	// A barrier ends the prefix.
	if p := planSkip(append(lines(3), "\x1b7"+string(lines(20))...), st); p.k != 0 || p.end != 12 {
		t.Fatalf("barrier: k = %d end = %d", p.k, p.end)
	}
	// A CRLF split across batches still counts.
	st.prevCR = true
	if p := planSkip(append([]byte("\n"), lines(5)...), st); p.k != 1 {
		t.Fatalf("leading LF after CR: k = %d, want 1", p.k)
	}
}

func TestReplayFor(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\r\n", "\x1b[5;1Ha\r"},
		{"\r\n\r\n", "\x1b[5;1H"},
		{"ab\x1b[31mc\x1b[0m\x1b[1md\r\n", "\x1b[0m\x1b[1m\x1b[5;1Hd\r"},
		{"e\u0301\r\n", "\x1b[5;1H\u00a0\r"},
		{"xe\u0301\r\n", "\x1b[5;1Hx\r"},
		{"x\x1b]2;t\x1b\\y\r\n", "\x1b]2;t\a\x1b[5;1Hy\r"},
		{"\x1b[?25l\x1b(0\r\n", "\x1b[?25l\x1b(0\x1b[5;1H"},
	} {
		got, _ := replayFor([]byte(c.in), 5)
		if string(got) != c.want {
			t.Errorf("replayFor(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestScreenDraw(t *testing.T) {
	s := NewScreen(20, 5, nil)
	defer s.Close()
	scrFeed(s, "\x1b[31mhi\x1b[0m 日")
	buf := uv.NewScreenBuffer(30, 8)
	s.Draw(buf, uv.Rect(5, 2, 20, 5))
	if c := buf.CellAt(5, 2); c == nil || c.Content != "h" || c.Style.Fg == nil {
		t.Fatalf("drawn cell (5,2) = %+v", c)
	}
	if c := buf.CellAt(8, 2); c == nil || c.Content != "日" {
		t.Fatalf("drawn cell (8,2) = %+v", c)
	}
}

// TestScreenConcurrentUse runs the TUI's calls against a feeding screen, for
// the race detector.
func TestScreenConcurrentUse(t *testing.T) {
	s := NewScreen(80, 24, &scrSyncBuffer{})
	defer s.Close()
	s.skipMin = 4 << 10
	data := scrSeq(1, 20000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for off := 0; off < len(data); off += 9000 {
			s.Feed(data[off:min(off+9000, len(data))])
			s.Feed([]byte("\x1b[c\x1b]2;t\x07"))
		}
	}()
	buf := uv.NewScreenBuffer(100, 40)
	for i := 0; ; i++ {
		select {
		case <-done:
			if got := s.Text(); !strings.Contains(strings.Join(got, "\n"), "20000") {
				t.Fatalf("last line missing: %q", got)
			}
			return
		case <-s.Changed():
		}
		_ = s.Text()
		_ = s.Render()
		s.Draw(buf, uv.Rect(0, 0, 100, 40))
		_, _, _ = s.Cursor()
		_ = s.CellAt(1, 1)
		_, _ = s.AltScreen(), s.AppCursor()
		_ = s.Title()
		if i%50 == 0 {
			s.Resize(80+i%3, 24+i%2)
		}
	}
}
