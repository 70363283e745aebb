package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// loopRegistry is the bash tool of a.
func loopRegistry(t *testing.T, a *AgentSession) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(tools.NewBash(&bash.Tool{Executor: a.exec}, func() bash.ToolContext {
		return a.ToolContext(bash.ToolSettings{})
	}))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// followCompactionSettings makes a follow settings whose only content is
// the given "compaction" object.
func followCompactionSettings(t *testing.T, a *AgentSession, compaction string) {
	t.Helper()
	dir := t.TempDir()
	global := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(global, []byte(`{"compaction":`+compaction+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := config.WatchSettingsFrom(global, filepath.Join(dir, "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	a.FollowSettings(l)
}

// chatMessages is an OpenAI request's messages.
func chatMessages(body map[string]any) []map[string]any {
	raw, _ := body["messages"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, m := range raw {
		mm, _ := m.(map[string]any)
		out = append(out, mm)
	}
	return out
}

// chatText is a chat message's content as text (a string or text parts).
func chatText(m map[string]any) string {
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// isSummaryRequest tells the compaction's summary call from an agent turn.
func isSummaryRequest(body map[string]any) bool {
	ms := chatMessages(body)
	return len(ms) > 0 && ms[0]["role"] == "system" && strings.Contains(chatText(ms[0]), "working memory of a coding agent")
}

// checkPairs fails unless every tool call of the request is answered by a
// tool message after it and every tool message answers an earlier call.
func checkPairs(t *testing.T, n int, body map[string]any) {
	t.Helper()
	open := map[string]bool{}
	ms := chatMessages(body)
	for i, m := range ms {
		switch m["role"] {
		case "assistant":
			if len(open) > 0 {
				t.Errorf("request %d: assistant message %d before the results of %v", n, i, open)
			}
			calls, _ := m["tool_calls"].([]any)
			for _, c := range calls {
				id, _ := c.(map[string]any)["id"].(string)
				open[id] = true
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			if !open[id] {
				t.Errorf("request %d: tool result %s without its call before it", n, id)
			}
			delete(open, id)
		default:
			if len(open) > 0 && m["role"] != "user" {
				t.Errorf("request %d: %v message %d among open calls %v", n, m["role"], i, open)
			}
		}
	}
	if len(open) > 0 {
		t.Errorf("request %d: calls without results: %v", n, open)
	}
}

// bigOutputCommand prints about 5000 characters, every line marked with
// turn k.
func bigOutputCommand(k int) string {
	return fmt.Sprintf(`{"command":"for i in $(seq 1 400); do echo turn%d-line$i; done"}`, k)
}

// longSessionModel calls bash `calls` times with big outputs, then
// answers "all done"; summary requests get summaryText. Its counters are
// safe to read after the prompt.
type longSessionModel struct {
	mu        sync.Mutex
	calls     int
	turns     int
	summaries int
	text      string
}

// script answers; srv is the server it is given to, set once made.
func (m *longSessionModel) script(srv *atomic.Pointer[fakemodel.Server]) fakemodel.Script {
	return func(n int, w *fakemodel.Writer) {
		body := srv.Load().Requests()[n].Body
		m.mu.Lock()
		if isSummaryRequest(body) {
			m.summaries++
			k := m.summaries
			m.mu.Unlock()
			w.Answer(fmt.Sprintf("%s #%d: the user wants turn outputs; done so far: several bash runs.", m.text, k))
			return
		}
		k := m.turns
		m.turns++
		m.mu.Unlock()
		if k < m.calls {
			w.Bash(fmt.Sprintf("call_%d", k), bigOutputCommand(k))
			return
		}
		w.Answer("all done")
	}
}

func TestAutoCompactionLongSession(t *testing.T) {
	a, store, reg := newLoopAgent(t)
	// 8000-token window, 1000 kept free: compaction starts above 7000
	// estimated tokens; it keeps the newest ~1500.
	followCompactionSettings(t, a, `{"contextWindow":8000,"reserveTokens":1000,"keepRecentTokens":1500}`)
	model := &longSessionModel{calls: 10, text: "SUMMARY-OF-EARLIER-TURNS"}
	var self atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(t, model.script(&self))
	self.Store(srv)
	p := openAIProvider(srv)
	var log eventLog
	if err := promptWithGuard(t, context.Background(), a, "print the turns", p, reg, log.emit); err != nil {
		t.Fatal(err)
	}

	bodies := srv.Bodies()
	first := -1
	for i, b := range bodies {
		if isSummaryRequest(b) {
			if first < 0 {
				first = i
			}
			if _, ok := b["tools"]; ok {
				t.Errorf("summary request %d offers tools", i)
			}
			continue
		}
		checkPairs(t, i, b)
	}
	if first < 0 {
		t.Fatalf("no summary request among %d requests", len(bodies))
	}
	t.Logf("%d requests, %d of them summaries, the first at %d", len(bodies), model.summaries, first)
	// The summary call reads the older turns; the next turn carries the
	// summary followed by the recent turns, not the older ones.
	sumReq := chatText(chatMessages(bodies[first])[1])
	for _, want := range []string{"print the turns", "turn0-line1\n", "turn0-line400", "[bash result]", "[assistant calls bash]"} {
		if !strings.Contains(sumReq, want) {
			t.Errorf("summary request lacks %q:\n%.600s", want, sumReq)
		}
	}
	next := chatMessages(bodies[first+1])
	if next[1]["role"] != "user" || !strings.Contains(chatText(next[1]), "SUMMARY-OF-EARLIER-TURNS #1") ||
		!strings.Contains(chatText(next[1]), "<summary>") {
		t.Errorf("request after the summary starts with %v", next[1])
	}
	all := fmt.Sprint(next)
	if strings.Contains(all, "turn0-line1\n") || strings.Contains(all, "print the turns") {
		t.Error("the request after the compaction still carries the oldest turn")
	}
	if len(next) < 3 || next[2]["role"] == "tool" {
		t.Errorf("kept turns start with %v", next[2])
	}
	last := chatMessages(bodies[len(bodies)-1])
	if !strings.Contains(fmt.Sprint(last), "turn9-line400") {
		t.Error("the last request lacks the newest tool result")
	}

	// Events: start (threshold) then end with the result.
	var starts, ends []Event
	for _, e := range log.all() {
		switch e.Type {
		case EventAutoCompactionStart:
			starts = append(starts, e)
		case EventAutoCompactionEnd:
			ends = append(ends, e)
		}
	}
	if len(starts) == 0 || len(starts) != len(ends) || len(starts) != model.summaries {
		t.Fatalf("%d starts, %d ends, %d summaries", len(starts), len(ends), model.summaries)
	}
	b, _ := json.Marshal(starts[0])
	if string(b) != `{"type":"auto_compaction_start","reason":"threshold","action":"context-full"}` {
		t.Errorf("start event %s", b)
	}
	b, _ = json.Marshal(ends[0])
	var end map[string]any
	_ = json.Unmarshal(b, &end)
	res, _ := end["result"].(map[string]any)
	if end["action"] != "context-full" || end["aborted"] != false || end["willRetry"] != false || res == nil ||
		!strings.HasPrefix(res["summary"].(string), "SUMMARY-OF-EARLIER-TURNS #1") ||
		!regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(res["firstKeptEntryId"].(string)) ||
		res["tokensBefore"].(float64) <= 7000 || res["tokensAfter"].(float64) >= res["tokensBefore"].(float64) {
		t.Errorf("end event %s", b)
	}

	// The session file keeps every message and the compaction entries.
	sess, errs, err := session.Load(store.Path())
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	roles := map[string]int{}
	for _, m := range sess.Messages {
		roles[m.Role()]++
	}
	if want := map[string]int{session.RoleUser: 1, session.RoleAssistant: 11, session.RoleToolResult: 10}; !reflect.DeepEqual(roles, want) {
		t.Errorf("file holds %v, want %v", roles, want)
	}
	if sess.Compaction == nil || !strings.Contains(sess.Compaction.Summary, fmt.Sprintf("#%d", model.summaries)) {
		t.Fatalf("file's last compaction %+v", sess.Compaction)
	}
	if got := a.Messages(); !reflect.DeepEqual(roleList(sess.Context()), roleList(got)) {
		t.Errorf("loaded context %v, session's %v", roleList(sess.Context()), roleList(got))
	}

	// A resumed session continues from the compacted context.
	s2, _, err := session.Open(store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	b2, err := New(a.Cwd(), s2, a.exec, a.shell)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b2.Messages()[0].(*session.CompactionSummaryMessage); !ok {
		t.Fatalf("resumed session starts with %T", b2.Messages()[0])
	}
	before := len(srv.Requests())
	if err := promptWithGuard(t, context.Background(), b2, "and now?", p, reg, nil); err != nil {
		t.Fatal(err)
	}
	resumed := chatMessages(srv.Request(t, before).Body)
	if !strings.Contains(chatText(resumed[1]), fmt.Sprintf("SUMMARY-OF-EARLIER-TURNS #%d", model.summaries)) {
		t.Errorf("resumed request starts with %v", resumed[1])
	}
	if strings.Contains(fmt.Sprint(resumed), "print the turns") {
		t.Error("the resumed request carries the compacted prompt")
	}
	checkPairs(t, before, srv.Request(t, before).Body)
}

func roleList(ms []session.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Role()
	}
	return out
}

// runTurns fills a session with `calls` big tool-call turns.
func runTurns(t *testing.T, a *AgentSession, calls int) (*fakemodel.Server, *longSessionModel) {
	t.Helper()
	reg := loopRegistry(t, a)
	model := &longSessionModel{calls: calls, text: "MANUAL-SUMMARY"}
	var self atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(t, model.script(&self))
	self.Store(srv)
	if err := promptWithGuard(t, context.Background(), a, "print the turns", openAIProvider(srv), reg, nil); err != nil {
		t.Fatal(err)
	}
	return srv, model
}

func TestCompactManual(t *testing.T) {
	a, store, _ := newLoopAgent(t)
	followCompactionSettings(t, a, `{"keepRecentTokens":1500}`) // no window known: never automatic
	srv, _ := runTurns(t, a, 4)
	n := len(srv.Requests())
	res, err := a.Compact(context.Background(), openAIProvider(srv), "gpt-test", "the turn numbers")
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != n+1 {
		t.Fatalf("%d requests for one compaction", len(srv.Requests())-n)
	}
	sumReq := chatText(chatMessages(srv.Request(t, n).Body)[1])
	if !strings.Contains(sumReq, "focus on: the turn numbers") || !strings.Contains(sumReq, "turn0-line7\n") {
		t.Errorf("summary request:\n%.500s", sumReq)
	}
	if !strings.HasPrefix(res.Summary, "MANUAL-SUMMARY #1") || res.Details == nil || res.Details.SummarizedMessages == 0 {
		t.Errorf("result %+v", res)
	}
	msgs := a.Messages()
	sm, ok := msgs[0].(*session.CompactionSummaryMessage)
	if !ok || sm.Summary != res.Summary || sm.TokensBefore != res.TokensBefore {
		t.Fatalf("session starts with %#v", msgs[0])
	}
	if got := len(msgs) - 1; got != res.Details.KeptMessages {
		t.Errorf("%d kept messages, result says %d", got, res.Details.KeptMessages)
	}
	// The last line of the file is the entry, chained to the one before.
	lines := readLines(t, store.Path())
	var entry, prev map[string]any
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &entry)
	_ = json.Unmarshal([]byte(lines[len(lines)-2]), &prev)
	if entry["type"] != "compaction" || entry["firstKeptEntryId"] != res.FirstKeptEntryID ||
		entry["parentId"] != prev["id"] || entry["summary"] != res.Summary || entry["tokensBefore"] != float64(res.TokensBefore) {
		t.Errorf("entry %s after %s", lines[len(lines)-1], lines[len(lines)-2])
	}
	// firstKeptEntryId names the first kept message's line.
	found := false
	for _, l := range lines[1:] {
		var e struct {
			ID      string          `json:"id"`
			Message json.RawMessage `json:"message"`
		}
		_ = json.Unmarshal([]byte(l), &e)
		if e.ID == res.FirstKeptEntryID {
			m, err := session.UnmarshalMessage(e.Message)
			if err != nil || !reflect.DeepEqual(m, msgs[1]) {
				t.Errorf("first kept entry holds %#v, session keeps %#v", m, msgs[1])
			}
			found = true
		}
	}
	if !found {
		t.Errorf("no entry %s in the file", res.FirstKeptEntryID)
	}
	// get_messages' shape of the summary is the reference's.
	raw, err := session.MarshalMessage(sm)
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	_ = json.Unmarshal(raw, &wire)
	if wire["role"] != "compactionSummary" || wire["summary"] != res.Summary || wire["tokensBefore"] != float64(res.TokensBefore) {
		t.Errorf("wire summary %s", raw)
	}
	if back, err := session.UnmarshalMessage(raw); err != nil || !reflect.DeepEqual(back, sm) {
		t.Errorf("round trip %#v %v", back, err)
	}

	// Compacting again right away: the kept turns fit, nothing to do.
	if _, err := a.Compact(context.Background(), openAIProvider(srv), "gpt-test", ""); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("second compaction: %v", err)
	}
}

func TestCompactTooShort(t *testing.T) {
	a, _, _ := newLoopAgent(t)
	srv, _ := runTurns(t, a, 0) // one prompt, one answer
	n := len(srv.Requests())
	_, err := a.Compact(context.Background(), openAIProvider(srv), "gpt-test", "")
	if !errors.Is(err, ErrNothingToCompact) || err.Error() != "Nothing to compact (session too small)" {
		t.Errorf("err = %v", err)
	}
	if len(srv.Requests()) != n {
		t.Error("a too-short conversation was sent to the model")
	}
	if _, ok := a.Messages()[0].(*session.UserMessage); !ok {
		t.Error("the conversation changed")
	}
}

func TestOverflowCompactsAndRetriesOnce(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	followCompactionSettings(t, a, `{"keepRecentTokens":1500}`) // unknown window: no threshold compaction
	srv, _ := runTurns(t, a, 4)
	srv.Close()

	const overflow = `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
	var mu sync.Mutex
	refusals := 1
	var self atomic.Pointer[fakemodel.Server]
	srv2 := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if isSummaryRequest(self.Load().Requests()[n].Body) {
			w.Answer("OVERFLOW-SUMMARY")
			return
		}
		mu.Lock()
		refuse := refusals > 0
		if refuse {
			refusals--
		}
		mu.Unlock()
		if refuse {
			w.Error(400, overflow)
			return
		}
		w.Answer("fine now")
	})
	self.Store(srv2)
	var log eventLog
	if err := promptWithGuard(t, context.Background(), a, "go on", openAIProvider(srv2), reg, log.emit); err != nil {
		t.Fatal(err)
	}
	reqs := srv2.Requests()
	if len(reqs) != 3 || !isSummaryRequest(reqs[1].Body) {
		t.Fatalf("%d requests", len(reqs))
	}
	retry := chatMessages(reqs[2].Body)
	if !strings.Contains(chatText(retry[1]), "OVERFLOW-SUMMARY") || chatText(retry[len(retry)-1]) != "go on" {
		t.Errorf("retried request %v", retry)
	}
	checkPairs(t, 2, reqs[2].Body)
	var got []string
	for _, e := range log.all() {
		if e.Compaction != nil {
			b, _ := json.Marshal(e)
			got = append(got, string(b))
		}
	}
	if len(got) != 2 || got[0] != `{"type":"auto_compaction_start","reason":"overflow","action":"context-full"}` ||
		!strings.Contains(got[1], `"aborted":false,"willRetry":true`) {
		t.Errorf("events %v", got)
	}
	if last := a.Messages()[len(a.Messages())-1].(*session.AssistantMessage); last.Text != "fine now" {
		t.Errorf("last message %+v", last)
	}

	// A provider that keeps refusing: one compaction, one retry, then
	// the error.
	mu.Lock()
	refusals = 100
	mu.Unlock()
	n := len(srv2.Requests())
	err := promptWithGuard(t, context.Background(), a, "again", openAIProvider(srv2), reg, nil)
	if err == nil || !IsContextOverflow(err) {
		t.Fatalf("err = %v", err)
	}
	if extra := len(srv2.Requests()) - n; extra > 3 {
		t.Errorf("%d requests after a lasting overflow (want at most a call, a summary, a retry)", extra)
	}
}

func TestCompactLegacyFileWithoutIDs(t *testing.T) {
	isolateData(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "old.jsonl")
	big := strings.Repeat("x", 8000)
	writeFile(t, p, testHeader+"\n"+
		`{"type":"message","message":{"role":"user","text":"first question"}}`+"\n"+
		`{"type":"message","message":{"role":"assistant","text":"","toolCalls":[{"id":"c1","name":"bash","arguments":{"command":"x"}}]}}`+"\n"+
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":"`+big+`","isError":false}}`+"\n"+
		`{"type":"message","message":{"role":"assistant","text":"answer one"}}`+"\n"+
		`{"type":"message","message":{"role":"user","text":"second question"}}`+"\n"+
		`{"type":"message","message":{"role":"assistant","text":"answer two"}}`+"\n")
	store, errs, err := session.Open(p)
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	defer store.Close()
	a, err := New(dir, store, nil, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	followCompactionSettings(t, a, `{"keepRecentTokens":100}`)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("LEGACY-SUMMARY") })
	res, err := a.Compact(context.Background(), openAIProvider(srv), "gpt-test", "")
	if err != nil {
		t.Fatal(err)
	}
	// The cut is at "answer one" (line 5 of the file): the turn before
	// it, with its big tool result, is summarized.
	if res.FirstKeptEntryID != session.LegacyEntryID("abc", 5) {
		t.Errorf("firstKeptEntryId %s, want the legacy id of line 5 %s", res.FirstKeptEntryID, session.LegacyEntryID("abc", 5))
	}
	sess, errs, err := session.Load(p)
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	ctx := sess.Context()
	if len(ctx) != 4 || ctx[0].(*session.CompactionSummaryMessage).Summary != "LEGACY-SUMMARY" ||
		ctx[1].(*session.AssistantMessage).Text != "answer one" || len(sess.Messages) != 6 {
		t.Errorf("loaded context %v of %d messages", roleList(ctx), len(sess.Messages))
	}
	lines := readLines(t, p)
	var entry map[string]any
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &entry)
	if entry["parentId"] != session.LegacyEntryID("abc", 7) {
		t.Errorf("entry's parent %v, want the legacy id of line 7", entry["parentId"])
	}
}

// BenchmarkCompactionCheck is what every model call pays to decide whether
// to compact first (the estimate and the cut of the whole conversation):
// a session of 500 tool-call turns with 4 KB outputs, about 520k tokens.
func BenchmarkCompactionCheck(b *testing.B) {
	a, err := New(b.TempDir(), nil, nil, bash.ShellConfig{})
	if err != nil {
		b.Fatal(err)
	}
	out := strings.Repeat("x", 4096)
	_ = a.Append(&session.UserMessage{Text: "go"})
	for i := range 500 {
		id := fmt.Sprintf("call_%d", i)
		_ = a.Append(&session.AssistantMessage{ToolCalls: []session.ToolCall{{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"cat f"}`)}},
			Usage: &session.Usage{Input: int64(i) * 1030}})
		_ = a.Append(&session.ToolResultMessage{ToolCallID: id, ToolName: "bash", Content: out})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.plan("gpt-4o", 2000); err != nil {
			b.Fatal(err)
		}
	}
}
