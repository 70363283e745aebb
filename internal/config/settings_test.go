package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeSettings(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadOK(t *testing.T, global, project string) *Settings {
	t.Helper()
	s, err := LoadSettingsFrom(global, project)
	if err != nil {
		t.Fatalf("LoadSettingsFrom: %v", err)
	}
	return s
}

// loadTrusted is loadOK with the project's folder trusted (--trust-project):
// what merging does when every value of the project file applies.
func loadTrusted(t *testing.T, global, project string) *Settings {
	t.Helper()
	s, err := LoadSettingsTrusting(global, project, true)
	if err != nil {
		t.Fatalf("LoadSettingsTrusting: %v", err)
	}
	return s
}

func TestSettingsDefaultsWhenFilesMissing(t *testing.T) {
	t.Setenv(ShellPrefixEnv, "")
	dir := t.TempDir()
	for _, paths := range [][2]string{
		{filepath.Join(dir, "nope.json"), filepath.Join(dir, "x", "nope.json")},
		{"", ""},
	} {
		s := loadOK(t, paths[0], paths[1])
		if s.VirtualTerminal != "off" || s.InterceptorEnabled || s.InterceptorPatterns != nil ||
			s.ShellPath != "" || s.ShellPrefix != "" || s.ShellEnv != nil || len(s.Sources) != 0 {
			t.Errorf("defaults for %q: got %+v", paths, s)
		}
		if s.Raw == nil || len(s.Raw) != 0 {
			t.Errorf("Raw = %#v, want empty non-nil map", s.Raw)
		}
	}
}

func TestSettingsNestedKeys(t *testing.T) {
	t.Setenv(ShellPrefixEnv, "")
	g := writeSettings(t, t.TempDir(), `{
  "bash": {"virtualTerminal": "on"},
  "bashInterceptor": {
    "enabled": true,
    "patterns": [
      {"pattern": "^\\s*cat\\s+", "flags": "i", "tool": "read", "message": "Use read"},
      {"pattern": "^grep", "tool": "grep", "message": "Use grep"}
    ]
  },
  "shell": {"path": "/bin/zsh", "prefix": "time", "env": {"A": "1", "B": ""}}
}`)
	s := loadOK(t, g, "")
	if s.VirtualTerminal != "on" || !s.InterceptorEnabled || s.ShellPath != "/bin/zsh" || s.ShellPrefix != "time" {
		t.Errorf("scalars: %+v", s)
	}
	wantPatterns := []InterceptorPattern{
		{Pattern: `^\s*cat\s+`, Flags: "i", Tool: "read", Message: "Use read"},
		{Pattern: "^grep", Tool: "grep", Message: "Use grep"},
	}
	if !reflect.DeepEqual(s.InterceptorPatterns, wantPatterns) {
		t.Errorf("patterns = %#v, want %#v", s.InterceptorPatterns, wantPatterns)
	}
	if want := map[string]string{"A": "1", "B": ""}; !reflect.DeepEqual(s.ShellEnv, want) {
		t.Errorf("env = %#v, want %#v", s.ShellEnv, want)
	}
	if !reflect.DeepEqual(s.Sources, []string{g}) {
		t.Errorf("Sources = %v, want [%s]", s.Sources, g)
	}
}

func TestSettingsDottedKeysNormalised(t *testing.T) {
	t.Setenv(ShellPrefixEnv, "")
	g := writeSettings(t, t.TempDir(), `{
  "bash.virtualTerminal": "on",
  "bashInterceptor.enabled": true,
  "shell.env": {"A": "1"},
  "shell.env.B": "2",
  "shell": {"path": "/bin/sh"}
}`)
	s := loadOK(t, g, "")
	want := map[string]any{
		"bash":            map[string]any{"virtualTerminal": "on"},
		"bashInterceptor": map[string]any{"enabled": true},
		"shell": map[string]any{
			"path": "/bin/sh",
			"env":  map[string]any{"A": "1", "B": "2"},
		},
	}
	if !reflect.DeepEqual(s.Raw, want) {
		t.Errorf("Raw = %#v\nwant %#v", s.Raw, want)
	}
	if s.VirtualTerminal != "on" || !s.InterceptorEnabled || s.ShellPath != "/bin/sh" {
		t.Errorf("typed fields: %+v", s)
	}
	if want := map[string]string{"A": "1", "B": "2"}; !reflect.DeepEqual(s.ShellEnv, want) {
		t.Errorf("env = %#v", s.ShellEnv)
	}
}

func TestSettingsOddDottedKeysKeptLiterally(t *testing.T) {
	g := writeSettings(t, t.TempDir(), `{"a..b": 1, ".x": 2, "y.": 3}`)
	s := loadOK(t, g, "")
	want := map[string]any{"a..b": 1.0, ".x": 2.0, "y.": 3.0}
	if !reflect.DeepEqual(s.Raw, want) {
		t.Errorf("Raw = %#v, want %#v", s.Raw, want)
	}
}

func TestSettingsMergeOrder(t *testing.T) {
	t.Setenv(ShellPrefixEnv, "")
	g := writeSettings(t, t.TempDir(), `{
  "bash": {"virtualTerminal": "on"},
  "bashInterceptor": {"enabled": true, "patterns": [
    {"pattern": "a", "tool": "t", "message": "m"},
    {"pattern": "b", "tool": "t", "message": "m"}
  ]},
  "shell": {"path": "/bin/bash", "prefix": "g", "env": {"A": "1", "B": "2"}},
  "globalOnly": [1, 2]
}`)
	p := writeSettings(t, t.TempDir(), `{
  "bashInterceptor.patterns": [{"pattern": "c", "tool": "t2", "message": "m2"}],
  "shell": {"prefix": "p", "env": {"B": "3", "C": "4"}},
  "globalOnly": [3]
}`)
	s := loadTrusted(t, g, p)
	if s.VirtualTerminal != "on" || !s.InterceptorEnabled || s.ShellPath != "/bin/bash" {
		t.Errorf("global values lost: %+v", s)
	}
	if s.ShellPrefix != "p" {
		t.Errorf("prefix = %q, want project's p", s.ShellPrefix)
	}
	if want := map[string]string{"A": "1", "B": "3", "C": "4"}; !reflect.DeepEqual(s.ShellEnv, want) {
		t.Errorf("env = %#v, want key-by-key merge %#v", s.ShellEnv, want)
	}
	if want := []InterceptorPattern{{Pattern: "c", Tool: "t2", Message: "m2"}}; !reflect.DeepEqual(s.InterceptorPatterns, want) {
		t.Errorf("patterns = %#v, want the project array replacing the global one", s.InterceptorPatterns)
	}
	if got := s.Raw["globalOnly"]; !reflect.DeepEqual(got, []any{3.0}) {
		t.Errorf("unknown array = %#v, want replaced by [3]", got)
	}
	if !reflect.DeepEqual(s.Sources, []string{g, p}) {
		t.Errorf("Sources = %v", s.Sources)
	}

	// Only the project file present.
	s = loadTrusted(t, filepath.Join(t.TempDir(), "missing.json"), p)
	if s.ShellPrefix != "p" || !reflect.DeepEqual(s.Sources, []string{p}) {
		t.Errorf("project only: %+v", s)
	}
}

func TestSettingsNullResetsAndEmptyArray(t *testing.T) {
	g := writeSettings(t, t.TempDir(), `{"bash.virtualTerminal": "on", "bashInterceptor.patterns": [{"pattern": "a", "tool": "t", "message": "m"}]}`)
	p := writeSettings(t, t.TempDir(), `{"bash": {"virtualTerminal": null}, "bashInterceptor": {"patterns": null}}`)
	s := loadOK(t, g, p)
	if s.VirtualTerminal != "off" || s.InterceptorPatterns != nil {
		t.Errorf("null did not reset: vt=%q patterns=%#v", s.VirtualTerminal, s.InterceptorPatterns)
	}

	p = writeSettings(t, t.TempDir(), `{"bashInterceptor": {"patterns": []}}`)
	s = loadOK(t, g, p)
	if s.InterceptorPatterns == nil || len(s.InterceptorPatterns) != 0 {
		t.Errorf("empty array: patterns = %#v, want empty non-nil (configured, no rules)", s.InterceptorPatterns)
	}
}

func TestSettingsEmptyFileAndBOM(t *testing.T) {
	empty := writeSettings(t, t.TempDir(), " \n")
	s := loadOK(t, empty, "")
	if !reflect.DeepEqual(s.Sources, []string{empty}) || len(s.Raw) != 0 {
		t.Errorf("empty file: %+v", s)
	}
	bom := writeSettings(t, t.TempDir(), "\ufeff{\"bash.virtualTerminal\": \"on\"}")
	if s := loadOK(t, bom, ""); s.VirtualTerminal != "on" {
		t.Errorf("BOM file: vt = %q", s.VirtualTerminal)
	}
}

func TestSettingsMalformedJSON(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ content, want string }{
		{"{\n  \"bash\": {\n    \"virtualTerminal\": \"on\",  }\n}", ":3:31: invalid character '}' looking for beginning of object key string"},
		{`{"bash": {`, ":1:11: unexpected end of JSON input"},
		{"{\n  \"a\" 1\n}", ":2:7: invalid character '1' after object key"},
		{"{\"a\": tru}", ":1:10: invalid character '}' in literal true (expecting 'e')"},
		{"{} x", ":1:4: invalid character 'x' after top-level value"},
		// Column counts characters, not bytes.
		{"{\"caf\u00e9\": 1,}", ":1:12: invalid character '}' looking for beginning of object key string"},
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

func TestSettingsWrongTypes(t *testing.T) {
	dir := t.TempDir()
	pattern := `{"pattern": "a", "tool": "t", "message": "m"}`
	cases := []struct{ content, want string }{
		{"{\n  \"bashInterceptor\": {\n    \"enabled\": \"yes\"\n  }\n}", `:3:16: bashInterceptor.enabled: expected boolean, got string "yes"`},
		{`{"bashInterceptor.enabled": 1}`, `:1:29: bashInterceptor.enabled: expected boolean, got number 1`},
		{`{"bash": {"virtualTerminal": "maybe"}}`, `:1:30: bash.virtualTerminal: must be "on" or "off", got string "maybe"`},
		{`{"bash.virtualTerminal": true}`, `:1:26: bash.virtualTerminal: must be "on" or "off", got boolean true`},
		{`{"bash": 5}`, `:1:10: bash: expected object, got number`},
		{`{"bashInterceptor": {"patterns": {"pattern": "a"}}}`, `:1:34: bashInterceptor.patterns: expected array of objects, got object`},
		{`{"bashInterceptor": {"patterns": [` + pattern + `, "ls"]}}`, `:1:82: bashInterceptor.patterns[1]: expected object, got string`},
		{"{\"bashInterceptor.patterns\": [\n  " + pattern + ",\n  " + pattern + ",\n  {\"pattern\": \"a\", \"tool\": 7, \"message\": \"m\"}\n]}", `:4:28: bashInterceptor.patterns[2].tool: expected string, got number`},
		{`{"bashInterceptor.patterns": [{"pattern": "a", "tool": "t"}]}`, `:1:31: bashInterceptor.patterns[0].message: required string is missing`},
		{`{"bashInterceptor.patterns": [{"pattern": "a", "flags": null, "tool": "t", "message": "m"}]}`, `:1:57: bashInterceptor.patterns[0].flags: expected string, got null`},
		{`{"bashInterceptor.patterns": [{"pattern": "", "tool": "t", "message": "m"}]}`, `:1:43: bashInterceptor.patterns[0].pattern: must not be empty`},
		{`{"shell": {"path": 1}}`, `:1:20: shell.path: expected string, got number`},
		{`{"shell.prefix": ["a"]}`, `:1:18: shell.prefix: expected string, got array`},
		{`{"shell": {"env": {"A": "1", "B": 2}}}`, `:1:35: shell.env.B: expected string, got number`},
		{`{"shell.env": "A=1"}`, `:1:15: shell.env: expected object, got string`},
		{"\n  [1, 2]", `:2:3: top level must be a JSON object, got array`},
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

func TestSettingsErrorNamesTheFileAndKey(t *testing.T) {
	g := writeSettings(t, t.TempDir(), `{"bash.virtualTerminal": "on"}`)
	p := writeSettings(t, t.TempDir(), `{"bashInterceptor": {"enabled": "yes"}}`)
	_, err := LoadSettingsFrom(g, p)
	var se *SettingsError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SettingsError", err)
	}
	if se.File != p || se.Key != "bashInterceptor.enabled" || se.Line != 1 || se.Col != 33 {
		t.Errorf("SettingsError = %+v, want project file, key bashInterceptor.enabled at 1:33", se)
	}
}

func TestSettingsUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	asDir := filepath.Join(dir, "settings.json")
	if err := os.Mkdir(asDir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSettingsFrom(asDir, "")
	if err == nil || !strings.HasPrefix(err.Error(), "settings: read "+asDir+":") {
		t.Errorf("error = %v, want a read error naming %s", err, asDir)
	}
}

func TestSettingsEnvOverridesPrefix(t *testing.T) {
	g := writeSettings(t, t.TempDir(), `{"shell.prefix": "from-file"}`)

	t.Setenv(ShellPrefixEnv, "from-env")
	if s := loadOK(t, g, ""); s.ShellPrefix != "from-env" {
		t.Errorf("prefix = %q, want from-env", s.ShellPrefix)
	}
	if s := loadOK(t, "", ""); s.ShellPrefix != "from-env" {
		t.Errorf("no files: prefix = %q, want from-env", s.ShellPrefix)
	}

	t.Setenv(ShellPrefixEnv, "")
	if s := loadOK(t, g, ""); s.ShellPrefix != "from-file" {
		t.Errorf("empty env: prefix = %q, want from-file", s.ShellPrefix)
	}
}

func TestSettingsUnknownKeysKept(t *testing.T) {
	g := writeSettings(t, t.TempDir(), `{
  "future": {"x": 1, "list": [{"a.b": true}]},
  "bash.autoBackground.enabled": true,
  "bash": {"virtualTerminal": "off", "stripTrailingHeadTail": false}
}`)
	s := loadOK(t, g, "")
	for key, want := range map[string]any{
		"future.x":                    1.0,
		"bash.autoBackground.enabled": true,
		"bash.stripTrailingHeadTail":  false,
		"future.list":                 []any{map[string]any{"a": map[string]any{"b": true}}},
	} {
		got, ok := s.Lookup(key)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Lookup(%q) = %#v, %v; want %#v", key, got, ok, want)
		}
	}
	if _, ok := s.Lookup("bash.nope"); ok {
		t.Error("Lookup(bash.nope) found something")
	}
	if _, ok := s.Lookup("future.x.deeper"); ok {
		t.Error("Lookup through a scalar found something")
	}
}

func TestLoadSettingsUsesConfigDirAndProject(t *testing.T) {
	t.Setenv(ShellPrefixEnv, "")
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if err := os.MkdirAll(filepath.Join(cfg, "agentsh"), 0o700); err != nil {
		t.Fatal(err)
	}
	g := writeSettings(t, filepath.Join(cfg, "agentsh"), `{"shell": {"path": "/bin/zsh", "prefix": "g"}}`)

	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".agentsh"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := writeSettings(t, filepath.Join(cwd, ".agentsh"), `{"shell.prefix": "p"}`)

	if GlobalSettingsPath() != g || ProjectSettingsPath(cwd) != p {
		t.Fatalf("paths: %q %q", GlobalSettingsPath(), ProjectSettingsPath(cwd))
	}
	s, err := LoadSettings(cwd)
	if err != nil {
		t.Fatal(err)
	}
	// The project's shell.prefix loosens: it waits for the folder's trust,
	// which lives in the same config folder.
	if s.ShellPrefix != "g" || s.Project == nil || s.Project.Trusted || s.Project.Folder != cwd || s.Project.Keys() != "shell.prefix" {
		t.Fatalf("LoadSettings before trust: %+v %+v", s, s.Project)
	}
	if err := TrustFolder(cwd, s.Project.Hash); err != nil {
		t.Fatal(err)
	}
	if s, err = LoadSettings(cwd); err != nil {
		t.Fatal(err)
	}
	if s.ShellPath != "/bin/zsh" || s.ShellPrefix != "p" || !reflect.DeepEqual(s.Sources, []string{g, p}) || !s.Project.Trusted {
		t.Errorf("LoadSettings: %+v", s)
	}

	// A cwd without a project file loads the global one alone.
	s, err = LoadSettings(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s.ShellPrefix != "g" || !reflect.DeepEqual(s.Sources, []string{g}) {
		t.Errorf("no project file: %+v", s)
	}
}

func TestSettingsSameFileLoadedOnce(t *testing.T) {
	g := writeSettings(t, t.TempDir(), `{}`)
	s := loadOK(t, g, g)
	if !reflect.DeepEqual(s.Sources, []string{g}) {
		t.Errorf("Sources = %v, want the file once", s.Sources)
	}
}
