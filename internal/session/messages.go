package session

import (
	"encoding/json"
	"strconv"
	"strings"

	"agentsh/internal/bash"
)

// Message roles, the tag of the persisted union.
const (
	RoleUser          = "user"
	RoleAssistant     = "assistant"
	RoleToolResult    = "toolResult"
	RoleBashExecution = "bashExecution"
)

// Message is one entry of a conversation: *UserMessage, *AssistantMessage,
// *ToolResultMessage or *BashExecutionMessage. It is persisted as a JSON
// object whose "role" field names the variant (MarshalMessage,
// UnmarshalMessage).
type Message interface {
	Role() string
	isMessage()
}

// UserMessage is text the user (or a converted bang command) sent.
type UserMessage struct {
	Text      string `json:"text"`
	Timestamp int64  `json:"timestamp,omitempty"` // Unix milliseconds
	// Steering marks a message delivered while the agent worked (RPC
	// steer, the TUI's message typed during a turn), as the reference does.
	Steering bool `json:"steering,omitempty"`
	// Attribution is who initiated the message, in the reference's words:
	// "user" for what the user typed, "agent" for what agentsh added on
	// its own (a job notice); empty in older session files.
	Attribution string `json:"attribution,omitempty"`
	// Queued marks a message sent with Steer or FollowUp (not saved): a UI
	// that shows the prompts it sends itself shows these when they join the
	// conversation.
	Queued bool `json:"-"`
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON object
}

// ThinkingBlock is one piece of the model's reasoning, kept so it can be
// shown and sent back as the provider requires (Anthropic wants its signed
// blocks again with tool results). Redacted blocks carry only Data.
type ThinkingBlock struct {
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"thinkingSignature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
	Data      string `json:"data,omitempty"`
}

// Usage is the token count and cost of one model call, in the reference's
// shape.
type Usage struct {
	Input           int64     `json:"input"`
	Output          int64     `json:"output"`
	CacheRead       int64     `json:"cacheRead"`
	CacheWrite      int64     `json:"cacheWrite"`
	TotalTokens     int64     `json:"totalTokens"`
	ReasoningTokens int64     `json:"reasoningTokens,omitempty"`
	Cost            UsageCost `json:"cost"`
}

// UsageCost is a call's cost in USD as the provider reported it (0 when it
// did not).
type UsageCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// AssistantMessage is the model's reply: thinking, text and tool calls, and
// which model gave it with what usage.
type AssistantMessage struct {
	Thinking  []ThinkingBlock `json:"thinking,omitempty"`
	Text      string          `json:"text"`
	ToolCalls []ToolCall      `json:"toolCalls,omitempty"`
	// API is the wire protocol ("openai-completions",
	// "anthropic-messages"), Provider and Model the configured ones.
	API      string `json:"api,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Usage    *Usage `json:"usage,omitempty"`
	// StopReason is the reference's word: stop, length, toolUse, error or
	// aborted (WireStopReason maps the llm's).
	StopReason   string `json:"stopReason,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Timestamp    int64  `json:"timestamp,omitempty"`

	// TextOpen marks a snapshot taken while a text block streams: its
	// content has the text block even while it is still empty.
	TextOpen bool `json:"-"`
}

// ToolResultMessage answers one ToolCall. Content is exactly what the model
// reads (truncation notice included); Details is the tool's structured side,
// for the bash tool a marshalled bash.ToolDetails.
type ToolResultMessage struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    string          `json:"content"`
	IsError    bool            `json:"isError"`
	Details    json.RawMessage `json:"details,omitempty"`
	Timestamp  int64           `json:"timestamp,omitempty"`
}

// BashExecutionMessage records one user bang command (`!cmd` / `!!cmd`).
// Meta has the same shape as a bash tool result's details.meta
// ({"truncation": {…}}) and is set only when the output was truncated.
type BashExecutionMessage struct {
	Command            string           `json:"command"`
	Output             string           `json:"output"`
	ExitCode           *int             `json:"exitCode,omitempty"`
	Cancelled          bool             `json:"cancelled"`
	Truncated          bool             `json:"truncated"`
	Meta               *bash.OutputMeta `json:"meta,omitempty"`
	Timestamp          int64            `json:"timestamp"`
	ExcludeFromContext bool             `json:"excludeFromContext,omitempty"`
	// Styled is Output with its SGR colours, when the command was run for
	// a UI that shows them (BashOptions.Styled) and printed any, so the
	// transcript can be drawn again in colour; the model reads Output.
	Styled string `json:"styled,omitempty"`
}

func (*UserMessage) Role() string          { return RoleUser }
func (*AssistantMessage) Role() string     { return RoleAssistant }
func (*ToolResultMessage) Role() string    { return RoleToolResult }
func (*BashExecutionMessage) Role() string { return RoleBashExecution }

func (*UserMessage) isMessage()          {}
func (*AssistantMessage) isMessage()     {}
func (*ToolResultMessage) isMessage()    {}
func (*BashExecutionMessage) isMessage() {}

// BashExecutionToText is what the model reads for a bang command, sent as a
// user message. The layout follows the reference converter, newline for
// newline:
//
//	Ran `<command>`\n
//	```\n<output>\n```            — or (no output) when the output is empty
//	\n\n(command cancelled)        — when cancelled, else
//	\n\nCommand exited with code N — when the exit code is known and non-zero
//	\n\n[<bash.TruncationNotice>]  — when truncation meta is present
//
// so `ls` printing a and b gives "Ran `ls`\n```\na\nb\n```". One trailing
// newline of the output is dropped so the closing fence never follows a
// blank line. The fence is one backtick longer than the longest backtick run
// in the output (at least three), and the command's inline code span is
// likewise longer than any backtick run in the command, so neither can be
// closed early.
func BashExecutionToText(m *BashExecutionMessage) string {
	var b strings.Builder
	b.WriteString("Ran ")
	b.WriteString(inlineCode(m.Command))
	b.WriteByte('\n')
	if m.Output == "" {
		b.WriteString("(no output)")
	} else {
		out := strings.TrimSuffix(m.Output, "\n")
		fence := strings.Repeat("`", max(3, longestRun(out, '`')+1))
		b.WriteString(fence)
		b.WriteByte('\n')
		b.WriteString(out)
		b.WriteByte('\n')
		b.WriteString(fence)
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(command cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		b.WriteString("\n\nCommand exited with code " + strconv.Itoa(*m.ExitCode))
	}
	if m.Meta != nil && m.Meta.Truncation != nil {
		b.WriteString("\n\n[" + bash.TruncationNotice(m.Meta.Truncation) + "]")
	}
	return b.String()
}

// inlineCode wraps s in a CommonMark code span that s cannot close.
func inlineCode(s string) string {
	n := longestRun(s, '`')
	if n == 0 {
		return "`" + s + "`"
	}
	delim := strings.Repeat("`", n+1)
	return delim + " " + s + " " + delim
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
