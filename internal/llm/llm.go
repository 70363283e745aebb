// Package llm is the provider-neutral model layer: a conversation model
// (Message, ToolCall, ToolSpec), a streaming Provider interface, and two
// implementations built on the official SDKs: OpenAI-compatible chat
// completions (OpenAI, Ollama, OpenRouter, vLLM, llama.cpp server) and
// Anthropic Messages. It also holds thinking levels (Anthropic budgets,
// reasoning_effort) and thinking blocks, cache and reasoning token usage,
// the listing of a provider's models (models.go) and a table of known
// context windows (window.go).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Role is who a Message is from.
type Role string

// The roles of a conversation. The system prompt is not a message; it is
// Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call the model asked for. Arguments is the JSON object the
// model produced (complete once the call has ended).
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one entry of the conversation sent to the model.
//
//   - RoleUser: Text.
//   - RoleAssistant: Text and/or ToolCalls.
//   - RoleTool: the result of the call ToolCallID: Text, and IsError when the
//     tool failed. (OpenAI has no error flag on tool messages; there only the
//     text tells the model it failed.)
//
// An assistant message's Thinking blocks are kept in the order the model
// produced them and go back to the provider with the message (Anthropic
// needs them, signed, when thinking is on and tools are used).
type Message struct {
	Role       Role       `json:"role"`
	Text       string     `json:"text,omitempty"`
	Thinking   []Thinking `json:"thinking,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
}

// Thinking is one block of the model's reasoning. Text is the reasoning as
// the provider shows it; Signature is Anthropic's proof that the block is
// unaltered (empty from OpenAI-compatible servers). A Redacted block has no
// text: Data is the encrypted reasoning, to be sent back as it came.
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
	Data      string `json:"data,omitempty"`
}

// ToolSpec describes a tool to the model. Parameters is a JSON schema object
// ({"type":"object","properties":…,"required":…}).
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the answer. 0 means the provider's default (OpenAI: not
	// sent; Anthropic, where it is required: DefaultAnthropicMaxTokens).
	// With thinking on, Anthropic counts the thinking budget in it: it is
	// raised above the budget when it is not.
	MaxTokens int
	// Thinking is the reasoning level: "" or ThinkingOff for none, else one
	// of ThinkingLevels. Anthropic gets a thinking budget (ThinkingBudget),
	// OpenAI-compatible servers reasoning_effort.
	Thinking string
}

// Thinking levels, from none to the most.
const (
	ThinkingOff     = "off"
	ThinkingMinimal = "minimal"
	ThinkingLow     = "low"
	ThinkingMedium  = "medium"
	ThinkingHigh    = "high"
	ThinkingXHigh   = "xhigh"
)

// ThinkingLevels are the levels that turn thinking on, in increasing order.
var ThinkingLevels = []string{ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh}

// ThinkingBudget is the Anthropic thinking budget in tokens for a level, or
// 0 when the level turns thinking off ("", "off") or is unknown.
func ThinkingBudget(level string) int {
	switch level {
	case ThinkingMinimal:
		return 1024 // the API's minimum
	case ThinkingLow:
		return 2048
	case ThinkingMedium:
		return 8192
	case ThinkingHigh:
		return 16384
	case ThinkingXHigh:
		return 32000
	}
	return 0
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds, in the order a stream produces them: any number of TextDelta
// and tool-call events, then exactly one Done or Error as the last event.
const (
	// TextDelta: Text is the next piece of assistant text.
	TextDelta EventKind = iota
	// ToolCallStart: ToolCall has the ID and Name; Arguments is empty.
	ToolCallStart
	// ToolCallDelta: Text is the next piece of the arguments JSON; ToolCall
	// has ID, Name and the arguments received so far.
	ToolCallDelta
	// ToolCallEnd: ToolCall is complete (Arguments is the whole JSON).
	ToolCallEnd
	// Done: the stream finished; StopReason and Usage (when the server sent
	// it) are set.
	Done
	// Error: the stream failed or was cancelled; Err and StopReason
	// (StopError or StopAborted) are set.
	Error
	// ThinkingDelta: Text is the next piece of the current thinking block.
	// (Signatures and redacted blocks have no pieces: they come whole with
	// ThinkingEnd.)
	ThinkingDelta
	// ThinkingEnd: Thinking is the complete block (text, signature, or the
	// redacted data). A block that had no pieces has only this event.
	ThinkingEnd
)

func (k EventKind) String() string {
	switch k {
	case TextDelta:
		return "text_delta"
	case ToolCallStart:
		return "toolcall_start"
	case ToolCallDelta:
		return "toolcall_delta"
	case ToolCallEnd:
		return "toolcall_end"
	case Done:
		return "done"
	case Error:
		return "error"
	case ThinkingDelta:
		return "thinking_delta"
	case ThinkingEnd:
		return "thinking_end"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Usage is the token count of one model call. The counts do not overlap:
// InputTokens are the prompt tokens neither read from nor written to the
// provider's cache (as Anthropic counts them; OpenAI's prompt_tokens, which
// include the cached ones, are split up to match), so the prompt was
// InputTokens+CacheReadTokens+CacheWriteTokens long. ReasoningTokens are the
// part of OutputTokens spent on thinking, when the provider says.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoningTokens,omitempty"`
	// Cost is the price of the call in USD as the provider reported it
	// (OpenRouter does); 0 when unknown.
	Cost float64 `json:"cost,omitempty"`
}

// PromptTokens is the length of the prompt: input plus cached tokens.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// TotalTokens is every token of the call: the prompt and the answer.
func (u Usage) TotalTokens() int64 { return u.PromptTokens() + u.OutputTokens }

// Event is one step of a streamed answer. See the EventKind constants for
// which fields each kind sets.
type Event struct {
	Kind       EventKind
	Text       string
	ToolCall   *ToolCall
	Thinking   *Thinking
	StopReason string
	Err        error
	Usage      *Usage
}

// Normalised stop reasons. A reason a provider sends that is not one of
// these is passed through as it came.
const (
	StopEnd     = "stop"     // the model finished (OpenAI "stop", Anthropic "end_turn", "stop_sequence")
	StopToolUse = "tool_use" // the model wants tool results (OpenAI "tool_calls", Anthropic "tool_use")
	StopLength  = "length"   // the token limit cut the answer (OpenAI "length", Anthropic "max_tokens")
	StopRefusal = "refusal"  // the provider refused (Anthropic "refusal", OpenAI "content_filter")
	StopError   = "error"    // Stream returned an error
	StopAborted = "aborted"  // the context was cancelled
)

// Provider is a model API.
type Provider interface {
	// Name is the provider part of the model spec ("openai", "anthropic",
	// "ollama", "openrouter").
	Name() string
	// Stream sends req and streams the answer through emit (called
	// synchronously, from the calling goroutine, never after Stream returns).
	// It returns the complete assistant message and the normalised stop
	// reason. On failure it returns the partial message (text and thinking
	// so far, a thinking block cut off without its signature, and only the
	// tool calls that had ended), StopError or StopAborted, and the
	// error; cancelling ctx aborts the stream promptly and the error is then
	// ctx.Err().
	Stream(ctx context.Context, req Request, emit func(Event)) (msg Message, stopReason string, err error)
}

// APIError is a failed HTTP exchange with a provider.
type APIError struct {
	Provider   string // "openai", "anthropic", …
	StatusCode int
	Message    string // the server's error message, when it sent one
	KeyEnv     string // the env var holding the key, for auth failures
	Err        error  // the SDK's error
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.StatusCode < 400 { // an error event inside an accepted (200) stream
		fmt.Fprintf(&b, "%s: stream error", e.Provider)
	} else {
		fmt.Fprintf(&b, "%s: HTTP %d", e.Provider, e.StatusCode)
		if t := http.StatusText(e.StatusCode); t != "" {
			b.WriteString(" " + t)
		}
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden) && e.KeyEnv != "" {
		fmt.Fprintf(&b, " (check %s)", e.KeyEnv)
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Err }

// serverMessage pulls the human message out of an error body: either
// {"error":{"message":…}}, {"error":"…"}, {"message":…} or the object
// itself.
func serverMessage(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) != nil {
		if len(raw) > 300 {
			raw = raw[:300] + "…"
		}
		return raw
	}
	if inner, ok := obj["error"]; ok {
		var s string
		if json.Unmarshal(inner, &s) == nil {
			return s
		}
		var o map[string]json.RawMessage
		if json.Unmarshal(inner, &o) == nil {
			obj = o
		}
	}
	var msg string
	if m, ok := obj["message"]; ok && json.Unmarshal(m, &msg) == nil {
		return msg
	}
	return ""
}

// finishErr turns a stream failure into the returned values, preferring
// ctx.Err() when the context was cancelled.
func finishErr(ctx context.Context, err error, emit func(Event)) (string, error) {
	stop := StopError
	if cerr := ctx.Err(); cerr != nil {
		err, stop = cerr, StopAborted
	} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		stop = StopAborted
	}
	emit(Event{Kind: Error, Err: err, StopReason: stop})
	return stop, err
}

// args returns a tool call's arguments for sending back to a provider: the
// JSON object, or {} when the model sent none.
func args(a json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(a))) == 0 {
		return json.RawMessage("{}")
	}
	return a
}

func noEmit(Event) {}
