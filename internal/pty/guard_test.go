package pty

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
)

var sleepTag = proctest.SleepTag

// ptyEscapees leaves a `setsid -f` sleep and an `env -i setsid -f` sleep
// (no marker, a session of its own, reparented away from the shell). They
// do not hold the terminal, so a session that exits is not kept draining
// for DrainTimeout by them.
const ptyEscapees = "{ setsid -f sleep %[1]s; env -i setsid -f sleep %[1]s; } </dev/null >/dev/null 2>&1"

// TestSessionEndLeavesNoEscapees: when the program ends by itself, or is
// killed (esc), nothing it left behind survives the session, even
// processes that left its session and cleared its environment. 50 runs of
// each.
func TestSessionEndLeavesNoEscapees(t *testing.T) {
	runs := 50
	if testing.Short() {
		runs = 5
	}
	sh := bashPath(t)
	env := testEnv(t)
	dir := t.TempDir()
	t.Run("exit", func(t *testing.T) {
		for i := 0; i < runs; i++ {
			tag := sleepTag()
			s := Start(context.Background(), Options{Shell: sh, Command: fmt.Sprintf(ptyEscapees, tag) + "; echo done",
				Cwd: dir, Env: env, Cols: 80, Rows: 24, KillGrace: 50 * time.Millisecond})
			r := wait(t, s)
			if r.ExitCode == nil || *r.ExitCode != 0 || r.Output != "done\n" {
				t.Fatalf("run %d: exit=%v output=%q", i, r.ExitCode, r.Output)
			}
			if left := proctest.WithArg(tag); len(left) > 0 {
				t.Fatalf("run %d: processes survived the session: %v", i, left)
			}
		}
	})
	t.Run("kill", func(t *testing.T) {
		for i := 0; i < runs; i++ {
			tag := sleepTag()
			s := Start(context.Background(), Options{Shell: sh, Command: fmt.Sprintf(ptyEscapees+"; sleep %[1]s", tag),
				Cwd: dir, Env: env, Cols: 80, Rows: 24, KillGrace: 50 * time.Millisecond})
			proctest.WaitWithArg(t, tag, 3)
			s.Kill()
			if r := wait(t, s); !r.Cancelled {
				t.Fatalf("run %d: %+v", i, r)
			}
			if left := proctest.WithArg(tag); len(left) > 0 {
				t.Fatalf("run %d: processes survived the kill: %v", i, left)
			}
		}
	})
}

// The owner-death test runs this test binary as a helper process that
// holds a PTY session until it is SIGKILLed.
const helperEnv = "AGENTSH_PTY_TEST_HELPER"

func TestHelperHoldsSession(t *testing.T) {
	tag := os.Getenv(helperEnv)
	if tag == "" {
		t.Skip("helper process for TestOwnerSIGKILLEndsSession")
	}
	s := Start(context.Background(), Options{Shell: bashPath(t), Command: fmt.Sprintf(ptyEscapees+"; sleep %[1]s", tag),
		Env: testEnv(t), Cols: 80, Rows: 24})
	fmt.Println("started", s.Pid())
	select {}
}

// TestOwnerSIGKILLEndsSession: SIGKILL of the process that holds a PTY
// session (agentsh's TUI, OOM-killed or killed -9) still ends the program
// and everything it left behind.
func TestOwnerSIGKILLEndsSession(t *testing.T) {
	tag := sleepTag()
	h := exec.Command(os.Args[0], "-test.run=^TestHelperHoldsSession$")
	h.Env = append(os.Environ(), helperEnv+"="+tag)
	out, err := h.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Process.Kill(); _ = h.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); !strings.HasPrefix(line, "started ") {
		t.Fatalf("helper said %q", line)
	}
	proctest.WaitWithArg(t, tag, 3)
	if err := h.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	proctest.WaitNoneWithArg(t, tag) // the guardian ends them after their owner's SIGKILL
	t.Logf("gone %v after the SIGKILL", time.Since(killed).Round(time.Millisecond))
}
