package tui

import (
	"strings"
	"testing"
)

// The status line says what keeps the model from working: no model chosen
// (a key in the environment does not help then), or what the chosen one
// lacks.
func TestStatusSaysWhatTheModelLacks(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-set")
	for _, c := range []struct {
		label, err string
		want       string
	}{
		{"", "", `no model chosen · agentsh --model provider/model (or AGENTSH_MODEL, "model" in settings)`},
		{"openai/gpt-4.1", "model openai/gpt-4.1: no OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL to use another OpenAI-compatible server)",
			"openai/gpt-4.1: no OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL to use another OpenAI-compatible server)"},
		{"gpt-4.1", `model "gpt-4.1" has no provider`, `model unusable: model "gpt-4.1" has no provider`},
	} {
		h := newHarness(t, 200, 20)
		h.m.cfg.ModelLabel, h.m.cfg.ModelError = c.label, c.err
		rows := strings.Split(h.screen(), "\n")
		status := strings.TrimSpace(rows[len(rows)-1])
		if !strings.HasSuffix(status, " · "+c.want) {
			t.Errorf("status line %q, want it to end in %q", status, c.want)
		}
	}
}
