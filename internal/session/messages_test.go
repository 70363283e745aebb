package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"agentsh/internal/bash"
)

func intp(n int) *int { return &n }

func sampleMessages() []Message {
	return []Message{
		&UserMessage{Text: "count the Go files", Timestamp: 1700000000000},
		&AssistantMessage{Text: "Let me look.", Timestamp: 1700000000001, ToolCalls: []ToolCall{
			{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls *.go | wc -l"}`)},
			{ID: "call_2", Name: "bash", Arguments: json.RawMessage(`{"command":"seq 1 3","timeout":5}`)},
		}, API: "openai-completions", Provider: "openai", Model: "gpt-4.1", StopReason: StopReasonToolUse,
			Usage: &Usage{Input: 10, Output: 5, TotalTokens: 15}},
		&AssistantMessage{Text: "no tools", Thinking: []ThinkingBlock{{Thinking: "hmm", Signature: "sig"}, {Redacted: true, Data: "opaque"}},
			API: "anthropic-messages", Provider: "anthropic", Model: "claude-x", StopReason: StopReasonStop,
			Usage: &Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, TotalTokens: 10, Cost: UsageCost{Total: 0.5}}},
		&ToolResultMessage{ToolCallID: "call_1", ToolName: "bash", Content: "3", Timestamp: 2,
			Details: json.RawMessage(`{"exitCode":0,"timeoutSeconds":300}`)},
		&ToolResultMessage{ToolCallID: "call_2", ToolName: "bash", Content: "boom\n\nCommand exited with code 2", IsError: true},
		&BashExecutionMessage{Command: "ls", Output: "a\nb", ExitCode: intp(0), Timestamp: 3},
		&BashExecutionMessage{Command: "sleep 30", Output: "[Command cancelled]", Cancelled: true, Timestamp: 4, ExcludeFromContext: true},
		&BashExecutionMessage{Command: "seq 1 100000", Output: "99999\n100000", ExitCode: intp(0), Truncated: true, Timestamp: 5,
			Meta: &bash.OutputMeta{Truncation: &bash.TruncationMeta{Direction: "tail", TruncatedBy: "bytes",
				TotalLines: 100000, TotalBytes: 588895, OutputLines: 8000, OutputBytes: 51200,
				ShownRange: bash.ShownRange{Start: 92001, End: 100000}, ArtifactID: "0"}}},
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		data, err := MarshalMessage(m)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if want := `{"role":"` + m.Role() + `",`; !strings.HasPrefix(string(data), want) {
			t.Errorf("%s does not start with %s", data, want)
		}
		got, err := UnmarshalMessage(data)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip of %s:\n got  %#v\n want %#v", data, got, m)
		}
	}
}

func TestMessageWireShape(t *testing.T) {
	data, err := MarshalMessage(sampleMessages()[7])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"bashExecution","command":"seq 1 100000","output":"99999\n100000","exitCode":0,"cancelled":false,"truncated":true,` +
		`"meta":{"truncation":{"direction":"tail","truncatedBy":"bytes","totalLines":100000,"totalBytes":588895,"outputLines":8000,"outputBytes":51200,"shownRange":{"start":92001,"end":100000},"artifactId":"0"}},` +
		`"timestamp":5}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = MarshalMessage(sampleMessages()[1])
	want = `{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls *.go | wc -l"}},{"type":"toolCall","id":"call_2","name":"bash","arguments":{"command":"seq 1 3","timeout":5}}],` +
		`"api":"openai-completions","provider":"openai","model":"gpt-4.1","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1700000000001}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = MarshalMessage(sampleMessages()[4])
	want = `{"role":"toolResult","toolCallId":"call_2","toolName":"bash","content":[{"type":"text","text":"boom\n\nCommand exited with code 2"}],"isError":true,"timestamp":0}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = MarshalMessage(sampleMessages()[2])
	want = `{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"redactedThinking","data":"opaque"},{"type":"text","text":"no tools"}],` +
		`"api":"anthropic-messages","provider":"anthropic","model":"claude-x","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"stop","timestamp":0}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = MarshalMessage(sampleMessages()[0])
	want = `{"role":"user","content":[{"type":"text","text":"count the Go files"}],"timestamp":1700000000000}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
}

// Session files written before the reference's shape keep loading.
func TestUnmarshalOldShape(t *testing.T) {
	for in, want := range map[string]Message{
		`{"role":"user","text":"hi","timestamp":1}`:       &UserMessage{Text: "hi", Timestamp: 1},
		`{"role":"user","content":"plain","timestamp":2}`: &UserMessage{Text: "plain", Timestamp: 2},
		`{"role":"assistant","text":"ok","toolCalls":[{"id":"c","name":"bash","arguments":{"command":"ls"}}],"timestamp":3}`: &AssistantMessage{Text: "ok",
			ToolCalls: []ToolCall{{ID: "c", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}}, Timestamp: 3},
		`{"role":"toolResult","toolCallId":"c","toolName":"bash","content":"out","isError":false}`: &ToolResultMessage{ToolCallID: "c", ToolName: "bash", Content: "out"},
	} {
		got, err := UnmarshalMessage([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %#v\n want %#v", in, got, want)
		}
	}
}

func TestUnmarshalMessageErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"text":"x"}`:                 `message: missing "role"`,
		`{"role":"system","text":"x"}`: `message: unknown role "system"`,
		`{"role":"user","text":5}`:     `message (user): json: cannot unmarshal number`,
		`[1]`:                          `message: json: cannot unmarshal array`,
		`{"role":"user"`:               `message: unexpected end of JSON input`,
		`{"role":"bashExecution","exitCode":"0"}`: `message (bashExecution): json: cannot unmarshal string`,
	} {
		_, err := UnmarshalMessage([]byte(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want prefix %q", in, err, want)
		}
	}
	if _, err := MarshalMessage(nil); err == nil {
		t.Error("MarshalMessage(nil) succeeded")
	}
}

func TestBashExecutionToText(t *testing.T) {
	trunc := &bash.OutputMeta{Truncation: &bash.TruncationMeta{Direction: "tail", TruncatedBy: "lines",
		TotalLines: 10000, OutputLines: 100, ShownRange: bash.ShownRange{Start: 9901, End: 10000}, ArtifactID: "3"}}
	cases := []struct {
		m    BashExecutionMessage
		want string
	}{
		{BashExecutionMessage{Command: "ls", Output: "a\nb", ExitCode: intp(0)}, "Ran `ls`\n```\na\nb\n```"},
		// One trailing newline is dropped, so no blank line before the fence.
		{BashExecutionMessage{Command: "ls", Output: "a\nb\n", ExitCode: intp(0)}, "Ran `ls`\n```\na\nb\n```"},
		{BashExecutionMessage{Command: "true", ExitCode: intp(0)}, "Ran `true`\n(no output)"},
		{BashExecutionMessage{Command: "false", ExitCode: intp(1)}, "Ran `false`\n(no output)\n\nCommand exited with code 1"},
		{BashExecutionMessage{Command: "x", Output: "nope", ExitCode: intp(127)}, "Ran `x`\n```\nnope\n```\n\nCommand exited with code 127"},
		// Unknown exit status without a cancel says nothing, like the reference.
		{BashExecutionMessage{Command: "x", Output: "o"}, "Ran `x`\n```\no\n```"},
		{BashExecutionMessage{Command: "sleep 30", Output: "[Command cancelled]", Cancelled: true},
			"Ran `sleep 30`\n```\n[Command cancelled]\n```\n\n(command cancelled)"},
		{BashExecutionMessage{Command: "seq 1 10000", Output: "9901\n10000", ExitCode: intp(0), Truncated: true, Meta: trunc},
			"Ran `seq 1 10000`\n```\n9901\n10000\n```\n\n[Showing lines 9901-10000 of 10000. Full: artifact://3]"},
		{BashExecutionMessage{Command: "big", Output: "x", ExitCode: intp(2), Truncated: true, Meta: trunc},
			"Ran `big`\n```\nx\n```\n\nCommand exited with code 2\n\n[Showing lines 9901-10000 of 10000. Full: artifact://3]"},
		// Backticks in the output lengthen the fence; in the command, the span.
		{BashExecutionMessage{Command: "cat README.md", Output: "```go\nx\n```", ExitCode: intp(0)},
			"Ran `cat README.md`\n````\n```go\nx\n```\n````"},
		{BashExecutionMessage{Command: "echo `date`", Output: "``````", ExitCode: intp(0)},
			"Ran `` echo `date` ``\n```````\n``````\n```````"},
	}
	for _, c := range cases {
		if got := BashExecutionToText(&c.m); got != c.want {
			t.Errorf("%+v:\n got  %q\n want %q", c.m, got, c.want)
		}
	}
}

// The notice matches the tool result's one character for character.
func TestBashExecutionNoticeMatchesTool(t *testing.T) {
	res := bash.BashResult{Output: "tail", Truncated: true, TotalLines: 200000, TotalBytes: 1288895,
		OutputLines: 7000, OutputBytes: 51190, ArtifactID: "4", ExitCode: intp(0)}
	meta := bash.ResultMeta(res)
	tool := bash.Finalize(&bash.ToolResult{Text: "tail", Details: bash.ToolDetails{Meta: meta}}, nil)
	m := &BashExecutionMessage{Command: "c", Output: "tail", ExitCode: intp(0), Truncated: true, Meta: meta}
	got := BashExecutionToText(m)
	notice := strings.TrimPrefix(tool.Content, "tail")
	if !strings.HasSuffix(got, "```"+notice) || !strings.Contains(notice, "Showing lines 193001-200000 of 200000 (50.0KB limit). Full: artifact://4") {
		t.Errorf("bang text %q does not end with the tool notice %q", got, notice)
	}
	if bash.ResultMeta(bash.BashResult{Output: "x"}) != nil {
		t.Error("meta for an untruncated result")
	}
}
