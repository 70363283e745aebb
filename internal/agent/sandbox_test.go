package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/sandbox"
)

// TestModelShellSandboxedBangNot: the model's bash tool gets the session's
// policy, for the directory the session started in even after a `cd`,
// and keeps it when the settings files are edited to loosen it; the
// user's `!` commands get none, and an RPC client's choice is passed on.
func TestModelShellSandboxedBangNot(t *testing.T) {
	if sandbox.Unavailable() != "" {
		t.Skip(sandbox.Unavailable())
	}
	a, _ := newAgent(t)
	g := writeSettingsAt(t, t.TempDir(), "settings.json", `{"sandbox": {"writablePaths": ["out"]}}`)
	l, err := config.WatchSettingsFrom(g, "")
	if err != nil {
		t.Fatal(err)
	}
	a.FollowSettings(l)
	s, _ := l.Current()
	a.SetSandbox(s.Sandbox)

	check := func(when string) {
		t.Helper()
		p := a.ToolContext(bash.ToolSettings{}).Settings.Shell.Sandbox
		if p == nil || p.Mode != sandbox.WorkspaceWrite || p.Workdir != a.StartDir() ||
			!reflect.DeepEqual(p.AllowRead, []string{a.Artifacts().Dir()}) || p.Writable[0] != filepath.Join(a.StartDir(), "out") {
			t.Fatalf("%s: the model's policy is %+v, want workspace-write in %s", when, p, a.StartDir())
		}
		shell, _, err := a.bangShell(BashOptions{})
		if err != nil || shell.Sandbox != nil {
			t.Fatalf("%s: the user's ! shell has sandbox %+v (%v)", when, shell.Sandbox, err)
		}
	}
	check("at start")

	// The user's `!cd` moves the session, not what the model may write.
	if res := mustBash(t, a, "cd / && pwd", BashOptions{}); res.Output != "/\n" || a.Cwd() != "/" {
		t.Fatalf("!cd /: %q, cwd %s", res.Output, a.Cwd())
	}
	check("after !cd /")

	// A command cannot loosen its own sandbox through the files.
	if err := os.WriteFile(g, []byte(`{"yolo": true, "sandbox": {"mode": "off"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, _ := l.Current(); !s.Sandbox.Yolo {
		t.Fatal("the edit was not read")
	}
	check("after the settings said yolo")

	ro := a.SandboxPolicyOf(config.DefaultSandboxSettings().With(config.SandboxFlags{Mode: sandbox.ReadOnly}))
	shell, _, err := a.bangShell(BashOptions{Sandbox: ro})
	if err != nil || shell.Sandbox != ro {
		t.Fatalf("an RPC client's policy was not passed on: %+v (%v)", shell.Sandbox, err)
	}

	a.SetSandbox(a.Sandbox().With(config.SandboxFlags{Yolo: true}))
	if p := a.ToolContext(bash.ToolSettings{}).Settings.Shell.Sandbox; p != nil {
		t.Fatalf("yolo: the model's policy is %+v", p)
	}
}

// TestNewSessionUnconfined: a session never given a sandbox confines
// nothing, and a shell config handed to New loses any policy (it is the
// bang commands').
func TestNewSessionUnconfined(t *testing.T) {
	isolateData(t)
	e := bash.NewExecutor()
	t.Cleanup(e.Close)
	a, err := New(t.TempDir(), nil, e, bash.ShellConfig{Sandbox: &sandbox.Policy{Mode: sandbox.ReadOnly}})
	if err != nil {
		t.Fatal(err)
	}
	if p := a.ToolContext(bash.ToolSettings{}).Settings.Shell.Sandbox; p != nil {
		t.Errorf("model policy %+v without SetSandbox", p)
	}
	if shell, _, _ := a.bangShell(BashOptions{}); shell.Sandbox != nil {
		t.Errorf("bang shell keeps the policy given to New: %+v", shell.Sandbox)
	}
}

// BenchmarkToolContextSandbox is what each model command pays to get its
// policy: the settings' paths resolved for the session.
func BenchmarkToolContextSandbox(b *testing.B) {
	e := bash.NewExecutor()
	b.Cleanup(e.Close)
	a, err := New(b.TempDir(), nil, e, bash.ShellConfig{})
	if err != nil {
		b.Fatal(err)
	}
	a.SetArtifactsDir(b.TempDir())
	a.SetSandbox(config.SandboxSettings{Mode: sandbox.WorkspaceWrite, WritablePaths: []string{"~/.cache", "build"}})
	b.ReportAllocs()
	for b.Loop() {
		if a.SandboxPolicy() == nil {
			b.Fatal("no policy")
		}
	}
}
