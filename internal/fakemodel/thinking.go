package fakemodel

import (
	"encoding/json"
	"fmt"
)

// Usage is what a usage helper reports. The counts do not overlap, as
// agentsh's llm.Usage counts them: InputTokens are the prompt tokens neither
// read from nor written to the cache. The OpenAI helpers write prompt_tokens
// as their sum (OpenAI's prompt_tokens include the cached ones), the
// Anthropic ones input_tokens as InputTokens.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int     // the part of OutputTokens spent thinking
	Cost             float64 // USD, written as OpenRouter's usage.cost when not 0
}

// OpenAI chat completions.

// Reasoning streams a piece of the model's reasoning as
// delta.reasoning_content (DeepSeek, vLLM, llama.cpp).
func (w *Writer) Reasoning(text string) { w.ReasoningAs("reasoning_content", text) }

// ReasoningAs streams a piece of reasoning under another delta field, e.g.
// "reasoning" (OpenRouter, Ollama).
func (w *Writer) ReasoningAs(field, text string) {
	w.Chunk(`[{"index":0,"delta":{"role":"assistant","content":null,` + quote(field) + `:` + quote(text) + `},"finish_reason":null}]`)
}

// FinishWithUsage is FinishUsage with the details: cached and
// cache-written prompt tokens, reasoning tokens, and the cost.
func (w *Writer) FinishWithUsage(reason string, u Usage) {
	w.Chunk(`[{"index":0,"delta":{},"finish_reason":` + quote(reason) + `}]`)
	prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	usage := map[string]any{
		"prompt_tokens":     prompt,
		"completion_tokens": u.OutputTokens,
		"total_tokens":      prompt + u.OutputTokens,
	}
	details := map[string]any{"cached_tokens": u.CacheReadTokens}
	if u.CacheWriteTokens > 0 {
		details["cache_write_tokens"] = u.CacheWriteTokens
	}
	usage["prompt_tokens_details"] = details
	usage["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.ReasoningTokens}
	if u.Cost != 0 {
		usage["cost"] = u.Cost
	}
	b, _ := json.Marshal(usage)
	w.Event("", `{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake","choices":[],"usage":`+string(b)+`}`)
	w.Event("", "[DONE]")
}

// ReasoningAnswer is a whole text answer after a piece of reasoning.
func (w *Writer) ReasoningAnswer(reasoning, text string) {
	w.Reasoning(reasoning)
	w.Answer(text)
}

// Anthropic Messages.

// ThinkingBlock streams a thinking content block at index: its text one
// thinking_delta per piece, then its signature as a signature_delta (left
// out when signature is empty).
func (w *Writer) ThinkingBlock(index int, signature string, pieces ...string) {
	w.Event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, index))
	for _, p := range pieces {
		w.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, index, quote(p)))
	}
	if signature != "" {
		w.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":%s}}`, index, quote(signature)))
	}
	w.Event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// RedactedThinkingBlock streams a redacted_thinking content block at index
// (its data comes whole with the start).
func (w *Writer) RedactedThinkingBlock(index int, data string) {
	w.Event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"redacted_thinking","data":%s}}`, index, quote(data)))
	w.Event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// MessageStartUsage opens an Anthropic message whose usage has the input
// and cache counts of u.
func (w *Writer) MessageStartUsage(u Usage) {
	w.Event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_fake","type":"message","role":"assistant","model":"fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`,
		u.InputTokens, u.CacheWriteTokens, u.CacheReadTokens))
}

// MessageStopUsage is MessageStop with u's output counts (and its reasoning
// tokens as output_tokens_details.thinking_tokens when not 0).
func (w *Writer) MessageStopUsage(reason string, u Usage) {
	usage := fmt.Sprintf(`{"output_tokens":%d}`, u.OutputTokens)
	if u.ReasoningTokens > 0 {
		usage = fmt.Sprintf(`{"output_tokens":%d,"output_tokens_details":{"thinking_tokens":%d}}`, u.OutputTokens, u.ReasoningTokens)
	}
	w.Event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":%s}`, quote(reason), usage))
	w.Event("message_stop", `{"type":"message_stop"}`)
}

// AnthropicThinkingAnswer is a whole Anthropic answer: a signed thinking
// block, then the text.
func (w *Writer) AnthropicThinkingAnswer(thinking, signature, text string) {
	w.MessageStart(25)
	w.ThinkingBlock(0, signature, thinking)
	w.TextBlock(1, text)
	w.MessageStop("end_turn", 30)
}

// AnthropicThinkingCall is a whole Anthropic answer that thinks (a signed
// block) and then calls one tool with input (JSON text).
func (w *Writer) AnthropicThinkingCall(thinking, signature, id, name, input string) {
	w.MessageStart(25)
	w.ThinkingBlock(0, signature, thinking)
	w.ToolUseBlock(1, id, name, input)
	w.MessageStop("tool_use", 60)
}
