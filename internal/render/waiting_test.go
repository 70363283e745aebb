package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// TestWaitingCallsSayTheyWait: a bash or file call that waits for the
// user's answer says so instead of "Running…", and says it runs again once
// the answer came (a re-run outside the sandbox); a finished call says
// neither.
func TestWaitingCallsSayTheyWait(t *testing.T) {
	th := NewTheme(true)
	c := &ToolCall{Command: "rm -rf ~/x", Running: true, Elapsed: 3 * time.Second}
	if v := c.View(60, th); !strings.Contains(v, RunningText(3*time.Second)) || strings.Contains(v, WaitingText) {
		t.Errorf("running call:\n%s", v)
	}
	c.Waiting = true
	if v := c.View(60, th); !strings.Contains(v, "$ rm -rf ~/x\n  "+WaitingText) || strings.Contains(v, "Running…") {
		t.Errorf("waiting call:\n%s", v)
	}
	c.Waiting = false
	if v := c.View(60, th); !strings.Contains(v, RunningText(3*time.Second)) || strings.Contains(v, WaitingText) {
		t.Errorf("call running again:\n%s", v)
	}
	c.Waiting, c.Running, c.IsError, c.Output = true, false, true, "Refused"
	if v := c.View(60, th); strings.Contains(v, WaitingText) || strings.Contains(v, "Running…") {
		t.Errorf("finished call:\n%s", v)
	}

	f := &FileCall{Tool: "write", Args: json.RawMessage(`{"path":"/etc/x","content":"y"}`), Running: true}
	if v := ansi.Strip(f.View(60, th)); strings.Contains(v, WaitingText) {
		t.Errorf("running file call:\n%s", v)
	}
	f.Waiting = true
	if v := ansi.Strip(f.View(60, th)); !strings.Contains(v, "/etc/x\n  "+WaitingText) {
		t.Errorf("waiting file call:\n%s", v)
	}
	f.Running = false
	if v := ansi.Strip(f.View(60, th)); strings.Contains(v, WaitingText) {
		t.Errorf("finished file call:\n%s", v)
	}
}
