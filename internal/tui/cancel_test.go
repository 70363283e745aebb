package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

// cancelNotices are every wording a cancel ever had in the transcript.
var cancelNotices = []string{"[Command cancelled]", "(cancelled)", "Command aborted", "Aborted."}

// TestCancelNoticeOnceAfterOutput: esc during a model's bash call and
// during a `!` command leaves one notice per block, after the output: not
// the engine's first line, the agent loop's suffix and the turn's notice
// all at once.
func TestCancelNoticeOnceAfterOutput(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.ToolCall(0, "call_1", "bash", `{"command":"echo before-cancel; sleep 30"}`)
			w.ToolCall(1, "call_2", "bash", `{"command":"echo never"}`)
			w.Finish("tool_calls")
			return
		}
		w.Text("unexpected")
		w.Finish("stop")
	})
	h := newHarness(t, 80, 30)
	zero := 0
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero}), "gpt-test")
	h.typeText("sleep please")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the command's output", func() bool { return strings.Contains(h.screen(), "\n  before-cancel\n") })
	h.press(tea.KeyEscape, 0)
	h.waitFor("the turn to end", func() bool { return !h.m.runner.Busy() })
	s := h.screen()
	for _, bad := range cancelNotices {
		if strings.Contains(s, bad) {
			t.Errorf("the transcript shows %q:\n%s", bad, s)
		}
	}
	if !strings.Contains(s, "✗ $ echo before-cancel; sleep 30\n  before-cancel\n  Command cancelled\n\n✗ $ echo never\n  Tool call cancelled\n") {
		t.Errorf("want the output, then one notice:\n%s", s)
	}

	h.typeText("!echo bang-before; sleep 30")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the bang's output", func() bool { return strings.Contains(h.screen(), "\nbang-before\n") })
	h.press(tea.KeyEscape, 0)
	h.waitFor("the cancel", h.bangIdle)
	s = h.screen()
	for _, bad := range cancelNotices {
		if strings.Contains(s, bad) {
			t.Errorf("the transcript shows %q:\n%s", bad, s)
		}
	}
	if !strings.Contains(s, "$ echo bang-before; sleep 30\nbang-before\nCommand cancelled\n") {
		t.Errorf("want the output, then one notice:\n%s", s)
	}
}
