package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEdit edits one line of a file of the given size, alternating
// between two texts so every call really writes. It includes the re-read
// that checks for a concurrent change before the rename.
func BenchmarkEdit(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 16 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			dir := b.TempDir()
			p := filepath.Join(dir, "f.txt")
			line := strings.Repeat("x", 79) + "\n"
			body := "MARK-A\n" + strings.Repeat(line, size/len(line))
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
			tool := NewEdit(envAt(dir))
			args := [2]json.RawMessage{
				json.RawMessage(`{"path":"f.txt","oldText":"MARK-A","newText":"MARK-B"}`),
				json.RawMessage(`{"path":"f.txt","oldText":"MARK-B","newText":"MARK-A"}`),
			}
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := tool.Execute(context.Background(), args[i%2], nil); r.IsError {
					b.Fatal(r.Content)
				}
			}
		})
	}
}

func sizeName(n int) string {
	switch n {
	case 64 << 10:
		return "64KB"
	case 1 << 20:
		return "1MB"
	default:
		return "16MB"
	}
}
