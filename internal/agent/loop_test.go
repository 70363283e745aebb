package agent

import (
	"agentsh/internal/proctest"
	"agentsh/internal/session"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/tools"
)

// openAIProvider is an OpenAI provider talking to srv, without retries.
func openAIProvider(srv *fakemodel.Server) llm.Provider {
	zero := 0
	return llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero})
}

func newLoopAgent(t *testing.T) (*AgentSession, *session.Store, *tools.Registry) {
	t.Helper()
	a, s := newAgent(t)
	reg, err := tools.NewRegistry(tools.NewBash(&bash.Tool{Executor: a.exec}, func() bash.ToolContext {
		return a.ToolContext(bash.ToolSettings{})
	}))
	if err != nil {
		t.Fatal(err)
	}
	return a, s, reg
}

// promptWithGuard runs Prompt in a goroutine and fails the test if it does
// not return within a generous bound (a hang guard, not a timing assert).
func promptWithGuard(t *testing.T, ctx context.Context, a *AgentSession, text string, p llm.Provider, reg *tools.Registry, emit func(Event)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.Prompt(ctx, text, p, "gpt-test", reg, emit) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Prompt did not return (hang)")
		return nil
	}
}

// eventLog records events; types() leaves out the update events.
type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) emit(e Event) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.evs...)
}

func (l *eventLog) types() (out []string, updates map[string]int) {
	updates = map[string]int{}
	for _, e := range l.all() {
		switch e.Type {
		case EventMessageUpdate, EventToolExecutionUpdate:
			updates[e.Type]++
			continue
		case EventToolExecutionStart, EventToolExecutionEnd:
			out = append(out, e.Type+" "+e.ToolCallID)
			continue
		case EventMessageStart, EventMessageEnd:
			if e.Message != nil && e.Message.Role() != session.RoleAssistant {
				out = append(out, e.Type+" "+e.Message.Role())
				continue
			}
		}
		out = append(out, e.Type)
	}
	return out, updates
}

func roles(ms []session.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role())
	}
	return out
}

// wireMessages returns the messages of a recorded request as role: content
// strings, and checks every assistant tool call is answered by a tool
// message before the next assistant or user message.
func wireMessages(t *testing.T, body map[string]any) []string {
	t.Helper()
	var out []string
	pending := map[string]bool{}
	for _, m := range fakemodel.OpenAIMessages(body) {
		content := m.Content
		switch m.Role {
		case "assistant", "user":
			if len(pending) > 0 {
				t.Errorf("tool calls %v have no result before a %s message", pending, m.Role)
				pending = map[string]bool{}
			}
		}
		switch m.Role {
		case "assistant":
			for _, id := range m.ToolCalls {
				pending[id] = true
				content += " [call " + id + "]"
			}
		case "tool":
			if !pending[m.ToolCallID] {
				t.Errorf("tool message for unknown or answered call %q", m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			content = "(" + m.ToolCallID + ") " + content
		}
		out = append(out, m.Role+": "+content)
	}
	if len(pending) > 0 {
		t.Errorf("tool calls %v have no result", pending)
	}
	return out
}

var noticeRE = regexp.MustCompile(`\[Showing lines (\d+)-200000 of 200000 \(50\.0KB limit\)\. Full: artifact://(\d+)\]$`)

func TestPromptToolCallThenAnswer(t *testing.T) {
	a, s, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Text("Counting.")
			w.ToolCall(0, "call_1", "bash", `{"command":"seq 1 200000"}`)
			w.Finish("tool_calls")
			return
		}
		w.Answer("done")
	})
	var log eventLog
	if err := promptWithGuard(t, context.Background(), a, "count to 200000", openAIProvider(srv), reg, log.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}

	reqs := srv.Bodies()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// Request 0: system prompt, user message, the bash tool's schema.
	w0 := wireMessages(t, reqs[0])
	if len(w0) != 2 || !strings.HasPrefix(w0[0], "system: ") || w0[1] != "user: count to 200000" {
		t.Fatalf("request 0 messages = %q", w0)
	}
	if !strings.Contains(w0[0], "Current working directory: "+a.Cwd()) || !strings.Contains(w0[0], "artifact://") || !strings.Contains(w0[0], "- bash") {
		t.Errorf("system prompt = %q", w0[0])
	}
	toolsJSON, _ := json.Marshal(reqs[0]["tools"])
	for _, want := range []string{`"name":"bash"`, `"required":["command"]`, `"timeout":`, `"cwd":`, `"head":`, `"tail":`} {
		if !strings.Contains(string(toolsJSON), want) {
			t.Errorf("tools %s lack %s", toolsJSON, want)
		}
	}
	// Request 1 carries the truncated tool result with its notice.
	w1 := wireMessages(t, reqs[1])
	if len(w1) != 4 || w1[2] != "assistant: Counting. [call call_1]" || !strings.HasPrefix(w1[3], "tool: (call_1) ") {
		t.Fatalf("request 1 messages = %.200q", w1)
	}
	m := noticeRE.FindStringSubmatch(w1[3])
	if m == nil {
		t.Fatalf("tool result does not end with the notice: …%q", w1[3][max(0, len(w1[3])-200):])
	}
	if !strings.Contains(w1[3], "\n199999\n200000\n") {
		t.Errorf("tool result does not show the tail: …%q", w1[3][max(0, len(w1[3])-200):])
	}
	if p, err := a.Artifacts().Resolve("artifact://" + m[2]); err != nil {
		t.Errorf("artifact %s: %v", m[2], err)
	} else if st, err := os.Stat(p); err != nil || st.Size() < 1_000_000 {
		t.Errorf("artifact %s: %v %v", p, st, err)
	}

	got, updates := log.types()
	sameStrings(t, "events", got, []string{
		"agent_start",
		"turn_start", "message_start user", "message_end user", "message_start", "message_end",
		"tool_execution_start call_1", "tool_execution_end call_1",
		"message_start toolResult", "message_end toolResult", "turn_end",
		"turn_start", "message_start", "message_end", "turn_end",
		"agent_end",
	})
	if updates[EventMessageUpdate] == 0 || updates[EventToolExecutionUpdate] == 0 {
		t.Errorf("updates = %v", updates)
	}
	var text []string
	for _, e := range log.all() {
		if e.Type == EventMessageUpdate && e.UpdateKind == UpdateTextDelta {
			text = append(text, e.Delta)
		}
		if e.Type == EventToolExecutionEnd && (e.Result == nil || e.IsError || !noticeRE.MatchString(e.Result.Content)) {
			t.Errorf("tool_execution_end = %+v", e)
		}
	}
	sameStrings(t, "text deltas", text, []string{"Counting.", "done"})
	for _, e := range log.all() {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case EventToolExecutionStart:
			if want := `{"type":"tool_execution_start","toolCallId":"call_1","toolName":"bash","args":{"command":"seq 1 200000"}}`; string(b) != want {
				t.Errorf("start JSON = %s, want %s", b, want)
			}
		case EventToolExecutionUpdate:
			if !strings.HasPrefix(string(b), `{"type":"tool_execution_update","toolCallId":"call_1","toolName":"bash","args":{"command":"seq 1 200000"},"partialResult":{"content":[{"type":"text","text":"`) {
				t.Errorf("update JSON = %.200s", b)
			}
		case EventToolExecutionEnd:
			if !strings.HasPrefix(string(b), `{"type":"tool_execution_end","toolCallId":"call_1","toolName":"bash","result":{"content":[{"type":"text","text":"`) || !strings.Contains(string(b), `"}],"details":{`) || !strings.HasSuffix(string(b), `},"isError":false}`) {
				t.Errorf("end JSON = %.300s", b)
			}
		}
	}
	if b, err := json.Marshal(log.all()[len(log.all())-1]); err != nil || !strings.Contains(string(b), `"type":"agent_end","isTerminal":true,"messages":[{"role":"user"`) {
		t.Errorf("agent_end JSON = %.300s %v", b, err)
	}

	// Persisted in order.
	saved := loadMessages(t, s.Path())
	sameStrings(t, "persisted roles", roles(saved), []string{"user", "assistant", "toolResult", "assistant"})
	if am := saved[1].(*session.AssistantMessage); am.Text != "Counting." || len(am.ToolCalls) != 1 || am.ToolCalls[0].ID != "call_1" || string(am.ToolCalls[0].Arguments) != `{"command":"seq 1 200000"}` {
		t.Errorf("assistant = %+v", am)
	}
	if tr := saved[2].(*session.ToolResultMessage); tr.ToolCallID != "call_1" || tr.ToolName != "bash" || tr.IsError || !noticeRE.MatchString(tr.Content) || !strings.Contains(string(tr.Details), `"truncation"`) {
		t.Errorf("tool result = %+v", tr)
	}
	if am := saved[3].(*session.AssistantMessage); am.Text != "done" || len(am.ToolCalls) != 0 {
		t.Errorf("answer = %+v", am)
	}
}

func sameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestPromptAbortWhileToolRuns(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	a, s, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.ToolCall(0, "call_1", "bash", `{"command":"echo \"mark=$AGENTSH_SHELL_MARK\"; sleep 30"}`)
			w.ToolCall(1, "call_2", "bash", `{"command":"echo never"}`)
			w.Finish("tool_calls")
			return
		}
		w.Answer("ok")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	marked := make(chan string, 1)
	var log eventLog
	emit := func(e Event) {
		log.emit(e)
		if e.Type == EventToolExecutionUpdate {
			if i := strings.Index(e.PartialResult, "mark="); i >= 0 && strings.Contains(e.PartialResult[i:], "\n") {
				select {
				case marked <- strings.TrimSpace(strings.SplitN(e.PartialResult[i+5:], "\n", 2)[0]):
				default:
				}
			}
		}
	}
	done := make(chan error, 1)
	go func() { done <- a.Prompt(ctx, "sleep please", openAIProvider(srv), "gpt-test", reg, emit) }()
	var mark string
	select {
	case mark = <-marked:
	case err := <-done:
		t.Fatalf("Prompt returned early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the tool's output never arrived")
	}
	if len(proctest.Marked("AGENTSH_SHELL_MARK="+mark)) == 0 {
		t.Error("no process carries the tool's marker")
	}
	// Bang commands while the agent streams are queued, not appended.
	mustBash(t, a, "echo bang-in-context", BashOptions{})
	mustBash(t, a, "echo bang-secret", BashOptions{ExcludeFromContext: true})
	if q := a.QueuedMessages(); len(q) != 2 {
		t.Fatalf("queued = %d, want 2", len(q))
	}

	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Prompt did not return after cancel (hang)")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Prompt error = %v, want context.Canceled", err)
	}
	waitFor(t, "the tool's processes to exit", 5*time.Second, func() bool {
		return len(proctest.Marked("AGENTSH_SHELL_MARK="+mark)) == 0
	})

	msgs := a.Messages()
	sameStrings(t, "history", roles(msgs), []string{"user", "assistant", "toolResult", "toolResult"})
	if tr := msgs[2].(*session.ToolResultMessage); tr.ToolCallID != "call_1" || !tr.IsError || !strings.HasSuffix(tr.Content, "Command aborted") || !strings.Contains(tr.Content, "mark=") {
		t.Errorf("result 1 = %+v", tr)
	}
	if tr := msgs[3].(*session.ToolResultMessage); tr.ToolCallID != "call_2" || !tr.IsError || tr.Content != CancelledToolText {
		t.Errorf("result 2 = %+v", tr)
	}
	got, _ := log.types()
	sameStrings(t, "events", got, []string{
		"agent_start", "turn_start", "message_start user", "message_end user", "message_start", "message_end",
		"tool_execution_start call_1", "tool_execution_end call_1", "message_start toolResult", "message_end toolResult",
		"tool_execution_start call_2", "tool_execution_end call_2", "message_start toolResult", "message_end toolResult",
		"turn_end", "agent_end",
	})
	if last := log.all()[len(log.all())-1]; !last.Aborted || last.Error == "" {
		t.Errorf("agent_end = %+v", last)
	}

	// The next prompt flushes the bang results after the tool results and
	// its request is accepted: every call has its result, `!!` is absent.
	if err := promptWithGuard(t, context.Background(), a, "again", openAIProvider(srv), reg, nil); err != nil {
		t.Fatalf("follow-up Prompt: %v", err)
	}
	reqs := srv.Bodies()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	w := wireMessages(t, reqs[1])
	if len(w) != 7 {
		t.Fatalf("request 1 messages (%d) = %q", len(w), w)
	}
	want := []string{"user: sleep please", "assistant:  [call call_1] [call call_2]", "tool: (call_1) ", "tool: (call_2) " + CancelledToolText,
		"user: Ran `echo bang-in-context`\n```\nbang-in-context\n```", "user: again"}
	for i, wm := range want {
		if got := w[i+1]; !strings.HasPrefix(got, wm) {
			t.Errorf("request 1 message %d = %q, want prefix %q", i+1, got, wm)
		}
	}
	for _, m := range w {
		if strings.Contains(m, "bang-secret") {
			t.Errorf("`!!` output reached the model: %q", m)
		}
	}
	sameStrings(t, "persisted roles", roles(loadMessages(t, s.Path())),
		[]string{"user", "assistant", "toolResult", "toolResult", "bashExecution", "bashExecution", "user", "assistant"})
}

func TestPromptAbortWhileStreaming(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Text("thinking")
		<-w.Context().Done() // hold the stream open until the client goes
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emit := func(e Event) {
		if e.Type == EventMessageUpdate {
			cancel()
		}
	}
	err := promptWithGuard(t, ctx, a, "hi", openAIProvider(srv), reg, emit)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt error = %v, want context.Canceled", err)
	}
	msgs := a.Messages()
	sameStrings(t, "history", roles(msgs), []string{"user", "assistant"})
	if am := msgs[1].(*session.AssistantMessage); am.Text != "thinking" || len(am.ToolCalls) != 0 {
		t.Errorf("partial answer = %+v", am)
	}
}

func TestPromptMaxTurns(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.ToolCall(0, fmt.Sprintf("call_%d", n), "bash", `{"command":"true"}`)
		w.Finish("tool_calls")
	})
	err := promptWithGuard(t, context.Background(), a, "loop forever", openAIProvider(srv), reg, nil)
	if !errors.Is(err, ErrMaxTurns) {
		t.Fatalf("Prompt error = %v, want ErrMaxTurns", err)
	}
	if n := len(srv.Bodies()); n != MaxTurns {
		t.Errorf("%d requests, want %d", n, MaxTurns)
	}
	msgs := a.Messages()
	if len(msgs) != 1+2*MaxTurns || msgs[len(msgs)-1].Role() != session.RoleToolResult {
		t.Errorf("history: %d messages, last %s", len(msgs), msgs[len(msgs)-1].Role())
	}
}

func TestPromptUnknownToolAndNoProvider(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	if err := a.Prompt(context.Background(), "x", nil, "m", reg, nil); err == nil {
		t.Error("nil provider accepted")
	}
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Chunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"write","arguments":"{}"}}]},"finish_reason":null}]`)
			w.Finish("tool_calls")
			return
		}
		w.Answer("sorry")
	})
	if err := promptWithGuard(t, context.Background(), a, "write", openAIProvider(srv), reg, nil); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	sameStrings(t, "history", roles(msgs), []string{"user", "assistant", "toolResult", "assistant"})
	if tr := msgs[2].(*session.ToolResultMessage); !tr.IsError || tr.Content != "Tool write not found" {
		t.Errorf("result = %+v", tr)
	}
}

func TestSystemPrompt(t *testing.T) {
	p := SystemPrompt("/some/dir", []string{"bash", "read"})
	for _, want := range []string{"- bash: ", "- read", "Current working directory: /some/dir",
		"[Showing lines 9901-10000 of 10000 (50.0KB limit). Full: artifact://3]", "artifact://ID", "read tool"} {
		if !strings.Contains(p, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(SystemPrompt("/d", []string{"bash"}), "read tool") {
		t.Error("read tool mentioned without one")
	}
	// Output is cut by bytes only (spec §4): the prompt promises no line cap.
	if regexp.MustCompile(`\d[\d,]* lines`).MatchString(p) || !strings.Contains(p, "(over 50KB; there is no line limit)") {
		t.Errorf("truncation described wrongly:\n%s", p)
	}
	// artifact:// is a path only where the shell would expand a word.
	if !strings.Contains(p, "an unquoted `artifact://ID`") || !strings.Contains(p, "inside quotes it stays literal text") {
		t.Errorf("artifact:// expansion described wrongly:\n%s", p)
	}
}

// The loop is provider-neutral: the same conversation over Anthropic's
// Messages SSE.
func TestPromptAnthropic(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.AnthropicCall("toolu_01", "bash", `{"command":"seq 1 200000"}`)
			return
		}
		w.AnthropicAnswer("done")
	})
	zero := 0
	p := llm.NewAnthropic(llm.AnthropicConfig{BaseURL: srv.URL, APIKey: "sk-ant-test", MaxRetries: &zero})
	if err := promptWithGuard(t, context.Background(), a, "count", p, reg, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	reqs := srv.Bodies()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if sys, _ := json.Marshal(reqs[0]["system"]); !strings.Contains(string(sys), "artifact://") {
		t.Errorf("system = %s", sys)
	}
	msgs, _ := reqs[1]["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("request 1 messages = %v", msgs)
	}
	last := msgs[2].(map[string]any)
	block := last["content"].([]any)[0].(map[string]any)
	if last["role"] != "user" || block["type"] != "tool_result" || block["tool_use_id"] != "toolu_01" {
		t.Fatalf("tool result message = %v", last)
	}
	var content string
	switch c := block["content"].(type) {
	case string:
		content = c
	case []any:
		for _, part := range c {
			s, _ := part.(map[string]any)["text"].(string)
			content += s
		}
	}
	if !noticeRE.MatchString(content) {
		t.Errorf("tool result does not end with the notice: …%q", content[max(0, len(content)-200):])
	}
	if m := a.Messages(); len(m) != 4 || m[3].(*session.AssistantMessage).Text != "done" {
		t.Errorf("history = %v", roles(m))
	}
}
