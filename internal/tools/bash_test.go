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

// The description promises what the tool does (issue 11): output is cut at
// 50KB and at no number of lines, and a trailing `| head` is bash's own.
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
		args, _ := json.Marshal(map[string]string{"command": command})
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
	if r := exec("false | head -n 1"); r.IsError || r.Content != "(no output)" {
		t.Errorf("false | head -n 1: %+v", r)
	}
}
