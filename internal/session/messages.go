package session

import (
	"encoding/json"
	"errors"
	"fmt"
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
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON object
}

// AssistantMessage is the model's reply: text plus any tool calls.
type AssistantMessage struct {
	Text      string     `json:"text"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Timestamp int64      `json:"timestamp,omitempty"`
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

// MarshalMessage encodes m as one JSON object with "role" first.
func MarshalMessage(m Message) ([]byte, error) {
	// Embedding the concrete pointer promotes its fields next to role.
	switch v := m.(type) {
	case *UserMessage:
		return json.Marshal(struct {
			Role string `json:"role"`
			*UserMessage
		}{RoleUser, v})
	case *AssistantMessage:
		return json.Marshal(struct {
			Role string `json:"role"`
			*AssistantMessage
		}{RoleAssistant, v})
	case *ToolResultMessage:
		return json.Marshal(struct {
			Role string `json:"role"`
			*ToolResultMessage
		}{RoleToolResult, v})
	case *BashExecutionMessage:
		return json.Marshal(struct {
			Role string `json:"role"`
			*BashExecutionMessage
		}{RoleBashExecution, v})
	case nil:
		return nil, errors.New("message: nil")
	}
	return nil, fmt.Errorf("message: unsupported type %T", m)
}

// UnmarshalMessage decodes an object written by MarshalMessage, choosing the
// variant by its "role".
func UnmarshalMessage(data []byte) (Message, error) {
	var tag struct {
		Role *string `json:"role"`
	}
	if err := json.Unmarshal(data, &tag); err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	if tag.Role == nil {
		return nil, errors.New(`message: missing "role"`)
	}
	var m Message
	switch *tag.Role {
	case RoleUser:
		m = &UserMessage{}
	case RoleAssistant:
		m = &AssistantMessage{}
	case RoleToolResult:
		m = &ToolResultMessage{}
	case RoleBashExecution:
		m = &BashExecutionMessage{}
	default:
		return nil, fmt.Errorf("message: unknown role %q", *tag.Role)
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("message (%s): %w", *tag.Role, err)
	}
	return m, nil
}

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
