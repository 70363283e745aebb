package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"agentsh/internal/fakemodel"
)

func anthropicScript(n int, w *fakemodel.Writer) {
	switch n {
	case 0:
		w.Event("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
		w.Event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		w.Event("ping", `{"type": "ping"}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Running "}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"it."}}`)
		w.Event("content_block_stop", `{"type":"content_block_stop","index":0}`)
		w.Event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"bash","input":{}}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`)
		for _, piece := range argPieces {
			b, _ := json.Marshal(piece)
			w.Event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":`+string(b)+`}}`)
		}
		w.Event("content_block_stop", `{"type":"content_block_stop","index":1}`)
		w.Event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}`)
		w.Event("message_stop", `{"type":"message_stop"}`)
	default:
		w.Event("message_start", `{"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":90,"output_tokens":1}}}`)
		w.Event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"There are "}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"200000 lines."}}`)
		w.Event("content_block_stop", `{"type":"content_block_stop","index":0}`)
		w.Event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}`)
		w.Event("message_stop", `{"type":"message_stop"}`)
	}
}

func TestAnthropicToolCallThenAnswer(t *testing.T) {
	srv := fakemodel.New(t, anthropicScript)
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "sk-ant-test", MaxRetries: zero()})
	if p.Name() != "anthropic" {
		t.Errorf("Name = %q", p.Name())
	}
	req := Request{
		Model:    "claude-test",
		System:   "You are agentsh.",
		Messages: []Message{{Role: RoleUser, Text: "count to 200000"}},
		Tools:    []ToolSpec{bashTool},
	}
	emit, evs := collect()
	msg, stop, err := streamWithGuard(t, p, context.Background(), req, emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if stop != StopToolUse {
		t.Errorf("stop = %q", stop)
	}
	sameLines(t, "events", describe(*evs), []string{
		"text_delta Running ",
		"text_delta it.",
		`toolcall_start toolu_01 bash ""`,
		`toolcall_delta toolu_01 bash +{"comm ={"comm`,
		`toolcall_delta toolu_01 bash +and":"seq ={"command":"seq`,
		`toolcall_delta toolu_01 bash + 1 2000 ={"command":"seq 1 2000`,
		`toolcall_delta toolu_01 bash +00"} =` + wantArgs,
		"toolcall_end toolu_01 bash " + wantArgs,
		"done tool_use in=25 out=40",
	})
	if msg.Role != RoleAssistant || msg.Text != "Running it." || len(msg.ToolCalls) != 1 {
		t.Fatalf("msg = %+v", msg)
	}
	if tc := msg.ToolCalls[0]; tc.ID != "toolu_01" || tc.Name != "bash" || string(tc.Arguments) != wantArgs {
		t.Errorf("tool call = %s", toolCallsString(msg.ToolCalls))
	}

	b := srv.Request(t, 0).Body
	if srv.Request(t, 0).Path != "/v1/messages" {
		t.Errorf("path = %q", srv.Request(t, 0).Path)
	}
	// This SDK version sends the API key as a bearer token.
	if got := srv.Request(t, 0).Header.Get("Authorization"); got != "Bearer sk-ant-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := srv.Request(t, 0).Header.Get("Anthropic-Version"); got == "" {
		t.Error("no anthropic-version header")
	}
	jsonEq(t, "model", b["model"], `"claude-test"`)
	jsonEq(t, "stream", b["stream"], `true`)
	jsonEq(t, "max_tokens", b["max_tokens"], fmt.Sprint(DefaultAnthropicMaxTokens))
	jsonEq(t, "system", b["system"], `[{"type":"text","text":"You are agentsh."}]`)
	jsonEq(t, "tools", b["tools"], `[{"name":"bash","description":"Run a bash command.","input_schema":{
		"type":"object","properties":{"command":{"type":"string","description":"The command"}},"required":["command"],"additionalProperties":false}}]`)
	jsonEq(t, "messages", b["messages"], `[{"role":"user","content":[{"type":"text","text":"count to 200000"}]}]`)

	const result = "bash: seq: command not found"
	req.Messages = append(req.Messages, msg, Message{Role: RoleTool, ToolCallID: "toolu_01", Text: result, IsError: true})
	req.MaxTokens = 500
	emit, evs = collect()
	msg2, stop2, err := streamWithGuard(t, p, context.Background(), req, emit)
	if err != nil {
		t.Fatalf("Stream 2: %v", err)
	}
	if stop2 != StopEnd || msg2.Text != "There are 200000 lines." || len(msg2.ToolCalls) != 0 {
		t.Errorf("second answer = %+v stop %q", msg2, stop2)
	}
	sameLines(t, "events 2", describe(*evs), []string{
		"text_delta There are ",
		"text_delta 200000 lines.",
		"done stop in=90 out=6",
	})
	b = srv.Request(t, 1).Body
	jsonEq(t, "max_tokens 2", b["max_tokens"], `500`)
	jsonEq(t, "messages 2", b["messages"], `[
		{"role":"user","content":[{"type":"text","text":"count to 200000"}]},
		{"role":"assistant","content":[{"type":"text","text":"Running it."},{"type":"tool_use","id":"toolu_01","name":"bash","input":{"command":"seq 1 200000"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","is_error":true,"content":[{"type":"text","text":`+jsonString(result)+`}]}]}]`)
}

// Tool results of one turn share a user turn, a following user text joins
// it, and empty texts are left out.
func TestAnthropicMessageMapping(t *testing.T) {
	p := NewAnthropic(AnthropicConfig{}).(*anthropicProvider)
	params, _, err := p.params(Request{Model: "m", Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}, {ID: "b", Name: "bash"}}},
		{Role: RoleTool, ToolCallID: "a", Text: "x"},
		{Role: RoleTool, ToolCallID: "b", Text: ""},
		{Role: RoleUser, Text: "and now?"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(params.Messages)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	_ = json.Unmarshal(raw, &got)
	jsonEq(t, "messages", got, `[
		{"role":"user","content":[{"type":"text","text":"go"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"bash","input":{"command":"ls"}},{"type":"tool_use","id":"b","name":"bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"}]},{"type":"tool_result","tool_use_id":"b"},{"type":"text","text":"and now?"}]}]`)
}

func TestAnthropicUnauthorized(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Header().Set("Request-Id", "req_1")
		w.Error(http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	})
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "bad", MaxRetries: zero()})
	emit, evs := collect()
	_, stop, err := streamWithGuard(t, p, context.Background(), Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, emit)
	want := "anthropic: HTTP 401 Unauthorized: invalid x-api-key (check ANTHROPIC_API_KEY)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Errorf("not an APIError 401: %#v", err)
	}
	if stop != StopError {
		t.Errorf("stop = %q", stop)
	}
	sameLines(t, "events", describe(*evs), []string{"error error " + want})
}

// An error event inside an accepted stream (e.g. overloaded).
func TestAnthropicStreamErrorEvent(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Event("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)
		w.Event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	})
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()})
	_, stop, err := streamWithGuard(t, p, context.Background(), Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, nil)
	if err == nil || stop != StopError {
		t.Fatalf("err = %v stop %q", err, stop)
	}
	if got := err.Error(); got != "anthropic: stream error: Overloaded" {
		t.Errorf("err = %q", got)
	}
}

// A stream cut off before message_stop is an error, not a short answer.
func TestAnthropicTruncatedStream(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Event("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)
		w.Event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hal"}}`)
	})
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()})
	msg, stop, err := streamWithGuard(t, p, context.Background(), Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, nil)
	if err == nil || stop != StopError || msg.Text != "Hal" {
		t.Fatalf("err = %v stop %q msg %+v", err, stop, msg)
	}
}

func TestAnthropicCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Event("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)
		w.Event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`)
		w.Event("content_block_stop", `{"type":"content_block_stop","index":0}`)
		w.Event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"bash","input":{}}}`)
		w.Event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}`)
		select {
		case <-w.Context().Done():
		case <-release:
		}
	})
	testCancelMidStream(t, NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()}))
}
