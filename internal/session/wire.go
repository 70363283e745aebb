package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agentsh/internal/llm"
)

// The persisted and wire form of messages is the reference's (omp): user,
// assistant and tool-result content is an array of typed blocks, so a
// client written for it reads agentsh's get_messages, events and session
// files unchanged. UnmarshalMessage also reads the older agentsh form
// (text / toolCalls / content as a string), so session files written before
// keep loading.

// Block types of message content.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	blockRedactedThinking = "redactedThinking"
	BlockToolCall         = "toolCall"
	blockImage            = "image"
)

// Wire stop reasons of an assistant message (the reference's words).
const (
	StopReasonStop    = "stop"
	StopReasonLength  = "length"
	StopReasonToolUse = "toolUse"
	StopReasonError   = "error"
	StopReasonAborted = "aborted"
)

// WireStopReason maps an llm stop reason to the reference's word. A refusal
// has no word of its own there: it is an error.
func WireStopReason(r string) string {
	switch r {
	case llm.StopToolUse:
		return StopReasonToolUse
	case llm.StopRefusal:
		return StopReasonError
	case "":
		return StopReasonStop
	}
	return r
}

// ContentBlock is one element of a content array, any type.
type ContentBlock struct {
	Type              string          `json:"type"`
	Text              *string         `json:"text,omitempty"`
	Thinking          *string         `json:"thinking,omitempty"`
	ThinkingSignature string          `json:"thinkingSignature,omitempty"`
	Data              string          `json:"data,omitempty"`
	ID                string          `json:"id,omitempty"`
	Name              string          `json:"name,omitempty"`
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	MimeType          string          `json:"mimeType,omitempty"`
}

func TextBlocks(text string) []ContentBlock {
	return []ContentBlock{{Type: BlockText, Text: &text}}
}

// TextContent is a content array holding text as one text block.
func TextContent(text string) json.RawMessage {
	b, _ := json.Marshal(TextBlocks(text))
	return b
}

// assistantContent is the content array of m: thinking, then text, then
// tool calls (the order the providers stream them in).
func assistantContent(m *AssistantMessage) []ContentBlock {
	out := make([]ContentBlock, 0, len(m.Thinking)+1+len(m.ToolCalls))
	for _, t := range m.Thinking {
		if t.Redacted {
			out = append(out, ContentBlock{Type: blockRedactedThinking, Data: t.Data})
			continue
		}
		th := t.Thinking
		out = append(out, ContentBlock{Type: BlockThinking, Thinking: &th, ThinkingSignature: t.Signature})
	}
	if m.Text != "" || m.TextOpen {
		text := m.Text
		out = append(out, ContentBlock{Type: BlockText, Text: &text})
	}
	for _, c := range m.ToolCalls {
		out = append(out, ContentBlock{Type: BlockToolCall, ID: c.ID, Name: c.Name, Arguments: WireArgs(c.Arguments)})
	}
	return out
}

func WireArgs(a json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(a))) == 0 || !json.Valid(a) {
		return json.RawMessage("{}")
	}
	return a
}

type wireUser struct {
	Role        string         `json:"role"`
	Content     []ContentBlock `json:"content"`
	Steering    bool           `json:"steering,omitempty"`
	Attribution string         `json:"attribution,omitempty"`
	Timestamp   int64          `json:"timestamp"`
}

type wireAssistant struct {
	Role         string         `json:"role"`
	Content      []ContentBlock `json:"content"`
	API          string         `json:"api"`
	Provider     string         `json:"provider"`
	Model        string         `json:"model"`
	Usage        Usage          `json:"usage"`
	StopReason   string         `json:"stopReason"`
	ErrorMessage string         `json:"errorMessage,omitempty"`
	Timestamp    int64          `json:"timestamp"`
}

type wireToolResult struct {
	Role       string          `json:"role"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    []ContentBlock  `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	IsError    bool            `json:"isError"`
	Timestamp  int64           `json:"timestamp"`
}

// MarshalMessage encodes m in the reference's message shape, "role" first.
func MarshalMessage(m Message) ([]byte, error) {
	switch v := m.(type) {
	case *UserMessage:
		return json.Marshal(wireUser{RoleUser, TextBlocks(v.Text), v.Steering, v.Attribution, v.Timestamp})
	case *AssistantMessage:
		w := wireAssistant{Role: RoleAssistant, Content: assistantContent(v), API: v.API,
			Provider: v.Provider, Model: v.Model, StopReason: v.StopReason,
			ErrorMessage: v.ErrorMessage, Timestamp: v.Timestamp}
		if v.Usage != nil {
			w.Usage = *v.Usage
		}
		if w.StopReason == "" {
			w.StopReason = StopReasonStop
			if len(v.ToolCalls) > 0 {
				w.StopReason = StopReasonToolUse
			}
		}
		return json.Marshal(w)
	case *ToolResultMessage:
		return json.Marshal(wireToolResult{RoleToolResult, v.ToolCallID, v.ToolName,
			TextBlocks(v.Content), v.Details, v.IsError, v.Timestamp})
	case *BashExecutionMessage:
		return json.Marshal(struct {
			Role string `json:"role"`
			*BashExecutionMessage
		}{RoleBashExecution, v})
	case *CompactionSummaryMessage:
		return marshalCompactionSummary(v)
	case nil:
		return nil, errors.New("message: nil")
	}
	return nil, fmt.Errorf("message: unsupported type %T", m)
}

// readContent decodes a content field: a string, or an array of blocks.
func readContent(raw json.RawMessage) ([]ContentBlock, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return TextBlocks(s), nil
	}
	var blocks []ContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// joinText is the text of blocks' text blocks, in order. An image a client
// sent is not kept: agentsh sends no images to the model.
func joinText(blocks []ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == BlockText && b.Text != nil {
			parts = append(parts, *b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// setContent makes m's thinking, text and tool calls those of a content
// array.
func (m *AssistantMessage) setContent(blocks []ContentBlock) {
	m.Thinking, m.ToolCalls = nil, nil
	var text strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case BlockText:
			if b.Text != nil {
				text.WriteString(*b.Text)
			}
		case BlockThinking:
			t := ThinkingBlock{Signature: b.ThinkingSignature}
			if b.Thinking != nil {
				t.Thinking = *b.Thinking
			}
			m.Thinking = append(m.Thinking, t)
		case blockRedactedThinking:
			m.Thinking = append(m.Thinking, ThinkingBlock{Redacted: true, Data: b.Data})
		case BlockToolCall:
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: WireArgs(b.Arguments)})
		}
	}
	m.Text = text.String()
}

// UnmarshalMessage decodes a message in the reference's shape, or in the
// older agentsh one, choosing the variant by its "role".
func UnmarshalMessage(data []byte) (Message, error) {
	var tag struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &tag); err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	if tag.Role == nil {
		return nil, errors.New(`message: missing "role"`)
	}
	role := *tag.Role
	wrap := func(err error) error { return fmt.Errorf("message (%s): %w", role, err) }
	// Content, in the reference's shape (blocks) or an older one (a
	// string), replaces the older agentsh fields when present.
	blocks, err := readContent(tag.Content)
	if err != nil {
		return nil, wrap(err)
	}
	hasContent := tag.Content != nil
	switch role {
	case RoleUser:
		var m UserMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, wrap(err)
		}
		if hasContent {
			m.Text = joinText(blocks)
		}
		return &m, nil
	case RoleAssistant:
		var m AssistantMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, wrap(err)
		}
		if hasContent {
			m.setContent(blocks)
		}
		return &m, nil
	case RoleToolResult:
		// Content is a string in the Go struct: the wire's array goes in
		// the shadowing field, and its text into the struct's.
		var m struct {
			ToolResultMessage
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, wrap(err)
		}
		m.ToolResultMessage.Content = joinText(blocks)
		// A copy: a pointer into m would keep the raw content alive with
		// the message, twice its memory for the whole session.
		r := m.ToolResultMessage
		return &r, nil
	case RoleBashExecution:
		var m BashExecutionMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, wrap(err)
		}
		return &m, nil
	case RoleCompactionSummary:
		return unmarshalCompactionSummary(data)
	}
	return nil, fmt.Errorf("message: unknown role %q", role)
}
