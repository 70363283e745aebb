// Package export writes a session's transcript as one self-contained HTML
// file: inline CSS, no script, and a Content-Security-Policy that forbids
// every request, so opening it fetches nothing and runs nothing. Every
// piece of text from the session (prompts, answers, commands, output) is
// stripped of terminal escapes and HTML-escaped; assistant text is rendered
// from Markdown with raw HTML left out.
package export

import (
	_ "embed"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/bash"
	"agentsh/internal/render"
	"agentsh/internal/session"
)

// ExportInput is what a transcript shows: the session's identity and its
// messages in order.
type ExportInput struct {
	SessionID string
	Cwd       string
	// Start is when the session began; zero = the first message's time.
	Start    time.Time
	Messages []session.Message
}

//go:embed style.css
var styleCSS string

// Output longer than this many lines (or bytes) is collapsed to its first
// visibleLines lines with the rest behind a <details>.
const (
	collapseLines = 20
	collapseBytes = 4000
	visibleLines  = 10
	visibleBytes  = 2000
)

// HTML writes the transcript of s to w.
func HTML(w io.Writer, s ExportInput) error {
	var b strings.Builder
	writeDoc(&b, s)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

func writeDoc(b *strings.Builder, s ExportInput) {
	title := "agentsh session"
	if s.SessionID != "" {
		title += " " + s.SessionID
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n")
	b.WriteString("<title>" + esc(title) + "</title>\n<style>\n" + styleCSS + "</style>\n</head>\n<body>\n")
	writeHeader(b, s)
	b.WriteString("<main>\n")
	results := map[string]*session.ToolResultMessage{}
	for _, m := range s.Messages {
		if r, ok := m.(*session.ToolResultMessage); ok && r.ToolCallID != "" {
			results[r.ToolCallID] = r
		}
	}
	shown := map[*session.ToolResultMessage]bool{}
	for _, m := range s.Messages {
		switch v := m.(type) {
		case *session.UserMessage:
			writeUser(b, v)
		case *session.AssistantMessage:
			writeAssistant(b, v, results, shown)
		case *session.ToolResultMessage:
			if !shown[v] {
				// A result whose call is not in the transcript.
				b.WriteString("<section class=\"msg tool-only\">\n")
				writeMeta(b, "Tool result", v.ToolName, v.Timestamp)
				rv := render.NewResultView(resultOf(v), render.ToolOptions{})
				writeResult(b, &rv)
				b.WriteString("</section>\n")
			}
		case *session.BashExecutionMessage:
			writeBang(b, v)
		case *session.CompactionSummaryMessage:
			writeCompaction(b, v)
		}
	}
	b.WriteString("</main>\n</body>\n</html>\n")
}

// writeCompaction marks where the conversation was compacted: what came
// before was summarized for the model (the summary, collapsed), what
// follows it went on from there.
func writeCompaction(b *strings.Builder, m *session.CompactionSummaryMessage) {
	b.WriteString("<section class=\"msg compaction\">\n")
	fmt.Fprintf(b, "<p class=\"meta\">Compacted: the turns above were summarized for the model (%s → %s tokens)</p>\n",
		thousands(m.TokensBefore), thousands(m.TokensAfter))
	b.WriteString("<details><summary>Summary</summary>\n<pre>" + esc(m.Summary) + "</pre>\n</details>\n</section>\n")
}

func writeHeader(b *strings.Builder, s ExportInput) {
	var models []string
	seen := map[string]bool{}
	var total session.Usage
	var prompts, answers, calls, bangs int
	start := s.Start
	for _, m := range s.Messages {
		if start.IsZero() {
			if ts := timestampOf(m); ts != 0 {
				start = time.UnixMilli(ts)
			}
		}
		switch v := m.(type) {
		case *session.UserMessage:
			prompts++
		case *session.AssistantMessage:
			answers++
			calls += len(v.ToolCalls)
			if name := modelName(v); name != "" && !seen[name] {
				seen[name] = true
				models = append(models, name)
			}
			if u := v.Usage; u != nil {
				total.Input += u.Input
				total.Output += u.Output
				total.CacheRead += u.CacheRead
				total.CacheWrite += u.CacheWrite
				total.TotalTokens += u.TotalTokens
				total.Cost.Total += u.Cost.Total
			}
		case *session.BashExecutionMessage:
			bangs++
		}
	}
	b.WriteString("<header class=\"session\">\n<h1>agentsh session</h1>\n<dl>\n")
	row := func(k, v string) { b.WriteString("<dt>" + k + "</dt><dd>" + v + "</dd>\n") }
	if s.SessionID != "" {
		row("Session", "<code>"+esc(s.SessionID)+"</code>")
	}
	if s.Cwd != "" {
		row("Directory", "<code>"+esc(s.Cwd)+"</code>")
	}
	if !start.IsZero() {
		row("Started", "<time datetime=\""+start.UTC().Format(time.RFC3339)+"\">"+start.UTC().Format("2006-01-02 15:04:05")+" UTC</time>")
	}
	if len(models) > 0 {
		es := make([]string, len(models))
		for i, m := range models {
			es[i] = "<code>" + esc(m) + "</code>"
		}
		row("Models", strings.Join(es, ", "))
	}
	row("Tokens", fmt.Sprintf("%s in · %s out · %s cache read · %s cache write · %s total",
		thousands(total.Input), thousands(total.Output), thousands(total.CacheRead),
		thousands(total.CacheWrite), thousands(total.TotalTokens)))
	if total.Cost.Total > 0 {
		row("Cost", fmt.Sprintf("$%.4f", total.Cost.Total))
	}
	row("Messages", strings.Join([]string{count(prompts, "prompt"), count(answers, "answer"),
		count(calls, "tool call"), count(bangs, "shell command")}, " · "))
	b.WriteString("</dl>\n</header>\n")
}

func timestampOf(m session.Message) int64 {
	switch v := m.(type) {
	case *session.UserMessage:
		return v.Timestamp
	case *session.AssistantMessage:
		return v.Timestamp
	case *session.ToolResultMessage:
		return v.Timestamp
	case *session.BashExecutionMessage:
		return v.Timestamp
	}
	return 0
}

func modelName(m *session.AssistantMessage) string {
	switch {
	case m.Model == "":
		return ""
	case m.Provider == "":
		return m.Model
	}
	return m.Provider + "/" + m.Model
}

// writeMeta writes a message's first line: who, a detail, the time.
func writeMeta(b *strings.Builder, role, detail string, ts int64) {
	b.WriteString("<div class=\"meta\"><span class=\"role\">" + role + "</span>")
	if detail != "" {
		b.WriteString(" <span class=\"detail\">" + esc(detail) + "</span>")
	}
	if ts != 0 {
		t := time.UnixMilli(ts).UTC()
		b.WriteString(" <time datetime=\"" + t.Format(time.RFC3339) + "\">" + t.Format("15:04:05") + "</time>")
	}
	b.WriteString("</div>\n")
}

func writeUser(b *strings.Builder, m *session.UserMessage) {
	b.WriteString("<section class=\"msg user\">\n")
	role := "You"
	if m.Steering {
		role = "You (while it worked)"
	}
	writeMeta(b, role, "", m.Timestamp)
	b.WriteString("<div class=\"plain\">" + esc(clean(m.Text)) + "</div>\n</section>\n")
}

func writeAssistant(b *strings.Builder, m *session.AssistantMessage, results map[string]*session.ToolResultMessage, shown map[*session.ToolResultMessage]bool) {
	cls := "msg assistant"
	if m.StopReason == session.StopReasonError || m.ErrorMessage != "" {
		cls += " error"
	}
	b.WriteString("<section class=\"" + cls + "\">\n")
	writeMeta(b, "Assistant", modelName(m), m.Timestamp)
	for _, t := range m.Thinking {
		if t.Redacted {
			b.WriteString("<details class=\"thinking\"><summary>Thinking (redacted by the provider)</summary></details>\n")
			continue
		}
		if strings.TrimSpace(t.Thinking) == "" {
			continue
		}
		b.WriteString("<details class=\"thinking\"><summary>Thinking</summary>\n<div class=\"plain\">" + esc(clean(t.Thinking)) + "</div>\n</details>\n")
	}
	if strings.TrimSpace(m.Text) != "" {
		b.WriteString("<div class=\"md\">\n" + renderMarkdown(clean(m.Text)) + "</div>\n")
	}
	for _, c := range m.ToolCalls {
		var res *render.Result
		if r := results[c.ID]; r != nil && !shown[r] {
			shown[r] = true
			rr := resultOf(r)
			res = &rr
		}
		v := render.NewToolView(render.Call{Name: c.Name, Args: c.Arguments}, res, render.ToolOptions{})
		writeCall(b, &v)
		if v.HasResult {
			writeResult(b, &v.Result)
		}
		b.WriteString("</div>\n")
	}
	switch {
	case m.ErrorMessage != "":
		b.WriteString("<div class=\"error-text\">Error: " + esc(clean(m.ErrorMessage)) + "</div>\n")
	case m.StopReason == session.StopReasonError:
		b.WriteString("<div class=\"error-text\">The model stopped with an error.</div>\n")
	case m.StopReason == session.StopReasonAborted:
		b.WriteString("<div class=\"note\">Aborted.</div>\n")
	case m.StopReason == session.StopReasonLength:
		b.WriteString("<div class=\"note\">Stopped at the output limit.</div>\n")
	}
	b.WriteString("</section>\n")
}

// resultOf is a saved result as the tool display takes it.
func resultOf(r *session.ToolResultMessage) render.Result {
	return render.Result{Content: r.Content, Details: r.Details, IsError: r.IsError}
}

// writeCall opens a tool block (closed by the caller after the result):
// the tool's name and its arguments, a bash command as a command line.
func writeCall(b *strings.Builder, v *render.ToolView) {
	b.WriteString("<div class=\"tool\">\n<div class=\"call\"><span class=\"tool-name\">" + esc(v.Name) + "</span>")
	if command, args, ok := v.CommandLine(); ok {
		for _, a := range args {
			b.WriteString(" <span class=\"arg\">" + esc(a.Name) + "=" + esc(clean(a.Value)) + "</span>")
		}
		b.WriteString("</div>\n<pre class=\"cmd\">$ " + esc(clean(command)) + "</pre>\n")
		return
	}
	b.WriteString("</div>\n")
	if args := v.ArgsText(); args != "" {
		b.WriteString("<pre class=\"args\">" + esc(clean(args)) + "</pre>\n")
	}
}

func writeResult(b *strings.Builder, r *render.ResultView) {
	cls := "result"
	if r.Failed() {
		cls += " error"
	}
	b.WriteString("<div class=\"" + cls + "\">")
	for _, x := range r.Badges() {
		b.WriteString("<span class=\"badge\">" + esc(x) + "</span>")
	}
	b.WriteString("\n")
	writeOutput(b, clean(r.Content), "(no output)")
	b.WriteString("</div>\n")
}

func writeBang(b *strings.Builder, m *session.BashExecutionMessage) {
	failed := ""
	status := ""
	switch {
	case m.Cancelled:
		status = "cancelled"
	case m.ExitCode != nil:
		status = "exit " + strconv.Itoa(*m.ExitCode)
		if *m.ExitCode != 0 {
			failed = " error"
		}
	}
	b.WriteString("<section class=\"msg bang" + failed + "\">\n")
	detail := ""
	if m.ExcludeFromContext {
		detail = "not sent to the model"
	}
	writeMeta(b, "Shell", detail, m.Timestamp)
	b.WriteString("<div class=\"tool\">\n<div class=\"call\">")
	if status != "" {
		b.WriteString("<span class=\"badge\">" + status + "</span>")
	}
	b.WriteString("</div>\n<pre class=\"cmd\">$ " + esc(clean(m.Command)) + "</pre>\n<div class=\"result" + failed + "\">\n")
	writeOutput(b, clean(m.Output), "(no output)")
	if m.Meta != nil && m.Meta.Truncation != nil {
		b.WriteString("<div class=\"note\">" + esc(bash.TruncationNotice(m.Meta.Truncation)) + "</div>\n")
	}
	b.WriteString("</div>\n</div>\n</section>\n")
}

// writeOutput writes text as preformatted output; a long one shows its
// first lines and keeps the rest in a collapsed <details>.
func writeOutput(b *strings.Builder, text, empty string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		b.WriteString("<pre class=\"out empty\">" + empty + "</pre>\n")
		return
	}
	head, rest := splitLong(text)
	b.WriteString("<pre class=\"out\">" + esc(head) + "</pre>\n")
	if rest != "" {
		n := strings.Count(rest, "\n") + 1
		b.WriteString("<details class=\"more\"><summary>" + count(n, "more line") + "</summary><pre class=\"out\">" + esc(rest) + "</pre></details>\n")
	}
}

// splitLong returns text whole, or, when it is long, its first lines and
// the rest (without the newline between them).
func splitLong(text string) (head, rest string) {
	if strings.Count(text, "\n") < collapseLines && len(text) <= collapseBytes {
		return text, ""
	}
	end := 0
	for i := 0; i < visibleLines; i++ {
		j := strings.IndexByte(text[end:], '\n')
		if j < 0 {
			end = len(text)
			break
		}
		end += j + 1
	}
	if end > visibleBytes {
		end = visibleBytes
		for end > 0 && !utf8Start(text[end]) {
			end--
		}
	}
	head, rest = text[:end], text[end:]
	if strings.HasSuffix(head, "\n") {
		head = head[:len(head)-1]
	} else if rest != "" {
		// Cut inside a line: the rest continues it on its own line.
		head += "…"
	}
	return head, rest
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

// clean makes terminal text fit for HTML: escape sequences removed, CRLF
// as LF, a line rewritten with CR (a progress bar) reduced to its last
// state, and other control characters but tab dropped.
func clean(s string) string {
	s = ansi.Strip(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.Contains(s, "\r") {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if k := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); k >= 0 {
				lines[i] = l[k+1:]
			}
			lines[i] = strings.TrimRight(lines[i], "\r")
		}
		s = strings.Join(lines, "\n")
	}
	return strings.Map(func(r rune) rune {
		if (r < ' ' && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

func esc(s string) string { return html.EscapeString(s) }

func count(n int, word string) string {
	s := strconv.Itoa(n) + " " + word
	if n != 1 {
		s += "s"
	}
	return s
}

// thousands writes n with comma separators: 1234567 → "1,234,567".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
