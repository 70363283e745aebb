package export

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"agentsh/internal/export/exporttest"
	"agentsh/internal/session"
	"agentsh/internal/testkit"
)

// t0 is a fixed time: 2025-12-03 19:26:40 UTC.
const t0 = int64(1764790000000)

func ptr[T any](v T) *T { return &v }

// smallSession has one of every kind of message.
func smallSession() ExportInput {
	return ExportInput{
		SessionID: "0123abcd", Cwd: "/home/user/project", Start: time.UnixMilli(t0),
		Messages: []session.Message{
			&session.UserMessage{Text: "List the Go files and say what `main.go` does.", Timestamp: t0 + 1000},
			&session.AssistantMessage{
				Thinking:  []session.ThinkingBlock{{Thinking: "I should run ls first.", Signature: "sig"}},
				Text:      "Let me look.",
				ToolCalls: []session.ToolCall{{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls *.go","timeout":30}`)}},
				API:       "openai-completions", Provider: "openai", Model: "gpt-4.1",
				Usage:      &session.Usage{Input: 120, Output: 30, TotalTokens: 150},
				StopReason: session.StopReasonToolUse, Timestamp: t0 + 2000,
			},
			&session.ToolResultMessage{ToolCallID: "call_1", ToolName: "bash", Content: "main.go\nutil.go\n",
				Details: json.RawMessage(`{"exitCode":0}`), Timestamp: t0 + 3000},
			&session.AssistantMessage{
				Text: "Two files:\n\n- `main.go` starts the server\n- `util.go` has *helpers*\n\n" +
					"```go\nfunc main() { if a < b && c > d {} }\n```\n\n| file | lines |\n|---|---|\n| main.go | 3 |\n\n" +
					"- [x] listed\n- [ ] ~~fixed~~\n\nSee [the docs](https://go.dev/doc/).",
				ToolCalls: []session.ToolCall{{ID: "call_2", Name: "job_output", Arguments: json.RawMessage(`{"jobId":"3"}`)}},
				API:       "anthropic-messages", Provider: "anthropic", Model: "claude-x",
				Usage: &session.Usage{Input: 1200, Output: 80, CacheRead: 1000, CacheWrite: 200, TotalTokens: 2480,
					Cost: session.UsageCost{Total: 0.0123}},
				StopReason: session.StopReasonToolUse, Timestamp: t0 + 4000,
			},
			&session.ToolResultMessage{ToolCallID: "call_2", ToolName: "job_output", Content: "No job 3.", IsError: true, Timestamp: t0 + 4500},
			&session.BashExecutionMessage{Command: "go vet ./...", Output: "main.go:3: unreachable code\n", ExitCode: ptr(1), Timestamp: t0 + 5000},
			&session.BashExecutionMessage{Command: "true", ExitCode: ptr(0), ExcludeFromContext: true, Timestamp: t0 + 5500},
			&session.UserMessage{Text: "Now fix it.", Timestamp: t0 + 6000},
			&session.AssistantMessage{
				Thinking: []session.ThinkingBlock{{Redacted: true, Data: "opaque"}},
				API:      "anthropic-messages", Provider: "anthropic", Model: "claude-x",
				StopReason: session.StopReasonError, ErrorMessage: "429 rate limited", Timestamp: t0 + 7000,
			},
		},
	}
}

func renderDoc(t *testing.T, in ExportInput) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, in); err != nil {
		t.Fatal(err)
	}
	if err := exporttest.Check(b.Bytes()); err != nil {
		t.Fatalf("not a self-contained well-formed document: %v\n%s", err, b.String())
	}
	return b.Bytes()
}

func TestGoldenSmallSession(t *testing.T) {
	got := renderDoc(t, smallSession())
	testkit.Golden(t, "small.html", string(got))
}

// What a reader sees of the small session: the header's figures, each
// message, the collapsed thinking, the errors.
func TestSmallSessionShowsEverything(t *testing.T) {
	doc := string(renderDoc(t, smallSession()))
	texts, err := exporttest.Text([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(texts, "")
	for _, want := range []string{
		"0123abcd", "/home/user/project", "2025-12-03 19:26:40 UTC",
		"openai/gpt-4.1", "anthropic/claude-x",
		"1,320 in · 110 out · 1,000 cache read · 200 cache write · 2,630 total", "$0.0123",
		"2 prompts · 3 answers · 2 tool calls · 2 shell commands",
		"List the Go files and say what `main.go` does.",
		"$ ls *.go", "timeout=30", "main.go\nutil.go", "exit 0",
		"func main() { if a < b && c > d {} }",
		`"jobId": "3"`, "No job 3.",
		"$ go vet ./...", "main.go:3: unreachable code", "exit 1", "not sent to the model", "(no output)",
		"Error: 429 rate limited", "Thinking (redacted by the provider)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	for _, want := range []string{
		"<details class=\"thinking\"><summary>Thinking</summary>\n<div class=\"plain\">I should run ls first.</div>\n</details>",
		"<li><code>main.go</code> starts the server</li>",
		"<em>helpers</em>",
		"<td>main.go</td>", `<li><input disabled="" type="checkbox"> <del>fixed</del></li>`,
		`<a href="https://go.dev/doc/" rel="noopener noreferrer nofollow">the docs</a>`,
		`<pre><code class="language-go">func main() { if a &lt; b &amp;&amp; c &gt; d {} }`,
		"<section class=\"msg bang error\">",
		"<div class=\"result error\">\n<pre class=\"out\">No job 3.</pre>",
		"<section class=\"msg assistant error\">",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	// The signature and the redacted data are the provider's, not for
	// the reader.
	for _, no := range []string{"sig", "opaque"} {
		if strings.Contains(text, no) {
			t.Errorf("the page shows %q", no)
		}
	}
}

// Hostile text from every source is shown as text: nothing in it becomes
// markup, a script, an image, a handler or a javascript: link.
func TestHostileContentIsEscaped(t *testing.T) {
	const evil = `</script><script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	in := ExportInput{SessionID: evil, Cwd: evil, Messages: []session.Message{
		&session.UserMessage{Text: evil},
		&session.AssistantMessage{
			Thinking: []session.ThinkingBlock{{Thinking: evil}},
			Text: evil + "\n\n<iframe src=\"https://x\"></iframe>\n\n[click](javascript:alert(3)) [tab](java&#9;script:alert(4)) " +
				"![pixel](https://tracker.example/p.png) <https://ok.example/a?b=c> `" + evil + "`\n\n```\n" + evil + "\n```",
			ToolCalls: []session.ToolCall{
				{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":` + quote(evil) + `,"x":` + quote(evil) + `}`)},
				{ID: "c2", Name: evil, Arguments: json.RawMessage(`{"a":` + quote(evil) + `}`)},
			},
			Provider: evil, Model: evil, ErrorMessage: evil,
		},
		&session.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: evil},
		&session.ToolResultMessage{ToolCallID: "c2", ToolName: evil, Content: evil, IsError: true},
		&session.ToolResultMessage{ToolCallID: "orphan", ToolName: evil, Content: evil},
		&session.BashExecutionMessage{Command: evil, Output: evil, ExitCode: ptr(2)},
	}}
	doc := renderDoc(t, in) // Check: no script, img, iframe, on* attribute, other link
	lower := strings.ToLower(string(doc))
	for _, raw := range []string{"<script", "<img", "<iframe", "javascript:alert(3)\""} {
		if strings.Contains(lower, raw) {
			t.Errorf("the HTML holds raw %q", raw)
		}
	}
	// "onerror=" may appear only as escaped text, never inside a tag.
	if m := regexp.MustCompile(`<[^>]*onerror`).FindString(lower); m != "" {
		t.Errorf("a tag with onerror: %q", m)
	}
	texts, err := exporttest.Text(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(texts, "")
	// Each place shows the text itself: user, thinking, tool args, results,
	// orphan result, bang command and output, error, session id and cwd.
	if n := strings.Count(text, evil); n < 13 {
		t.Errorf("the hostile text is shown %d times, want it at every place (13+):\n%s", n, text)
	}
	// An unsafe link keeps its text, unlinked; a safe autolink is a link;
	// raw HTML is shown as text.
	for _, want := range []string{
		"<p>click tab ",
		`<a href="https://ok.example/a?b=c" rel="noopener noreferrer nofollow">https://ok.example/a?b=c</a>`,
		`<p class="plain">&lt;iframe src=&#34;https://x&#34;&gt;&lt;/iframe&gt;`,
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	if !strings.Contains(string(doc), `<a href="https://tracker.example/p.png" rel="noopener noreferrer nofollow">[image: pixel]</a>`) {
		t.Error("the image is not a plain link to it")
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Terminal escapes and control characters never reach the page; a line
// redrawn with CR shows its last state.
func TestTerminalEscapesStripped(t *testing.T) {
	out := "\x1b[31mred\x1b[0m plain\x1b]0;title\x07 \x1b[1;32mbold\x1b[m\n10%\r50%\r100%\r\ndone\x00\x08\n"
	in := ExportInput{Messages: []session.Message{
		&session.BashExecutionMessage{Command: "\x1b[2Jmake", Output: out, ExitCode: ptr(0)},
		&session.AssistantMessage{Text: "\x1b[1mhello\x1b[0m"},
		&session.ToolResultMessage{ToolCallID: "x", ToolName: "bash", Content: out},
	}}
	doc := string(renderDoc(t, in))
	if strings.ContainsAny(doc, "\x1b\x07\x00\x08\r") {
		t.Errorf("control characters in the page:\n%q", doc)
	}
	if n := strings.Count(doc, "red plain bold\n100%\ndone</pre>"); n != 2 {
		t.Errorf("the output shown %d times as \"red plain bold\\n100%%\\ndone\", want 2:\n%s", n, doc)
	}
	if !strings.Contains(doc, "$ make</pre>") || !strings.Contains(doc, "<p>hello</p>") {
		t.Errorf("command or answer not cleaned:\n%s", doc)
	}
}

// A long output shows its first lines; the rest is in a closed <details>.
func TestBigToolOutputCollapsed(t *testing.T) {
	var lines []string
	for i := 1; i <= 500; i++ {
		lines = append(lines, "line "+itoa(i))
	}
	big := strings.Join(lines, "\n") + "\n"
	in := ExportInput{Messages: []session.Message{
		&session.AssistantMessage{ToolCalls: []session.ToolCall{{ID: "c", Name: "bash", Arguments: json.RawMessage(`{"command":"seq"}`)}}},
		&session.ToolResultMessage{ToolCallID: "c", ToolName: "bash", Content: big},
		&session.BashExecutionMessage{Command: "seq", Output: big, ExitCode: ptr(0)},
		&session.BashExecutionMessage{Command: "short", Output: strings.Join(lines[:20], "\n"), ExitCode: ptr(0)},
	}}
	doc := string(renderDoc(t, in))
	head := "<pre class=\"out\">" + strings.Join(lines[:10], "\n") + "</pre>\n" +
		"<details class=\"more\"><summary>490 more lines</summary><pre class=\"out\">line 11\n"
	if n := strings.Count(doc, head); n != 2 {
		t.Errorf("the 10 first lines then 490 collapsed: found %d times, want 2:\n%s", n, doc)
	}
	if n := strings.Count(doc, "line 500</pre></details>"); n != 2 {
		t.Errorf("the collapsed part does not end with the last line (%d)", n)
	}
	// 20 lines are short enough to show whole.
	if !strings.Contains(doc, "<pre class=\"out\">"+strings.Join(lines[:20], "\n")+"</pre>\n</div>") {
		t.Error("a 20-line output was collapsed")
	}
	// One long line is cut by size.
	long := strings.Repeat("x", 10000)
	doc = string(renderDoc(t, ExportInput{Messages: []session.Message{&session.BashExecutionMessage{Command: "x", Output: long}}}))
	if !strings.Contains(doc, "<pre class=\"out\">"+long[:2000]+"…</pre>\n<details class=\"more\"><summary>1 more line</summary><pre class=\"out\">"+long[2000:]+"</pre>") {
		t.Error("a 10000-byte line is not cut at 2000 bytes")
	}
}

func itoa(i int) string { return thousands(int64(i)) }

// BenchmarkHTMLLargeSession exports 100 turns, each a prompt, an answer
// with Markdown and a bash call whose result is 500 lines.
func BenchmarkHTMLLargeSession(b *testing.B) {
	var lines []string
	for i := range 500 {
		lines = append(lines, "output line "+itoa(i)+" \x1b[32mok\x1b[0m")
	}
	out := strings.Join(lines, "\n")
	var msgs []session.Message
	for i := range 100 {
		id := "c" + itoa(i)
		msgs = append(msgs,
			&session.UserMessage{Text: "step " + itoa(i)},
			&session.AssistantMessage{Text: "Running `make`:\n\n- one\n- two\n\n```sh\nmake all\n```",
				ToolCalls: []session.ToolCall{{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"make all"}`)}},
				Usage:     &session.Usage{Input: 1000, Output: 100, TotalTokens: 1100}},
			&session.ToolResultMessage{ToolCallID: id, ToolName: "bash", Content: out, Details: json.RawMessage(`{"exitCode":0}`)})
	}
	in := ExportInput{SessionID: "bench", Messages: msgs}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := HTML(&buf, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/page")
}
