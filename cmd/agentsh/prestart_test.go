package main

// The model's shell is started with the first model request, so
// that the model's first bash call finds it ready. These tests hold the
// fake model's answer until that shell exists, as a model that thinks would,
// and check what a user would notice: the call runs in that shell, confined
// as any shell of the model's, and a run that never calls bash leaves no
// process and no folder behind.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"agentsh/internal/proctest"
	sbx "agentsh/internal/sandbox"
	"agentsh/internal/testkit"
)

// modelShellCmdline is the command line of the model's persistent bash.
var modelShellCmdline = []byte("bash\x00--noprofile\x00--norc\x00")

// waitModelShell waits, while the fake model holds its answer, for a
// model's shell carrying the run's marker kv; it returns its pid, or 0
// once the hang guard ends the wait.
func waitModelShell(kv string) int {
	shell := 0
	testkit.Poll(hangGuard/2, func() (bool, string) {
		for _, pid := range proctest.Marked(kv) {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && bytes.Equal(b, modelShellCmdline) {
				shell = pid
				return true, ""
			}
		}
		return false, ""
	})
	return shell
}

// runMarker is an environment entry only this run's processes carry
// (agentsh passes its environment to its guardians and shells).
func runMarker() string {
	return fmt.Sprintf("AGENTSH_TEST_RUN=%d-%d", os.Getpid(), sleepSeq.Add(1))
}

// TestPrintRunWithoutBashLeavesNothing: a print run whose model answers
// without a tool call started the model's shell while the model thought,
// and at exit nothing of it is left: no process and no folder.
func TestPrintRunWithoutBashLeavesNothing(t *testing.T) {
	for round := 0; round < 3; round++ {
		s := newSandbox(t)
		runtime, tmp, env := privateDirs(t)
		mark := runMarker()
		var shell atomic.Int64
		srv := newSSEServer(t, func(n int, w sseWriter) {
			if round != 1 { // round 1: an answer at once, while the shell still starts
				shell.Store(int64(waitModelShell(mark)))
			}
			w.answer("Hello.")
		})
		r := s.runIn(nil, append(srv.env(), append(env, mark)...), "-p", "hi", "--model", "openai/test")
		want(t, r, "Hello.\n", "", 0)
		if round != 1 && shell.Load() == 0 {
			t.Errorf("round %d: no model's shell was started while the model thought", round)
		}
		if left := proctest.Marked(mark); len(left) > 0 {
			t.Errorf("round %d: processes left after the run: %v", round, left)
		}
		if left := agentshFolders(runtime, tmp); len(left) > 0 {
			t.Errorf("round %d: folders left after the run: %v", round, left)
		}
	}
}

// TestPrintFirstBashCallRunsOnTheStartedShell: the model's first bash
// call runs in the shell started with the request (the same bash), and
// that shell is the sandboxed one: a write outside the workspace is
// refused.
func TestPrintFirstBashCallRunsOnTheStartedShell(t *testing.T) {
	if sbx.Unavailable() != "" || sbx.Detect().Landlock == 0 {
		t.Skip("no sandbox on this system")
	}
	s := newSandbox(t)
	_, _, env := privateDirs(t)
	mark := runMarker()
	outside := proctest.OutsideDir(t, ".prestart-outside-")
	var shell atomic.Int64
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			shell.Store(int64(waitModelShell(mark)))
			w.bash("call_0", fmt.Sprintf(`{"command":"echo $$; echo x > %s/f"}`, outside))
			return
		}
		w.answer("done")
	})
	r := s.runIn(nil, append(srv.env(), append(env, mark)...), "-p", "run it", "--model", "openai/test")
	want(t, r, "done\n", "", 0)
	pid := shell.Load()
	if pid == 0 {
		t.Fatal("no model's shell was started while the model thought")
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	res := lastToolResult(reqs[1])
	first, _, _ := strings.Cut(res, "\n")
	if first != strconv.FormatInt(pid, 10) {
		t.Errorf("the first call ran in bash %s, not in the shell started with the request (%d): %q", first, pid, res)
	}
	if !strings.Contains(res, "Read-only file system") && !strings.Contains(res, "Permission denied") {
		t.Errorf("a write outside the workspace was not refused: %q", res)
	}
	if _, err := os.Stat(outside + "/f"); err == nil {
		t.Error("the write outside the workspace happened")
	}
	if left := proctest.Marked(mark); len(left) > 0 {
		t.Errorf("processes left after the run: %v", left)
	}
}
