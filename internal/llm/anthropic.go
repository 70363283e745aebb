package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// DefaultAnthropicBaseURL is the Anthropic API.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// DefaultAnthropicMaxTokens is sent when Request.MaxTokens is 0 (Anthropic
// requires max_tokens).
const DefaultAnthropicMaxTokens = 8192

// AnthropicConfig configures the Anthropic Messages provider.
type AnthropicConfig struct {
	// BaseURL of the API (without /v1); DefaultAnthropicBaseURL when empty.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// HTTPClient, when set, carries the requests (tests, proxies).
	HTTPClient *http.Client
	// MaxRetries for connection errors, 429, 529 and 5xx before any byte of
	// the answer arrived; the SDK default (2) when nil.
	MaxRetries *int
}

type anthropicProvider struct {
	cfg    AnthropicConfig
	client anthropic.Client
}

// NewAnthropic returns a provider speaking Anthropic's streaming Messages
// API. Unlike the SDK's default client it reads no ANTHROPIC_* environment
// variables itself: everything comes from cfg (see FromEnv).
func NewAnthropic(cfg AnthropicConfig) Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultAnthropicBaseURL
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.MaxRetries != nil {
		opts = append(opts, option.WithMaxRetries(*cfg.MaxRetries))
	}
	return &anthropicProvider{cfg: cfg, client: anthropic.NewClient(opts...)}
}

func (p *anthropicProvider) Name() string { return "anthropic" }

// params maps req onto the SDK's parameters, and the request options that
// carry what the parameters cannot (the thinking configuration).
func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: DefaultAnthropicMaxTokens,
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	var opts []option.RequestOption
	if budget := int64(ThinkingBudget(req.Thinking)); budget > 0 {
		params.MaxTokens, budget = anthropicThinkingTokens(req.Model, params.MaxTokens, budget)
		// Set as raw JSON rather than params.Thinking: for some models the
		// SDK then writes a deprecation warning to stderr, which would land
		// in the middle of the terminal's screen.
		opts = append(opts, option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": budget}))
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}

	// Anthropic wants user and assistant turns; tool results are blocks of a
	// user turn, and all results for one assistant turn must share it. So
	// consecutive user/tool messages are merged into one user turn.
	var user []anthropic.ContentBlockParamUnion
	flush := func() {
		if len(user) > 0 {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(user...))
			user = nil
		}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			if m.Text != "" { // empty text blocks are rejected
				user = append(user, anthropic.NewTextBlock(m.Text))
			}
		case RoleTool:
			tr := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Text != "" {
				tr.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Text}}}
			}
			if m.IsError {
				tr.IsError = anthropic.Bool(true)
			}
			user = append(user, anthropic.ContentBlockParamUnion{OfToolResult: &tr})
		case RoleAssistant:
			flush()
			var blocks []anthropic.ContentBlockParamUnion
			// Thinking goes back first and unaltered: with thinking on, the
			// API requires the signed blocks of the turn that called tools.
			// A block without a signature (from another provider) would be
			// refused, so it stays behind.
			for _, t := range m.Thinking {
				switch {
				case t.Redacted:
					if t.Data != "" {
						blocks = append(blocks, anthropic.NewRedactedThinkingBlock(t.Data))
					}
				case t.Signature != "":
					blocks = append(blocks, anthropic.NewThinkingBlock(t.Signature, t.Text))
				}
			}
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, args(tc.Arguments), tc.Name))
			}
			if len(blocks) > 0 {
				params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
			}
		default:
			return params, nil, fmt.Errorf("anthropic: message %d has unknown role %q", i, m.Role)
		}
	}
	flush()

	for _, t := range req.Tools {
		schema, err := anthropicSchema(t.Parameters)
		if err != nil {
			return params, nil, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, opts, nil
}

// anthropicThinkingTokens returns max_tokens and the thinking budget for a
// request: the API wants the budget below max_tokens, so max_tokens is
// raised to leave the usual room for the answer after the thinking, but not
// past what the model can write when that is known (then the budget
// shrinks instead, never below the API's minimum of 1024).
func anthropicThinkingTokens(model string, maxTokens, budget int64) (int64, int64) {
	if maxTokens <= budget {
		maxTokens = budget + DefaultAnthropicMaxTokens
	}
	if limit := int64(MaxOutputTokens(model)); limit > 0 && maxTokens > limit {
		maxTokens = limit
		if budget >= maxTokens {
			budget = max(1024, maxTokens-DefaultAnthropicMaxTokens)
		}
	}
	return maxTokens, budget
}

// anthropicSchema maps a JSON schema object onto the SDK's input schema,
// keeping every key (properties, required, and the rest as extra fields).
func anthropicSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(raw) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return s, fmt.Errorf("parameters are not a JSON object: %w", err)
	}
	for k, v := range obj {
		switch k {
		case "type":
			// always "object"
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf("required: %w", err)
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	return s, nil
}

func (p *anthropicProvider) Stream(ctx context.Context, req Request, emit func(Event)) (Message, string, error) {
	if emit == nil {
		emit = noEmit
	}
	out := Message{Role: RoleAssistant}
	params, opts, err := p.params(req)
	if err != nil {
		stop, err := finishErr(ctx, err, emit)
		return out, stop, err
	}

	stream := p.client.Messages.NewStreaming(ctx, params, opts...)
	defer stream.Close()

	var acc anthropic.Message
	var text strings.Builder
	calls := map[int64]*ToolCall{} // open tool_use blocks by content index
	thinking := map[int64]bool{}   // open thinking and redacted_thinking blocks
	usage := &Usage{}
	sawUsage := false
	// fail returns the partial message: the text and thinking so far (an
	// unfinished thinking block without its signature, which is not sent
	// back), and the tool calls that had ended.
	fail := func(err error) (Message, string, error) {
		out.Text = text.String()
		for i := range acc.Content {
			if !thinking[int64(i)] {
				continue
			}
			if b := acc.Content[i]; b.Type == "redacted_thinking" {
				out.Thinking = append(out.Thinking, Thinking{Redacted: true, Data: b.Data})
			} else {
				out.Thinking = append(out.Thinking, Thinking{Text: b.Thinking})
			}
		}
		stop, err := finishErr(ctx, err, emit)
		return out, stop, err
	}
	thinkingPiece := func(s string) {
		if s != "" {
			emit(Event{Kind: ThinkingDelta, Text: s})
		}
	}
	for stream.Next() {
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			return fail(fmt.Errorf("anthropic: %w", err))
		}
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage.InputTokens = u.InputTokens
			usage.OutputTokens = u.OutputTokens
			usage.CacheReadTokens = u.CacheReadInputTokens
			usage.CacheWriteTokens = u.CacheCreationInputTokens
			usage.ReasoningTokens = u.OutputTokensDetails.ThinkingTokens
			sawUsage = true
		case "content_block_start":
			switch ev.ContentBlock.Type {
			case "tool_use":
				tc := &ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}
				calls[ev.Index] = tc
				emit(Event{Kind: ToolCallStart, ToolCall: &ToolCall{ID: tc.ID, Name: tc.Name}})
			case "text":
				if ev.ContentBlock.Text != "" {
					text.WriteString(ev.ContentBlock.Text)
					emit(Event{Kind: TextDelta, Text: ev.ContentBlock.Text})
				}
			case "thinking":
				thinking[ev.Index] = true
				thinkingPiece(ev.ContentBlock.Thinking)
			case "redacted_thinking":
				thinking[ev.Index] = true
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					text.WriteString(ev.Delta.Text)
					emit(Event{Kind: TextDelta, Text: ev.Delta.Text})
				}
			case "input_json_delta":
				if tc := calls[ev.Index]; tc != nil && ev.Delta.PartialJSON != "" {
					tc.Arguments = append(tc.Arguments, ev.Delta.PartialJSON...)
					emit(Event{Kind: ToolCallDelta, Text: ev.Delta.PartialJSON, ToolCall: snapshot(tc)})
				}
			case "thinking_delta":
				if thinking[ev.Index] {
					thinkingPiece(ev.Delta.Thinking)
				}
			case "signature_delta":
				// Not a piece of text: the block's ThinkingEnd carries it.
			}
		case "content_block_stop":
			if thinking[ev.Index] {
				delete(thinking, ev.Index)
				// The SDK has accumulated the block: text, signature, data.
				b := acc.Content[ev.Index]
				t := Thinking{Text: b.Thinking, Signature: b.Signature}
				if b.Type == "redacted_thinking" {
					t = Thinking{Redacted: true, Data: b.Data}
				}
				out.Thinking = append(out.Thinking, t)
				emit(Event{Kind: ThinkingEnd, Thinking: &t})
			}
			if tc := calls[ev.Index]; tc != nil {
				delete(calls, ev.Index)
				done := ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args(tc.Arguments)}
				if int(ev.Index) < len(acc.Content) { // the SDK's accumulated input, when it has it
					if in := acc.Content[ev.Index].Input; len(in) > 0 && json.Valid(in) {
						done.Arguments = append(json.RawMessage(nil), in...)
					}
				}
				out.ToolCalls = append(out.ToolCalls, done)
				emit(Event{Kind: ToolCallEnd, ToolCall: snapshot(&done)})
			}
		case "message_delta":
			// The counts here are totals for the message so far; a count
			// left out keeps message_start's.
			u := ev.Usage
			usage.OutputTokens = u.OutputTokens
			if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
				usage.InputTokens = u.InputTokens
			}
			if u.JSON.CacheReadInputTokens.Valid() {
				usage.CacheReadTokens = u.CacheReadInputTokens
			}
			if u.JSON.CacheCreationInputTokens.Valid() {
				usage.CacheWriteTokens = u.CacheCreationInputTokens
			}
			if u.JSON.OutputTokensDetails.Valid() {
				usage.ReasoningTokens = u.OutputTokensDetails.ThinkingTokens
			}
			sawUsage = true
		}
	}
	if err := stream.Err(); err != nil {
		return fail(p.apiError(err))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if acc.StopReason == "" {
		return fail(errors.New("anthropic: the stream ended before message_stop"))
	}

	// The text from the SDK's accumulated message, block by block.
	var final strings.Builder
	for _, b := range acc.Content {
		if b.Type == "text" {
			final.WriteString(b.Text)
		}
	}
	out.Text = final.String()
	stop := normaliseAnthropicStop(string(acc.StopReason))
	ev := Event{Kind: Done, StopReason: stop}
	if sawUsage {
		ev.Usage = usage
	}
	emit(ev)
	return out, stop, nil
}

func normaliseAnthropicStop(r string) string {
	switch r {
	case "end_turn", "stop_sequence":
		return StopEnd
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopLength
	case "refusal":
		return StopRefusal
	}
	return r
}

func (p *anthropicProvider) apiError(err error) error {
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return &APIError{Provider: "anthropic", StatusCode: ae.StatusCode, Message: serverMessage(ae.RawJSON()), KeyEnv: "ANTHROPIC_API_KEY", Err: err}
	}
	return fmt.Errorf("anthropic: %w", err)
}
