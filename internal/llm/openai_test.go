package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"agentsh/internal/fakemodel"
)

// openAIScript: request 0 → text then a bash tool call with arguments in
// pieces; request 1 → a text answer.
func openAIScript(n int, w *fakemodel.Writer) {
	switch n {
	case 0:
		w.Chunk(`[{"index":0,"delta":{"role":"assistant","content":"Running "},"logprobs":null,"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"content":"it."},"logprobs":null,"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"bash","arguments":""}}]},"logprobs":null,"finish_reason":null}]`)
		for _, piece := range argPieces {
			b, _ := json.Marshal(piece)
			w.Chunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + string(b) + `}}]},"logprobs":null,"finish_reason":null}]`)
		}
		w.FinishUsage("tool_calls", 50, 20)
	default:
		w.Chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"content":"There are "},"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"content":"200000 lines."},"finish_reason":null}]`)
		w.FinishUsage("stop", 90, 5)
	}
}

func TestOpenAIToolCallThenAnswer(t *testing.T) {
	srv := fakemodel.New(t, openAIScript)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test", MaxRetries: zero()})
	if p.Name() != "openai" {
		t.Errorf("Name = %q", p.Name())
	}

	req := Request{
		Model:     "gpt-test",
		System:    "You are agentsh.",
		Messages:  []Message{{Role: RoleUser, Text: "count to 200000"}},
		Tools:     []ToolSpec{bashTool},
		MaxTokens: 1000,
	}
	emit, evs := collect()
	msg, stop, err := streamWithGuard(t, p, context.Background(), req, emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if stop != StopToolUse {
		t.Errorf("stop = %q, want %q", stop, StopToolUse)
	}
	sameLines(t, "events", describe(*evs), []string{
		"text_delta Running ",
		"text_delta it.",
		`toolcall_start call_abc bash ""`,
		`toolcall_delta call_abc bash +{"comm ={"comm`,
		`toolcall_delta call_abc bash +and":"seq ={"command":"seq`,
		`toolcall_delta call_abc bash + 1 2000 ={"command":"seq 1 2000`,
		`toolcall_delta call_abc bash +00"} =` + wantArgs,
		"toolcall_end call_abc bash " + wantArgs,
		"done tool_use in=50 out=20",
	})
	if msg.Role != RoleAssistant || msg.Text != "Running it." || len(msg.ToolCalls) != 1 {
		t.Fatalf("msg = %+v", msg)
	}
	if tc := msg.ToolCalls[0]; tc.ID != "call_abc" || tc.Name != "bash" || string(tc.Arguments) != wantArgs {
		t.Errorf("tool call = %+v (%s)", tc, tc.Arguments)
	}

	// What the SDK sent.
	b := srv.Request(t, 0).Body
	if srv.Request(t, 0).Path != "/v1/chat/completions" {
		t.Errorf("path = %q", srv.Request(t, 0).Path)
	}
	if got := srv.Request(t, 0).Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	jsonEq(t, "model", b["model"], `"gpt-test"`)
	jsonEq(t, "stream", b["stream"], `true`)
	jsonEq(t, "stream_options", b["stream_options"], `{"include_usage":true}`)
	jsonEq(t, "max_completion_tokens", b["max_completion_tokens"], `1000`)
	jsonEq(t, "tools", b["tools"], `[{"type":"function","function":{"name":"bash","description":"Run a bash command.",
		"parameters":{"type":"object","properties":{"command":{"type":"string","description":"The command"}},"required":["command"],"additionalProperties":false}}}]`)
	jsonEq(t, "messages", b["messages"], `[{"role":"system","content":"You are agentsh."},{"role":"user","content":"count to 200000"}]`)

	// Second turn: the tool result goes back.
	const result = "1\n2\n…\n200000\n[Showing lines 199001-200000 of 200000. Full: artifact://1]"
	req.Messages = append(req.Messages, msg, Message{Role: RoleTool, ToolCallID: "call_abc", Text: result})
	emit, evs = collect()
	msg2, stop2, err := streamWithGuard(t, p, context.Background(), req, emit)
	if err != nil {
		t.Fatalf("Stream 2: %v", err)
	}
	if stop2 != StopEnd || msg2.Text != "There are 200000 lines." || len(msg2.ToolCalls) != 0 {
		t.Errorf("second answer = %q %+v stop %q", msg2.Text, msg2.ToolCalls, stop2)
	}
	sameLines(t, "events 2", describe(*evs), []string{
		"text_delta There are ",
		"text_delta 200000 lines.",
		"done stop in=90 out=5",
	})
	b = srv.Request(t, 1).Body
	jsonEq(t, "messages 2", jsonPath(t, b, "messages"), `[
		{"role":"system","content":"You are agentsh."},
		{"role":"user","content":"count to 200000"},
		{"role":"assistant","content":"Running it.","tool_calls":[{"id":"call_abc","type":"function","function":{"name":"bash","arguments":`+jsonString(wantArgs)+`}}]},
		{"role":"tool","tool_call_id":"call_abc","content":`+jsonString(result)+`}]`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Two calls in one answer, their deltas interleaved by index, and a server
// that sends no ids and "stop" as the finish reason.
//
// The process's OPENAI_* variables must not leak into a provider configured
// otherwise (no OpenAI key sent to Ollama or OpenRouter).
func TestOpenAIParallelToolCalls(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Chunk(`[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]},"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]},"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]},"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"pwd\"}"}}]},"finish_reason":null}]`)
		w.Finish("stop")
	})
	p := NewOpenAI(OpenAIConfig{Name: "ollama", BaseURL: srv.URL, MaxRetries: zero(), LegacyMaxTokens: true})
	emit, evs := collect()
	msg, stop, err := streamWithGuard(t, p, context.Background(), Request{Model: "llama3", Messages: []Message{{Role: RoleUser, Text: "hi"}}, Tools: []ToolSpec{bashTool}, MaxTokens: 7}, emit)
	if err != nil {
		t.Fatal(err)
	}
	if stop != StopToolUse {
		t.Errorf("stop = %q", stop)
	}
	// The second call came without an id: it gets a made-up one, distinct.
	if got := toolCallsString(msg.ToolCalls); got != `{call_1 bash {"command":"ls"}} {agentsh_call_1 bash {"command":"pwd"}} ` {
		t.Errorf("tool calls = %s", got)
	}
	// The ids in the events match the message's.
	sameLines(t, "events", describe(*evs), []string{
		`toolcall_start call_1 bash ""`,
		`toolcall_delta call_1 bash +{"command": ={"command":`,
		`toolcall_start agentsh_call_1 bash ""`,
		`toolcall_delta agentsh_call_1 bash +{"command": ={"command":`,
		`toolcall_delta call_1 bash +"ls"} ={"command":"ls"}`,
		`toolcall_delta agentsh_call_1 bash +"pwd"} ={"command":"pwd"}`,
		`toolcall_end call_1 bash {"command":"ls"}`,
		`toolcall_end agentsh_call_1 bash {"command":"pwd"}`,
		"done tool_use",
	})
	b := srv.Request(t, 0).Body
	jsonEq(t, "max_tokens", b["max_tokens"], `7`)
	if _, ok := b["max_completion_tokens"]; ok {
		t.Error("max_completion_tokens sent with LegacyMaxTokens")
	}
	if h := srv.Request(t, 0).Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

func toolCallsString(tcs []ToolCall) string {
	var b strings.Builder
	for _, tc := range tcs {
		fmt.Fprintf(&b, "{%s %s %s} ", tc.ID, tc.Name, tc.Arguments)
	}
	return b.String()
}

func TestOpenAIUnauthorized(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Error(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-bad.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
	})
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: "sk-bad", MaxRetries: zero()})
	emit, evs := collect()
	msg, stop, err := streamWithGuard(t, p, context.Background(), Request{Model: "gpt-test", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, emit)
	if err == nil {
		t.Fatal("no error")
	}
	want := "openai: HTTP 401 Unauthorized: Incorrect API key provided: sk-bad. (check OPENAI_API_KEY)"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Errorf("not an APIError 401: %#v", err)
	}
	if stop != StopError || msg.Role != RoleAssistant || msg.Text != "" {
		t.Errorf("stop %q msg %+v", stop, msg)
	}
	sameLines(t, "events", describe(*evs), []string{"error error " + want})
}

func TestOpenAICancelMidStream(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Chunk(`[{"index":0,"delta":{"role":"assistant","content":"partial"},"finish_reason":null}]`)
		w.Chunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"bash","arguments":"{\"comm"}}]},"finish_reason":null}]`)
		select { // never finish: only the client going away ends this
		case <-w.Context().Done():
		case <-release:
		}
	})
	testCancelMidStream(t, NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()}))
}

// testCancelMidStream cancels the context on the first tool-call delta and
// expects Stream to return ctx.Err() with the partial text and no tool calls.
func testCancelMidStream(t *testing.T, p Provider) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var evs []Event
	emit := func(e Event) {
		evs = append(evs, e)
		if e.Kind == ToolCallDelta {
			cancel()
		}
	}
	msg, stop, err := streamWithGuard(t, p, ctx, Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}, Tools: []ToolSpec{bashTool}}, emit)
	if !errors.Is(err, context.Canceled) || err != ctx.Err() {
		t.Errorf("err = %v, want ctx.Err()", err)
	}
	if stop != StopAborted {
		t.Errorf("stop = %q", stop)
	}
	if msg.Text != "partial" || len(msg.ToolCalls) != 0 {
		t.Errorf("partial message = %+v", msg)
	}
	if len(evs) == 0 || evs[len(evs)-1].Kind != Error || evs[len(evs)-1].StopReason != StopAborted {
		t.Errorf("events = %v", describe(evs))
	}
	for _, e := range evs {
		if e.Kind == ToolCallEnd || e.Kind == Done {
			t.Errorf("unexpected %v after cancel", e.Kind)
		}
	}
}

func TestOpenAIRejectsBadRequests(t *testing.T) {
	p := NewOpenAI(OpenAIConfig{BaseURL: "http://127.0.0.1:1", MaxRetries: zero()})
	_, stop, err := p.Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "system", Text: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown role "system"`) || stop != StopError {
		t.Errorf("err = %v stop %q", err, stop)
	}
	_, _, err = p.Stream(context.Background(), Request{Model: "m", Tools: []ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "tool t: parameters are not a JSON object") {
		t.Errorf("err = %v", err)
	}
}
