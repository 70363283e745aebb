package tui

import (
	"strings"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/llm"
	"agentsh/internal/session"
)

// reportUsage is a model call ending with the provider's token counts.
func reportUsage(h *harness, in, out int64) {
	h.m.pump.event(agent.Event{Type: agent.EventMessageEnd, Message: &session.AssistantMessage{},
		Usage: &llm.Usage{InputTokens: in, OutputTokens: out}})
	h.update(flushMsg{})
}

func statusLine(h *harness) string {
	s := h.screen()
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func TestStatusLineShowsTokensAndContextLeft(t *testing.T) {
	h := goldenHarness(t, 100, 20, false)
	h.m.cfg.Models = agent.ModelsOf(llm.NewAnthropic(llm.AnthropicConfig{}), "claude-sonnet-4")
	if s := statusLine(h); strings.Contains(s, "tokens") {
		t.Fatalf("tokens shown before any call: %q", s)
	}
	reportUsage(h, 23_900, 100)
	if s := statusLine(h); !strings.Contains(s, "anthropic/claude-sonnet-4 · 24.0k tokens · 88% context left") {
		t.Errorf("status = %q", s)
	}
	// A call without usage keeps the last figures.
	h.m.pump.event(agent.Event{Type: agent.EventMessageEnd, Message: &session.AssistantMessage{}})
	h.update(flushMsg{})
	if s := statusLine(h); !strings.Contains(s, "24.0k tokens") {
		t.Errorf("status lost the usage: %q", s)
	}
	// An unknown model: tokens only.
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{Name: "ollama"}), "my-local-model")
	reportUsage(h, 950, 0)
	if s := statusLine(h); !strings.Contains(s, "ollama/my-local-model · 950 tokens") || strings.Contains(s, "context left") {
		t.Errorf("status = %q", s)
	}
}

func TestFormatTokens(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 12_345: "12.3k", 1_250_000: "1.2M"} {
		if got := formatTokens(n); got != want {
			t.Errorf("formatTokens(%d) = %q, want %q", n, got, want)
		}
	}
}
