package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTUISignalsEndQuietly: SIGINT from outside (ctrl+c itself is a key
// in the TUI) ends agentsh as SIGTERM and SIGHUP do: exit 0, no error
// printed over the screen.
func TestTUISignalsEndQuietly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			tt := startPTYTUI(t, newSandbox(t), 100, 30)
			tt.waitText("/help for keys", 20*time.Second)
			if err := tt.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			tt.waitExit(20 * time.Second)
			if code := tt.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d after %v", code, sig)
			}
			if scr := tt.screen(); strings.Contains(scr, "agentsh:") || strings.Contains(scr, "interrupted") {
				t.Errorf("after %v the screen shows an error:\n%s", sig, scr)
			}
		})
	}
}
