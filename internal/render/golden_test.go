package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/bash"
	"agentsh/internal/sink"
	"agentsh/internal/testkit"
)

var goldenWidths = []int{40, 100}

// checkGolden compares got with testdata/<name>.golden and checks the width
// invariant on every line first, so a golden can never bless an overflow.
func checkGolden(t *testing.T, name, got string, width int) {
	t.Helper()
	checkFits(t, got, width)
	testkit.Golden(t, name+".golden", got+"\n")
}

func checkFits(t *testing.T, s string, width int) {
	t.Helper()
	w := max(width, 1)
	for i, l := range strings.Split(s, "\n") {
		if sw := ansi.StringWidth(l); sw > w {
			t.Errorf("line %d is %d cells wide, limit %d: %q", i, sw, w, l)
		}
	}
}

func seq(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func intp(n int) *int { return &n }

func toolCases() map[string]func() *ToolCall {
	long := seq(1, 20) + "a fairly long line that certainly needs to wrap at forty columns, and maybe more\n" +
		"\tindented\twith tabs\n" + seq(21, 24)
	return map[string]func() *ToolCall{
		"running": func() *ToolCall {
			return &ToolCall{Command: "npm test", Output: "> test\n> jest\n\nPASS src/a.test.ts", Running: true,
				Elapsed: 12*time.Second + 400*time.Millisecond}
		},
		"streaming_empty": func() *ToolCall {
			return &ToolCall{Running: true, Streaming: true}
		},
		"streaming_partial": func() *ToolCall {
			return &ToolCall{Command: "go test ./internal/re", Running: true, Streaming: true}
		},
		"success_short": func() *ToolCall {
			return &ToolCall{Command: "ls", Output: "README.md\ngo.mod\ninternal\n"}
		},
		"success_long": func() *ToolCall {
			return &ToolCall{Command: "seq 1 24", Output: long}
		},
		"expanded": func() *ToolCall {
			return &ToolCall{Command: "seq 1 24", Output: long, Expanded: true}
		},
		"error": func() *ToolCall {
			return &ToolCall{Command: "ls nope", IsError: true,
				Output: "ls: cannot access 'nope': No such file or directory\n\nCommand exited with code 2"}
		},
		"timeout": func() *ToolCall {
			return &ToolCall{Command: "sleep 1", Output: "(no output)", TimeoutSeconds: 1.5}
		},
		"truncated": func() *ToolCall {
			tr := &bash.TruncationMeta{Direction: "tail", TruncatedBy: "bytes", TotalLines: 100000, TotalBytes: 588895,
				OutputLines: 8302, OutputBytes: 51200, ShownRange: bash.ShownRange{Start: 91699, End: 100000}, ArtifactID: "3"}
			return &ToolCall{Command: "seq 1 100000", Output: seq(91699, 100000) + "\n[" + bash.TruncationNotice(tr) + "]",
				Truncation: tr, TimeoutSeconds: 60}
		},
		"cwd": func() *ToolCall {
			return &ToolCall{Command: "go test ./...", CwdRel: "internal/render", Output: "ok  \tagentsh/internal/render\t0.012s\n"}
		},
		"job": func() *ToolCall {
			// The user pressed ctrl+b on a dev server: the result is the
			// output so far and the job paragraph (spec §9).
			return &ToolCall{Command: "npm run dev", JobID: "1",
				Output: "> dev\n> vite\n\n  VITE ready in 300 ms\n\n" + bash.DetachSentence(bash.DetachUser, "1", 0) +
					" Job 1 is running. " + bash.JobToolsHint("1")}
		},
		"wide": func() *ToolCall {
			return &ToolCall{Command: "cat 日本語.txt",
				Output: strings.Repeat("日本語のテキスト", 8) + "\n" + strings.Repeat("🎉👍🏽", 30) + "\n" + strings.Repeat("x", 130)}
		},
	}
}

func TestToolCallGolden(t *testing.T) {
	th := NewTheme(true)
	for name, mk := range toolCases() {
		for _, w := range goldenWidths {
			t.Run(fmt.Sprintf("%s_w%d", name, w), func(t *testing.T) {
				checkGolden(t, fmt.Sprintf("toolcall_%s_w%d", name, w), mk().View(w, th), w)
			})
		}
	}
}

func bangCases() map[string]func() *Bang {
	return map[string]func() *Bang{
		"running": func() *Bang {
			b := NewBang("make build", false)
			b.Append("go build ./...\ncompil")
			b.Append("ing agentsh")
			b.Elapsed = 3*time.Minute + 5*time.Second
			return b
		},
		"complete": func() *Bang {
			b := NewBang("seq 1 100", false)
			b.Append(seq(1, 50))
			b.Finish(seq(1, 100), intp(0), false, nil)
			return b
		},
		"cancelled": func() *Bang {
			b := NewBang("sleep 100", false)
			b.Append("waiting\n")
			b.Finish("[Command cancelled]\nwaiting\n", nil, true, nil)
			return b
		},
		"error": func() *Bang {
			b := NewBang("false || ls nope", false)
			b.Finish("ls: cannot access 'nope': No such file or directory\n", intp(2), false, nil)
			return b
		},
		"excluded": func() *Bang {
			b := NewBang("echo hi", true)
			b.Finish("hi\n", intp(0), false, nil)
			return b
		},
		"truncated": func() *Bang {
			b := NewBang("seq 1 100000", false)
			b.Finish(seq(91699, 100000), intp(0), false, &bash.TruncationMeta{Direction: "tail", TruncatedBy: "bytes",
				TotalLines: 100000, TotalBytes: 588895, OutputLines: 8302, OutputBytes: 51200,
				ShownRange: bash.ShownRange{Start: 91699, End: 100000}, ArtifactID: "7"})
			return b
		},
		"longline": func() *Bang {
			b := NewBang("python -c 'print(\"x\"*10000)'", false)
			b.Finish("before\n"+strings.Repeat("x", 10000)+"\n", intp(0), false, nil)
			return b
		},
		"job": func() *Bang {
			// The session's output of a command that waits for input.
			b := NewBang(`read -p "Proceed? [y/N] " a; echo "got $a"`, false)
			b.Append("Proceed? [y/N] ")
			b.FinishAsJob("Proceed? [y/N] \n\n["+bash.DetachSentence(bash.DetachInput, "1", 0)+"]", "1", nil)
			return b
		},
		"expanded": func() *Bang {
			b := NewBang("seq 1 30", false)
			b.Finish(seq(1, 30), intp(0), false, nil)
			b.Expanded = true
			return b
		},
	}
}

func TestBangGolden(t *testing.T) {
	th := NewTheme(true)
	for name, mk := range bangCases() {
		for _, w := range goldenWidths {
			t.Run(fmt.Sprintf("%s_w%d", name, w), func(t *testing.T) {
				checkGolden(t, fmt.Sprintf("bang_%s_w%d", name, w), mk().View(w, th, "⠋"), w)
			})
		}
	}
}

// TestColorGolden proves the colour theme emits SGR; the plain goldens
// cannot, since NO_COLOR must never emit any.
func TestColorGolden(t *testing.T) {
	th := NewTheme(false)
	tc := toolCases()["error"]().View(40, th)
	b := bangCases()["error"]().View(40, th, "⠋")
	for _, s := range []string{tc, b} {
		if !strings.Contains(s, "\x1b[") {
			t.Fatalf("no SGR in colour output: %q", s)
		}
	}
	checkGolden(t, "color_toolcall_error_w40", tc, 40)
	checkGolden(t, "color_bang_error_w40", b, 40)

	// The command's own colours (ls --color, a test runner).
	out := "\x1b[1;34mdocs\x1b[0m  \x1b[1;32mmake.sh\x1b[0m  README.md\n" +
		"\x1b[32m✓\x1b[0m parses \x1b[2m(3ms)\x1b[0m\n\x1b[31m✗ renders a very long failure message that wraps\x1b[0m\n"
	c := &ToolCall{Command: "npm test", IsError: true, Output: sink.Sanitize(out) + "\nCommand exited with code 1", Styled: out}
	checkGolden(t, "color_toolcall_styled_w40", c.View(40, th), 40)
	bs := NewBang("ls --color=always", false)
	bs.Styled = out
	bs.Finish(sink.Sanitize(out), intp(0), false, nil)
	checkGolden(t, "color_bang_styled_w40", bs.View(40, th, ""), 40)
}
