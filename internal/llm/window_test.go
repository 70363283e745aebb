package llm

import "testing"

func TestContextWindow(t *testing.T) {
	for model, want := range map[string]int{
		"gpt-4o-mini":                128_000,
		"openai/gpt-4.1-mini":        1_047_576,
		"gpt-4":                      8_192,
		"claude-sonnet-4-20250514":   200_000,
		"anthropic/claude-3-5-haiku": 200_000,
		"llama3.2":                   0,
		"":                           0,
	} {
		if got := ContextWindow(model); got != want {
			t.Errorf("ContextWindow(%q) = %d, want %d", model, got, want)
		}
	}
}
