package session

import (
	"encoding/json"

	"agentsh/internal/llm"
	"agentsh/internal/tools"
)

// Agent event types, in the order a prompt produces them:
//
//	agent_start
//	  turn_start
//	    message_start, message_update…, message_end   (the assistant's answer)
//	    tool_execution_start, tool_execution_update…, tool_execution_end   (per call)
//	  turn_end
//	  … more turns while the model calls tools …
//	agent_end
const (
	EventAgentStart          = "agent_start"
	EventAgentEnd            = "agent_end"
	EventTurnStart           = "turn_start"
	EventTurnEnd             = "turn_end"
	EventMessageStart        = "message_start"
	EventMessageUpdate       = "message_update"
	EventMessageEnd          = "message_end"
	EventToolExecutionStart  = "tool_execution_start"
	EventToolExecutionUpdate = "tool_execution_update"
	EventToolExecutionEnd    = "tool_execution_end"
)

// Kinds of a message_update (Event.UpdateKind): the llm stream event it
// reports.
const (
	UpdateTextDelta     = "text_delta"
	UpdateToolCallStart = "toolcall_start"
	UpdateToolCallDelta = "toolcall_delta"
	UpdateToolCallEnd   = "toolcall_end"
)

// Event is one step of the agent loop, emitted synchronously (never two at
// once) to the Prompt caller. Which fields are set depends on Type:
//
//   - agent_end: Messages (those the prompt added), Error when it failed,
//     Aborted when ctx was cancelled.
//   - turn_start / turn_end: Turn (from 1); turn_end also Message (the
//     assistant message) and ToolResults.
//   - message_start: Message (the empty assistant message).
//   - message_update: UpdateKind, Delta (text or arguments piece), ToolCallID
//     and ToolName for tool-call pieces, Message (the answer so far).
//   - message_end: Message (the complete assistant message), StopReason,
//     and Usage when the provider reported the call's tokens.
//   - tool_execution_start: ToolCallID, ToolName, Args.
//   - tool_execution_update: ToolCallID, ToolName, Args, PartialResult (the
//     live output so far).
//   - tool_execution_end: ToolCallID, ToolName, Result, IsError.
type Event struct {
	Type          string          `json:"type"`
	Turn          int             `json:"turn,omitempty"`
	Message       Message         `json:"-"` // marshalled as "message" via MarshalMessage
	Messages      []Message       `json:"-"` // marshalled as "messages"
	ToolResults   []Message       `json:"-"` // marshalled as "toolResults"
	UpdateKind    string          `json:"updateKind,omitempty"`
	Delta         string          `json:"delta,omitempty"`
	StopReason    string          `json:"stopReason,omitempty"`
	ToolCallID    string          `json:"toolCallId,omitempty"`
	ToolName      string          `json:"toolName,omitempty"`
	Args          json.RawMessage `json:"args,omitempty"`
	PartialResult string          `json:"partialResult,omitempty"`
	Result        *tools.Result   `json:"result,omitempty"`
	IsError       bool            `json:"isError,omitempty"`
	Aborted       bool            `json:"aborted,omitempty"`
	Error         string          `json:"error,omitempty"`
	Usage         *llm.Usage      `json:"usage,omitempty"`
}

// MarshalJSON encodes the event with its messages in the persisted form
// (MarshalMessage: "role" first).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	out := struct {
		plain
		Message     json.RawMessage   `json:"message,omitempty"`
		Messages    []json.RawMessage `json:"messages,omitempty"`
		ToolResults []json.RawMessage `json:"toolResults,omitempty"`
	}{plain: plain(e)}
	var err error
	if e.Message != nil {
		if out.Message, err = MarshalMessage(e.Message); err != nil {
			return nil, err
		}
	}
	enc := func(ms []Message) ([]json.RawMessage, error) {
		if ms == nil {
			return nil, nil
		}
		raw := make([]json.RawMessage, 0, len(ms))
		for _, m := range ms {
			b, err := MarshalMessage(m)
			if err != nil {
				return nil, err
			}
			raw = append(raw, b)
		}
		return raw, nil
	}
	if out.Messages, err = enc(e.Messages); err != nil {
		return nil, err
	}
	if out.ToolResults, err = enc(e.ToolResults); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
