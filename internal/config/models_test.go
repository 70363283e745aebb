package config

import (
	"os"
	"path/filepath"
	"testing"
)

func settingsFrom(t *testing.T, json string) *Settings {
	t.Helper()
	p := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(p, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSettingsFrom(p, filepath.Join(t.TempDir(), "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
