package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultOpenAIBaseURL is the OpenAI API.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI-compatible chat-completions provider.
type OpenAIConfig struct {
	// Name is what Provider.Name returns; "openai" when empty.
	Name string
	// BaseURL of the API (…/v1); DefaultOpenAIBaseURL when empty.
	BaseURL string
	// APIKey is sent as a bearer token; nothing is sent when empty (local
	// servers such as Ollama need none).
	APIKey string
	// KeyEnv names the env var the key came from, for error texts.
	KeyEnv string
	// HTTPClient, when set, carries the requests (tests, proxies).
	HTTPClient *http.Client
	// MaxRetries for connection errors, 429 and 5xx before any byte of the
	// answer arrived; the SDK default (2) when nil.
	MaxRetries *int
	// LegacyMaxTokens sends Request.MaxTokens as max_tokens instead of
	// max_completion_tokens (for servers that only know the old field).
	LegacyMaxTokens bool
}

type openAIProvider struct {
	cfg    OpenAIConfig
	client openai.Client
}

// NewOpenAI returns a provider speaking OpenAI's streaming chat completions.
// The SDK also applies the process's OPENAI_* environment defaults first;
// cfg.BaseURL and cfg.APIKey (when set) override them.
func NewOpenAI(cfg OpenAIConfig) Provider {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.KeyEnv == "" && cfg.Name == "openai" {
		cfg.KeyEnv = "OPENAI_API_KEY"
	}
	opts := []option.RequestOption{option.WithBaseURL(cfg.BaseURL), option.WithAPIKey(cfg.APIKey)}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.MaxRetries != nil {
		opts = append(opts, option.WithMaxRetries(*cfg.MaxRetries))
	}
	return &openAIProvider{cfg: cfg, client: openai.NewClient(opts...)}
}

func (p *openAIProvider) Name() string { return p.cfg.Name }

func (p *openAIProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		if p.cfg.LegacyMaxTokens {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if e := reasoningEffort(req.Thinking); e != "" {
		params.ReasoningEffort = e
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Text))
		case RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Text != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      tc.Name,
							Arguments: string(args(tc.Arguments)),
						},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			params.Messages = append(params.Messages, openai.ToolMessage(m.Text, m.ToolCallID))
		default:
			return params, fmt.Errorf("%s: message %d has unknown role %q", p.cfg.Name, i, m.Role)
		}
	}
	for _, t := range req.Tools {
		var schema shared.FunctionParameters
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return params, fmt.Errorf("%s: tool %s: parameters are not a JSON object: %w", p.cfg.Name, t.Name, err)
			}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return params, nil
}

// reasoningEffort maps a thinking level onto reasoning_effort: "" (not
// sent) when thinking is off, and "high" for xhigh, which chat completions
// do not know everywhere.
func reasoningEffort(level string) shared.ReasoningEffort {
	switch level {
	case ThinkingMinimal:
		return shared.ReasoningEffortMinimal
	case ThinkingLow:
		return shared.ReasoningEffortLow
	case ThinkingMedium:
		return shared.ReasoningEffortMedium
	case ThinkingHigh, ThinkingXHigh:
		return shared.ReasoningEffortHigh
	}
	return ""
}

// reasoningFields are the delta fields in which compatible servers stream
// the model's reasoning: reasoning_content (DeepSeek, vLLM, llama.cpp),
// reasoning (OpenRouter, Ollama). The first one present wins: some servers
// send the same piece under two names.
var reasoningFields = []string{"reasoning_content", "reasoning", "reasoning_text"}

// deltaReasoning is the reasoning piece of a chunk's delta ("" when none).
func deltaReasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, f := range reasoningFields {
		raw := d.JSON.ExtraFields[f].Raw()
		if raw == "" || raw == "null" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// openAIUsage reads a usage object. prompt_tokens include the cached
// tokens (and OpenRouter's cache writes); Usage counts them apart.
func openAIUsage(u openai.CompletionUsage) *Usage {
	cached, written := u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.CacheWriteTokens
	out := &Usage{
		InputTokens:      max(0, u.PromptTokens-cached-written),
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  cached,
		CacheWriteTokens: written,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}
	if raw := u.JSON.ExtraFields["cost"].Raw(); raw != "" {
		_ = json.Unmarshal([]byte(raw), &out.Cost)
	}
	return out
}

func (p *openAIProvider) Stream(ctx context.Context, req Request, emit func(Event)) (Message, string, error) {
	if emit == nil {
		emit = noEmit
	}
	msg := Message{Role: RoleAssistant}
	params, err := p.params(req)
	if err != nil {
		stop, err := finishErr(ctx, err, emit)
		return msg, stop, err
	}

	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	var acc openai.ChatCompletionAccumulator
	var text strings.Builder
	calls := map[int64]*streamCall{} // by the tool-call index of the stream
	var usage *Usage
	finish := ""
	// The reasoning comes first, as one block: it ends with the first piece
	// of anything else, or with the stream.
	var reasoning strings.Builder
	reasoningOpen := false
	endReasoning := func() {
		if reasoningOpen {
			reasoningOpen = false
			t := Thinking{Text: reasoning.String()}
			msg.Thinking = append(msg.Thinking, t)
			emit(Event{Kind: ThinkingEnd, Thinking: &t})
			reasoning.Reset()
		}
	}
	// fail returns the partial message: the text and reasoning so far.
	fail := func(err error) (Message, string, error) {
		msg.Text = text.String()
		if reasoningOpen {
			msg.Thinking = append(msg.Thinking, Thinking{Text: reasoning.String()})
		}
		stop, err := finishErr(ctx, err, emit)
		return msg, stop, err
	}
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return fail(fmt.Errorf("%s: the server sent an inconsistent stream chunk", p.cfg.Name))
		}
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens+chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
			usage = openAIUsage(chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // we never ask for n > 1
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
			if r := deltaReasoning(ch.Delta); r != "" {
				reasoningOpen = true
				reasoning.WriteString(r)
				emit(Event{Kind: ThinkingDelta, Text: r})
			}
			if ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0 {
				endReasoning()
			}
			if d := ch.Delta.Content; d != "" {
				text.WriteString(d)
				emit(Event{Kind: TextDelta, Text: d})
			}
			for _, d := range ch.Delta.ToolCalls {
				idx := d.Index
				if idx < 0 {
					idx = 0 // some servers send -1 for a single call
				}
				c := calls[idx]
				if c == nil {
					c = &streamCall{}
					calls[idx] = c
				}
				tc := &c.call
				if d.ID != "" && tc.ID == "" {
					tc.ID = d.ID
				}
				tc.Name += d.Function.Name
				if !c.started && tc.Name != "" {
					c.started = true
					if tc.ID == "" {
						tc.ID = fmt.Sprintf("agentsh_call_%d", idx) // some compatible servers send none; the loop needs one
					}
					emit(Event{Kind: ToolCallStart, ToolCall: &ToolCall{ID: tc.ID, Name: tc.Name}})
					if len(tc.Arguments) > 0 { // arguments that came before the name
						emit(Event{Kind: ToolCallDelta, Text: string(tc.Arguments), ToolCall: snapshot(tc)})
					}
				}
				if a := d.Function.Arguments; a != "" {
					tc.Arguments = append(tc.Arguments, a...)
					if c.started {
						emit(Event{Kind: ToolCallDelta, Text: a, ToolCall: snapshot(tc)})
					}
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		return fail(p.apiError(err))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}

	endReasoning()

	// The accumulator has the whole message; prefer it over our own copy.
	msg.Text = text.String()
	var final []ToolCall
	if len(acc.Choices) > 0 {
		m := acc.Choices[0].Message
		if m.Content != "" {
			msg.Text = m.Content
		}
		for _, tc := range m.ToolCalls {
			final = append(final, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
		}
	}
	if len(final) == 0 && len(calls) > 0 { // accumulator unavailable: fall back to ours, in index order
		keys := make([]int64, 0, len(calls))
		for k := range calls {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			final = append(final, *snapshot(&calls[k].call))
		}
	}
	for i := range final {
		tc := &final[i]
		if tc.ID == "" {
			if c := calls[int64(i)]; c != nil && c.call.ID != "" {
				tc.ID = c.call.ID
			} else {
				tc.ID = fmt.Sprintf("agentsh_call_%d", i)
			}
		}
		tc.Arguments = args(tc.Arguments)
		emit(Event{Kind: ToolCallEnd, ToolCall: snapshot(tc)})
	}
	msg.ToolCalls = final

	stop := normaliseOpenAIStop(finish)
	if len(final) > 0 && stop == StopEnd {
		stop = StopToolUse // some compatible servers say "stop" after tool calls
	}
	emit(Event{Kind: Done, StopReason: stop, Usage: usage})
	return msg, stop, nil
}

// streamCall is a tool call being received, and whether its ToolCallStart
// went out.
type streamCall struct {
	call    ToolCall
	started bool
}

func normaliseOpenAIStop(r string) string {
	switch r {
	case "stop", "":
		return StopEnd
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopLength
	case "content_filter":
		return StopRefusal
	}
	return r
}

func snapshot(tc *ToolCall) *ToolCall {
	c := *tc
	c.Arguments = append(json.RawMessage(nil), tc.Arguments...)
	return &c
}

func (p *openAIProvider) apiError(err error) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = serverMessage(ae.RawJSON())
		}
		return &APIError{Provider: p.cfg.Name, StatusCode: ae.StatusCode, Message: msg, KeyEnv: p.cfg.KeyEnv, Err: err}
	}
	return fmt.Errorf("%s: %w", p.cfg.Name, err)
}
