package sink

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestTailBuffer(t *testing.T) {
	tb := NewTailBuffer(10)
	if tb.String() != "" || tb.Len() != 0 {
		t.Fatal("new buffer not empty")
	}
	steps := []struct{ write, want string }{
		{"hello", "hello"},
		{" world", "ello world"},
		{"€", "o world€"},
		{"ab", "world€ab"},
		{"0123456789", "0123456789"},
		{"€€€€", "€€€"}, // 12 bytes; the cut falls inside the first "€"
	}
	for _, st := range steps {
		if n, err := tb.Write([]byte(st.write)); n != len(st.write) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if got := tb.String(); got != st.want || tb.Len() != len(st.want) {
			t.Fatalf("after %q: String() = %q, Len() = %d; want %q", st.write, got, tb.Len(), st.want)
		}
	}
}

func TestTailBufferDefault(t *testing.T) {
	tb := NewTailBuffer(0)
	_, _ = tb.Write([]byte(strings.Repeat("x", 3*DefaultMaxBytes)))
	if tb.Len() != DefaultMaxBytes {
		t.Fatalf("Len() = %d", tb.Len())
	}
}

func TestTailBufferSplitCharacter(t *testing.T) {
	tb := NewTailBuffer(100)
	_, _ = tb.Write([]byte("ok \xf0\x9f"))
	if got := tb.String(); got != "ok " || tb.Len() != 3 {
		t.Fatalf("incomplete emoji shown: %q", got)
	}
	_, _ = tb.Write([]byte("\x98"))
	if got := tb.String(); got != "ok " {
		t.Fatalf("incomplete emoji shown: %q", got)
	}
	_, _ = tb.Write([]byte("\x80!"))
	if got := tb.String(); got != "ok 😀!" {
		t.Fatalf("String() = %q", got)
	}
}

// TestTailBufferIncompleteDoesNotEvict: the held bytes of an unfinished
// character must not push a complete one out of a small budget.
func TestTailBufferIncompleteDoesNotEvict(t *testing.T) {
	tb := NewTailBuffer(4)
	_, _ = tb.Write([]byte("€😀\xf0\x9f"))
	if got := tb.String(); got != "😀" {
		t.Fatalf("String() = %q, want %q", got, "😀")
	}
	_, _ = tb.Write([]byte("\x98\x80"))
	if got := tb.String(); got != "😀" || tb.Len() != 4 {
		t.Fatalf("String() = %q", got)
	}
}

func TestTailBufferInvalidInput(t *testing.T) {
	tb := NewTailBuffer(7)
	_, _ = tb.Write([]byte("ab\xffcd\xfe"))
	// "ab\xffcd\xfe" repairs to 10 bytes; the last 7 start inside the first
	// U+FFFD, so the tail starts at "c".
	if got := tb.String(); got != "cd"+fffd || tb.Len() != 5 {
		t.Fatalf("String() = %q, Len() = %d", got, tb.Len())
	}
}

func TestTailBufferConcurrent(t *testing.T) {
	tb := NewTailBuffer(64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 2000 {
			_, _ = tb.Write([]byte("日本語 "))
		}
	})
	wg.Go(func() {
		for range 2000 {
			if s := tb.String(); !utf8.ValidString(s) || len(s) > 64 {
				t.Errorf("bad snapshot %q", s)
				return
			}
		}
	})
	wg.Wait()
}

// TestTailBufferProgress: live snapshots show each line's final state, also
// when a CR and the text that overwrites the line arrive in different
// writes.
func TestTailBufferProgress(t *testing.T) {
	tb := NewTailBuffer(100)
	steps := []struct{ write, want string }{
		{"get\n 10%", "get\n 10%"},
		{"\r 50%", "get\n 50%"},
		{"\r", "get\n 50%"},
		{"100%", "get\n100%"},
		{"\r\n", "get\n100%\n"},
		{"done", "get\n100%\ndone"},
	}
	for _, st := range steps {
		_, _ = tb.Write([]byte(st.write))
		if got := tb.String(); got != st.want {
			t.Fatalf("after %q: %q, want %q", st.write, got, st.want)
		}
	}
}

// TestRawTailBuffer: a terminal emulator's feed keeps the CRs.
func TestRawTailBuffer(t *testing.T) {
	tb := NewRawTailBuffer(100)
	_, _ = tb.Write([]byte("10%"))
	_, _ = tb.Write([]byte("\r50%"))
	if got := tb.String(); got != "10%\r50%" {
		t.Fatalf("String() = %q", got)
	}
}

// TestStyledTailBuffer: a live snapshot of coloured output keeps the
// colour in force where it starts and across an overwritten line.
func TestStyledTailBuffer(t *testing.T) {
	tb := NewStyledTailBuffer(8)
	_, _ = tb.Write([]byte("\x1b[32m" + strings.Repeat("a", 20)))
	if got := tb.String(); got != "\x1b[32m"+strings.Repeat("a", 8) {
		t.Fatalf("String() = %q", got)
	}
	_, _ = tb.Write([]byte("\rb\x1b[0m"))
	if got := tb.String(); got != "\x1b[32mb\x1b[0m" {
		t.Fatalf("String() = %q", got)
	}
}
