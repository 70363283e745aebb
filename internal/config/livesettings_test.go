package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/bash"
)

func watchOK(t testing.TB, global, project string) *LiveSettings {
	t.Helper()
	l, err := WatchSettingsFrom(global, project)
	if err != nil {
		t.Fatalf("WatchSettingsFrom: %v", err)
	}
	return l
}

func toolOK(t *testing.T, l *LiveSettings) bash.ToolSettings {
	t.Helper()
	ts, err := l.ToolSettings()
	if err != nil {
		t.Fatalf("ToolSettings: %v", err)
	}
	return ts
}

// A settings change applies from the next call, without a restart (spec
// §2.2): env, interceptor, a file that appears, one that goes.
func TestLiveSettingsFollowTheFiles(t *testing.T) {
	gdir, pdir := t.TempDir(), t.TempDir()
	g := writeSettings(t, gdir, `{"shell": {"env": {"A": "1"}}}`)
	p := filepath.Join(pdir, "settings.json")
	l := watchOK(t, g, p)
	ts := toolOK(t, l)
	if ts.Shell.Env["A"] != "1" || ts.InterceptorEnabled || !ts.Shell.LazySnapshot || ts.Shell.Path == "" {
		t.Fatalf("start: %+v", ts)
	}
	writeSettings(t, gdir, `{"shell": {"env": {"A": "2"}}, "bashInterceptor": {"enabled": true}}`)
	if ts := toolOK(t, l); ts.Shell.Env["A"] != "2" || !ts.InterceptorEnabled {
		t.Fatalf("after the edit: %+v", ts)
	}
	// The project's env would loosen the user's: it waits for trust
	// (trust_test.go), the rest of the file applies.
	writeSettings(t, pdir, `{"shell.env.A": "3", "bashInterceptor": {"patterns": [{"pattern": "^ls", "tool": "read", "message": "m"}]}}`)
	if ts := toolOK(t, l); ts.Shell.Env["A"] != "2" || len(ts.InterceptorRules) != 1 || ts.InterceptorRules[0].Pattern != "^ls" {
		t.Fatalf("project file appeared: %+v", ts)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if ts := toolOK(t, l); ts.Shell.Env["A"] != "2" || len(ts.InterceptorRules) != 0 || !ts.InterceptorEnabled {
		t.Fatalf("project file removed: %+v", ts)
	}
	if s, err := l.Current(); err != nil || s.ShellEnv["A"] != "2" || len(s.Sources) != 1 {
		t.Fatalf("Current: %+v %v", s, err)
	}
}

// A rewrite that keeps the size and sets the modification time back (as a
// second save within one clock tick would) is still seen.
func TestLiveSettingsSameSizeSameMtime(t *testing.T) {
	dir := t.TempDir()
	g := writeSettings(t, dir, `{"shell": {"env": {"A": "1"}}}`)
	st, err := os.Stat(g)
	if err != nil {
		t.Fatal(err)
	}
	l := watchOK(t, g, "")
	toolOK(t, l)
	for _, v := range []string{"2", "3"} {
		writeSettings(t, dir, `{"shell": {"env": {"A": "`+v+`"}}}`)
		if err := os.Chtimes(g, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
		if ts := toolOK(t, l); ts.Shell.Env["A"] != v {
			t.Fatalf("rewrite to %s not seen: %+v", v, ts.Shell.Env)
		}
	}
}

// A file saved broken mid-session makes the calls fail with the located
// error (the last good settings come along); fixing it ends that.
func TestLiveSettingsBrokenThenFixed(t *testing.T) {
	dir := t.TempDir()
	g := writeSettings(t, dir, `{"shell": {"env": {"A": "1"}}}`)
	l := watchOK(t, g, "")
	before, _ := l.Current()
	writeSettings(t, dir, `{"shell": {"env": {"A": 2}}}`)
	for range 2 { // the same error while the file stays as it is
		ts, err := l.ToolSettings()
		var se *SettingsError
		if !errors.As(err, &se) || err.Error() != "settings: "+g+":1:25: shell.env.A: expected string, got number" || ts.Shell.Env["A"] != "1" {
			t.Fatalf("broken: %v %+v", err, ts.Shell.Env)
		}
		if s, err := l.Current(); s != before || err == nil {
			t.Fatalf("Current while broken: %p %v", s, err)
		}
	}
	writeSettings(t, dir, `{"shell": {"env": {"A": "4"}}}`)
	if ts := toolOK(t, l); ts.Shell.Env["A"] != "4" {
		t.Fatalf("fixed: %+v", ts.Shell.Env)
	}
	// A shell path that does not resolve is an error of the tool settings.
	writeSettings(t, dir, `{"shell": {"path": "/nonexistent/agentsh-test-shell"}}`)
	if _, err := l.ToolSettings(); err == nil || !strings.Contains(err.Error(), "custom shell path not found") {
		t.Fatalf("bad shell path: %v", err)
	}
	// Broken at start: the error, like LoadSettings, and the defaults.
	bad := writeSettings(t, t.TempDir(), `{`)
	if l, err := WatchSettingsFrom(bad, ""); err == nil || l == nil || l.Loaded() {
		t.Fatalf("a broken file at start: %v", err)
	}
}

// Nothing changed: the same settings, not a new parse of the same files.
func TestLiveSettingsUnchangedKeepsTheSameSettings(t *testing.T) {
	dir := t.TempDir()
	g := writeSettings(t, dir, `{"shell": {"env": {"A": "1"}}}`)
	l := watchOK(t, g, filepath.Join(t.TempDir(), "none.json"))
	a, _ := l.Current()
	b, _ := l.Current()
	// Even rewritten with the same bytes.
	writeSettings(t, dir, `{"shell": {"env": {"A": "1"}}}`)
	c, _ := l.Current()
	if a != b || b != c {
		t.Fatalf("settings rebuilt without a change: %p %p %p", a, b, c)
	}
}

func TestLiveSettingsConcurrent(t *testing.T) {
	dir := t.TempDir()
	writeSettings(t, dir, `{"shell": {"env": {"A": "0"}}}`)
	l := watchOK(t, filepath.Join(dir, "settings.json"), "")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if ts, err := l.ToolSettings(); err != nil || ts.Shell.Env["A"] == "" {
					t.Errorf("%+v %v", ts.Shell.Env, err)
					return
				}
			}
		})
	}
	for i := range 50 {
		// An atomic save, as editors do: never a half-written file.
		tmp := filepath.Join(dir, "tmp")
		if err := os.WriteFile(tmp, fmt.Appendf(nil, `{"shell": {"env": {"A": "%d"}}}`, i), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "settings.json")); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if ts := toolOK(t, l); ts.Shell.Env["A"] != "49" {
		t.Fatalf("last save not seen: %+v", ts.Shell.Env)
	}
}

// BenchmarkLiveSettingsUnchanged is the cost the bash tool and bang
// commands pay per call when the files did not change (two stat calls).
func BenchmarkLiveSettingsUnchanged(b *testing.B) {
	gdir, pdir := b.TempDir(), b.TempDir()
	g := filepath.Join(gdir, "settings.json")
	p := filepath.Join(pdir, "settings.json")
	for _, f := range []string{g, p} {
		if err := os.WriteFile(f, []byte(`{"shell": {"env": {"A": "1"}}, "bashInterceptor": {"enabled": true}}`), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	l := watchOK(b, g, p)
	time.Sleep(racyWindow + 100*time.Millisecond) // past the window where contents are compared
	if _, err := l.ToolSettings(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.ToolSettings(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLiveSettingsRecentlyChanged is the per-call cost within
// racyWindow of a change: the files are read and compared.
func BenchmarkLiveSettingsRecentlyChanged(b *testing.B) {
	dir := b.TempDir()
	g := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(g, []byte(`{"shell": {"env": {"A": "1"}}, "bashInterceptor": {"enabled": true}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	l := watchOK(b, g, filepath.Join(dir, "project.json"))
	for b.Loop() {
		if _, err := l.ToolSettings(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadSettings is what reading the settings on every call
// without the change check would cost.
func BenchmarkLoadSettings(b *testing.B) {
	dir := b.TempDir()
	g := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(g, []byte(`{"shell": {"env": {"A": "1"}}, "bashInterceptor": {"enabled": true}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := LoadSettingsFrom(g, filepath.Join(dir, "project.json"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.ToolSettings(); err != nil {
			b.Fatal(err)
		}
	}
}
