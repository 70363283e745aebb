package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTUIMentionCompletion types `@` and a few letters in the real binary:
// the list offers the matching files the .gitignore leaves in, and tab
// puts the chosen path in the editor.
func TestTUIMentionCompletion(t *testing.T) {
	s := newSandbox(t)
	for name, body := range map[string]string{
		".gitignore":            "vendor/\n",
		"internal/cfg/model.go": "package cfg\n",
		"vendor/lib/model.go":   "package lib\n",
		"notes.txt":             "x\n",
	} {
		p := filepath.Join(s.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tt := startTUI(t, s)
	tt.tmux("send-keys", "-l", "see @modgo")
	scr := tt.waitText("inserts the path")
	if !strings.Contains(scr, "\n internal/cfg/model.go") || strings.Contains(scr, "vendor/") || strings.Contains(scr, "notes.txt") {
		t.Fatalf("completion list is wrong:\n%s", scr)
	}
	tt.keys("Tab")
	scr = tt.waitScreen("the inserted path", func(s string) bool {
		return strings.Contains(s, "│ see internal/cfg/model.go") && !strings.Contains(s, "inserts the path")
	})
	if strings.Contains(scr, "@modgo") {
		t.Errorf("the @word stayed:\n%s", scr)
	}
}
