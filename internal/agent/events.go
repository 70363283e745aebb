package agent

import (
	"encoding/json"

	"agentsh/internal/llm"
	"agentsh/internal/session"
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

// Kinds of a message_update (Event.UpdateKind): the reference's
// assistantMessageEvent types.
const (
	UpdateTextStart     = "text_start"
	UpdateTextDelta     = "text_delta"
	UpdateTextEnd       = "text_end"
	UpdateThinkingStart = "thinking_start"
	UpdateThinkingDelta = "thinking_delta"
	UpdateThinkingEnd   = "thinking_end"
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
//   - message_start / message_end: Message, for user, assistant and tool
//     result messages alike (the assistant's message_start holds the empty
//     answer); an assistant's message_end also has StopReason and Usage
//     when the provider reported the call's tokens.
//   - message_update: UpdateKind, ContentIndex (the block in the message's
//     content array), Delta (text, thinking or arguments piece), Content
//     (the whole block's text, on text_end and thinking_end), ToolCall (on
//     toolcall_end), ToolCallID and ToolName for tool-call pieces, Message
//     (the answer so far).
//   - tool_execution_start: ToolCallID, ToolName, Args.
//   - tool_execution_update: ToolCallID, ToolName, Args, PartialResult (the
//     live output so far).
//   - tool_execution_end: ToolCallID, ToolName, Result, IsError.
type Event struct {
	Type          string
	Turn          int
	Message       session.Message
	Messages      []session.Message
	ToolResults   []session.Message
	UpdateKind    string
	ContentIndex  int
	Delta         string
	Content       string
	ToolCall      *session.ToolCall
	StopReason    string
	ToolCallID    string
	ToolName      string
	Args          json.RawMessage
	PartialResult string
	Result        *tools.Result
	IsError       bool
	Aborted       bool
	Error         string
	Usage         *llm.Usage
	// NotTerminal marks an agent_end after which the agent goes on by
	// itself (a queued follow-up starts the next run): the reference's
	// isTerminal false.
	NotTerminal bool
	// Compaction is the payload of auto_compaction_start and _end
	// (compact.go).
	Compaction *AutoCompaction
	// auto_retry_start: Attempt, MaxAttempts, DelayMs, ErrorMessage;
	// auto_retry_end: Success, Attempt, FinalError (retry.go).
	Attempt, MaxAttempts int
	DelayMs              int64
	ErrorMessage         string
	Success              bool
	FinalError           string
}

// wireToolResultBody is a tool result inside tool_execution events, as the
// reference sends it.
type wireToolResultBody struct {
	Content []session.ContentBlock `json:"content"`
	Details json.RawMessage        `json:"details,omitempty"`
	IsError bool                   `json:"isError,omitempty"`
	Aborted bool                   `json:"aborted,omitempty"`
}

// wireAssistantEvent is message_update's assistantMessageEvent.
type wireAssistantEvent struct {
	Type         string                `json:"type"`
	ContentIndex int                   `json:"contentIndex"`
	Delta        *string               `json:"delta,omitempty"`
	Content      *string               `json:"content,omitempty"`
	ToolCall     *session.ContentBlock `json:"toolCall,omitempty"`
}

// MarshalJSON encodes the event in the reference's shape, as RPC mode
// writes it (message_update with its partial message).
func (e Event) MarshalJSON() ([]byte, error) { return e.marshal(true) }

// Printable is the event as --mode json writes it: like the reference's
// print mode, a message_update carries only its delta (no snapshot of the
// message so far), so a long answer's transcript grows linearly.
func (e Event) Printable() json.Marshaler { return printable(e) }

type printable Event

func (p printable) MarshalJSON() ([]byte, error) { return Event(p).marshal(false) }

// marshal writes the event by hand around the encoded messages: going
// through json.Marshal with them as RawMessage fields would copy and
// re-scan (compact) every snapshot once more per level, which made a long
// streamed answer's events cost twice the time (BenchmarkRPCPrompt).
func (e Event) marshal(snapshots bool) ([]byte, error) {
	if e.Type == EventAutoRetryStart || e.Type == EventAutoRetryEnd {
		return e.marshalRetryEvent()
	}
	if e.Compaction != nil {
		return e.Compaction.marshal(e.Type)
	}
	head := struct {
		Type          string              `json:"type"`
		Turn          int                 `json:"turn,omitempty"`
		ToolCallID    string              `json:"toolCallId,omitempty"`
		ToolName      string              `json:"toolName,omitempty"`
		Args          json.RawMessage     `json:"args,omitempty"`
		PartialResult *wireToolResultBody `json:"partialResult,omitempty"`
		Result        *wireToolResultBody `json:"result,omitempty"`
		IsError       *bool               `json:"isError,omitempty"`
		StopReason    string              `json:"stopReason,omitempty"`
		Aborted       bool                `json:"aborted,omitempty"`
		Error         string              `json:"error,omitempty"`
		IsTerminal    *bool               `json:"isTerminal,omitempty"`
	}{Type: e.Type, Turn: e.Turn, ToolCallID: e.ToolCallID, ToolName: e.ToolName, Args: e.Args,
		StopReason: e.StopReason, Aborted: e.Aborted, Error: e.Error}
	var (
		msg []byte
		ae  *wireAssistantEvent
		err error
	)
	if e.Message != nil && (snapshots || e.Type != EventMessageUpdate) {
		if msg, err = session.MarshalMessage(e.Message); err != nil {
			return nil, err
		}
	}
	switch e.Type {
	case EventMessageUpdate:
		// The tool call's id and name are inside the event (toolCall) and
		// the partial message; the top-level copies are not the reference's.
		head.ToolCallID, head.ToolName = "", ""
		ae = &wireAssistantEvent{Type: e.UpdateKind, ContentIndex: e.ContentIndex}
		switch e.UpdateKind {
		case UpdateTextDelta, UpdateThinkingDelta, UpdateToolCallDelta:
			d := e.Delta
			ae.Delta = &d
		case UpdateTextEnd, UpdateThinkingEnd:
			c := e.Content
			ae.Content = &c
		case UpdateToolCallEnd:
			if e.ToolCall != nil {
				ae.ToolCall = &session.ContentBlock{Type: session.BlockToolCall, ID: e.ToolCall.ID, Name: e.ToolCall.Name,
					Arguments: session.WireArgs(e.ToolCall.Arguments)}
			}
		}
	case EventToolExecutionUpdate:
		head.PartialResult = &wireToolResultBody{Content: session.TextBlocks(e.PartialResult), Details: json.RawMessage("{}")}
	case EventToolExecutionEnd:
		isErr := e.IsError
		head.IsError = &isErr
		if e.Result != nil {
			head.Result = &wireToolResultBody{Content: session.TextBlocks(e.Result.Content), Details: e.Result.Details,
				IsError: e.Result.IsError, Aborted: e.Result.Aborted}
		}
	case EventAgentEnd:
		if e.Messages == nil {
			e.Messages = []session.Message{}
		}
		terminal := !e.NotTerminal
		head.IsTerminal = &terminal
	case EventTurnEnd:
		if e.ToolResults == nil {
			e.ToolResults = []session.Message{}
		}
	}
	b, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // reopen the object
	if msg != nil {
		b = append(b, `,"message":`...)
		b = append(b, msg...)
	}
	if ae != nil {
		ab, err := json.Marshal(ae)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"assistantMessageEvent":`...)
		if snapshots && msg != nil {
			b = append(b, ab[:len(ab)-1]...)
			b = append(b, `,"partial":`...)
			b = append(b, msg...)
			b = append(b, '}')
		} else {
			b = append(b, ab...)
		}
	}
	// An empty list is written as [] where the reference always has one;
	// a nil one is left out.
	list := func(key string, ms []session.Message) error {
		if ms == nil {
			return nil
		}
		b = append(b, `,"`+key+`":[`...)
		for i, m := range ms {
			mb, err := session.MarshalMessage(m)
			if err != nil {
				return err
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, mb...)
		}
		b = append(b, ']')
		return nil
	}
	if err := list("messages", e.Messages); err != nil {
		return nil, err
	}
	if err := list("toolResults", e.ToolResults); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}
