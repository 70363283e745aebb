package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestListFilesIgnoredAndBounded(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		".gitignore":        "build/\n*.log\n",
		"main.go":           "package main\n",
		"debug.log":         "x\n",
		"build/out.bin":     "x\n",
		"internal/a/b.go":   "package a\n",
		".hidden/secret.go": "package h\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, truncated, err := ListFiles(context.Background(), nil, root, 100)
	if err != nil || truncated {
		t.Fatalf("ListFiles: %v truncated=%v", err, truncated)
	}
	if want := []string{"internal/a/b.go", "main.go"}; !slices.Equal(files, want) {
		t.Fatalf("files = %q, want %q", files, want)
	}
	files, truncated, err = ListFiles(context.Background(), nil, root, 1)
	if err != nil || !truncated || len(files) != 1 {
		t.Fatalf("limit 1: files %q truncated=%v err=%v", files, truncated, err)
	}
}
