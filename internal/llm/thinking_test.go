package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"

	"agentsh/internal/fakemodel"
)

// Anthropic with thinking on: the budget is asked for, the thinking is
// streamed and returned with its signature (and a redacted block with its
// data), the cache and thinking counts arrive, and the next request sends
// the blocks back, signed, before the tool call.
func TestAnthropicThinkingStreamedAndSentBack(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.MessageStartUsage(fakemodel.Usage{InputTokens: 12, CacheReadTokens: 3000, CacheWriteTokens: 500})
			w.ThinkingBlock(0, "sig-AAA", "The user wants ", "a count.")
			w.RedactedThinkingBlock(1, "ENCRYPTED==")
			w.ToolUseBlock(2, "toolu_01", "bash", argPieces...)
			w.MessageStopUsage("tool_use", fakemodel.Usage{OutputTokens: 90, ReasoningTokens: 41})
			return
		}
		w.AnthropicThinkingAnswer("Counted.", "sig-BBB", "There are 200000 lines.")
	})
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()})
	req := Request{Model: "claude-test", Messages: []Message{{Role: RoleUser, Text: "count to 200000"}}, Tools: []ToolSpec{bashTool}, Thinking: ThinkingMedium}
	emit, evs := collect()
	var usage *Usage
	msg, stop, err := streamWithGuard(t, p, context.Background(), req, func(e Event) {
		emit(e)
		if e.Kind == Done {
			usage = e.Usage
		}
	})
	if err != nil || stop != StopToolUse {
		t.Fatalf("Stream: %v, stop %q", err, stop)
	}
	sameLines(t, "events", describe(*evs), []string{
		"thinking_delta The user wants ",
		"thinking_delta a count.",
		"thinking_end {Text:The user wants a count. Signature:sig-AAA Redacted:false Data:}",
		"thinking_end {Text: Signature: Redacted:true Data:ENCRYPTED==}",
		`toolcall_start toolu_01 bash ""`,
		`toolcall_delta toolu_01 bash +{"comm ={"comm`,
		`toolcall_delta toolu_01 bash +and":"seq ={"command":"seq`,
		`toolcall_delta toolu_01 bash + 1 2000 ={"command":"seq 1 2000`,
		`toolcall_delta toolu_01 bash +00"} =` + wantArgs,
		"toolcall_end toolu_01 bash " + wantArgs,
		"done tool_use in=12 out=90",
	})
	wantThinking := []Thinking{{Text: "The user wants a count.", Signature: "sig-AAA"}, {Redacted: true, Data: "ENCRYPTED=="}}
	if !reflect.DeepEqual(msg.Thinking, wantThinking) || msg.Text != "" || len(msg.ToolCalls) != 1 {
		t.Errorf("msg = %+v", msg)
	}
	if want := (Usage{InputTokens: 12, OutputTokens: 90, CacheReadTokens: 3000, CacheWriteTokens: 500, ReasoningTokens: 41}); usage == nil || *usage != want {
		t.Errorf("usage = %+v, want %+v", usage, want)
	} else if usage.PromptTokens() != 3512 || usage.TotalTokens() != 3602 {
		t.Errorf("prompt %d total %d", usage.PromptTokens(), usage.TotalTokens())
	}

	b := srv.Request(t, 0).Body
	jsonEq(t, "thinking", b["thinking"], `{"type":"enabled","budget_tokens":8192}`)
	// The default max_tokens (8192) is not above the budget: raised.
	jsonEq(t, "max_tokens", b["max_tokens"], `16384`)

	req.Messages = append(req.Messages, msg, Message{Role: RoleTool, ToolCallID: "toolu_01", Text: "200000"})
	msg2, stop2, err := streamWithGuard(t, p, context.Background(), req, nil)
	if err != nil || stop2 != StopEnd || msg2.Text != "There are 200000 lines." ||
		!reflect.DeepEqual(msg2.Thinking, []Thinking{{Text: "Counted.", Signature: "sig-BBB"}}) {
		t.Fatalf("answer 2: %v stop %q %+v", err, stop2, msg2)
	}
	jsonEq(t, "messages 2", srv.Request(t, 1).Body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"count to 200000"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"The user wants a count.","signature":"sig-AAA"},
			{"type":"redacted_thinking","data":"ENCRYPTED=="},
			{"type":"tool_use","id":"toolu_01","name":"bash","input":{"command":"seq 1 200000"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"200000"}]}]}]`)
}

// Thinking from another provider has no signature: the API would refuse
// it, so it is left out; signed and redacted blocks go first, in order.
func TestAnthropicThinkingHistoryMapping(t *testing.T) {
	p := NewAnthropic(AnthropicConfig{}).(*anthropicProvider)
	params, _, err := p.params(Request{Model: "m", Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, Text: "From elsewhere.", Thinking: []Thinking{{Text: "unsigned reasoning"}}},
		{Role: RoleUser, Text: "again"},
		{Role: RoleAssistant, Text: "Done.", Thinking: []Thinking{{Redacted: true, Data: "R1"}, {Text: "t2", Signature: "s2"}, {Text: "", Signature: "s3"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(params.Messages)
	var got any
	_ = json.Unmarshal(raw, &got)
	jsonEq(t, "messages", got, `[
		{"role":"user","content":[{"type":"text","text":"go"}]},
		{"role":"assistant","content":[{"type":"text","text":"From elsewhere."}]},
		{"role":"user","content":[{"type":"text","text":"again"}]},
		{"role":"assistant","content":[
			{"type":"redacted_thinking","data":"R1"},
			{"type":"thinking","thinking":"t2","signature":"s2"},
			{"type":"thinking","thinking":"","signature":"s3"},
			{"type":"text","text":"Done."}]}]`)
}

// Each level's budget, max_tokens kept when it is above the budget, raised
// when not, and capped at what the model can write; no thinking key when
// thinking is off.
func TestAnthropicThinkingBudgets(t *testing.T) {
	cases := []struct {
		model, level string
		maxTokens    int
		wantThinking string // "" = no thinking key
		wantMax      int
	}{
		{"claude-test", "", 0, "", DefaultAnthropicMaxTokens},
		{"claude-test", "off", 0, "", DefaultAnthropicMaxTokens},
		{"claude-test", "minimal", 0, `{"type":"enabled","budget_tokens":1024}`, 8192},
		{"claude-test", "low", 0, `{"type":"enabled","budget_tokens":2048}`, 8192},
		{"claude-test", "medium", 0, `{"type":"enabled","budget_tokens":8192}`, 16384},
		{"claude-test", "high", 0, `{"type":"enabled","budget_tokens":16384}`, 24576},
		{"claude-test", "xhigh", 0, `{"type":"enabled","budget_tokens":32000}`, 40192},
		{"claude-test", "high", 50000, `{"type":"enabled","budget_tokens":16384}`, 50000},
		{"claude-test", "low", 1000, `{"type":"enabled","budget_tokens":2048}`, 10240},
		// Opus 4.1 writes at most 32000 tokens: the budget gives way.
		{"claude-opus-4-1-20250805", "xhigh", 0, `{"type":"enabled","budget_tokens":23808}`, 32000},
		{"claude-sonnet-4-5", "xhigh", 0, `{"type":"enabled","budget_tokens":32000}`, 40192},
	}
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.AnthropicAnswer("ok") })
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()})
	for i, c := range cases {
		req := Request{Model: c.model, Messages: []Message{{Role: RoleUser, Text: "hi"}}, Thinking: c.level, MaxTokens: c.maxTokens}
		if _, _, err := streamWithGuard(t, p, context.Background(), req, nil); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		b := srv.Request(t, i).Body
		what := fmt.Sprintf("%s %q max %d", c.model, c.level, c.maxTokens)
		if c.wantThinking == "" {
			if th, ok := b["thinking"]; ok {
				t.Errorf("%s: thinking sent: %v", what, th)
			}
		} else {
			jsonEq(t, what+": thinking", b["thinking"], c.wantThinking)
		}
		jsonEq(t, what+": max_tokens", b["max_tokens"], fmt.Sprint(c.wantMax))
	}
}

// The SDK writes a deprecation warning to stderr when its thinking
// parameter is "enabled" for some models; the full-screen terminal must not
// get it.
func TestAnthropicThinkingWritesNothingToStderr(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.AnthropicAnswer("ok") })
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()})
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = wr
	_, _, serr := streamWithGuard(t, p, context.Background(), Request{Model: "claude-opus-4-6", Messages: []Message{{Role: RoleUser, Text: "hi"}}, Thinking: ThinkingHigh}, nil)
	os.Stderr = old
	wr.Close()
	out, _ := io.ReadAll(r)
	r.Close()
	if serr != nil {
		t.Fatal(serr)
	}
	if len(out) > 0 {
		t.Errorf("stderr got %q", out)
	}
	jsonEq(t, "thinking", srv.Request(t, 0).Body["thinking"], `{"type":"enabled","budget_tokens":16384}`)
}

// OpenAI-compatible servers: reasoning_effort only when a level is set,
// xhigh sent as high.
func TestOpenAIReasoningEffort(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: zero()})
	levels := []string{"", "off", "minimal", "low", "medium", "high", "xhigh"}
	want := []string{"", "", "minimal", "low", "medium", "high", "high"}
	for i, level := range levels {
		if _, _, err := streamWithGuard(t, p, context.Background(), Request{Model: "o4-mini", Messages: []Message{{Role: RoleUser, Text: "hi"}}, Thinking: level}, nil); err != nil {
			t.Fatal(err)
		}
		got, ok := srv.Request(t, i).Body["reasoning_effort"]
		if want[i] == "" {
			if ok {
				t.Errorf("level %q: reasoning_effort %v sent", level, got)
			}
		} else if got != want[i] {
			t.Errorf("level %q: reasoning_effort = %v, want %q", level, got, want[i])
		}
	}
}

// Reasoning streamed by compatible servers (delta.reasoning_content,
// delta.reasoning) becomes one thinking block without a signature, ended
// by the first text or tool call; it is not sent back; the usage details
// and OpenRouter's cost are read.
func TestOpenAIReasoningContent(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			w.Reasoning("Need to ")
			w.Reasoning("count.")
			w.Text("Running it.")
			w.ToolCall(0, "call_1", "bash", wantArgs)
			w.FinishWithUsage("tool_calls", fakemodel.Usage{InputTokens: 100, CacheReadTokens: 900, CacheWriteTokens: 50, OutputTokens: 80, ReasoningTokens: 60, Cost: 0.00425})
		case 1:
			// OpenRouter / Ollama name the field "reasoning"; a chunk that
			// carries both names counts once.
			w.ReasoningAs("reasoning", "Done ")
			w.Chunk(`[{"index":0,"delta":{"reasoning":"thinking.","reasoning_content":"thinking."},"finish_reason":null}]`)
			w.Text("200000 lines.")
			w.FinishUsage("stop", 40, 9)
		}
	})
	p := NewOpenAI(OpenAIConfig{Name: "openrouter", BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: zero()})
	req := Request{Model: "deepseek-reasoner", Messages: []Message{{Role: RoleUser, Text: "count"}}, Tools: []ToolSpec{bashTool}, Thinking: ThinkingHigh}
	emit, evs := collect()
	var usage *Usage
	msg, stop, err := streamWithGuard(t, p, context.Background(), req, func(e Event) {
		emit(e)
		if e.Kind == Done {
			usage = e.Usage
		}
	})
	if err != nil || stop != StopToolUse {
		t.Fatalf("Stream: %v stop %q", err, stop)
	}
	sameLines(t, "events", describe(*evs), []string{
		"thinking_delta Need to ",
		"thinking_delta count.",
		"thinking_end {Text:Need to count. Signature: Redacted:false Data:}",
		"text_delta Running it.",
		`toolcall_start call_1 bash ""`,
		"toolcall_delta call_1 bash +" + wantArgs + " =" + wantArgs,
		"toolcall_end call_1 bash " + wantArgs,
		"done tool_use in=100 out=80",
	})
	if !reflect.DeepEqual(msg.Thinking, []Thinking{{Text: "Need to count."}}) || msg.Text != "Running it." {
		t.Errorf("msg = %+v", msg)
	}
	if want := (Usage{InputTokens: 100, OutputTokens: 80, CacheReadTokens: 900, CacheWriteTokens: 50, ReasoningTokens: 60, Cost: 0.00425}); usage == nil || *usage != want {
		t.Errorf("usage = %+v, want %+v", usage, want)
	}

	req.Messages = append(req.Messages, msg, Message{Role: RoleTool, ToolCallID: "call_1", Text: "200000"})
	emit, evs = collect()
	msg2, _, err := streamWithGuard(t, p, context.Background(), req, emit)
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "events 2", describe(*evs), []string{
		"thinking_delta Done ",
		"thinking_delta thinking.",
		"thinking_end {Text:Done thinking. Signature: Redacted:false Data:}",
		"text_delta 200000 lines.",
		"done stop in=40 out=9",
	})
	if !reflect.DeepEqual(msg2.Thinking, []Thinking{{Text: "Done thinking."}}) || msg2.Text != "200000 lines." {
		t.Errorf("msg 2 = %+v", msg2)
	}
	// The reasoning stays here: DeepSeek refuses reasoning_content in the
	// messages it is sent.
	jsonEq(t, "messages 2", srv.Request(t, 1).Body["messages"], `[
		{"role":"user","content":"count"},
		{"role":"assistant","content":"Running it.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":`+jsonString(wantArgs)+`}}]},
		{"role":"tool","tool_call_id":"call_1","content":"200000"}]`)
}

// A stream that only reasons and then ends still returns its block.
func TestOpenAIReasoningOnly(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Reasoning("hmm")
		w.Finish("length")
	})
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: zero()})
	emit, evs := collect()
	msg, stop, err := streamWithGuard(t, p, context.Background(), Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}}, emit)
	if err != nil || stop != StopLength || !reflect.DeepEqual(msg.Thinking, []Thinking{{Text: "hmm"}}) {
		t.Fatalf("%v stop %q %+v", err, stop, msg)
	}
	sameLines(t, "events", describe(*evs), []string{
		"thinking_delta hmm",
		"thinking_end {Text:hmm Signature: Redacted:false Data:}",
		"done length",
	})
}

// Cancelled while thinking: the partial message keeps the ended blocks
// whole and the cut-off one's text without a signature.
func TestThinkingCancelledMidBlock(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hold := func(w *fakemodel.Writer) {
		select {
		case <-w.Context().Done():
		case <-release:
		}
	}
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.MessageStart(5)
			w.ThinkingBlock(0, "sig-1", "first")
			w.Event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
			w.Event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"sec"}}`)
			hold(w)
			return
		}
		w.Reasoning("half a ")
		w.Reasoning("thought")
		hold(w)
	})
	for i, p := range []Provider{
		NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "k", MaxRetries: zero()}),
		NewOpenAI(OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", MaxRetries: zero()}),
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var deltas []string
		emit := func(e Event) {
			if e.Kind == ThinkingDelta {
				deltas = append(deltas, e.Text)
				if e.Text == "sec" || e.Text == "thought" {
					cancel()
				}
			}
		}
		msg, stop, err := streamWithGuard(t, p, ctx, Request{Model: "m", Messages: []Message{{Role: RoleUser, Text: "hi"}}, Thinking: ThinkingLow}, emit)
		cancel()
		want := [][]Thinking{{{Text: "first", Signature: "sig-1"}, {Text: "sec"}}, {{Text: "half a thought"}}}[i]
		if err != context.Canceled || stop != StopAborted || !reflect.DeepEqual(msg.Thinking, want) {
			t.Errorf("%s: %v stop %q thinking %+v (deltas %q)", p.Name(), err, stop, msg.Thinking, deltas)
		}
	}
}
