package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentsh/internal/bash"
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
// status line's directory follows !cd (issue 11 §3).
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
