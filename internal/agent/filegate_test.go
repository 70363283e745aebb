package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"agentsh/internal/config"
	"agentsh/internal/confinedfs"
	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
	"agentsh/internal/tools"
	"agentsh/internal/xdg"
)

// fileGateSession is a session whose sandbox (mode) denies reading a fake
// HOME's ~/.ssh, holding a key, with its tools as NewTools wires them.
func fileGateSession(t *testing.T, mode sandbox.Mode, ap Approvals) (reg *tools.Registry, a *AgentSession, key string) {
	t.Helper()
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	key = filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _ = newAgent(t)
	a.SetSandbox(config.SandboxSettings{Mode: mode, DenyRead: []string{"~/.ssh"}})
	if a.SandboxPolicy() == nil {
		t.Skip("no sandbox on this system")
	}
	t.Cleanup(func() {
		marks := confinedfs.Markers()
		confinedfs.StopAll()
		for _, m := range marks {
			if pids := proctest.Marked(m); len(pids) > 0 {
				t.Errorf("file helper processes left: %v", pids)
			}
		}
	})
	reg, err := NewTools(ToolsConfig{Current: func() *AgentSession { return a }, Executor: a.exec, Approvals: ap})
	if err != nil {
		t.Fatal(err)
	}
	return reg, a, key
}

// TestFileGateRead: the model's read of ~/.ssh/id_rsa is refused by the
// sandbox with bash's note when no one can approve (print, json, RPC); in
// the TUI the user is asked to run the call outside, once or not at all.
func TestFileGateRead(t *testing.T) {
	for _, c := range []struct {
		name    string
		answers []ApprovalAnswer
		want    string
		isErr   bool
	}{
		{"no one to ask", nil, "Permission denied: ~/.ssh/id_rsa\n\n[agentsh: the sandbox refused reading %s (sandbox.denyRead); " +
			"no one can approve running the read call outside the sandbox here]", true},
		{"user says no", []ApprovalAnswer{Decline}, "Permission denied: ~/.ssh/id_rsa\n\n[agentsh: the sandbox refused reading %s " +
			"(sandbox.denyRead); the user declined to run the read call outside the sandbox]", true},
		{"user says once", []ApprovalAnswer{Once}, "     1\tPRIVATE KEY\n\n[agentsh: the sandbox refused reading %s (sandbox.denyRead); " +
			"the user approved, and this is the result of running the read call again outside the sandbox]", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var user *answering
			ap := Approvals{}
			if c.answers != nil {
				user = &answering{answers: c.answers}
				ap.Approver = user
			}
			reg, _, key := fileGateSession(t, sandbox.WorkspaceWrite, ap)
			r := call(t, reg, tools.ReadName, map[string]any{"path": "~/.ssh/id_rsa"})
			if want := fmt.Sprintf(c.want, key); r.Content != want || r.IsError != c.isErr {
				t.Errorf("result (isError %v):\n%s\nwant (isError %v):\n%s", r.IsError, r.Content, c.isErr, want)
			}
			if user != nil {
				want := ApprovalQuestion{Kind: SandboxDenial, Command: "read ~/.ssh/id_rsa", Reason: "reading " + key + " (sandbox.denyRead)"}
				if len(user.asked) != 1 || !reflect.DeepEqual(user.asked[0], want) {
					t.Errorf("asked %+v, want %+v", user.asked, want)
				}
			}
		})
	}
}

// TestFileGateReadOnly: under read-only the model's write of a workspace
// file is refused (nothing written) unless the user approves running it
// outside; a yolo session writes without asking.
func TestFileGateReadOnly(t *testing.T) {
	user := &answering{answers: []ApprovalAnswer{Decline, Once}}
	reg, a, _ := fileGateSession(t, sandbox.ReadOnly, Approvals{Approver: user})
	p := filepath.Join(a.Cwd(), "x.txt")
	r := call(t, reg, tools.WriteName, map[string]any{"path": "x.txt", "content": "hi\n"})
	want := "Permission denied: x.txt\n\n[agentsh: the sandbox refused writing " + a.Cwd() +
		" (outside the sandbox's writable paths); the user declined to run the write call outside the sandbox]"
	if r.Content != want || !r.IsError {
		t.Errorf("declined: %q\nwant %q", r.Content, want)
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the refused write wrote the file")
	}
	r = call(t, reg, tools.WriteName, map[string]any{"path": "x.txt", "content": "hi\n"})
	if r.IsError {
		t.Errorf("approved: %s", r.Content)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "hi\n" {
		t.Errorf("approved write: %q, %v", b, err)
	}
	if len(user.asked) != 2 || user.asked[0].Command != "write x.txt" || user.asked[0].Prefix != "" {
		t.Errorf("asked %+v", user.asked)
	}
	a.SetSandbox(config.SandboxSettings{Mode: sandbox.ReadOnly, Yolo: true})
	if r := call(t, reg, tools.WriteName, map[string]any{"path": "y.txt", "content": "yo\n"}); r.IsError || r.Content != "Wrote 3 bytes (1 line) to y.txt" {
		t.Errorf("yolo: %+v", r)
	}
	if len(user.asked) != 2 {
		t.Errorf("yolo asked: %+v", user.asked[2:])
	}
}

// TestFileToolsArtifactsInSandbox: under the default sandbox, whose
// denyRead holds agentsh's data folder, the read tool still reads the
// session's own artifact:// outputs (the policy gives its folder back), but
// not another file of the data folder.
func TestFileToolsArtifactsInSandbox(t *testing.T) {
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	a, _ := newAgent(t)
	a.SetSandbox(config.DefaultSandboxSettings())
	if a.SandboxPolicy() == nil {
		t.Skip("no sandbox on this system")
	}
	t.Cleanup(confinedfs.StopAll)
	id, path, err := a.Artifacts().Allocate("bash")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("full output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(xdg.DataDir(), "other.txt")
	if err := os.WriteFile(other, []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := NewTools(ToolsConfig{Current: func() *AgentSession { return a }, Executor: a.exec})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, reg, tools.ReadName, map[string]any{"path": "artifact://" + id}); r.IsError || r.Content != "     1\tfull output" {
		t.Errorf("read the artifact: %+v", r)
	}
	r := call(t, reg, tools.ReadName, map[string]any{"path": other})
	if want := "Permission denied: " + other + "\n\n[agentsh: the sandbox refused reading " + other +
		" (sandbox.denyRead); no one can approve running the read call outside the sandbox here]"; r.Content != want || !r.IsError {
		t.Errorf("read of the data folder: %q\nwant %q", r.Content, want)
	}
}
