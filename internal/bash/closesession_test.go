package bash

import (
	"strings"
	"testing"
)

// CloseSession ends one session's shells and what they left running; the
// other sessions' shells and the tool path's shared ones go on, and the
// session's next command gets a new shell.
func TestCloseSessionEndsOnlyThatSession(t *testing.T) {
	e := newTestExecutor(t)
	start := func(key string) (mark, pid string) {
		t.Helper()
		r := run(t, e, "sleep 1000 >/dev/null 2>&1 & echo $"+markerVar+" $$", RunOptions{SessionKey: key})
		f := strings.Fields(r.Output)
		if len(f) != 2 || len(markerProcs(markerVar+"="+f[0])) == 0 {
			t.Fatalf("session %q: output %q, no background sleep found", key, r.Output)
		}
		return f[0], f[1]
	}
	markA, pidA := start("a")
	markB, _ := start("b")
	markTool, _ := start("")

	e.CloseSession("") // the shared shells are no session's
	e.CloseSession("a")
	if left := markerProcs(markerVar + "=" + markA); len(left) > 0 {
		t.Errorf("session a's processes outlived CloseSession: %v", left)
	}
	for name, mark := range map[string]string{"b": markB, "tool path": markTool} {
		if len(markerProcs(markerVar+"="+mark)) == 0 {
			t.Errorf("CloseSession(a) ended %s's shell", name)
		}
	}
	r := run(t, e, "echo $$", RunOptions{SessionKey: "a"})
	if got := strings.TrimSpace(r.Output); got == "" || got == pidA {
		t.Errorf("session a's next command ran in shell %q (the closed one was %s)", got, pidA)
	}
}
