package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
)

// modelBash runs a model's bash tool call in session a, as the agent loop does.
func modelBash(t *testing.T, a *AgentSession, command string) string {
	t.Helper()
	tool := &bash.Tool{Executor: a.exec}
	res, err := tool.Execute(context.Background(), bash.ToolParams{Command: command}, a.ToolContext(bash.ToolSettings{}), nil)
	fr := bash.Finalize(res, err)
	return fr.Content
}

// TestSessionStateSharedWithModel: the user's !cd, !export and !source
// reach the model's shell, survive esc on a running command, and the
// status line's directory follows !cd (spec §2.1).
func TestSessionStateSharedWithModel(t *testing.T) {
	a, _ := newAgent(t)
	dir := t.TempDir()
	mustBash(t, a, "cd "+dir+" && export AGENTSH_T_X=from-user && up() { echo up; }", BashOptions{})
	if a.Cwd() != dir {
		t.Fatalf("session cwd %q after !cd, want %q", a.Cwd(), dir)
	}
	if got := modelBash(t, a, "pwd; echo $AGENTSH_T_X; up"); got != dir+"\nfrom-user\nup\n" {
		t.Fatalf("model saw %q", got)
	}

	// esc on a running bang command kills its shell; cd and exports stay.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bash.BashResult, 1)
	go func() {
		r, _ := a.ExecuteBash(ctx, "sleep 30", nil, BashOptions{})
		done <- r
	}()
	waitFor(t, "the bang command to run", 10*time.Second, a.IsBashRunning)
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case r := <-done:
		if !r.Cancelled {
			t.Fatalf("%+v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancel hung")
	}
	r := mustBash(t, a, "pwd; echo $AGENTSH_T_X; up", BashOptions{})
	if r.Output != dir+"\nfrom-user\nup\n" {
		t.Fatalf("after esc the next bang command saw %q", r.Output)
	}
	// The model's own cd ends with its call.
	if got := modelBash(t, a, "cd / && pwd"); got != "/\n" {
		t.Fatalf("%q", got)
	}
	if got := strings.TrimSpace(mustBash(t, a, "pwd", BashOptions{}).Output); got != dir || a.Cwd() != dir {
		t.Fatalf("a model's cd moved the session: %q %q", got, a.Cwd())
	}
}

// TestModelStateNotInBang: a function, an alias and a PATH
// the model defines do not reach the user's `!` commands (the TUI's and an
// RPC client's bash, both ExecuteBash), while the user's still reach the
// model over the model's own.
func TestModelStateNotInBang(t *testing.T) {
	a, _ := newAgent(t)
	bin := filepath.Join(a.Cwd(), "bin")
	if got := modelBash(t, a, `git() { echo model-git; }; alias ls='echo model-ls'; mkdir -p bin && printf '#!/bin/sh\necho model-id\n' > bin/id && chmod +x bin/id && export PATH=`+bin+`:$PATH MODEL_DATA=1; id`); got != "model-id\n" {
		t.Fatalf("model: %q", got)
	}
	r := mustBash(t, a, `type -t git || echo none; ls -d /; id -u >/dev/null && command -v id; echo ${MODEL_DATA-unset}`, BashOptions{})
	if want := "file\n/\n" + mustLookPath(t, "id") + "\nunset\n"; r.Output != want && r.Output != "none\n/\n"+mustLookPath(t, "id")+"\nunset\n" {
		t.Fatalf("the user's ! saw the model's state: %q", r.Output)
	}
	mustBash(t, a, `git() { echo user-git; }; export USER_DATA=u`, BashOptions{})
	if got := modelBash(t, a, "git; ls; echo $USER_DATA $MODEL_DATA"); got != "user-git\nmodel-ls\nu 1\n" {
		t.Fatalf("model after the user's !: %q", got)
	}
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skip(err)
	}
	return p
}

// TestBangDisarmsPlantedGit: what the model's confined command
// planted for the user's git (a .git/commondir naming a config of its own)
// is removed before the user's `!` command runs outside, and said.
func TestBangDisarmsPlantedGit(t *testing.T) {
	mustLookPath(t, "git")
	a, _ := newAgent(t)
	a.SetSandbox(config.SandboxSettings{Mode: sandbox.WorkspaceWrite})
	if a.SandboxPolicy() == nil || !sandbox.Detect().Namespaces {
		t.Skip("no sandbox with a mount view here")
	}
	work := a.Cwd()
	pwned := filepath.Join(proctest.OutsideDir(t, ".session-git-"), "pwned")
	mustBash(t, a, `git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m first`, BashOptions{})
	got := modelBash(t, a, `cp -r .git evil && git config -f evil/config core.fsmonitor "touch `+pwned+`; false" && echo "$PWD/evil" > .git/commondir && echo planted`)
	if got != "planted\n" {
		t.Fatalf("model: %q", got)
	}
	r := mustBash(t, a, "git status --porcelain", BashOptions{})
	want := "[agentsh: removed " + filepath.Join(work, ".git", "commondir") + ", which a sandboxed command wrote: it would make git read its config from a folder the model chose]\n?? evil/\n"
	if r.Output != want {
		t.Errorf("the user's git status:\n%q\nwant\n%q", r.Output, want)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the model's fsmonitor ran in the user's git")
	}
}
