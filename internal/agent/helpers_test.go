package agent

import (
	"agentsh/internal/config"
	"agentsh/internal/session"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Copies of the session and config tests' helpers that the agent's tests
// use too.

func removeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// loadAll loads p and fails on any bad line.
func loadAll(t *testing.T, p string) []session.Message {
	t.Helper()
	sess, errs, err := session.Load(p)
	if err != nil || len(errs) != 0 {
		t.Fatalf("Load: %v %v", errs, err)
	}
	return sess.Messages
}

// isolateData points the XDG data dir at a fresh temp folder.
func isolateData(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end in a newline: %q", path, data)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const testHeader = `{"type":"session","version":1,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`

// isolateConfig gives the test a config folder of its own: where the
// user's trust answers and "always" rules are written.
func isolateConfig(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func writeSettingsAt(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeSettings(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadOK(t *testing.T, global, project string) *config.Settings {
	t.Helper()
	s, err := config.LoadSettingsFrom(global, project)
	if err != nil {
		t.Fatalf("LoadSettingsFrom: %v", err)
	}
	return s
}

// loadTrusted is loadOK with the project's folder trusted (--trust-project):
// what merging does when every value of the project file applies.
func loadTrusted(t *testing.T, global, project string) *config.Settings {
	t.Helper()
	s, err := config.LoadSettingsTrusting(global, project, true)
	if err != nil {
		t.Fatalf("LoadSettingsTrusting: %v", err)
	}
	return s
}

func settingsFrom(t *testing.T, json string) *config.Settings {
	t.Helper()
	p := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(p, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := config.LoadSettingsFrom(p, filepath.Join(t.TempDir(), "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
