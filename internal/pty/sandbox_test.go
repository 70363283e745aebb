package pty

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
	"agentsh/internal/testkit"
)

// TestSandboxedSession: a PTY program under a policy (the model's
// `virtualTerminal: on` path) cannot write outside its workdir, while its
// terminal works: `stty` on the slave, `tty`, and a nested pseudo-terminal
// (`script`) through /dev/ptmx; killing it leaves nothing alive.
func TestSandboxedSession(t *testing.T) {
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	etc := "/etc/agentsh-pty-sandbox-" + strings.TrimPrefix(testMark(t), markerVar+"=")[:8]
	cmd := `touch ` + etc + `; echo in > in.txt; stty size; tty >/dev/null && echo has-tty`
	if _, err := exec.LookPath("script"); err == nil {
		cmd += `; script -qc 'echo nested-pty' /dev/null`
	}
	cmd += `; echo ready; sleep 1000`
	var work string
	s, mark := startBash(t, context.Background(), cmd, func(o *Options) {
		work = o.Cwd
		o.Sandbox = &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: o.Cwd}
	})
	waitScreen(t, s, "ready", func(x string) bool { return strings.Contains(x, "ready") })
	text := strings.Join(s.Screen().Text(), "\n")
	refusal := "Permission denied"
	if sandbox.Detect().Namespaces {
		refusal = "Read-only file system" // the mount view
	}
	for _, want := range []string{refusal, "24 80", "has-tty"} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, text)
		}
	}
	if _, err := exec.LookPath("script"); err == nil && !strings.Contains(text, "nested-pty") {
		t.Errorf("a nested pseudo-terminal failed:\n%s", text)
	}
	if _, err := os.Stat(etc); err == nil {
		os.Remove(etc)
		t.Errorf("the sandboxed program wrote %s", etc)
	}
	if b, err := os.ReadFile(filepath.Join(work, "in.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("the workdir was not writable: %q, %v", b, err)
	}
	testkit.Eventually(t, hangGuard, "the run's processes", func() (bool, string) {
		pids := proctest.Marked(mark)
		return len(pids) >= 2, fmt.Sprintf("processes %v", pids)
	})
	s.Kill()
	wait(t, s)
	noSurvivors(t, mark)
}
