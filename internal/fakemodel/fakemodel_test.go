package fakemodel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return resp, string(b)
}

// The bytes on the wire, what was recorded, and the request number the
// script is given.
func TestRoundTripAndRecording(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			w.Answer(`say "hi"`)
		case 1:
			w.Error(http.StatusUnauthorized, `{"error":{"message":"bad key"}}`)
		default:
			w.Bash("call_7", `{"command":"ls"}`)
		}
	})
	resp, body := post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer k1"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("answer 0: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	const env = `{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake","system_fingerprint":"fp_fake","choices":`
	want := "data: " + env + `[{"index":0,"delta":{"role":"assistant","content":"say \"hi\""},"finish_reason":null}]}` + "\n\n" +
		"data: " + env + `[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	if body != want {
		t.Errorf("answer 0:\n got %q\nwant %q", body, want)
	}

	resp, body = post(t, srv.URL+"/other", `{"n":1}`, nil)
	if resp.StatusCode != 401 || body != `{"error":{"message":"bad key"}}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("answer 1: %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}

	// Not JSON: refused, and not counted.
	if resp, body := post(t, srv.URL+"/v1/chat/completions", `{"model"`, nil); resp.StatusCode != 400 || !strings.HasPrefix(body, "bad json: ") {
		t.Errorf("bad JSON: %s %q", resp.Status, body)
	}

	_, body = post(t, srv.URL+"/v1/chat/completions", `{"n":2}`, nil)
	if !strings.Contains(body, `"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"bash","arguments":""}}]`) ||
		!strings.Contains(body, `"function":{"arguments":"{\"command\":\"ls\"}"}`) ||
		!strings.HasSuffix(body, `"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n") {
		t.Errorf("answer 2: %q", body)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests recorded, want 3", len(reqs))
	}
	if r := reqs[0]; r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k1" || r.Body["model"] != "m" {
		t.Errorf("request 0 = %+v", r)
	}
	if r := srv.Request(t, 1); r.Path != "/other" || r.Header.Get("Authorization") != "" {
		t.Errorf("request 1 = %+v", r)
	}
	var ns []any
	for _, b := range srv.Bodies()[1:] {
		ns = append(ns, b["n"])
	}
	if !reflect.DeepEqual(ns, []any{1.0, 2.0}) {
		t.Errorf("bodies 1, 2: n = %v", ns)
	}
	if got := srv.OpenAIEnv(); !reflect.DeepEqual(got, []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=test"}) {
		t.Errorf("OpenAIEnv = %q", got)
	}
}

// The real OpenAI provider reads what the writer streams, and the request
// readers see what it sent back.
func TestOpenAIProviderReadsIt(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Text("Looking. ")
			w.ToolCall(0, "call_a", "read", `{"path":`, `"go.mod"}`)
			w.ToolCall(1, "call_b", "bash", `{"command":"ls"}`)
			w.FinishUsage("tool_calls", 50, 20)
			return
		}
		w.Answer("Done.")
	})
	zero := 0
	p := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: &zero})
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "look"}}}
	var usage *llm.Usage
	msg, stop := stream(t, p, req, func(e llm.Event) {
		if e.Kind == llm.Done {
			usage = e.Usage
		}
	})
	if stop != llm.StopToolUse || msg.Text != "Looking. " || len(msg.ToolCalls) != 2 ||
		fmt.Sprint(msg.ToolCalls[0].ID, msg.ToolCalls[0].Name, string(msg.ToolCalls[0].Arguments)) != `call_aread{"path":"go.mod"}` ||
		fmt.Sprint(msg.ToolCalls[1].ID, msg.ToolCalls[1].Name, string(msg.ToolCalls[1].Arguments)) != `call_bbash{"command":"ls"}` {
		t.Fatalf("answer 0: stop %q %+v", stop, msg)
	}
	if usage == nil || usage.InputTokens != 50 || usage.OutputTokens != 20 {
		t.Errorf("usage = %+v", usage)
	}
	req.Messages = append(req.Messages, msg,
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_a", Text: "module x"},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_b", Text: "go.mod"})
	if msg, stop := stream(t, p, req, nil); stop != llm.StopEnd || msg.Text != "Done." {
		t.Fatalf("answer 1: stop %q %+v", stop, msg)
	}
	got := fakemodel.OpenAIMessages(srv.Request(t, 1).Body)
	want := []fakemodel.Message{
		{Role: "user", Content: "look"},
		{Role: "assistant", Content: "Looking. ", ToolCalls: []string{"call_a", "call_b"}},
		{Role: "tool", Content: "module x", ToolCallID: "call_a"},
		{Role: "tool", Content: "go.mod", ToolCallID: "call_b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages of request 1:\n got %+v\nwant %+v", got, want)
	}
	if r := fakemodel.LastToolResult(srv.Request(t, 1).Body); r != "go.mod" {
		t.Errorf("LastToolResult = %q", r)
	}
	if r := fakemodel.LastToolResult(srv.Request(t, 0).Body); r != "" {
		t.Errorf("LastToolResult without a tool message = %q", r)
	}
}

// The real Anthropic provider reads what the writer streams.
func TestAnthropicProviderReadsIt(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			w.AnthropicCall("toolu_1", "bash", `{"command":"seq 3"}`)
		case 1:
			w.MessageStart(90)
			w.TextBlock(0, "There are ", "3 lines.")
			w.MessageStop("end_turn", 6)
		default:
			w.AnthropicAnswer("Anything else?")
		}
	})
	zero := 0
	p := llm.NewAnthropic(llm.AnthropicConfig{BaseURL: srv.URL, APIKey: "sk-ant-test", MaxRetries: &zero})
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "count"}}}
	msg, stop := stream(t, p, req, nil)
	if stop != llm.StopToolUse || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "toolu_1" || string(msg.ToolCalls[0].Arguments) != `{"command":"seq 3"}` {
		t.Fatalf("answer 0: stop %q %+v", stop, msg)
	}
	req.Messages = append(req.Messages, msg, llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Text: "1\n2\n3"})
	var texts []string
	msg, stop = stream(t, p, req, func(e llm.Event) {
		if e.Kind == llm.TextDelta {
			texts = append(texts, e.Text)
		}
	})
	if stop != llm.StopEnd || msg.Text != "There are 3 lines." || !reflect.DeepEqual(texts, []string{"There are ", "3 lines."}) {
		t.Fatalf("answer 1: stop %q %+v %q", stop, msg, texts)
	}
	req.Messages = append(req.Messages, msg, llm.Message{Role: llm.RoleUser, Text: "thanks"})
	if msg, stop := stream(t, p, req, nil); stop != llm.StopEnd || msg.Text != "Anything else?" || len(msg.ToolCalls) != 0 {
		t.Fatalf("answer 2: stop %q %+v", stop, msg)
	}
	r := srv.Request(t, 1)
	if r.Path != "/v1/messages" || r.Header.Get("Authorization") != "Bearer sk-ant-test" {
		t.Errorf("request 1: %s %v", r.Path, r.Header)
	}
	if b, _ := json.Marshal(r.Body["messages"]); !strings.Contains(string(b), `"tool_use_id":"toolu_1"`) {
		t.Errorf("request 1 lacks the tool result: %s", b)
	}
}

// Events reach the client while the script still runs, and Context ends
// when the client goes away.
func TestStreamsWhileScriptWaits(t *testing.T) {
	returned := make(chan struct{})
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		defer close(returned)
		w.Text("partial")
		<-w.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"content":"partial"`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the script's Context did not end when the client went away")
	}
}

// stream runs p.Stream with a hang guard and fails the test on an error.
func stream(t *testing.T, p llm.Provider, req llm.Request, emit func(llm.Event)) (llm.Message, string) {
	t.Helper()
	if emit == nil {
		emit = func(llm.Event) {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg, stop, err := p.Stream(ctx, req, emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return msg, stop
}
