package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

// colorCmd prints colours, a cursor movement and an erase.
const colorCmd = `printf '\033[1;34mdocs\033[0m \033[32mok\033[0m\033[2J\033[3A\n'`

// TestOutputColours: a `!` command's and a model's bash call's output keep
// their SGR colours on the screen (not the cursor movement), the model
// reads plain text, and NO_COLOR shows none.
func TestOutputColours(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.ToolCall(0, "call_1", "bash", `{"command":"`+strings.ReplaceAll(colorCmd, `\`, `\\`)+`"}`)
			w.Finish("tool_calls")
			return
		}
		w.Text("done")
		w.Finish("stop")
	})
	h := newHarness(t, 80, 30)
	h.m.cfg.NoColor, h.m.st = false, newStyles(false)
	zero := 0
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero}), "gpt-test")

	h.typeText("!" + colorCmd)
	h.press(tea.KeyEnter, 0)
	h.waitFor("the bang command", h.bangIdle)
	raw := h.m.View().Content
	if !strings.Contains(raw, "\x1b[1;34mdocs\x1b[0m \x1b[32mok\x1b[0m") {
		t.Errorf("the bang block lost its colours:\n%q", raw)
	}
	h.typeText("list it")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the turn", func() bool { return !h.m.runner.Busy() })
	raw = h.m.View().Content
	if strings.Count(raw, "\x1b[1;34mdocs\x1b[0m \x1b[32mok\x1b[0m") != 2 {
		t.Errorf("the tool block lost its colours:\n%q", raw)
	}
	for _, bad := range []string{"\x1b[2J", "\x1b[3A"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the screen got %q", bad)
		}
	}
	reqs := srv.Requests()
	if body := strings.Join(fakemodelTexts(reqs[len(reqs)-1].Body), "\n"); strings.Contains(body, "\x1b") ||
		!strings.Contains(body, "docs ok") {
		t.Errorf("the model read %q", body)
	}

	h = newHarness(t, 80, 30) // NO_COLOR
	h.typeText("!" + colorCmd)
	h.press(tea.KeyEnter, 0)
	h.waitFor("the bang command", h.bangIdle)
	if raw := h.m.View().Content; strings.Contains(raw, "\x1b[32mok") || !strings.Contains(raw, "docs ok") {
		t.Errorf("NO_COLOR:\n%q", raw)
	}
}

// fakemodelTexts collects every string in a request body.
func fakemodelTexts(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fakemodelTexts(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, fakemodelTexts(e)...)
		}
		return out
	}
	return nil
}
