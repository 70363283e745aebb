package tui

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/export"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// toolTurn is a turn with one call of each kind and its results: a bash
// call, a read, an edit, an unknown tool, a failed command, a command
// cancelled while it ran and one cancelled before it ran.
func toolTurn() (*session.AssistantMessage, []*session.ToolResultMessage) {
	calls := []session.ToolCall{
		{ID: "b", Name: "bash", Arguments: json.RawMessage(`{"command":"ls","cwd":"/w/sub"}`)},
		{ID: "r", Name: tools.ReadName, Arguments: json.RawMessage(`{"path":"notes.txt"}`)},
		{ID: "e", Name: tools.EditName, Arguments: json.RawMessage(`{"path":"a.go","oldText":"x","newText":"y"}`)},
		{ID: "u", Name: "frobnicate", Arguments: json.RawMessage(`{"level":3}`)},
		{ID: "f", Name: "bash", Arguments: json.RawMessage(`{"command":"exit 3"}`)},
		{ID: "c", Name: "bash", Arguments: json.RawMessage(`{"command":"sleep 9"}`)},
		{ID: "n", Name: "bash", Arguments: json.RawMessage(`{"command":"rm -rf build"}`)},
	}
	results := []*session.ToolResultMessage{
		{ToolCallID: "b", ToolName: "bash", Content: "a.go\nb.go\n", Details: json.RawMessage(`{"exitCode":0}`)},
		{ToolCallID: "r", ToolName: tools.ReadName, Content: "     1\talpha\n",
			Details: json.RawMessage(`{"path":"/w/notes.txt","startLine":1,"endLine":1,"totalLines":1}`)},
		{ToolCallID: "e", ToolName: tools.EditName, Content: "Edited a.go",
			Details: json.RawMessage(`{"path":"/w/a.go","replacements":1,"diff":"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"}`)},
		{ToolCallID: "u", ToolName: "frobnicate", Content: "Tool frobnicate not found", IsError: true},
		{ToolCallID: "f", ToolName: "bash", Content: "oops\n\nCommand exited with code 3", IsError: true,
			Details: json.RawMessage(`{"exitCode":3}`)},
		{ToolCallID: "c", ToolName: "bash", Content: "[Command cancelled]\nhalf\n\n" + agent.AbortedToolText, IsError: true,
			Details: json.RawMessage(`{"cancelled":true}`)},
		{ToolCallID: "n", ToolName: "bash", Content: agent.CancelledToolText, IsError: true},
	}
	return &session.AssistantMessage{Text: "Working.", ToolCalls: calls}, results
}

// The same calls and results show the same blocks live and resumed, and
// the exported page shows each with the same tool, command and failure.
func TestToolBlocksSameLiveResumedExported(t *testing.T) {
	am, results := toolTurn()
	cwd := func() string { return "/w" }

	// Live: the events of the turn, as the agent loop sends them.
	tr := newTranscript()
	tr.apply(agent.Event{Type: agent.EventMessageStart, Message: am}, cwd)
	tr.apply(agent.Event{Type: agent.EventMessageEnd, Message: am}, cwd)
	for i, c := range am.ToolCalls {
		tr.apply(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: c.ID, ToolName: c.Name, Args: c.Arguments}, cwd)
		if c.Name == "bash" {
			tr.apply(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: c.ID, ToolName: c.Name, PartialResult: "half\n"}, cwd)
		}
		r := results[i]
		tr.apply(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: c.ID, ToolName: c.Name,
			Result: &tools.Result{Content: r.Content, IsError: r.IsError, Details: r.Details}}, cwd)
	}
	tr.endTurn()

	msgs := []session.Message{am}
	for _, r := range results {
		msgs = append(msgs, r)
	}
	resumed := resumeItems(msgs, "/w")

	var page bytes.Buffer
	if err := export.HTML(&page, export.ExportInput{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(page.String(), "<div class=\"tool\">")[1:]

	st := newStyles(true)
	liveViews, resumedViews := views(tr.items, 90, st), views(resumed, 90, st)
	if len(liveViews) != len(resumedViews) || len(docs) != len(am.ToolCalls) {
		t.Fatalf("%d items live, %d resumed, %d tools in the page; want %d calls", len(liveViews), len(resumedViews), len(docs), len(am.ToolCalls))
	}
	for i := range liveViews {
		if liveViews[i] != resumedViews[i] {
			t.Errorf("item %d differs:\n--- live ---\n%s\n--- resumed ---\n%s", i, liveViews[i], resumedViews[i])
		}
	}
	calls := liveViews[1:] // after the answer
	for i, c := range am.ToolCalls {
		header, _, _ := strings.Cut(ansi.Strip(calls[i]), "\n")
		doc := docs[i]
		if !strings.Contains(doc, `<span class="tool-name">`+c.Name+`</span>`) {
			t.Errorf("call %s: the page does not name %s:\n%s", c.ID, c.Name, doc)
		}
		var args struct{ Command string }
		_ = json.Unmarshal(c.Arguments, &args)
		if c.Name == "bash" && (!strings.Contains(doc, "<pre class=\"cmd\">$ "+html.EscapeString(args.Command)+"</pre>") ||
			!strings.HasSuffix(header, " "+args.Command)) {
			t.Errorf("call %s: the page and the block show different commands: %q\n%s", c.ID, header, doc)
		}
		failed := strings.Contains(doc, `class="result error"`)
		if failed != strings.HasPrefix(header, "✗") || failed != results[i].IsError {
			t.Errorf("call %s: page failed %v, block header %q, result error %v", c.ID, failed, header, results[i].IsError)
		}
	}
}
