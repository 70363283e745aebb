package main

import (
	"encoding/json"
	"strings"
	"testing"

	"agentsh/internal/fakemodel"
)

// TestPrintAnthropic runs print mode against a local server speaking
// Anthropic's Messages SSE: the model calls bash with seq 1 200000, gets the
// truncated result with its artifact notice back, then answers.
func TestPrintAnthropic(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.MessageStart(25)
			w.ToolUseBlock(0, "toolu_01", "bash", `{"command":`, `"seq 1 200000"}`)
			w.MessageStop("tool_use", 40)
			return
		}
		w.AnthropicAnswer("There are 200000 lines.")
	})

	s := newSandbox(t)
	r := s.runIn(nil, srv.AnthropicEnv(), "-p", "--model", "anthropic/claude-test", "count the lines")
	if r.code != 0 || r.stdout != "There are 200000 lines.\n" {
		t.Fatalf("%v", r)
	}
	bodies := srv.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	tools, _ := json.Marshal(bodies[0]["tools"])
	if !strings.Contains(string(tools), `"name":"bash"`) || !strings.Contains(string(tools), `"command"`) {
		t.Fatalf("tool schema not sent: %s", tools)
	}
	second, _ := json.Marshal(bodies[1]["messages"])
	if !strings.Contains(string(second), `"tool_use_id":"toolu_01"`) ||
		!strings.Contains(string(second), "of 200000 (50.0KB limit). Full: artifact://0]") {
		t.Fatalf("second request lacks the tool result: %.400s…", second)
	}
}
