package tui

// A resumed session (agentsh -c, -r ID) shows its conversation again: the
// transcript is rebuilt from the saved messages, each block as it looked
// when the turn ended (tool calls and ! commands collapsed).

import (
	"strconv"
	"strings"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/render"
	"agentsh/internal/session"
)

// resumedNotice is the line under a resumed transcript.
func resumedNotice(id string, n int) string {
	noun := " messages"
	if n == 1 {
		noun = " message"
	}
	return "resumed " + id + " · " + strconv.Itoa(n) + noun
}

// resumeItems turns a session's messages into transcript items: user
// prompts, answers, each tool call with its result, the user's ! blocks and
// the notes of jobs that ended, in the order they happened. cwd is the
// session's directory, against which a bash call's own cwd is shown.
func resumeItems(msgs []session.Message, cwd string) []item {
	results := map[string]*session.ToolResultMessage{}
	for _, m := range msgs {
		if r, ok := m.(*session.ToolResultMessage); ok {
			results[r.ToolCallID] = r
		}
	}
	var out []item
	for _, m := range msgs {
		switch v := m.(type) {
		case *session.UserMessage:
			if notes, ok := jobNotes(v.Text); ok {
				for _, n := range notes {
					out = append(out, &textItem{kind: kindInfo, text: n})
				}
				continue
			}
			out = append(out, &textItem{kind: kindUser, text: v.Text})
		case *session.AssistantMessage:
			if th := thinkingText(v.Thinking); th != "" {
				out = append(out, &thinkingItem{text: th})
			}
			if text := strings.TrimSpace(v.Text); text != "" {
				out = append(out, &textItem{kind: kindAssistant, text: text})
			}
			for _, c := range v.ToolCalls {
				out = append(out, resumedToolItem(c, results[c.ID], cwd))
			}
		case *session.CompactionSummaryMessage:
			// The summary stands first for what the session file keeps
			// before it; only the kept turns are shown again.
			out = append(out, &textItem{kind: kindInfo, text: resumedCompactedText(v.TokensBefore, v.TokensAfter)})
		case *session.BashExecutionMessage:
			b := render.NewBang(v.Command, v.ExcludeFromContext)
			var trunc *bash.TruncationMeta
			if v.Meta != nil {
				trunc = v.Meta.Truncation
			}
			b.Finish(v.Output, v.ExitCode, v.Cancelled, trunc)
			out = append(out, &bangItem{bang: b})
		}
	}
	return out
}

// resumedToolItem is a finished tool call; res is nil when the session
// ended before its result was saved.
func resumedToolItem(c session.ToolCall, res *session.ToolResultMessage, cwd string) *toolItem {
	var r *render.Result
	if res != nil {
		r = &render.Result{Content: res.Content, Details: res.Details, IsError: res.IsError}
	}
	v := render.NewToolView(render.Call{Name: c.Name, Args: c.Arguments}, r, render.ToolOptions{Cwd: cwd, Plain: true})
	b := render.NewToolBlock(&v, false)
	return &toolItem{id: c.ID, call: b.Call, file: b.File}
}

// jobNotes reads a saved note of ended jobs (session.JobNotice: per job a
// "[Job 1 exited with code 0: make]" line and its output's tail) back into
// the one-line notices the live transcript showed for them.
func jobNotes(text string) ([]string, bool) {
	if !strings.HasPrefix(text, "[Job ") {
		return nil, false
	}
	var notes []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "[Job ") && strings.HasSuffix(l, "]") {
			notes = append(notes, strings.TrimSuffix(strings.TrimPrefix(l, "["), "]"))
		}
	}
	return notes, len(notes) > 0
}

// resume fills the transcript of a session that already has messages and
// says so; a new session keeps the welcome alone.
func (m *model) resume() {
	if len(m.cfg.Session.Messages()) > 0 {
		m.redraw(m.cfg.Session)
	}
}

// redraw adds s's saved conversation to the transcript, followed by the
// resumed notice.
func (m *model) redraw(s *agent.AgentSession) {
	msgs := s.Messages()
	for _, it := range resumeItems(msgs, s.Cwd()) {
		m.tr.add(it)
	}
	m.tr.notice(kindInfo, resumedNotice(s.ID(), len(msgs)))
}
