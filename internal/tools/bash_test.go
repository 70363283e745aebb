package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// lineCapClaim matches a promise such as "2000 lines" or "2,000 lines".
var lineCapClaim = regexp.MustCompile(`\d[\d,]* lines`)

// The description promises only what the tool does, since the model acts
// on it: output is cut at
// 50KB and at no number of lines, and a trailing `| head` is taken off and
// cut from the whole output, with the command's own exit status.
func TestBashDescriptionSaysWhatIsTrue(t *testing.T) {
	tl := newBash(t, t.TempDir(), false)
	d := tl.Description()
	if lineCapClaim.MatchString(d) || !strings.Contains(d, "Output over 50KB is truncated") {
		t.Errorf("description: %q", d)
	}
	var schema map[string]any
	if err := json.Unmarshal(tl.Schema(), &schema); err != nil || lineCapClaim.Match(tl.Schema()) {
		t.Errorf("schema: %s %v", tl.Schema(), err)
	}
	exec := func(command string) Result {
		t.Helper()
		// The timeout is a hang guard for an endless producer.
		args, _ := json.Marshal(map[string]any{"command": command, "timeout": 30})
		return tl.Execute(context.Background(), args, nil)
	}
	// Far more than 2000 lines, under 50KB: all of them, no notice.
	var want strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if r := exec("seq 1 5000"); r.IsError || r.Content != want.String() {
		t.Errorf("seq 1 5000: %d bytes, error %v", len(r.Content), r.IsError)
	}
	if r := exec("seq 1 200000"); r.IsError || !strings.HasSuffix(r.Content, "\n199999\n200000\n\n\n[Showing lines 192686-200000 of 200000 (50.0KB limit)]") {
		t.Errorf("seq 1 200000: …%q", r.Content[max(0, len(r.Content)-80):])
	}
	if !strings.Contains(d, "`false | head -n 1` fails with code 1") || !strings.Contains(d, "returns x, 1 and 2") {
		t.Errorf("description does not state the head/tail rule: %q", d)
	}
	for cmd, want := range map[string]string{
		"false | head -n 1":              "(no output)\n\nCommand exited with code 1",
		"/bin/false | head -n 1":         "(no output)\n\nCommand exited with code 1",
		"echo x; seq 100 | head -n 3":    "x\n1\n2\n",
		"yes | head -n 5":                "y\ny\ny\ny\ny\n",
		"echo x; seq 1 5 2>&1 | tail -2": "4\n5\n",
	} {
		if r := exec(cmd); r.Content != want {
			t.Errorf("%s: %+v", cmd, r)
		}
	}
}
