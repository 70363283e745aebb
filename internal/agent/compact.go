package agent

// Compaction: when a conversation nears the model's context window, its
// older part is summarized by the model into one message and the recent
// turns are kept as they are. The session file keeps the whole history and
// gains a compaction entry naming the first kept entry; the session in
// memory (Messages, ContextMessages, get_messages) and a resumed session
// continue from the summary followed by the kept and later messages, as the
// reference does.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"agentsh/internal/config"
	"agentsh/internal/llm"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// CompactionResult is what a compaction did, as the reference's compact
// command answers it; TokensAfter is agentsh's addition.
type CompactionResult struct {
	Summary          string                     `json:"summary"`
	FirstKeptEntryID string                     `json:"firstKeptEntryId"`
	TokensBefore     int64                      `json:"tokensBefore"`
	TokensAfter      int64                      `json:"tokensAfter"`
	Details          *session.CompactionDetails `json:"details,omitempty"`
}

// ErrNothingToCompact refuses a compaction of a conversation whose older
// part is empty: everything fits in the recent turns it would keep.
var ErrNothingToCompact = errors.New("Nothing to compact (session too small)") //lint:ignore ST1005 user-facing text from the reference

// ErrCompactBusy refuses a compaction while the agent works or another
// compaction runs.
var ErrCompactBusy = errors.New("Cannot compact while the agent is working or another compaction runs") //lint:ignore ST1005 user-facing text

// ContextWindow is the context window of model as the user is told it
// (the TUI's "% context left"): the settings' compaction.contextWindow when
// they give one for it, else listed (the provider's model list says so; 0
// when it does not), else what llm knows of the model; 0 when unknown.
func (a *AgentSession) ContextWindow(model string, listed int) int {
	c := a.compactionSettings()
	if w, ok := c.Override(model); ok {
		return w
	}
	if listed > 0 {
		return listed
	}
	return llm.ContextWindow(model)
}

// compactionSettings are the session's settings now: from the files it
// follows, with set_auto_compaction's choice over compaction.enabled. A
// file whose compaction keys are wrong gives the defaults.
func (a *AgentSession) compactionSettings() config.CompactionSettings {
	c := config.CompactionSettings{Enabled: true}
	if l := a.live.Load(); l != nil {
		if s, err := l.Current(); err == nil {
			if cs, err := config.CompactionSettingsFrom(s); err == nil {
				c = cs
			}
		}
	}
	a.mu.Lock()
	if a.autoCompact != nil {
		c.Enabled = *a.autoCompact
	}
	a.mu.Unlock()
	return c
}

// SetAutoCompaction turns automatic compaction on or off for this session
// (RPC set_auto_compaction), over the settings' compaction.enabled.
func (a *AgentSession) SetAutoCompaction(on bool) {
	a.mu.Lock()
	a.autoCompact = &on
	a.mu.Unlock()
}

// AutoCompactionEnabled reports whether the session compacts by itself
// near the window.
func (a *AgentSession) AutoCompactionEnabled() bool { return a.compactionSettings().Enabled }

// IsCompacting reports whether a compaction (asked for, or automatic)
// runs.
func (a *AgentSession) IsCompacting() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.compacting
}

// Token estimates: a quarter of the characters, as the reference guesses
// when the provider has not counted.
func estimateChars(n int) int64 { return int64((n + 3) / 4) }

// messageTokens estimates what m costs in the model's context.
func messageTokens(m session.Message) int64 {
	switch v := m.(type) {
	case *session.UserMessage:
		return estimateChars(len(v.Text))
	case *session.AssistantMessage:
		n := len(v.Text)
		for _, t := range v.Thinking {
			n += len(t.Thinking) + len(t.Data)
		}
		for _, c := range v.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
		return estimateChars(n)
	case *session.ToolResultMessage:
		return estimateChars(len(v.Content))
	case *session.BashExecutionMessage:
		if v.ExcludeFromContext {
			return 0
		}
		return estimateChars(len(session.BashExecutionToText(v)))
	case *session.CompactionSummaryMessage:
		return estimateChars(len(summaryContextText(v.Summary)))
	}
	return 0
}

// contextTokens is the size of msgs in the model's context plus overhead
// (system prompt, tool specs): the estimate, or what the provider counted
// at the last answer plus the estimate of what came after it, whichever is
// more. Answers older than the newest summary counted a context that no
// longer exists and are not used.
func contextTokens(msgs []session.Message, overhead int64) int64 {
	est := overhead
	for _, m := range msgs {
		est += messageTokens(m)
	}
	var since int64
	var summaryAt int64 = -1
	if len(msgs) > 0 {
		if s, ok := msgs[0].(*session.CompactionSummaryMessage); ok {
			summaryAt = s.Timestamp
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		am, ok := msgs[i].(*session.AssistantMessage)
		if !ok || am.Usage == nil || am.StopReason == session.StopReasonError || am.StopReason == session.StopReasonAborted ||
			am.Timestamp < summaryAt {
			since += messageTokens(msgs[i])
			continue
		}
		u := am.Usage
		counted := u.Input + u.Output + u.CacheRead + u.CacheWrite
		if counted == 0 {
			since += messageTokens(msgs[i])
			continue
		}
		return max(est, counted+since)
	}
	return est
}

// compactionPlan is what a compaction will summarize and keep.
type compactionPlan struct {
	msgs    []session.Message                 // the conversation when planned
	prev    *session.CompactionSummaryMessage // the summary of an earlier compaction, nil if none
	start   int                               // the first message to summarize (after prev)
	cut     int                               // the first message kept
	before  int64                             // tokens of the context before
	keep    int
	window  int
	setting config.CompactionSettings
}

// planCompaction picks the cut of msgs: the oldest turn boundary such that
// what follows fits keep tokens (the newest turn is kept even when it alone
// is larger). A boundary is a user message, a bang command or an assistant
// message, never a tool result, so a tool call and its results stay on the
// same side.
func planCompaction(msgs []session.Message, keep int) (compactionPlan, error) {
	p := compactionPlan{msgs: msgs, keep: keep}
	if len(msgs) > 0 {
		if s, ok := msgs[0].(*session.CompactionSummaryMessage); ok {
			p.prev, p.start = s, 1
		}
	}
	cut, acc := -1, int64(0)
	for i := len(msgs) - 1; i >= p.start; i-- {
		acc += messageTokens(msgs[i])
		if !isCutPoint(msgs[i]) {
			continue
		}
		if cut >= 0 && acc > int64(keep) {
			break
		}
		cut = i
	}
	if cut <= p.start {
		return p, ErrNothingToCompact
	}
	p.cut = cut
	return p, nil
}

func isCutPoint(m session.Message) bool {
	switch m.(type) {
	case *session.UserMessage, *session.AssistantMessage, *session.BashExecutionMessage:
		return true
	}
	return false
}

// plan plans a compaction of the session as it is now for model.
func (a *AgentSession) plan(model string, overhead int64) (compactionPlan, error) {
	c := a.compactionSettings()
	window := c.Window(model)
	p, err := planCompaction(a.Messages(), c.KeepRecent(window))
	p.window, p.setting = window, c
	p.before = contextTokens(p.msgs, overhead)
	return p, err
}

// Compact summarizes the older part of the conversation with the model and
// continues from the summary and the recent turns (see the file comment).
// instructions, when not empty, tell the summary what to focus on. A
// conversation too short to gain anything gives ErrNothingToCompact; one
// being worked on, ErrCompactBusy.
func (a *AgentSession) Compact(ctx context.Context, p llm.Provider, model, instructions string) (*CompactionResult, error) {
	if p == nil {
		return nil, errors.New("no model configured")
	}
	a.mu.Lock()
	busy := a.streaming || a.compacting
	a.mu.Unlock()
	if busy {
		return nil, ErrCompactBusy
	}
	plan, err := a.plan(model, 0)
	if err != nil {
		return nil, err
	}
	return a.runCompaction(ctx, p, model, instructions, plan)
}

// runCompaction carries out plan: one model call for the summary, then the
// compaction entry and the new context.
func (a *AgentSession) runCompaction(ctx context.Context, p llm.Provider, model, instructions string, plan compactionPlan) (*CompactionResult, error) {
	a.mu.Lock()
	if a.compacting {
		a.mu.Unlock()
		return nil, ErrCompactBusy
	}
	a.compacting = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.compacting = false
		a.mu.Unlock()
	}()

	summary, err := summarize(ctx, p, model, plan, instructions)
	if err != nil {
		return nil, err
	}
	sm := &session.CompactionSummaryMessage{Summary: summary, TokensBefore: plan.before, Timestamp: a.now().UnixMilli()}

	a.mu.Lock()
	defer a.mu.Unlock()
	// Messages are only ever appended meanwhile (bang results, a prompt
	// started during a compaction asked for over RPC): they are kept too.
	if len(a.messages) <= plan.cut || a.messages[plan.cut] != plan.msgs[plan.cut] {
		return nil, errors.New("compaction: the conversation changed while it was summarized")
	}
	kept := a.messages[plan.cut:]
	next := append([]session.Message{sm}, kept...)
	sm.TokensAfter = contextTokens(next, 0)
	first := a.entryIDLocked(kept[0])
	details := &session.CompactionDetails{SummarizedMessages: plan.cut - plan.start, KeptMessages: len(kept)}
	res := &CompactionResult{Summary: summary, FirstKeptEntryID: first, TokensBefore: sm.TokensBefore,
		TokensAfter: sm.TokensAfter, Details: details}
	var saveErr error
	if a.store != nil {
		if _, err := a.store.AppendCompaction(session.CompactionEntry{Summary: summary, FirstKeptEntryID: first,
			TokensBefore: sm.TokensBefore, TokensAfter: sm.TokensAfter, Details: details}); err != nil {
			saveErr = &SaveError{Err: fmt.Errorf("record compaction: %w", err)}
		}
	}
	a.messages = next
	return res, saveErr
}

// entryIDLocked is m's entry id: the store's, or one of the session's own
// when nothing is persisted.
func (a *AgentSession) entryIDLocked(m session.Message) string {
	if a.store != nil {
		if id := a.store.EntryID(m); id != "" {
			return id
		}
	}
	if a.localIDs == nil {
		a.localIDs = map[session.Message]string{}
	}
	id, ok := a.localIDs[m]
	if !ok {
		id = session.NewEntryID()
		a.localIDs[m] = id
	}
	return id
}

// summaryContextText is how the model reads a summary: what it is, then the
// summary itself.
func summaryContextText(summary string) string {
	return "The earlier part of this conversation was compacted to fit the context window. " +
		"You wrote the summary below from it; the messages after this one follow it word for word. " +
		"Continue the work from here: rely on the summary, do not redo what it says is done.\n\n" +
		"<summary>\n" + summary + "\n</summary>"
}

// summarySystemPrompt is agentsh's instruction for the summary call.
const summarySystemPrompt = `You write the working memory of a coding agent. Its conversation with a user has outgrown the model's context window, so the older part will be replaced by your summary; the newest turns stay as they are.

You get that older part as a transcript (and the summary of an even older part, when there is one). Write one summary that lets the agent carry on as if it had read everything. Use these sections, leaving out any that would be empty:

## Goal
What the user wants, in their terms, including later changes of mind.
## Constraints
Preferences, rules and limits the user set or the work revealed.
## Done
What was completed, with the exact files, functions, commands and results.
## In progress
What was being worked on when the transcript ends, and its state.
## Facts
Paths, names, versions, error messages, numbers and decisions (with the reason) the agent will need again. Quote them exactly.
## Next
The concrete next steps.

Be dense and specific; keep exact identifiers and messages. Do not answer or continue the conversation, do not call tools, do not add advice: write the summary only.`

// maxResultChars bounds one tool output or bang output in the summary's
// transcript; its head and tail are kept.
const maxResultChars = 4000

// clip keeps the start and the end of a long s.
func clip(s string) string {
	if len(s) <= maxResultChars {
		return s
	}
	head, tail := maxResultChars*5/8, maxResultChars*3/8
	for head > 0 && !utf8Start(s[head]) {
		head--
	}
	t := len(s) - tail
	for t < len(s) && !utf8Start(s[t]) {
		t++
	}
	return s[:head] + "\n[… " + strconv.Itoa(t-head) + " characters left out …]\n" + s[t:]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// transcript renders msgs as the text the summary call reads.
func transcript(msgs []session.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch v := m.(type) {
		case *session.UserMessage:
			b.WriteString("[user]\n" + v.Text + "\n\n")
		case *session.AssistantMessage:
			for _, t := range v.Thinking {
				if t.Thinking != "" {
					b.WriteString("[assistant, thinking]\n" + clip(t.Thinking) + "\n\n")
				}
			}
			if v.Text != "" {
				b.WriteString("[assistant]\n" + v.Text + "\n\n")
			}
			for _, c := range v.ToolCalls {
				b.WriteString("[assistant calls " + c.Name + "]\n" + clip(string(c.Arguments)) + "\n\n")
			}
			if v.ErrorMessage != "" {
				b.WriteString("[the answer failed: " + v.ErrorMessage + "]\n\n")
			}
		case *session.ToolResultMessage:
			head := "[" + v.ToolName + " result]\n"
			if v.IsError {
				head = "[" + v.ToolName + " result, failed]\n"
			}
			b.WriteString(head + clip(v.Content) + "\n\n")
		case *session.BashExecutionMessage:
			if !v.ExcludeFromContext {
				b.WriteString("[user's shell command]\n" + clip(session.BashExecutionToText(v)) + "\n\n")
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// summarize makes the one model call of a compaction: no tools, the older
// messages as a transcript.
func summarize(ctx context.Context, p llm.Provider, model string, plan compactionPlan, instructions string) (string, error) {
	var b strings.Builder
	if plan.prev != nil {
		b.WriteString("<earlier-summary>\n" + plan.prev.Summary + "\n</earlier-summary>\n\n")
		b.WriteString("Fold the earlier summary into yours: the agent will not see it again.\n\n")
	}
	b.WriteString("<transcript>\n" + transcript(plan.msgs[plan.start:plan.cut]) + "\n</transcript>\n\n")
	if s := strings.TrimSpace(instructions); s != "" {
		b.WriteString("The user asks the summary to focus on: " + s + "\n\n")
	}
	b.WriteString("Write the summary now.")
	req := llm.Request{Model: model, System: summarySystemPrompt,
		Messages: []llm.Message{{Role: llm.RoleUser, Text: b.String()}}}
	if plan.window > 0 {
		// The summary must leave room for the kept turns; the reserve is
		// what the window keeps free for an answer anyway.
		req.MaxTokens = min(max(plan.setting.Reserve(plan.window)*8/10, 1024), config.DefaultReserveTokens)
	}
	out, _, err := p.Stream(ctx, req, func(llm.Event) {})
	if err != nil {
		return "", fmt.Errorf("compaction: summarize: %w", err)
	}
	summary := strings.TrimSpace(out.Text)
	if summary == "" {
		return "", errors.New("compaction: the model returned an empty summary")
	}
	return summary, nil
}

// Reasons and action of an automatic compaction (auto_compaction_start),
// the reference's words.
const (
	CompactReasonThreshold = "threshold" // the context neared the window before a model call
	CompactReasonOverflow  = "overflow"  // the provider refused the context as too long
	compactActionFull      = "context-full"
)

// Event types of an automatic compaction.
const (
	EventAutoCompactionStart = "auto_compaction_start"
	EventAutoCompactionEnd   = "auto_compaction_end"
)

// AutoCompaction is the payload of auto_compaction_start (Reason) and
// auto_compaction_end (Result or ErrorMessage, Aborted, WillRetry).
type AutoCompaction struct {
	Reason       string
	Result       *CompactionResult
	Aborted      bool
	WillRetry    bool
	ErrorMessage string
}

func (c *AutoCompaction) marshal(typ string) ([]byte, error) {
	if typ == EventAutoCompactionStart {
		return json.Marshal(struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
			Action string `json:"action"`
		}{typ, c.Reason, compactActionFull})
	}
	return json.Marshal(struct {
		Type         string            `json:"type"`
		Action       string            `json:"action"`
		Result       *CompactionResult `json:"result,omitempty"`
		Aborted      bool              `json:"aborted"`
		WillRetry    bool              `json:"willRetry"`
		ErrorMessage string            `json:"errorMessage,omitempty"`
	}{typ, compactActionFull, c.Result, c.Aborted, c.WillRetry, c.ErrorMessage})
}

// IsContextOverflow reports whether err is a provider refusing a request
// whose context is too long for the model.
func IsContextOverflow(err error) bool {
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.StatusCode != http.StatusBadRequest && ae.StatusCode != http.StatusRequestEntityTooLarge && ae.StatusCode >= 400 {
		return false
	}
	msg := strings.ToLower(ae.Message + " " + ae.Error())
	for _, s := range []string{"context length", "context_length", "prompt is too long", "maximum context",
		"context window", "too many tokens"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// requestOverhead estimates the tokens of a request besides its messages.
func requestOverhead(req llm.Request) int64 {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return estimateChars(n)
}

// autoCompact compacts before a model call (reason threshold, when the
// context exceeds the window minus the reserve) or after the provider
// refused one as too long (reason overflow), reporting it as
// auto_compaction_start and _end. It returns whether the context was
// compacted.
func (r *run) autoCompact(ctx context.Context, p llm.Provider, req llm.Request, reason string) bool {
	plan, err := r.a.plan(req.Model, requestOverhead(req))
	if reason == CompactReasonThreshold {
		if !plan.setting.Enabled || plan.window <= 0 ||
			plan.before <= int64(plan.window-plan.setting.Reserve(plan.window)) {
			return false
		}
	}
	if err != nil || r.a.IsCompacting() {
		return false // nothing older to summarize, or a compaction already runs
	}
	r.send(Event{Type: EventAutoCompactionStart, Compaction: &AutoCompaction{Reason: reason}})
	res, err := r.a.runCompaction(ctx, p, req.Model, "", plan)
	var save *SaveError
	if errors.As(err, &save) {
		r.note(err)
		err = nil
	}
	end := &AutoCompaction{Result: res, Aborted: ctx.Err() != nil, WillRetry: err == nil && reason == CompactReasonOverflow}
	if err != nil && !end.Aborted {
		end.ErrorMessage = err.Error()
	}
	r.send(Event{Type: EventAutoCompactionEnd, Compaction: end})
	return err == nil
}

// ContextUsage is how full the model's context is, in the reference's
// shape (get_state, get_session_stats).
type ContextUsage struct {
	Tokens        int64   `json:"tokens"`        // estimated (or last counted) tokens of the context
	ContextWindow int     `json:"contextWindow"` // 0 when the model's window is not known
	Percent       float64 `json:"percent"`       // Tokens of ContextWindow, in percent (0 when unknown)
}

// ContextUsage measures the context the next request to model would send:
// the conversation as the model sees it plus the system prompt and the
// tools of reg (may be nil), counted as auto compaction counts it.
func (a *AgentSession) ContextUsage(model string, reg *tools.Registry) ContextUsage {
	req := llm.Request{Model: model}
	if reg != nil {
		req.System, req.Tools = SystemPrompt(a.Cwd(), reg.Names()), reg.Specs()
	}
	u := ContextUsage{Tokens: contextTokens(a.Messages(), requestOverhead(req)),
		ContextWindow: a.compactionSettings().Window(model)}
	if u.ContextWindow > 0 {
		u.Percent = float64(u.Tokens) / float64(u.ContextWindow) * 100
	}
	return u
}
