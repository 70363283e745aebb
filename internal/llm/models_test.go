package llm

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"agentsh/internal/fakemodel"
)

func listModels(t *testing.T, p Provider) ([]ModelInfo, error) {
	t.Helper()
	l, ok := p.(ModelLister)
	if !ok {
		t.Fatalf("%s is not a ModelLister", p.Name())
	}
	return l.ListModels(context.Background())
}

// An OpenAI-compatible server's /models: the context window as OpenRouter,
// vLLM and llama.cpp say it, else from the table; the list is not a
// scripted request.
func TestOpenAIListModels(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(
		fakemodel.Model{ID: "anthropic/claude-sonnet-4", Name: "Anthropic: Claude Sonnet 4", ContextWindow: 1_000_000, MaxTokens: 64_000, Reasoning: true},
		fakemodel.Model{ID: "Qwen/Qwen3-8B", Extra: map[string]any{"max_model_len": 32768}},
		fakemodel.Model{ID: "gguf-model", Extra: map[string]any{"meta": map[string]any{"n_ctx_train": 131072, "n_vocab": 1000}}},
		fakemodel.Model{ID: "gpt-4o"},
		fakemodel.Model{ID: "mystery-7b"},
	)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-x", MaxRetries: zero()})
	got, err := listModels(t, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelInfo{
		{ID: "anthropic/claude-sonnet-4", Name: "Anthropic: Claude Sonnet 4", ContextWindow: 1_000_000, MaxTokens: 64_000, Reasoning: true},
		{ID: "Qwen/Qwen3-8B", Name: "Qwen/Qwen3-8B", ContextWindow: 32768, Reasoning: true},
		{ID: "gguf-model", Name: "gguf-model", ContextWindow: 131072},
		{ID: "gpt-4o", Name: "gpt-4o", ContextWindow: 128_000, MaxTokens: 16_384},
		{ID: "mystery-7b", Name: "mystery-7b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("models:\n got %+v\nwant %+v", got, want)
	}
	mr := srv.ModelRequests()
	if len(mr) != 1 || mr[0].Path != "/v1/models" || mr[0].Header.Get("Authorization") != "Bearer sk-x" {
		t.Errorf("model requests = %+v", mr)
	}
	// The next model call is the script's request 0.
	if msg, _, err := streamWithGuard(t, p, context.Background(), Request{Model: "gpt-4o", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, nil); err != nil || msg.Text != "ok" {
		t.Fatalf("Stream: %v %+v", err, msg)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests recorded, want 1", n)
	}
}

// Without SetModels the server lists the model the tests use.
func TestListModelsDefault(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {})
	for _, p := range []Provider{
		NewOpenAI(OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: zero()}),
		NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()}),
	} {
		got, err := listModels(t, p)
		if want := []ModelInfo{{ID: "test", Name: "Test model", ContextWindow: 128_000, MaxTokens: 16_384}}; err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v %+v", p.Name(), err, got)
		}
	}
}

// Anthropic's /v1/models: display names, max_input_tokens and max_tokens,
// the thinking capability; the table fills what the server leaves out.
func TestAnthropicListModels(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {})
	srv.SetModels(
		fakemodel.Model{ID: "claude-sonnet-4-5-20250929", Name: "Claude Sonnet 4.5", ContextWindow: 200_000, MaxTokens: 64_000, Reasoning: true},
		fakemodel.Model{ID: "claude-3-5-haiku-20241022", Name: "Claude Haiku 3.5"},
	)
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "sk-ant", MaxRetries: zero()})
	got, err := listModels(t, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelInfo{
		{ID: "claude-sonnet-4-5-20250929", Name: "Claude Sonnet 4.5", ContextWindow: 200_000, MaxTokens: 64_000, Reasoning: true},
		{ID: "claude-3-5-haiku-20241022", Name: "Claude Haiku 3.5", ContextWindow: 200_000, MaxTokens: 8_192},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("models:\n got %+v\nwant %+v", got, want)
	}
	if mr := srv.ModelRequests(); len(mr) != 1 || mr[0].Path != "/v1/models" || mr[0].Header.Get("Anthropic-Version") == "" {
		t.Errorf("model requests = %+v", mr)
	}
}

func TestListModelsError(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {})
	srv.SetModelsError(http.StatusUnauthorized, `{"error":{"message":"bad key"}}`)
	_, err := listModels(t, NewOpenAI(OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: zero()}))
	if want := "list models: openai: HTTP 401 Unauthorized: bad key (check OPENAI_API_KEY)"; err == nil || err.Error() != want {
		t.Errorf("openai: err = %v, want %s", err, want)
	}
	_, err = listModels(t, NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()}))
	if want := "list models: anthropic: HTTP 401 Unauthorized: bad key (check ANTHROPIC_API_KEY)"; err == nil || err.Error() != want {
		t.Errorf("anthropic: err = %v, want %s", err, want)
	}
}

type namedProvider struct{ Provider }

func (namedProvider) APIName() string { return "custom-api" }

func TestAPIName(t *testing.T) {
	for _, c := range []struct {
		p    Provider
		want string
	}{
		{NewOpenAI(OpenAIConfig{Name: "ollama"}), "openai-completions"},
		{NewAnthropic(AnthropicConfig{}), "anthropic-messages"},
		{namedProvider{}, "custom-api"},
		{struct{ Provider }{}, ""},
	} {
		if got := APIName(c.p); got != c.want {
			t.Errorf("APIName(%T) = %q, want %q", c.p, got, c.want)
		}
	}
}
