package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkListFiles walks a tree of 20,000 files (200 folders of 100), the
// @ completion's bound.
func BenchmarkListFiles(b *testing.B) {
	root := b.TempDir()
	for d := range 200 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		files, _, err := ListFiles(context.Background(), nil, root, 20000)
		if err != nil || len(files) != 20000 {
			b.Fatalf("%d files, %v", len(files), err)
		}
	}
}
