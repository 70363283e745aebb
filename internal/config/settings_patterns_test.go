package config

import (
	"reflect"
	"testing"

	"agentsh/internal/bash"
)

// TestSettingsBashPatterns: bash.patterns loads in order into the tool's
// settings, the project's list adds to the global one, and a bad rule is
// located.
func TestSettingsBashPatterns(t *testing.T) {
	global := writeSettings(t, t.TempDir(), `{"bash": {"patterns": [{"deny": "x"}]}}`)
	project := writeSettings(t, t.TempDir(), `{"bash.patterns": [{"allow": "git push"}, {"ask": "/^npm (publish|unpublish)/"}, {"deny": "rm -rf"}]}`)
	s := loadTrusted(t, global, project)
	want := []bash.PatternRule{{Action: bash.PatternDeny, Pattern: "x"}, {Action: bash.PatternAllow, Pattern: "git push"},
		{Action: bash.PatternAsk, Pattern: "/^npm (publish|unpublish)/"}, {Action: bash.PatternDeny, Pattern: "rm -rf"}}
	if !reflect.DeepEqual(s.BashPatterns, want) {
		t.Errorf("patterns %v, want %v", s.BashPatterns, want)
	}
	ts, err := s.ToolSettings()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ts.Patterns, want) {
		t.Errorf("tool settings' patterns %v", ts.Patterns)
	}
	if s := loadOK(t, global, ""); len(s.BashPatterns) != 1 || s.BashPatterns[0].Action != bash.PatternDeny {
		t.Errorf("global patterns %v", s.BashPatterns)
	}

	dir := t.TempDir()
	for content, want := range map[string]string{
		`{"bash": {"patterns": {"allow": "x"}}}`:               ":1:23: bash.patterns: expected array of objects, got object",
		`{"bash": {"patterns": ["x"]}}`:                        ":1:24: bash.patterns[0]: expected object, got string",
		`{"bash": {"patterns": [{"allow": "x", "ask": "y"}]}}`: `:1:24: bash.patterns[0]: must have exactly one of "allow", "ask" or "deny"`,
		`{"bash": {"patterns": [{"permit": "x"}]}}`:            `:1:35: bash.patterns[0].permit: unknown action (want "allow", "ask" or "deny")`,
		`{"bash": {"patterns": [{"deny": 3}]}}`:                ":1:33: bash.patterns[0].deny: expected string, got number",
		`{"bash": {"patterns": [{"deny": " "}]}}`:              ":1:33: bash.patterns[0].deny: must not be empty",
		`{"bash": {"patterns": [{"deny": "/a(/"}]}}`:           ":1:33: bash.patterns[0].deny: error parsing regexp: missing closing ): `a(`",
	} {
		p := writeSettings(t, dir, content)
		_, err := LoadSettingsFrom(p, "")
		if err == nil || err.Error() != "settings: "+p+want {
			t.Errorf("%s:\n got  %v\n want %s", content, err, "settings: "+p+want)
		}
	}
}
