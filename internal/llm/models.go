package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// ModelInfo describes a model a provider offers. ContextWindow and
// MaxTokens (the most tokens of one answer) come from the server when it
// says them, else from the table of well-known models; 0 when neither
// knows. Reasoning says whether the model thinks (can be given a thinking
// level), by the same rule.
type ModelInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	ContextWindow int    `json:"contextWindow"`
	MaxTokens     int    `json:"maxTokens"`
	Reasoning     bool   `json:"reasoning"`
}

// ModelLister is a Provider that can list the models of its server
// (OpenAI-compatible GET {base}/models, Anthropic GET /v1/models).
type ModelLister interface {
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

// The API names of the providers, as omp's messages name them.
const (
	APIOpenAICompletions = "openai-completions"
	APIAnthropicMessages = "anthropic-messages"
)

// APINamer is implemented by a Provider (other than this package's) that
// wants APIName to name its API.
type APINamer interface {
	APIName() string
}

// APIName is the wire API p speaks: APIOpenAICompletions,
// APIAnthropicMessages, what an APINamer says, or "" when unknown.
func APIName(p Provider) string {
	switch p := p.(type) {
	case *openAIProvider:
		return APIOpenAICompletions
	case *anthropicProvider:
		return APIAnthropicMessages
	case APINamer:
		return p.APIName()
	}
	return ""
}

// completeInfo fills what the server left out from the table; saidReasoning
// is whether the server said if the model thinks.
func completeInfo(m ModelInfo, saidReasoning bool) ModelInfo {
	if m.Name == "" {
		m.Name = m.ID
	}
	if m.ContextWindow == 0 {
		m.ContextWindow = ContextWindow(m.ID)
	}
	if m.MaxTokens == 0 {
		m.MaxTokens = MaxOutputTokens(m.ID)
	}
	if !saidReasoning {
		m.Reasoning = IsReasoningModel(m.ID)
	}
	return m
}

// openAIModelExtras are the fields compatible servers add to a model of
// GET /models: OpenRouter (name, context_length, top_provider,
// supported_parameters), vLLM (max_model_len), llama.cpp (meta.n_ctx_train).
type openAIModelExtras struct {
	Name          string `json:"name"`
	ContextLength int    `json:"context_length"`
	MaxModelLen   int    `json:"max_model_len"`
	Meta          struct {
		NCtxTrain int `json:"n_ctx_train"`
	} `json:"meta"`
	TopProvider struct {
		ContextLength       int `json:"context_length"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
	} `json:"top_provider"`
	SupportedParameters []string `json:"supported_parameters"`
}

// ListModels lists the models of the server's GET {base}/models.
func (p *openAIProvider) ListModels(ctx context.Context) ([]ModelInfo, error) {
	var out []ModelInfo
	pager := p.client.Models.ListAutoPaging(ctx)
	for pager.Next() {
		m := pager.Current()
		info := ModelInfo{ID: m.ID}
		var x openAIModelExtras
		said := false
		if raw := m.RawJSON(); raw != "" && json.Unmarshal([]byte(raw), &x) == nil {
			info.Name = x.Name
			info.ContextWindow = firstPositive(x.ContextLength, x.TopProvider.ContextLength, x.MaxModelLen, x.Meta.NCtxTrain)
			info.MaxTokens = x.TopProvider.MaxCompletionTokens
			if said = x.SupportedParameters != nil; said {
				info.Reasoning = slices.Contains(x.SupportedParameters, "reasoning") || slices.Contains(x.SupportedParameters, "reasoning_effort")
			}
		}
		out = append(out, completeInfo(info, said))
	}
	if err := pager.Err(); err != nil {
		return out, fmt.Errorf("list models: %w", p.apiError(err))
	}
	return out, nil
}

// ListModels lists the models of GET /v1/models, every page.
func (p *anthropicProvider) ListModels(ctx context.Context) ([]ModelInfo, error) {
	var out []ModelInfo
	pager := p.client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(1000)})
	for pager.Next() {
		m := pager.Current()
		info := ModelInfo{ID: m.ID, Name: m.DisplayName, ContextWindow: int(m.MaxInputTokens), MaxTokens: int(m.MaxTokens)}
		said := m.Capabilities.Thinking.JSON.Supported.Valid()
		info.Reasoning = m.Capabilities.Thinking.Supported
		out = append(out, completeInfo(info, said))
	}
	if err := pager.Err(); err != nil {
		return out, fmt.Errorf("list models: %w", p.apiError(err))
	}
	return out, nil
}

func firstPositive(ns ...int) int {
	for _, n := range ns {
		if n > 0 {
			return n
		}
	}
	return 0
}
