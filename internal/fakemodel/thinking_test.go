package fakemodel_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

func get(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The thinking and usage helpers' bytes on the wire.
func TestThinkingWire(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			w.ReasoningAnswer("hmm", "ok")
		case 1:
			w.ReasoningAs("reasoning", "r")
			w.FinishWithUsage("stop", fakemodel.Usage{InputTokens: 10, CacheReadTokens: 5, CacheWriteTokens: 2, OutputTokens: 7, ReasoningTokens: 3, Cost: 0.25})
		default:
			w.MessageStartUsage(fakemodel.Usage{InputTokens: 4, CacheReadTokens: 8, CacheWriteTokens: 16})
			w.ThinkingBlock(0, "sig", "a", "b")
			w.RedactedThinkingBlock(1, "xyz")
			w.MessageStopUsage("end_turn", fakemodel.Usage{OutputTokens: 9, ReasoningTokens: 6})
		}
	})
	_, body := post(t, srv.URL+"/v1/chat/completions", `{}`, nil)
	if !strings.HasPrefix(body, `data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake","system_fingerprint":"fp_fake","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"hmm"},"finish_reason":null}]}`+"\n\n") ||
		!strings.Contains(body, `"content":"ok"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("answer 0: %q", body)
	}
	_, body = post(t, srv.URL+"/v1/chat/completions", `{}`, nil)
	if !strings.Contains(body, `"delta":{"role":"assistant","content":null,"reasoning":"r"}`) ||
		!strings.Contains(body, `"choices":[],"usage":{"completion_tokens":7,"completion_tokens_details":{"reasoning_tokens":3},"cost":0.25,"prompt_tokens":17,"prompt_tokens_details":{"cache_write_tokens":2,"cached_tokens":5},"total_tokens":24}}`) {
		t.Errorf("answer 1: %q", body)
	}
	_, body = post(t, srv.URL+"/v1/messages", `{}`, nil)
	for _, want := range []string{
		`"usage":{"input_tokens":4,"cache_creation_input_tokens":16,"cache_read_input_tokens":8,"output_tokens":1}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"b"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"xyz"}}`,
		`"usage":{"output_tokens":9,"output_tokens_details":{"thinking_tokens":6}}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("answer 2 lacks %s:\n%s", want, body)
		}
	}
}

// GET /v1/models answers the list in the client's format, is recorded
// apart and does not count as a scripted request.
func TestModelsList(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("n=" + string(rune('0'+n))) })
	code, body := get(t, srv.URL+"/v1/models", map[string]string{"Authorization": "Bearer k"})
	if want := `{"data":[{"context_length":128000,"created":1700000000,"id":"test","name":"Test model","object":"model","owned_by":"fake","top_provider":{"max_completion_tokens":16384}}],"object":"list"}`; code != 200 || body != want {
		t.Errorf("default list: %d %s\nwant %s", code, body, want)
	}
	srv.SetModels(fakemodel.Model{ID: "claude-a", Name: "Claude A", ContextWindow: 1000, MaxTokens: 100, Reasoning: true, Extra: map[string]any{"x": 1}}, fakemodel.Model{ID: "claude-b"})
	_, body = get(t, srv.URL+"/v1/models", map[string]string{"Anthropic-Version": "2023-06-01"})
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"data":[
		{"type":"model","id":"claude-a","display_name":"Claude A","created_at":"2025-01-01T00:00:00Z","max_input_tokens":1000,"max_tokens":100,"capabilities":{"thinking":{"supported":true}},"x":1},
		{"type":"model","id":"claude-b","display_name":"claude-b","created_at":"2025-01-01T00:00:00Z","capabilities":{"thinking":{"supported":false}}}],
		"has_more":false,"first_id":"claude-a","last_id":"claude-b"}`
	var want map[string]any
	_ = json.Unmarshal([]byte(wantJSON), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("anthropic list:\n got %s\nwant %s", body, wantJSON)
	}
	srv.SetModels()
	if _, body = get(t, srv.URL+"/models", nil); body != `{"data":[],"object":"list"}` {
		t.Errorf("empty list: %s", body)
	}
	srv.SetModelsError(http.StatusInternalServerError, `{"error":"down"}`)
	if code, body = get(t, srv.URL+"/v1/models", nil); code != 500 || body != `{"error":"down"}` {
		t.Errorf("error: %d %s", code, body)
	}

	// The first model call is still request 0.
	if _, body := post(t, srv.URL+"/v1/chat/completions", `{}`, nil); !strings.Contains(body, `"content":"n=0"`) {
		t.Errorf("scripted answer: %s", body)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("requests = %+v", srv.Requests())
	}
	mr := srv.ModelRequests()
	if len(mr) != 4 || mr[0].Header.Get("Authorization") != "Bearer k" || mr[2].Path != "/models" {
		t.Errorf("model requests = %+v", mr)
	}
}

// The real providers read the helpers' thinking.
func TestProvidersReadThinking(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.AnthropicThinkingCall("plan", "sig-1", "toolu_1", "bash", `{"command":"ls"}`)
			return
		}
		w.ReasoningAnswer("pondering", "done")
	})
	zero := 0
	a := llm.NewAnthropic(llm.AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: &zero})
	msg, stop := stream(t, a, llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "go"}}, Thinking: llm.ThinkingLow}, nil)
	if stop != llm.StopToolUse || !reflect.DeepEqual(msg.Thinking, []llm.Thinking{{Text: "plan", Signature: "sig-1"}}) || len(msg.ToolCalls) != 1 {
		t.Errorf("anthropic: %q %+v", stop, msg)
	}
	o := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: &zero})
	msg, stop = stream(t, o, llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "go"}}}, nil)
	if stop != llm.StopEnd || !reflect.DeepEqual(msg.Thinking, []llm.Thinking{{Text: "pondering"}}) || msg.Text != "done" {
		t.Errorf("openai: %q %+v", stop, msg)
	}
}
