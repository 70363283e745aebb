package sandbox

import (
	"runtime"
	"strings"
	"testing"
)

// TestDescribeStatus: the status line's words for each configuration; YOLO
// wins over any mode, off says off, and a mode the kernel cannot enforce
// in full says "sandbox weaker" (never more than the kernel gives).
func TestDescribeStatus(t *testing.T) {
	for _, c := range []struct {
		mode          Mode
		network, yolo bool
		want          string
	}{
		{WorkspaceWrite, false, true, "YOLO"},
		{Off, false, true, "YOLO"},
		{Off, false, false, "sandbox: off"},
		{"", true, false, "sandbox: off"},
		{WorkspaceWrite, false, false, "workspace-write"},
		{ReadOnly, false, false, "read-only"},
		{WorkspaceWrite, true, false, "workspace-write, network on"},
	} {
		want := c.want
		if !c.yolo && c.mode != Off && c.mode != "" {
			switch {
			case runtime.GOOS != "linux":
				want = "sandbox: off (not available on " + runtime.GOOS + ")"
			case len(Detect().Weaknesses(&Policy{Mode: c.mode, Network: c.network})) > 0:
				want = "sandbox weaker: " + want
			default:
				want = "sandbox: " + want
			}
		}
		if got := Describe(c.mode, c.network, c.yolo); got != want {
			t.Errorf("Describe(%q, %v, %v) = %q, want %q", c.mode, c.network, c.yolo, got, want)
		}
	}
}

// TestWarning: no warning for a user's own off; elsewhere than Linux a
// mode asked for is lost and said so; on Linux what the kernel cannot
// enforce is named.
func TestWarning(t *testing.T) {
	if w := Warning(Off, false); w != "" {
		t.Errorf("off warns: %q", w)
	}
	w := Warning(WorkspaceWrite, false)
	switch weak := Detect().Weaknesses(&Policy{Mode: WorkspaceWrite}); {
	case runtime.GOOS != "linux":
		if w != "sandbox off: not available on "+runtime.GOOS+"; the command runs unconfined" {
			t.Errorf("warning = %q", w)
		}
	case len(weak) > 0:
		if w != "sandbox weaker: "+strings.Join(weak, ", ") {
			t.Errorf("warning = %q, want the weaknesses %q", w, weak)
		}
	case w != "":
		t.Errorf("a kernel that enforces everything warns: %q", w)
	}
}
