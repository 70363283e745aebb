package llm

import (
	"fmt"
	"strings"
)

// Providers lists the provider names ParseModel accepts.
var Providers = []string{"openai", "anthropic", "ollama", "openrouter"}

// Default endpoints of the OpenAI-compatible providers.
const (
	DefaultOllamaBaseURL     = "http://localhost:11434/v1"
	DefaultOpenRouterBaseURL = "https://openrouter.ai/api/v1"
)

// ParseModel splits "provider/model" at the first slash ("openrouter/
// anthropic/claude-sonnet-4" is provider openrouter, model
// "anthropic/claude-sonnet-4"). The provider is case-insensitive and must be
// one of Providers.
func ParseModel(spec string) (provider, model string, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", "", fmt.Errorf("no model configured: use --model provider/model (providers: %s)", strings.Join(Providers, ", "))
	}
	p, m, ok := strings.Cut(spec, "/")
	if !ok {
		return "", "", fmt.Errorf("model %q has no provider: use provider/model, e.g. openai/%s (providers: %s)", spec, spec, strings.Join(Providers, ", "))
	}
	p = strings.ToLower(strings.TrimSpace(p))
	m = strings.TrimSpace(m)
	known := false
	for _, k := range Providers {
		known = known || k == p
	}
	if !known {
		return "", "", fmt.Errorf("unknown provider %q in model %q (providers: %s)", p, spec, strings.Join(Providers, ", "))
	}
	if m == "" {
		return "", "", fmt.Errorf("model %q has no model name after %q", spec, p+"/")
	}
	return p, m, nil
}

// FromEnv builds the provider for spec ("provider/model") from environment
// variables read through getenv (os.Getenv in production):
//
//   - openai: OPENAI_API_KEY, OPENAI_BASE_URL (a key is required unless a
//     base URL points at some other OpenAI-compatible server)
//   - anthropic: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL
//   - ollama: OLLAMA_HOST (host:port or URL; default localhost:11434), no key
//   - openrouter: OPENROUTER_API_KEY (required)
func FromEnv(spec string, getenv func(string) string) (Provider, string, error) {
	provider, model, err := ParseModel(spec)
	if err != nil {
		return nil, "", err
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	// The SDKs' own silent retries are off: the agent loop retries passing
	// errors itself, reporting each try (auto_retry_start/end), and not at
	// all when the user turned auto-retry off.
	noRetry := new(int)
	switch provider {
	case "openai":
		key, base := env("OPENAI_API_KEY"), env("OPENAI_BASE_URL")
		if key == "" && (base == "" || strings.TrimRight(base, "/") == DefaultOpenAIBaseURL) {
			return nil, "", fmt.Errorf("model %s: no OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL to use another OpenAI-compatible server)", spec)
		}
		return NewOpenAI(OpenAIConfig{Name: "openai", BaseURL: base, APIKey: key, KeyEnv: "OPENAI_API_KEY", MaxRetries: noRetry}), model, nil
	case "anthropic":
		key := env("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, "", fmt.Errorf("model %s: no Anthropic API key: set ANTHROPIC_API_KEY", spec)
		}
		return NewAnthropic(AnthropicConfig{BaseURL: env("ANTHROPIC_BASE_URL"), APIKey: key, MaxRetries: noRetry}), model, nil
	case "ollama":
		return NewOpenAI(OpenAIConfig{Name: "ollama", BaseURL: ollamaBaseURL(env("OLLAMA_HOST")), LegacyMaxTokens: true, MaxRetries: noRetry}), model, nil
	case "openrouter":
		key := env("OPENROUTER_API_KEY")
		if key == "" {
			return nil, "", fmt.Errorf("model %s: no OpenRouter API key: set OPENROUTER_API_KEY", spec)
		}
		return NewOpenAI(OpenAIConfig{Name: "openrouter", BaseURL: DefaultOpenRouterBaseURL, APIKey: key, KeyEnv: "OPENROUTER_API_KEY", LegacyMaxTokens: true, MaxRetries: noRetry}), model, nil
	}
	return nil, "", fmt.Errorf("unknown provider %q", provider) // ParseModel rules this out
}

// ollamaBaseURL turns OLLAMA_HOST ("host:port", "http://host:port", "") into
// the OpenAI-compatible endpoint.
func ollamaBaseURL(host string) string {
	if host == "" {
		return DefaultOllamaBaseURL
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	host = strings.TrimRight(host, "/")
	if !strings.HasSuffix(host, "/v1") {
		host += "/v1"
	}
	return host
}
