package config

import (
	"agentsh/internal/bash"
	"os"
	"path/filepath"
	"testing"
)

// TestSettingsArtifactsMaxBytes: artifacts.maxBytes defaults to 1 GiB,
// reads nested or dotted, merges like any scalar (null resets it) and
// reaches the bash tool's settings.
// loadPair loads a global and a project settings text ("" = no file) from
// files in dir and converts them to the tool's settings.
func loadPair(t *testing.T, dir, global, project string) (*Settings, bash.ToolSettings) {
	t.Helper()
	g, p := "", ""
	if global != "" {
		g = writeSettingsAt(t, dir, "global.json", global)
	}
	if project != "" {
		p = writeSettingsAt(t, dir, "project.json", project)
	}
	s, err := LoadSettingsFrom(g, p)
	if err != nil {
		t.Fatalf("%s + %s: %v", global, project, err)
	}
	ts, err := s.ToolSettings()
	if err != nil {
		t.Fatal(err)
	}
	return s, ts
}

func TestSettingsArtifactsMaxBytes(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		global, project string
		want            int
	}{
		{"", "", 1 << 30},
		{`{"artifacts": {"maxBytes": 65536}}`, "", 65536},
		{`{"artifacts.maxBytes": 2147483648}`, "", 2 << 30},
		{`{"artifacts": {"maxBytes": 1e6}}`, `{"artifacts.maxBytes": 200000}`, 200000},
		{`{"artifacts": {"maxBytes": 1e6}}`, `{"artifacts": {"maxBytes": null}}`, 1 << 30},
	}
	for _, c := range cases {
		s, ts := loadPair(t, dir, c.global, c.project)
		if s.ArtifactMaxBytes != c.want || ts.ArtifactMaxBytes != c.want {
			t.Errorf("%s + %s: settings %d, tool %d, want %d", c.global, c.project, s.ArtifactMaxBytes, ts.ArtifactMaxBytes, c.want)
		}
	}
}

// TestSettingsArtifactsMaxBytesRefused: zero, negative, fractional, too
// small and non-numeric caps are errors at their position.
func TestSettingsArtifactsMaxBytesRefused(t *testing.T) {
	dir := t.TempDir()
	const rng = "artifacts.maxBytes: must be a whole number of bytes from 65536 to 1125899906842624, got "
	cases := []struct{ content, want string }{
		{`{"artifacts": {"maxBytes": 0}}`, `:1:28: ` + rng + `number 0`},
		{`{"artifacts.maxBytes": -1}`, `:1:24: ` + rng + `number -1`},
		{`{"artifacts.maxBytes": 65535}`, `:1:24: ` + rng + `number 65535`},
		{`{"artifacts.maxBytes": 100000.5}`, `:1:24: ` + rng + `number 100000.5`},
		{`{"artifacts.maxBytes": "1GB"}`, `:1:24: ` + rng + `string "1GB"`},
		{`{"artifacts.maxBytes": 1e300}`, `:1:24: ` + rng + `number 1e+300`},
		{`{"artifacts": 5}`, `:1:15: artifacts: expected object, got number`},
	}
	for _, c := range cases {
		p := writeSettings(t, dir, c.content)
		_, err := LoadSettingsFrom(p, "")
		if err == nil {
			t.Errorf("%q: no error", c.content)
			continue
		}
		if want := "settings: " + p + c.want; err.Error() != want {
			t.Errorf("%q:\n got  %q\n want %q", c.content, err, want)
		}
	}
}

func writeSettingsAt(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
