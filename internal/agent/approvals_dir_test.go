package agent

import (
	"os"
	"path/filepath"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/tools"
)

// TestApprovalsAskNamesFolder: an ask rule's question names the folder
// the model chose for the call (its cwd), where the command would run,
// and no folder when it runs in the session's own.
func TestApprovalsAskNamesFolder(t *testing.T) {
	user := &answering{}
	reg, a := approvalTools(t, []bash.PatternRule{{Action: bash.PatternAsk, Pattern: "touch"}}, Approvals{Approver: user})
	sub := filepath.Join(a.Cwd(), "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	call(t, reg, tools.BashName, map[string]any{"command": "touch made"})
	call(t, reg, tools.BashName, map[string]any{"command": "touch made", "cwd": "sub"})
	call(t, reg, tools.BashName, map[string]any{"command": "touch made", "cwd": "."})
	if len(user.asked) != 3 {
		t.Fatalf("asked %+v", user.asked)
	}
	for i, want := range []string{"", sub, ""} {
		if q := user.asked[i]; q.Kind != AskRule || q.Dir != want {
			t.Errorf("question %d: kind %v, dir %q, want %q", i, q.Kind, q.Dir, want)
		}
	}
}
