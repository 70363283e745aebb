package llm

import (
	"strings"
	"testing"
)

func TestParseModel(t *testing.T) {
	for _, tc := range []struct {
		spec, provider, model, err string
	}{
		{spec: "openai/gpt-4o", provider: "openai", model: "gpt-4o"},
		{spec: "anthropic/claude-sonnet-4-5", provider: "anthropic", model: "claude-sonnet-4-5"},
		{spec: "ollama/llama3", provider: "ollama", model: "llama3"},
		{spec: "ollama/qwen2.5-coder:7b", provider: "ollama", model: "qwen2.5-coder:7b"},
		{spec: "openrouter/anthropic/claude-3.5-sonnet", provider: "openrouter", model: "anthropic/claude-3.5-sonnet"},
		{spec: " OpenAI/gpt-4o ", provider: "openai", model: "gpt-4o"},
		{spec: "", err: "no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"},
		{spec: "gpt-4o", err: `model "gpt-4o" has no provider: use provider/model, e.g. openai/gpt-4o`},
		{spec: "mistral/large", err: `unknown provider "mistral" in model "mistral/large"`},
		{spec: "openai/", err: `model "openai/" has no model name after "openai/"`},
	} {
		p, m, err := ParseModel(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParseModel(%q) err = %v, want prefix %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || p != tc.provider || m != tc.model {
			t.Errorf("ParseModel(%q) = %q, %q, %v; want %q, %q", tc.spec, p, m, err, tc.provider, tc.model)
		}
	}
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    string
		env     map[string]string
		want    string // provider name
		model   string
		baseURL string
		key     string
		err     string
	}{
		{name: "openai", spec: "openai/gpt-4o", env: map[string]string{"OPENAI_API_KEY": "sk-1"},
			want: "openai", model: "gpt-4o", baseURL: DefaultOpenAIBaseURL, key: "sk-1"},
		{name: "openai base url", spec: "openai/gpt-4o", env: map[string]string{"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://vllm:8000/v1"},
			want: "openai", model: "gpt-4o", baseURL: "http://vllm:8000/v1", key: "sk-1"},
		{name: "openai compatible server without key", spec: "openai/local", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"},
			want: "openai", model: "local", baseURL: "http://127.0.0.1:8080/v1"},
		{name: "openai no key", spec: "openai/gpt-4o", env: nil,
			err: "model openai/gpt-4o: no OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL to use another OpenAI-compatible server)"},
		{name: "openai blank key", spec: "openai/gpt-4o", env: map[string]string{"OPENAI_API_KEY": "  "},
			err: "model openai/gpt-4o: no OpenAI API key: set OPENAI_API_KEY"},
		{name: "anthropic", spec: "anthropic/claude-x", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant"},
			want: "anthropic", model: "claude-x", baseURL: DefaultAnthropicBaseURL, key: "sk-ant"},
		{name: "anthropic base url", spec: "anthropic/claude-x", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": "http://proxy"},
			want: "anthropic", model: "claude-x", baseURL: "http://proxy", key: "sk-ant"},
		{name: "anthropic no key", spec: "anthropic/claude-x", env: map[string]string{"OPENAI_API_KEY": "sk-1"},
			err: "model anthropic/claude-x: no Anthropic API key: set ANTHROPIC_API_KEY"},
		{name: "ollama default", spec: "ollama/llama3", want: "ollama", model: "llama3", baseURL: "http://localhost:11434/v1"},
		{name: "ollama host", spec: "ollama/llama3", env: map[string]string{"OLLAMA_HOST": "10.0.0.5:11434"},
			want: "ollama", model: "llama3", baseURL: "http://10.0.0.5:11434/v1"},
		{name: "ollama host url", spec: "ollama/llama3", env: map[string]string{"OLLAMA_HOST": "https://ollama.example/"},
			want: "ollama", model: "llama3", baseURL: "https://ollama.example/v1"},
		{name: "openrouter", spec: "openrouter/meta-llama/llama-3-70b", env: map[string]string{"OPENROUTER_API_KEY": "or-1", "OPENAI_API_KEY": "sk-1"},
			want: "openrouter", model: "meta-llama/llama-3-70b", baseURL: DefaultOpenRouterBaseURL, key: "or-1"},
		{name: "openrouter no key", spec: "openrouter/x/y", env: map[string]string{"OPENAI_API_KEY": "sk-1"},
			err: "model openrouter/x/y: no OpenRouter API key: set OPENROUTER_API_KEY"},
		{name: "bad spec", spec: "nope", err: `model "nope" has no provider`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			p, model, err := FromEnv(tc.spec, getenv)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v, want prefix %q", err, tc.err)
				}
				if p != nil {
					t.Error("provider returned with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tc.want || model != tc.model {
				t.Errorf("got %s %q, want %s %q", p.Name(), model, tc.want, tc.model)
			}
			var base, key string
			switch p := p.(type) {
			case *openAIProvider:
				base, key = p.cfg.BaseURL, p.cfg.APIKey
			case *anthropicProvider:
				base, key = p.cfg.BaseURL, p.cfg.APIKey
			}
			if base != tc.baseURL || key != tc.key {
				t.Errorf("base %q key %q, want %q %q", base, key, tc.baseURL, tc.key)
			}
		})
	}
}
