package config

import (
	"agentsh/internal/sandbox"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSandboxSettingsDefaults: nothing configured is workspace-write, no
// network, the default denyRead, no yolo.
func TestSandboxSettingsDefaults(t *testing.T) {
	s := loadOK(t, "", "")
	want := SandboxSettings{Mode: sandbox.WorkspaceWrite}
	if !reflect.DeepEqual(s.Sandbox, want) {
		t.Errorf("defaults: %+v, want %+v", s.Sandbox, want)
	}
	if got := s.Sandbox.Describe(); got != sandbox.Describe(sandbox.WorkspaceWrite, false, false) {
		t.Errorf("Describe = %q", got)
	}
}

// TestSandboxSettingsParse: every key nested or dotted, merged like the
// others (the project's list replaces the global one; null resets).
func TestSandboxSettingsParse(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		global, project string
		want            SandboxSettings
	}{
		{`{"sandbox": {"mode": "read-only", "network": "on"}}`, "",
			SandboxSettings{Mode: sandbox.ReadOnly, Network: true}},
		{`{"sandbox.mode": "off", "yolo": true}`, "",
			SandboxSettings{Mode: sandbox.Off, Yolo: true}},
		{`{"sandbox": {"writablePaths": ["~/.cache", "build"], "denyRead": []}}`, "",
			SandboxSettings{Mode: sandbox.WorkspaceWrite, WritablePaths: []string{"~/.cache", "build"}, DenyRead: []string{}}},
		{`{"sandbox.writablePaths": ["/a"], "sandbox.network": "on"}`, `{"sandbox": {"writablePaths": ["/b"], "network": null}}`,
			SandboxSettings{Mode: sandbox.WorkspaceWrite, WritablePaths: []string{"/b"}}},
		{`{"yolo": true, "sandbox.mode": "read-only"}`, `{"yolo": false}`,
			SandboxSettings{Mode: sandbox.ReadOnly}},
		{`{"sandbox": null}`, "", SandboxSettings{Mode: sandbox.WorkspaceWrite}},
	}
	for _, c := range cases {
		s, _ := loadPair(t, dir, c.global, c.project)
		if c.project != "" {
			// What the keys mean once trusted (trust_test.go: before).
			var err error
			if s, err = LoadSettingsTrusting(filepath.Join(dir, "global.json"), filepath.Join(dir, "project.json"), true); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(s.Sandbox, c.want) {
			t.Errorf("%s + %s:\n got  %+v\n want %+v", c.global, c.project, s.Sandbox, c.want)
		}
	}
}

// TestSandboxSettingsRefused: wrong values are located errors naming the
// key and what it takes.
func TestSandboxSettingsRefused(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ content, want string }{
		{`{"sandbox": {"mode": "strict"}}`, `:1:22: sandbox.mode: must be "workspace-write", "read-only" or "off", got string "strict"`},
		{`{"sandbox.mode": 1}`, `:1:18: sandbox.mode: must be "workspace-write", "read-only" or "off", got number 1`},
		{`{"sandbox.network": true}`, `:1:21: sandbox.network: must be "on" or "off", got boolean true`},
		{`{"sandbox": "off"}`, `:1:13: sandbox: expected object, got string`},
		{`{"sandbox.writablePaths": "/tmp"}`, `:1:27: sandbox.writablePaths: expected array of paths, got string`},
		{`{"sandbox.writablePaths": ["/a", 3]}`, `:1:34: sandbox.writablePaths[1]: expected string, got number`},
		{`{"sandbox.denyRead": [" "]}`, `:1:23: sandbox.denyRead[0]: must not be empty`},
		{`{"sandbox.denyRead": ["~root/.ssh"]}`, `:1:23: sandbox.denyRead[0]: only ~ and ~/… are expanded, got string "~root/.ssh"`},
		{`{"yolo": "yes"}`, `:1:10: yolo: expected boolean, got string "yes"`},
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

// TestSandboxFlagsPrecedence: --yolo beats everything, --sandbox MODE beats
// sandbox.mode and a yolo setting, no flag leaves the settings.
func TestSandboxFlagsPrecedence(t *testing.T) {
	cases := []struct {
		set  SandboxSettings
		f    SandboxFlags
		want sandbox.Mode
		yolo bool
	}{
		{SandboxSettings{Mode: sandbox.ReadOnly}, SandboxFlags{}, sandbox.ReadOnly, false},
		{SandboxSettings{Mode: sandbox.ReadOnly}, SandboxFlags{Mode: sandbox.Off}, sandbox.Off, false},
		{SandboxSettings{Mode: sandbox.Off}, SandboxFlags{Mode: sandbox.WorkspaceWrite}, sandbox.WorkspaceWrite, false},
		{SandboxSettings{Mode: sandbox.WorkspaceWrite, Yolo: true}, SandboxFlags{}, sandbox.Off, true},
		{SandboxSettings{Mode: sandbox.WorkspaceWrite, Yolo: true}, SandboxFlags{Mode: sandbox.ReadOnly}, sandbox.ReadOnly, false},
		{SandboxSettings{Mode: sandbox.ReadOnly}, SandboxFlags{Yolo: true}, sandbox.Off, true},
	}
	for _, c := range cases {
		got := c.set.With(c.f)
		if got.Effective() != c.want || got.Yolo != c.yolo {
			t.Errorf("%+v with %+v: mode %q yolo %v, want %q %v", c.set, c.f, got.Effective(), got.Yolo, c.want, c.yolo)
		}
	}
}

// TestSandboxPolicy: the model's policy resolves the paths: ~ from HOME,
// relative from the working directory, the temp directory writable, the
// default denyRead with agentsh's own folders, the artifacts given back.
func TestSandboxPolicy(t *testing.T) {
	if sandbox.Unavailable() != "" {
		t.Skip(sandbox.Unavailable())
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	work := filepath.Join(home, "proj")
	arts := filepath.Join(home, ".local/share/agentsh/sessions/-proj/a_artifacts")

	s := SandboxSettings{Mode: sandbox.WorkspaceWrite, WritablePaths: []string{"~/.cache", "build", "/opt/x/"}}
	p := s.Policy(work, arts)
	want := &sandbox.Policy{
		Mode: sandbox.WorkspaceWrite, Workdir: work,
		Writable: []string{home + "/.cache", work + "/build", "/opt/x", tmp},
		DenyRead: []string{home + "/.ssh", home + "/.gnupg", home + "/.aws", home + "/.config/gcloud",
			home + "/.config/agentsh", home + "/.local/share/agentsh"},
		AllowRead: []string{arts},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("policy:\n got  %+v\n want %+v", p, want)
	}

	ro := SandboxSettings{Mode: sandbox.ReadOnly, WritablePaths: []string{"/opt/x"}, Network: true, DenyRead: []string{"~"}}.Policy(work, "")
	if ro.Mode != sandbox.ReadOnly || ro.Writable != nil || !ro.Network || !reflect.DeepEqual(ro.DenyRead, []string{home}) || ro.AllowRead != nil {
		t.Errorf("read-only policy: %+v", ro)
	}
	for _, off := range []SandboxSettings{{Mode: sandbox.Off}, {Mode: sandbox.WorkspaceWrite, Yolo: true}, {}} {
		if p := off.Policy(work, arts); p != nil {
			t.Errorf("%+v: policy %+v, want none", off, p)
		}
	}
	os.Unsetenv("HOME")
	if p := s.Policy(work, ""); len(p.DenyRead) != 2 || p.Writable[0] != work+"/build" {
		t.Errorf("without HOME the ~ paths are dropped: %+v", p)
	}
}
