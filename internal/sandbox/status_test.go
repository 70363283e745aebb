package sandbox

import (
	"runtime"
	"testing"
)

// TestDescribe: the status line's words for each configuration; YOLO wins
// over any mode, and off says off.
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		mode          Mode
		network, yolo bool
		want          string
	}{
		{WorkspaceWrite, false, true, "YOLO"},
		{Off, false, true, "YOLO"},
		{Off, false, false, "sandbox: off"},
		{"", true, false, "sandbox: off"},
		{WorkspaceWrite, false, false, "sandbox: workspace-write"},
		{ReadOnly, false, false, "sandbox: read-only"},
		{WorkspaceWrite, true, false, "sandbox: workspace-write, network on"},
	} {
		want := c.want
		if runtime.GOOS != "linux" && !c.yolo && c.mode != Off && c.mode != "" {
			want = "sandbox: off (not available on " + runtime.GOOS + ")"
		}
		if got := Describe(c.mode, c.network, c.yolo); got != want {
			t.Errorf("Describe(%q, %v, %v) = %q, want %q", c.mode, c.network, c.yolo, got, want)
		}
	}
}

// TestWarning: no warning for a user's own off; elsewhere than Linux a
// mode asked for is lost and said so.
func TestWarning(t *testing.T) {
	if w := Warning(Off); w != "" {
		t.Errorf("off warns: %q", w)
	}
	w := Warning(WorkspaceWrite)
	if runtime.GOOS == "linux" && w != "" {
		t.Errorf("linux warns from the configuration alone: %q", w)
	}
	if runtime.GOOS != "linux" && w != "sandbox off: not available on "+runtime.GOOS+"; the command runs unconfined" {
		t.Errorf("warning = %q", w)
	}
}
