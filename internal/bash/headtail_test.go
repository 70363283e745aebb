package bash

import (
	"strings"
	"testing"
	"time"
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
