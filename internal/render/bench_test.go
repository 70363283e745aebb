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

// resizeOutput is a 200-line, ~43 KB tool result: most lines wrap at
// terminal widths, as after `cat` of a log with long lines.
func resizeOutput() string {
	var b strings.Builder
	words := []string{"output", "text", "value=42", "path/to/some/file.go", "-", "ERROR", "0x1f3a"}
	for i := range 200 {
		fmt.Fprintf(&b, "%05d", i)
		for n := 0; n < 210; {
			w := words[(i+n)%len(words)]
			b.WriteString(" " + w)
			n += len(w) + 1
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// BenchmarkToolCallCollapsedResize re-renders one collapsed 200-line
// result at alternating widths, so every View misses the cache, which is
// what each item costs after a terminal resize.
func BenchmarkToolCallCollapsedResize(b *testing.B) {
	th := NewTheme(false)
	out := resizeOutput()
	if len(out) < 42<<10 || len(out) > 44<<10 {
		b.Fatalf("output is %d bytes, want ~43 KB", len(out))
	}
	c := &ToolCall{Command: "cat build.log", Output: out}
	widths := []int{100, 101}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.View(widths[i%2], th)
		i++
	}
}
