package tui

import (
	"agentsh/internal/config"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project settings file broken at start does not keep the TUI from
// starting: a warning names the file and its error, the status
// line says it does not load, `!` commands run on the defaults, and the `!`
// command that fixes the file takes the warning off the status line.
func TestSettingsBrokenAtStart(t *testing.T) {
	var project string
	h := newHarnessWith(t, 100, 40, false, false, func(cfg *Config) {
		project = config.ProjectSettingsPath(cfg.Session.Cwd())
		if err := os.MkdirAll(filepath.Dir(project), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(project, []byte("{\n  \"shell\": {\"env\": \n"), 0o644); err != nil {
			t.Fatal(err)
		}
		global := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "agentsh", "settings.json")
		live, err := config.WatchSettingsFrom(global, project)
		if err == nil {
			t.Fatal("the broken file loads")
		}
		cfg.Session.FollowSettings(live)
		cfg.Settings = live
	})
	flat := func() string { return strings.Join(strings.Fields(h.screen()), " ") }
	want := "settings: " + project + ":3:1: unexpected end of JSON input `!` commands run with the default settings until the file is fixed; the model's commands are refused."
	if s := flat(); !strings.Contains(s, want) {
		t.Errorf("no start warning %q:\n%s", want, h.screen())
	}
	if s := h.statusLine(); !strings.Contains(s, "⚠ .agentsh/settings.json does not load") {
		t.Errorf("status line: %q", s)
	}

	h.bang("echo hi")
	h.waitFor("the command's end", h.bangIdle)
	if b := lastBang(t, h.m.session()); b.ExitCode == nil || *b.ExitCode != 0 || b.Output != "hi\n" {
		t.Errorf("the ! command on broken settings: %+v %q", b.ExitCode, b.Output)
	}
	if n := strings.Count(flat(), want); n != 2 {
		t.Errorf("%d warnings, want the start's and the command's:\n%s", n, h.screen())
	}

	h.bang("printf '{}' > .agentsh/settings.json")
	h.waitFor("the command's end", h.bangIdle)
	if s := h.statusLine(); strings.Contains(s, "does not load") {
		t.Errorf("status line after the fix: %q", s)
	}
	s := flat()
	fixed := "The settings files load again: `!` commands and the model's commands use them."
	if strings.Count(s, want) != 2 || !strings.Contains(s, fixed) {
		t.Errorf("after the fix, no third warning and the notice %q:\n%s", fixed, h.screen())
	}
	if data, err := os.ReadFile(project); err != nil || string(data) != "{}" {
		t.Errorf("the fixed file: %q %v", data, err)
	}
}
