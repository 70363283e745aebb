package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"agentsh/internal/bash"
	"agentsh/internal/llm"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// MaxTurns bounds the model calls of one Prompt; a model still calling
// tools after that many turns ends the prompt with ErrMaxTurns.
const MaxTurns = 50

// ErrMaxTurns ends a prompt whose model kept calling tools for MaxTurns turns.
var ErrMaxTurns = fmt.Errorf("agent stopped after %d turns: the model kept calling tools", MaxTurns)

// CancelledToolText is the result of a tool call that was cancelled before
// it ran (the prompt was aborted).
const CancelledToolText = "Tool call cancelled"

// AbortedToolText is appended to the output of a tool cancelled while it ran.
const AbortedToolText = "Command aborted"

// Prompt runs the agent loop for one user message: it appends the queued
// bang results and the message, then calls the model with the conversation
// and reg's tools, runs each tool call the answer asks for in order, sends
// the results back, and repeats until the model answers without tool calls.
// Every step is reported to emit (may be nil).
//
// Cancelling ctx aborts the stream or the running tool; every tool call of
// the last assistant message still gets a result (cancelled ones say so), so
// the history stays valid for the next request, and ctx.Err() is returned.
// A model error is returned as it came; more than MaxTurns turns give
// ErrMaxTurns. A failure to persist a message does not stop the loop (the
// message is kept in memory); the first one is returned at the end when
// nothing else failed.
func (a *AgentSession) Prompt(ctx context.Context, text string, p llm.Provider, model string, reg *tools.Registry, emit func(Event)) error {
	user := &session.UserMessage{Text: text, Timestamp: a.now().UnixMilli(), Attribution: "user"}
	return a.runAgent(ctx, user, nil, p, model, reg, emit)
}

// runAgent is one run of the agent loop: prompt (nil for none) joins the
// conversation at once, pending (queued input, steer.go) at the first step.
func (a *AgentSession) runAgent(ctx context.Context, prompt session.Message, pending []session.Message, p llm.Provider, model string, reg *tools.Registry, emit func(Event)) error {
	if ms := a.models.Load(); p == nil && (ms == nil || ms.Spec() == "") {
		return errors.New("no model configured")
	}
	var emitMu sync.Mutex
	send := func(e Event) {
		if emit == nil {
			return
		}
		emitMu.Lock()
		defer emitMu.Unlock()
		emit(e)
	}
	r := &run{a: a, send: send}
	r.note(a.FlushQueued())

	a.SetStreaming(true)
	streaming := true
	defer func() {
		if streaming {
			a.SetStreaming(false)
		}
	}()

	send(Event{Type: EventAgentStart})
	if prompt != nil {
		r.append(prompt)
		r.prompt = prompt
	}
	r.pending = pending
	err := r.loop(ctx, p, model, reg)
	if err == nil {
		err = r.persistErr
	}
	end := Event{Type: EventAgentEnd, Messages: r.added, Aborted: ctx.Err() != nil}
	if err != nil {
		end.Error = err.Error()
	}
	// The run is over before agent_end says so: the next run, which may
	// start on agent_end, streams on its own.
	a.SetStreaming(false)
	streaming = false
	send(end)
	return err
}

// run is the state of one Prompt.
type run struct {
	a          *AgentSession
	send       func(Event)
	added      []session.Message
	persistErr error
	prompt     session.Message   // the user message that started the run (nil: queued input did)
	pending    []session.Message // queued input that joins at the next step (steer.go)
	overflowed bool              // the context was compacted once after the provider refused it as too long
	// mayRetry, while set, says whether a failed call will be tried again
	// (retry.go); stream then sets retrying and leaves the answer out of
	// the conversation.
	mayRetry func(*session.AssistantMessage, error) bool
	retrying bool
}

func (r *run) note(err error) {
	if err != nil && r.persistErr == nil {
		r.persistErr = err
	}
}

func (r *run) append(m session.Message) {
	r.note(r.a.Append(m))
	r.added = append(r.added, m)
}

// sendMessage reports a whole message (a user message, a tool result) as
// the reference does: message_start then message_end.
func (r *run) sendMessage(m session.Message) {
	r.send(Event{Type: EventMessageStart, Message: m})
	r.send(Event{Type: EventMessageEnd, Message: m})
}

func (r *run) loop(ctx context.Context, p llm.Provider, model string, reg *tools.Registry) error {
	// Steering sent before the run began joins at its first step.
	r.pending = append(r.pending, r.a.dequeueSteering()...)
	since := 0 // turns since the user last spoke (a follow-up starts over)
	for turn := 1; ; turn++ {
		if since++; since > MaxTurns {
			return ErrMaxTurns
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r.send(Event{Type: EventTurnStart, Turn: turn})
		if turn == 1 && r.prompt != nil {
			r.sendMessage(r.prompt)
		}
		// Queued input joins the conversation here, between the last
		// tool results and the next model call, as the reference does.
		for _, m := range r.pending {
			r.append(m)
			r.sendMessage(m)
		}
		r.pending = nil
		// Jobs that ended meanwhile are told as a user-role note after the
		// tool results (or the prompt): it cannot split a call from its
		// result, every provider accepts it there, and it stays in the
		// history like a bang result does.
		if n := r.a.JobNotice(); n != "" {
			m := &session.UserMessage{Text: n, Timestamp: r.a.now().UnixMilli(), Attribution: "agent"}
			r.append(m)
			r.sendMessage(m)
		}
		names := reg.Names()
		req := llm.Request{
			Model:    model,
			System:   SystemPrompt(r.a.Cwd(), names),
			Messages: toLLM(r.a.ContextMessages()),
			Tools:    reg.Specs(),
		}
		// The model and thinking level are read at every call (models.go),
		// so a switch applies from the next one, a retry's included.
		pick := func() (llm.Provider, llm.Request) {
			if ms := r.a.models.Load(); ms != nil {
				if cp, cm, level := ms.Current(ctx); cp != nil {
					req.Model, req.Thinking = cm, level
					return cp, req
				}
			}
			return p, req
		}
		if cp, creq := pick(); r.autoCompact(ctx, cp, creq, CompactReasonThreshold) {
			req.Messages = toLLM(r.a.ContextMessages())
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// While the model thinks, the bash tool starts the shell its next
		// call would wait for (the rc snapshot, the guardian, the
		// sandbox's view): nothing of it delays the request.
		go reg.Prestart()
		msg, streamErr := r.streamRetry(ctx, pick)
		results := r.runTools(ctx, reg, msg, streamErr != nil)
		r.send(Event{Type: EventTurnEnd, Turn: turn, Message: msg, ToolResults: results})
		if streamErr != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			// A context the provider finds too long is compacted and
			// the call made again, once per prompt.
			if !r.overflowed && IsContextOverflow(streamErr) {
				r.overflowed = true
				if cp, creq := pick(); r.autoCompact(ctx, cp, creq, CompactReasonOverflow) {
					continue
				}
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
			}
			return streamErr
		}
		if err := ctx.Err(); err != nil {
			if len(msg.ToolCalls) == 0 {
				return nil // the answer was whole
			}
			return err
		}
		r.pending = r.a.dequeueSteering()
		if len(msg.ToolCalls) == 0 && len(r.pending) == 0 {
			// The agent would stop: follow-ups go on with the same run.
			if r.pending = r.a.dequeueFollowUp(); len(r.pending) == 0 {
				return nil
			}
			since = 0
		}
	}
}

// stream makes one model call, reporting message_start/update/end, and
// records the answer (the partial one on failure, when it has anything)
// before message_end, so Messages() already holds it then.
func (r *run) stream(ctx context.Context, p llm.Provider, req llm.Request) (*session.AssistantMessage, error) {
	partial := &session.AssistantMessage{Timestamp: r.a.now().UnixMilli(), API: APIName(p), Provider: p.Name(), Model: req.Model}
	var usage *llm.Usage
	start := *partial
	r.send(Event{Type: EventMessageStart, Message: &start})
	// The reference numbers the content blocks of the answer as they come
	// (contentIndex) and brackets text and thinking with *_start/*_end.
	var (
		blocks   int  // blocks started so far
		open     = "" // "text" or "thinking" while such a block is open
		openIdx  int
		text     strings.Builder
		thinking strings.Builder
		callIdx  = map[string]int{}
	)
	// pending are the tool calls whose arguments are still streaming:
	// the snapshot holds them (with {} arguments) from their start, as the
	// reference's partial message does.
	var pending []session.ToolCall
	snap := func() *session.AssistantMessage {
		m := *partial
		m.Text = text.String()
		m.TextOpen = open == session.BlockText
		m.StopReason = session.StopReasonStop // the reference's word until the answer ends
		m.Thinking = append([]session.ThinkingBlock(nil), partial.Thinking...)
		if open == session.BlockThinking {
			m.Thinking = append(m.Thinking, session.ThinkingBlock{Thinking: thinking.String()})
		}
		m.ToolCalls = append(append([]session.ToolCall(nil), partial.ToolCalls...), pending...)
		return &m
	}
	update := func(e Event) {
		e.Type = EventMessageUpdate
		e.Message = snap()
		r.send(e)
	}
	closeOpen := func() {
		switch open {
		case session.BlockText:
			open = ""
			update(Event{UpdateKind: UpdateTextEnd, ContentIndex: openIdx, Content: text.String()})
		case session.BlockThinking:
			// A provider that ends its blocks sends ThinkingEnd itself; this
			// closes one that it left open (no signature).
			t := session.ThinkingBlock{Thinking: thinking.String()}
			open = ""
			partial.Thinking = append(partial.Thinking, t)
			update(Event{UpdateKind: UpdateThinkingEnd, ContentIndex: openIdx, Content: t.Thinking})
		}
	}
	begin := func(kind, startKind string) {
		if open == kind {
			return
		}
		closeOpen()
		open, openIdx = kind, blocks
		blocks++
		if kind == session.BlockThinking {
			thinking.Reset()
		}
		update(Event{UpdateKind: startKind, ContentIndex: openIdx})
	}
	// A call that goes without a byte of its answer for the request
	// timeout fails as timed out (a hung server), and is tried again.
	watch := watchRequest(ctx, r.a.RequestTimeout())
	out, stop, err := p.Stream(watch.ctx, req, func(ev llm.Event) {
		watch.alive()
		switch ev.Kind {
		case llm.TextDelta:
			begin(session.BlockText, UpdateTextStart)
			text.WriteString(ev.Text)
			update(Event{UpdateKind: UpdateTextDelta, ContentIndex: openIdx, Delta: ev.Text})
		case llm.ThinkingDelta:
			begin(session.BlockThinking, UpdateThinkingStart)
			thinking.WriteString(ev.Text)
			update(Event{UpdateKind: UpdateThinkingDelta, ContentIndex: openIdx, Delta: ev.Text})
		case llm.ThinkingEnd:
			begin(session.BlockThinking, UpdateThinkingStart)
			t := session.ThinkingBlock{Thinking: thinking.String()}
			if ev.Thinking != nil {
				t = fromLLMThinking(*ev.Thinking)
			}
			idx := openIdx
			open = ""
			partial.Thinking = append(partial.Thinking, t)
			update(Event{UpdateKind: UpdateThinkingEnd, ContentIndex: idx, Content: t.Thinking})
		case llm.ToolCallStart:
			closeOpen()
			callIdx[ev.ToolCall.ID] = blocks
			blocks++
			pending = append(pending, session.ToolCall{ID: ev.ToolCall.ID, Name: ev.ToolCall.Name, Arguments: json.RawMessage("{}")})
			update(Event{UpdateKind: UpdateToolCallStart, ContentIndex: callIdx[ev.ToolCall.ID],
				ToolCallID: ev.ToolCall.ID, ToolName: ev.ToolCall.Name})
		case llm.ToolCallDelta:
			update(Event{UpdateKind: UpdateToolCallDelta, ContentIndex: callIdx[ev.ToolCall.ID], Delta: ev.Text,
				ToolCallID: ev.ToolCall.ID, ToolName: ev.ToolCall.Name})
		case llm.ToolCallEnd:
			c := fromLLMCall(*ev.ToolCall)
			partial.ToolCalls = append(partial.ToolCalls, c)
			for i := range pending {
				if pending[i].ID == c.ID {
					pending = append(pending[:i], pending[i+1:]...)
					break
				}
			}
			update(Event{UpdateKind: UpdateToolCallEnd, ContentIndex: callIdx[c.ID], ToolCall: &c,
				ToolCallID: c.ID, ToolName: c.Name})
		case llm.Done:
			usage = ev.Usage
			closeOpen()
		case llm.Error:
			closeOpen()
		}
	})
	if e, timedOut := watch.stop(ctx, p.Name(), err); timedOut {
		err, stop = e, llm.StopError
	}
	msg := &session.AssistantMessage{Text: out.Text, Timestamp: partial.Timestamp, API: partial.API,
		Provider: partial.Provider, Model: partial.Model, StopReason: session.WireStopReason(stop)}
	for _, t := range out.Thinking {
		msg.Thinking = append(msg.Thinking, fromLLMThinking(t))
	}
	if len(msg.Thinking) == 0 {
		msg.Thinking = partial.Thinking
	}
	for _, c := range out.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, fromLLMCall(c))
	}
	if usage != nil {
		msg.Usage = WireUsage(usage)
	} else {
		msg.Usage = &session.Usage{}
	}
	if err != nil && stop != llm.StopAborted {
		msg.ErrorMessage = err.Error()
	} else if stop == llm.StopRefusal {
		msg.ErrorMessage = "The provider refused to answer."
	}
	r.retrying = err != nil && r.mayRetry != nil && r.mayRetry(msg, err)
	if !r.retrying && (err == nil || msg.Text != "" || len(msg.ToolCalls) > 0 || len(msg.Thinking) > 0) {
		r.append(msg)
	}
	r.send(Event{Type: EventMessageEnd, Message: msg, StopReason: stop, Usage: usage})
	return msg, err
}

// APIName is the reference's name of p's wire protocol
// ("openai-completions" when the provider does not say).
func APIName(p llm.Provider) string {
	if n := llm.APIName(p); n != "" {
		return n
	}
	return llm.APIOpenAICompletions
}

// WireUsage converts an llm usage report to the reference's shape.
func WireUsage(u *llm.Usage) *session.Usage {
	if u == nil {
		return nil
	}
	return &session.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
		CacheWrite: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens,
		TotalTokens: u.TotalTokens(),
		Cost:        session.UsageCost{Total: u.Cost}}
}

func fromLLMThinking(t llm.Thinking) session.ThinkingBlock {
	return session.ThinkingBlock{Thinking: t.Text, Signature: t.Signature, Redacted: t.Redacted, Data: t.Data}
}

// runTools runs msg's tool calls in order and records a result for each.
// Once the prompt is cancelled (or skip is set: the stream failed) the
// remaining calls are not run and get a cancelled result.
func (r *run) runTools(ctx context.Context, reg *tools.Registry, msg *session.AssistantMessage, skip bool) []session.Message {
	var results []session.Message
	for _, c := range msg.ToolCalls {
		r.send(Event{Type: EventToolExecutionStart, ToolCallID: c.ID, ToolName: c.Name, Args: c.Arguments})
		var res tools.Result
		switch t, ok := reg.Get(c.Name); {
		case skip || ctx.Err() != nil:
			res = tools.Result{Content: CancelledToolText, IsError: true, Aborted: true}
		case !ok:
			res = tools.Result{Content: fmt.Sprintf("Tool %s not found", c.Name), IsError: true}
		default:
			res = t.Execute(ctx, c.Arguments, func(partial string) {
				r.send(Event{Type: EventToolExecutionUpdate, ToolCallID: c.ID, ToolName: c.Name,
					Args: c.Arguments, PartialResult: partial})
			})
			if res.Aborted || ctx.Err() != nil {
				res.Aborted, res.IsError = true, true
				if !strings.HasSuffix(res.Content, AbortedToolText) && !strings.HasSuffix(res.Content, CancelledToolText) {
					if strings.TrimSpace(res.Content) == "" {
						res.Content = AbortedToolText
					} else {
						res.Content += "\n\n" + AbortedToolText
					}
				}
			}
		}
		tr := &session.ToolResultMessage{ToolCallID: c.ID, ToolName: c.Name, Content: res.Content,
			IsError: res.IsError, Details: res.Details, Timestamp: r.a.now().UnixMilli()}
		r.append(tr)
		r.send(Event{Type: EventToolExecutionEnd, ToolCallID: c.ID, ToolName: c.Name, Result: &res, IsError: res.IsError})
		r.sendMessage(tr)
		results = append(results, tr)
	}
	return results
}

func fromLLMCall(c llm.ToolCall) session.ToolCall {
	return session.ToolCall{ID: c.ID, Name: c.Name, Arguments: append(json.RawMessage(nil), c.Arguments...)}
}

// toLLM converts the model's view of the conversation (ContextMessages) to
// provider messages.
func toLLM(ms []session.Message) []llm.Message {
	out := make([]llm.Message, 0, len(ms))
	for _, m := range ms {
		switch v := m.(type) {
		case *session.UserMessage:
			out = append(out, llm.Message{Role: llm.RoleUser, Text: v.Text})
		case *session.AssistantMessage:
			lm := llm.Message{Role: llm.RoleAssistant, Text: v.Text}
			for _, t := range v.Thinking {
				lm.Thinking = append(lm.Thinking, llm.Thinking{Text: t.Thinking, Signature: t.Signature, Redacted: t.Redacted, Data: t.Data})
			}
			for _, c := range v.ToolCalls {
				lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			}
			out = append(out, lm)
		case *session.ToolResultMessage:
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: v.ToolCallID, Text: v.Content, IsError: v.IsError})
		case *session.BashExecutionMessage: // ContextMessages already converted these; be safe
			if !v.ExcludeFromContext {
				out = append(out, llm.Message{Role: llm.RoleUser, Text: session.BashExecutionToText(v)})
			}
		}
	}
	return out
}

// ToolContext is the bash tool's context for this session: its cwd and
// artifact folder (none without a store), and the settings: as given, or,
// once the session follows its settings files (FollowSettings), as the
// files are now (with SettingsError when they no longer load). ToolNames is
// left empty: the tools registry fills it in at call time.
func (a *AgentSession) ToolContext(settings bash.ToolSettings) bash.ToolContext {
	var settingsErr error
	if l := a.live.Load(); l != nil {
		settings, settingsErr = l.ToolSettings()
	}
	// The sandbox is the session's, read at start: never the files' now.
	settings.Shell.Sandbox = a.SandboxPolicy()
	// The model's shells get its own layer of the state on top of the
	// user's; nothing of it reaches a shell outside the sandbox.
	tc := bash.ToolContext{Cwd: a.Cwd(), Settings: settings, SettingsError: settingsErr, State: a.state,
		View: bash.ModelView, BackgroundNow: a.BackgroundNow()}
	if a.artifacts != nil {
		tc.Artifacts = a.artifacts
	}
	return tc
}
