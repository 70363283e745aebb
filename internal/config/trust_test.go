package config

import (
	"agentsh/internal/bash"
	"agentsh/internal/sandbox"
	"agentsh/internal/xdg"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProjectLooseningNeedsTrust: each key of a project file that would
// loosen the user's own settings has no effect until the user trusts the
// folder for exactly that value (through LoadSettings, the path every mode
// takes); trusted, it applies; another value is asked about again.
func TestProjectLooseningNeedsTrust(t *testing.T) {
	t.Setenv(ShellPrefixEnv, "")
	cases := []struct {
		key, project, other string
		applied             func(*Settings) bool
	}{
		{"yolo", `{"yolo": true}`, ``, func(s *Settings) bool { return s.Sandbox.Yolo }},
		{"sandbox.mode", `{"sandbox": {"mode": "off"}}`, ``, func(s *Settings) bool { return s.Sandbox.Mode == sandbox.Off }},
		{"sandbox.network", `{"sandbox": {"network": "on"}}`, ``, func(s *Settings) bool { return s.Sandbox.Network }},
		{"sandbox.writablePaths", `{"sandbox": {"writablePaths": ["~"]}}`, `{"sandbox": {"writablePaths": ["/"]}}`,
			func(s *Settings) bool { return slices.Contains(s.Sandbox.WritablePaths, "~") }},
		{"sandbox.denyRead", `{"sandbox": {"denyRead": []}}`, `{"sandbox": {"denyRead": ["~/.gnupg"]}}`,
			func(s *Settings) bool { return s.Sandbox.DenyRead != nil && len(s.Sandbox.DenyRead) == 0 }},
		{"bash.patterns", `{"bash": {"patterns": [{"allow": "/.*/"}]}}`, `{"bash": {"patterns": [{"allow": "cat"}]}}`,
			func(s *Settings) bool {
				return slices.Contains(s.BashPatterns, bash.PatternRule{Action: bash.PatternAllow, Pattern: "/.*/"})
			}},
		{"shell.path", `{"shell": {"path": "/bin/sh"}}`, `{"shell": {"path": "/bin/dash"}}`, func(s *Settings) bool { return s.ShellPath == "/bin/sh" }},
		{"shell.prefix", `{"shell": {"prefix": "env X=1"}}`, `{"shell": {"prefix": "env X=2"}}`, func(s *Settings) bool { return s.ShellPrefix == "env X=1" }},
		{"shell.env.BASH_ENV", `{"shell": {"env": {"BASH_ENV": "/tmp/x"}}}`, `{"shell": {"env": {"BASH_ENV": "/tmp/y"}}}`,
			func(s *Settings) bool { return s.ShellEnv["BASH_ENV"] == "/tmp/x" }},
		{"shell.env.PATH", `{"shell.env.PATH": "/evil:/usr/bin:/bin"}`, `{"shell.env.PATH": "/evil2"}`,
			func(s *Settings) bool { return s.ShellEnv["PATH"] == "/evil:/usr/bin:/bin" }},
		{"shell.scrubEnv", `{"shell": {"scrubEnv": []}}`, `{"shell": {"scrubEnv": ["X"]}}`,
			func(s *Settings) bool { return len(s.ShellScrubEnv) == 0 }},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			isolateConfig(t)
			writeUserSettings(t, `{"shell": {"env": {"KEEP": "1"}}}`)
			cwd := t.TempDir()
			writeProjectSettings(t, cwd, c.project)
			s, err := LoadSettings(cwd)
			if err != nil {
				t.Fatal(err)
			}
			if c.applied(s) {
				t.Fatalf("%s applied without trust: %+v", c.project, s)
			}
			if s.Project == nil || s.Project.Trusted || s.Project.Keys() != c.key || s.Project.Folder != cwd {
				t.Fatalf("Project %+v, want %s untrusted in %s", s.Project, c.key, cwd)
			}
			if s.ShellEnv["KEEP"] != "1" {
				t.Errorf("the user's own env was lost: %v", s.ShellEnv)
			}
			if err := TrustFolder(cwd, s.Project.Hash); err != nil {
				t.Fatal(err)
			}
			if s, err = LoadSettings(cwd); err != nil {
				t.Fatal(err)
			}
			if !c.applied(s) || !s.Project.Trusted {
				t.Fatalf("%s not applied once trusted: %+v", c.project, s)
			}
			if c.other == "" {
				return
			}
			writeProjectSettings(t, cwd, c.other)
			if s, err = LoadSettings(cwd); err != nil {
				t.Fatal(err)
			}
			if s.Project == nil || s.Project.Trusted {
				t.Errorf("another value %s is trusted without asking: %+v", c.other, s.Project)
			}
		})
	}
}

// TestProjectTighteningApplies: a project file that only tightens (deny
// and ask rules, read-only over workspace-write, more denyRead, more
// scrubbing) applies without a question.
func TestProjectTighteningApplies(t *testing.T) {
	isolateConfig(t)
	isolateData(t)
	writeUserSettings(t, `{"sandbox": {"network": "on"}, "bash": {"patterns": [{"deny": "rm"}]}}`)
	cwd := t.TempDir()
	deny, _ := json.Marshal(append(DefaultDenyRead(), "~/.kube"))
	writeProjectSettings(t, cwd, `{"sandbox": {"mode": "read-only", "network": "off", "denyRead": `+string(deny)+`},
		"bash": {"patterns": [{"ask": "git push"}, {"deny": "curl"}]}, "yolo": false,
		"shell": {"scrubEnv": ["*_API_KEY", "*_TOKEN", "*SECRET*", "*PASSWORD*", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "MORE"]}}`)
	s, err := LoadSettings(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if s.Project != nil {
		t.Fatalf("tightening asks for trust: %+v", s.Project)
	}
	want := []bash.PatternRule{{Action: bash.PatternDeny, Pattern: "rm"}, {Action: bash.PatternAsk, Pattern: "git push"}, {Action: bash.PatternDeny, Pattern: "curl"}}
	if s.Sandbox.Mode != sandbox.ReadOnly || s.Sandbox.Network || !slices.Contains(s.Sandbox.DenyRead, "~/.kube") ||
		!slices.Equal(s.BashPatterns, want) || !slices.Contains(s.ShellScrubEnv, "MORE") {
		t.Errorf("settings %+v", s)
	}
}

// TestUntrustedErrorText: the refusal of print, json, RPC and exec.
func TestUntrustedErrorText(t *testing.T) {
	p := &ProjectTrust{Folder: "/w", File: "/w/.agentsh/settings.json",
		Loosens: []Loosening{{"yolo", "true"}, {"bash.patterns", `{"allow": "/.*/"}`}}}
	want := `/w/.agentsh/settings.json loosens your own settings (yolo: true; bash.patterns: {"allow": "/.*/"}) ` +
		`and this folder is not trusted: start agentsh in /w to answer its trust question, or pass --trust-project to apply it for this run`
	if got := (&UntrustedError{Project: p}).Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := UntrustedNotice(p), "Folder not trusted: ignoring yolo, bash.patterns from /w/.agentsh/settings.json (the rest of it applies)."; got != want {
		t.Errorf("notice %q, want %q", got, want)
	}
}

// TestUntrustedTextsEscapeControls: a shell.env name or value the model
// wrote with an escape sequence (which could erase the line above on the
// user's terminal) or a bidi override reaches the refusal and the notice
// as an escape.
func TestUntrustedTextsEscapeControls(t *testing.T) {
	cwd := t.TempDir()
	writeProjectSettings(t, cwd, `{"shell": {"env": {"A\u001b[1A\u001b[2K": "\u202ex\u009b"}}}`)
	s, err := LoadSettingsFrom("", ProjectSettingsPath(cwd))
	if err != nil || s.Project == nil {
		t.Fatalf("%v %v", s, err)
	}
	msg := (&UntrustedError{Project: s.Project}).Error()
	notice := UntrustedNotice(s.Project) + UntrustedChangeNotice(s.Project)
	for _, text := range []string{msg, notice} {
		if strings.ContainsAny(text, "\x1b\u202e\u009b") {
			t.Errorf("raw controls in %q", text)
		}
	}
	if want := `(shell.env.A\x1b[1A\x1b[2K: "\u202ex\u009b")`; !strings.Contains(msg, want) {
		t.Errorf("refusal %q lacks %q", msg, want)
	}
	if want := `ignoring shell.env.A\x1b[1A\x1b[2K from`; !strings.Contains(notice, want) {
		t.Errorf("notice %q lacks %q", notice, want)
	}
}

// writeUserSettings writes the user's own (global) settings file.
func writeUserSettings(t *testing.T, content string) {
	t.Helper()
	if err := os.MkdirAll(xdg.ConfigDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	writeSettingsAt(t, xdg.ConfigDir(), "settings.json", content)
}

// writeProjectSettings writes cwd's .agentsh/settings.json.
func writeProjectSettings(t *testing.T, cwd, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(cwd, ".agentsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ProjectSettingsPath(cwd), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
