package tui

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkFuzzyRank is one keystroke of the @ completion over a full
// listing (mentionWalkLimit paths): it runs on the Update goroutine.
func BenchmarkFuzzyRank(b *testing.B) {
	files := make([]string, mentionWalkLimit)
	lower := make([]string, len(files))
	for i := range files {
		files[i] = fmt.Sprintf("internal/pkg%03d/sub%02d/file_%05d_handler.go", i%997, i%31, i)
		lower[i] = strings.ToLower(files[i])
	}
	b.ResetTimer()
	for b.Loop() {
		if len(fuzzyRank("pkghandl", files, lower, mentionRows)) == 0 {
			b.Fatal("no match")
		}
	}
}
