package llm

import (
	"encoding/json"
	"testing"
)

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

func TestContextWindowAdditions(t *testing.T) {
	for model, want := range map[string]int{
		"o1-mini":                       128_000,
		"o1-2024-12-17":                 200_000,
		"openrouter/openai/gpt-oss-20b": 131_072,
		"google/gemini-2.5-pro":         1_048_576,
		"deepseek/deepseek-chat":        128_000,
	} {
		if got := ContextWindow(model); got != want {
			t.Errorf("ContextWindow(%q) = %d, want %d", model, got, want)
		}
	}
}

func TestMaxOutputTokensAndReasoning(t *testing.T) {
	for model, want := range map[string]int{
		"claude-opus-4-1-20250805":  32_000,
		"claude-opus-4-5":           64_000,
		"claude-sonnet-4-20250514":  64_000,
		"claude-3-5-haiku-20241022": 8_192,
		"gpt-4o-mini":               16_384,
		"llama3.2":                  0,
	} {
		if got := MaxOutputTokens(model); got != want {
			t.Errorf("MaxOutputTokens(%q) = %d, want %d", model, got, want)
		}
	}
	for model, want := range map[string]bool{
		"o3-mini": true, "openai/gpt-5": true, "claude-sonnet-4-5": true, "deepseek-reasoner": true,
		"gpt-4o": false, "claude-3-5-haiku": false, "llama3.2": false,
	} {
		if got := IsReasoningModel(model); got != want {
			t.Errorf("IsReasoningModel(%q) = %v", model, got)
		}
	}
}

// Usage without the new counts marshals as before (events and session
// files carry it).
func TestUsageJSON(t *testing.T) {
	b, _ := json.Marshal(Usage{InputTokens: 3, OutputTokens: 4})
	if string(b) != `{"inputTokens":3,"outputTokens":4}` {
		t.Errorf("got %s", b)
	}
	b, _ = json.Marshal(Usage{InputTokens: 3, OutputTokens: 4, CacheReadTokens: 5, CacheWriteTokens: 6, ReasoningTokens: 2, Cost: 0.5})
	if string(b) != `{"inputTokens":3,"outputTokens":4,"cacheReadTokens":5,"cacheWriteTokens":6,"reasoningTokens":2,"cost":0.5}` {
		t.Errorf("got %s", b)
	}
}
