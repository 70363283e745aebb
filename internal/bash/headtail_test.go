package bash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestApplyHeadTail(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		head, tail int
		want       HeadTailResult
	}{
		{"no limits", "a\nb\nc", 0, 0, HeadTailResult{Text: "a\nb\nc"}},
		{"negative ignored", "a\nb\nc", -1, -5, HeadTailResult{Text: "a\nb\nc"}},
		{"head", "a\nb\nc\nd", 2, 0, HeadTailResult{"a\nb", true, true, false}},
		{"tail", "a\nb\nc\nd", 0, 2, HeadTailResult{"c\nd", true, false, true}},
		{"head then tail", "1\n2\n3\n4\n5\n6", 4, 2, HeadTailResult{"3\n4", true, true, true}},
		{"head applied, tail not", "1\n2\n3\n4\n5", 2, 3, HeadTailResult{"1\n2", true, true, false}},
		{"tail applied, head not", "1\n2\n3", 10, 1, HeadTailResult{"3", true, false, true}},
		{"head equal count: not applied", "a\nb\nc", 3, 0, HeadTailResult{Text: "a\nb\nc"}},
		{"tail equal count: not applied", "a\nb\nc", 0, 3, HeadTailResult{Text: "a\nb\nc"}},
		{"head larger", "a\nb", 10, 0, HeadTailResult{Text: "a\nb"}},
		{"negative head, positive tail", "a\nb\nc", -3, 1, HeadTailResult{"c", true, false, true}},

		// Trailing newline: terminates the last line, does not add one.
		{"trailing nl: 3 lines, head 3 not applied", "a\nb\nc\n", 3, 0, HeadTailResult{Text: "a\nb\nc\n"}},
		{"trailing nl: 3 lines, tail 3 not applied", "a\nb\nc\n", 0, 3, HeadTailResult{Text: "a\nb\nc\n"}},
		{"trailing nl kept on head", "a\nb\nc\n", 2, 0, HeadTailResult{"a\nb\n", true, true, false}},
		{"trailing nl kept on tail", "a\nb\nc\n", 0, 2, HeadTailResult{"b\nc\n", true, false, true}},
		{"trailing nl head+tail", "1\n2\n3\n4\n", 3, 1, HeadTailResult{"3\n", true, true, true}},
		{"only final nl counts once", "a\nb\n\n", 0, 1, HeadTailResult{"\n", true, false, true}},
		{"blank lines are lines", "a\n\n\nb\n", 2, 0, HeadTailResult{"a\n\n", true, true, false}},
		{"no trailing nl not added", "a\nb\nc", 1, 0, HeadTailResult{"a", true, true, false}},

		{"empty", "", 1, 1, HeadTailResult{Text: ""}},
		{"single newline is one line", "\n", 1, 1, HeadTailResult{Text: "\n"}},
		{"CR kept", "a\r\nb\r\nc\r\n", 0, 1, HeadTailResult{"c\r\n", true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ApplyHeadTail(tt.text, tt.head, tt.tail)
			if got != tt.want {
				t.Errorf("ApplyHeadTail(%q, %d, %d)\n got  %#v\n want %#v", tt.text, tt.head, tt.tail, got, tt.want)
			}
		})
	}
}

// TestApplyHeadTailMatchesSplit checks the index arithmetic against a plain
// split/join model of the documented rule.
func TestApplyHeadTailMatchesSplit(t *testing.T) {
	model := func(text string, head, tail int) string {
		final := ""
		body := text
		if strings.HasSuffix(body, "\n") {
			body, final = body[:len(body)-1], "\n"
		}
		lines := strings.Split(body, "\n")
		if head > 0 && len(lines) > head {
			lines = lines[:head]
		}
		if tail > 0 && len(lines) > tail {
			lines = lines[len(lines)-tail:]
		}
		return strings.Join(lines, "\n") + final
	}
	texts := []string{"", "\n", "\n\n", "a", "a\n", "a\nb", "a\nb\n", "\na\n\nb\n\n", "1\n2\n3\n4\n5\n6\n7"}
	for _, text := range texts {
		for head := -1; head <= 8; head++ {
			for tail := -1; tail <= 8; tail++ {
				got := ApplyHeadTail(text, head, tail)
				if want := model(text, head, tail); got.Text != want {
					t.Fatalf("ApplyHeadTail(%q, %d, %d) = %q, want %q", text, head, tail, got.Text, want)
				}
				if got.Applied != (got.Text != text) {
					t.Fatalf("ApplyHeadTail(%q, %d, %d): Applied=%v but text changed=%v", text, head, tail, got.Applied, got.Text != text)
				}
			}
		}
	}
}

func TestApplyHeadTailLarge(t *testing.T) {
	text := strings.Repeat("line\n", 2_000_000)
	start := time.Now()
	got := ApplyHeadTail(text, 1_500_000, 3)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("too slow: %v", d)
	}
	if got.Text != "line\nline\nline\n" || !got.HeadApplied || !got.TailApplied {
		t.Fatalf("got %q %+v", got.Text[:min(len(got.Text), 40)], got.Applied)
	}
}

func TestReadLineRange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("a", "1\n2\n3\n4")
	for _, c := range []struct {
		from, to  int
		keepStart bool
		text      string
		first     int
		ok        bool
	}{
		{2, 3, true, "2\n3\n", 2, true},
		{2, 3, false, "2\n3\n", 2, true},
		{3, 9, false, "3\n4", 3, true}, // the last line has no "\n"
		{4, 4, true, "4", 4, true},
		{5, 6, true, "", 0, false}, // past the end
	} {
		text, first, cut, ok := readLineRange(p, c.from, c.to, c.keepStart)
		if text != c.text || first != c.first || cut || ok != c.ok {
			t.Errorf("%d-%d keepStart %v: %q %d %v %v", c.from, c.to, c.keepStart, text, first, cut, ok)
		}
	}
	if _, _, _, ok := readLineRange(filepath.Join(dir, "missing"), 1, 2, true); ok {
		t.Error("a missing file reads")
	}
	if _, _, _, ok := readLineRange(write("nl", "1\n2\n"), 3, 3, true); ok {
		t.Error("a final \\n starts no line")
	}
	// One line longer than the cap: its first 50 KB, not split inside a
	// character; from the end, its last 50 KB.
	long := strings.Repeat("é", 40000) // 80000 bytes
	p = write("long", "a\n"+long+"\nb\n")
	text, first, cut, ok := readLineRange(p, 2, 2, true)
	if !ok || !cut || first != 2 || len(text) != 51200 || text != long[:51200] {
		t.Errorf("long line, keepStart: %d bytes, first %d, cut %v", len(text), first, cut)
	}
	text, first, cut, ok = readLineRange(p, 1, 3, false)
	if !ok || !cut || first != 2 || !strings.HasSuffix(text, "é\nb\n") || len(text) > 51200 || !utf8.ValidString(text) {
		t.Errorf("long line, from the end: %d bytes, first %d, cut %v", len(text), first, cut)
	}
	// Whole lines are kept while they fit.
	p = write("many", strings.Repeat("0123456789\n", 10000))
	text, _, cut, ok = readLineRange(p, 1, 10000, true)
	if !ok || !cut || len(text) != 4654*11 || !strings.HasSuffix(text, "\n") {
		t.Errorf("keepStart cut: %d bytes, cut %v", len(text), cut)
	}
}
