package render

import (
	"fmt"
	"strings"
	"testing"
)

// tenKB is a realistic 10 KB tool result: mixed lengths, some wrapping.
func tenKB() string {
	var b strings.Builder
	for i := 0; b.Len() < 10<<10; i++ {
		fmt.Fprintf(&b, "%05d %s\n", i, strings.Repeat("output text ", i%15))
	}
	return b.String()
}

func BenchmarkToolCallView(b *testing.B) {
	th := NewTheme(false)
	out := tenKB()
	for _, exp := range []bool{false, true} {
		b.Run(fmt.Sprintf("cached/expanded=%v", exp), func(b *testing.B) {
			c := &ToolCall{Command: "go test ./...", Output: out, TimeoutSeconds: 60, Expanded: exp}
			c.View(100, th)
			b.ReportAllocs()
			for b.Loop() {
				c.View(100, th)
			}
		})
		b.Run(fmt.Sprintf("uncached/expanded=%v", exp), func(b *testing.B) {
			c := &ToolCall{Command: "go test ./...", Output: out, TimeoutSeconds: 60, Expanded: exp}
			b.ReportAllocs()
			for b.Loop() {
				c.cache.valid = false
				c.View(100, th)
			}
		})
	}
}

// BenchmarkTranscriptFrame is the budget of 5 ms per frame over
// 1,000 tool results. "all" views every cached item (the bound if the TUI
// measured heights each frame); "visible" composes a 60-row screen from the
// tail, which is what the TUI does.
func BenchmarkTranscriptFrame(b *testing.B) {
	th := NewTheme(false)
	out := tenKB()
	calls := make([]*ToolCall, 1000)
	for i := range calls {
		calls[i] = &ToolCall{Command: fmt.Sprintf("cmd %d", i), Output: out}
		calls[i].View(120, th)
	}
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, c := range calls {
				n += len(c.View(120, th))
			}
			if n == 0 {
				b.Fatal("empty")
			}
		}
	})
	b.Run("visible", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var rows []string
			for i := len(calls) - 1; i >= 0 && len(rows) < 60; i-- {
				rows = append(strings.Split(calls[i].View(120, th), "\n"), rows...)
			}
			_ = strings.Join(rows[len(rows)-60:], "\n")
		}
	})
}

// BenchmarkBangAppendYes streams `yes`-shaped 32 KB chunks.
func BenchmarkBangAppendYes(b *testing.B) {
	chunk := strings.Repeat("y\n", 16<<10)
	bg := NewBang("yes", false)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		bg.Append(chunk)
	}
}
