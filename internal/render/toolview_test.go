package render

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/tools"
)

// toolCase is one tool call and its result (nil: none came) as the three
// places that show it receive them.
type toolCase struct {
	name string
	call Call
	res  *Result
	// partial is the live output before the result (bash and other tools).
	partial string

	kind       ToolKind
	header     string   // the block's first line, colours stripped
	docCommand string   // "" when the document shows the arguments
	docArgs    string   // the arguments beside the command, or the JSON shown instead
	badges     []string // the document's result badges
	failed     bool
}

func viewCases(t *testing.T) []toolCase {
	exit0, exit3 := 0, 3
	trunc := mustJSON(t, bash.ToolDetails{ExitCode: &exit0, Styled: "\x1b[32mline 4999\x1b[0m\nline 5000\n",
		Meta: &bash.OutputMeta{Truncation: &bash.TruncationMeta{TruncatedBy: "lines", TotalLines: 5000, OutputLines: 2, ArtifactID: "7"}}})
	return []toolCase{{
		name: "bash",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"ls -la","timeout":30,"cwd":"/w/sub"}`)},
		res:  &Result{Content: "a\nb\n", Details: mustJSON(t, bash.ToolDetails{ExitCode: &exit0})}, partial: "a\n",
		kind: ToolBash, header: "✓ $ cd sub && ls -la", docCommand: "ls -la", docArgs: "cwd=\"/w/sub\" timeout=30",
		badges: []string{"exit 0"},
	}, {
		name: "bash truncated and coloured",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"seq 5000"}`)},
		res:  &Result{Content: "line 4999\nline 5000\n\n[Showing 2 of 5000 lines. Full: artifact://7]", Details: trunc},
		kind: ToolBash, header: "✓ $ seq 5000", docCommand: "seq 5000", badges: []string{"exit 0"},
	}, {
		name: "read",
		call: Call{Name: tools.ReadName, Args: json.RawMessage(`{"path":"notes.txt"}`)},
		res: &Result{Content: "     1\talpha\n     2\tbeta\n",
			Details: mustJSON(t, tools.ReadDetails{Path: "/w/notes.txt", StartLine: 1, EndLine: 2, TotalLines: 2})},
		kind: ToolFile, header: "✓ read notes.txt:1-2", docArgs: "{\n  \"path\": \"notes.txt\"\n}",
	}, {
		name: "edit",
		call: Call{Name: tools.EditName, Args: json.RawMessage(`{"path":"a.go","oldText":"x","newText":"y"}`)},
		res: &Result{Content: "Edited a.go", Details: mustJSON(t, tools.EditDetails{Path: "/w/a.go", Replacements: 1,
			Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"})},
		kind: ToolFile, header: "✓ edit a.go · +1 −1",
		docArgs: "{\n  \"newText\": \"y\",\n  \"oldText\": \"x\",\n  \"path\": \"a.go\"\n}",
	}, {
		name: "unknown tool",
		call: Call{Name: "frobnicate", Args: json.RawMessage(`{"level":3}`)},
		res:  &Result{Content: "Tool frobnicate not found", IsError: true}, partial: "",
		kind: ToolOther, header: `✗ $ frobnicate {"level":3}`, docArgs: "{\n  \"level\": 3\n}", failed: true,
	}, {
		name: "error",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"exit 3"}`)},
		res:  &Result{Content: "oops\n\nCommand exited with code 3", IsError: true, Details: mustJSON(t, bash.ToolDetails{ExitCode: &exit3})},
		kind: ToolBash, header: "✗ $ exit 3", docCommand: "exit 3", badges: []string{"exit 3"}, failed: true,
	}, {
		name: "cancelled while running",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"sleep 9"}`)},
		res: &Result{Content: "[Command cancelled]\npartial\n\n" + agent.AbortedToolText, IsError: true,
			Details: mustJSON(t, bash.ToolDetails{Cancelled: true})}, partial: "partial\n",
		kind: ToolBash, header: "✗ $ sleep 9", docCommand: "sleep 9", badges: []string{"cancelled"}, failed: true,
	}, {
		name: "cancelled before it ran",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"rm -rf build"}`)},
		res:  &Result{Content: agent.CancelledToolText, IsError: true},
		kind: ToolBash, header: "✗ $ rm -rf build", docCommand: "rm -rf build", failed: true,
	}, {
		name: "file tool error",
		call: Call{Name: tools.ReadName, Args: json.RawMessage(`{"path":"gone.txt"}`)},
		res:  &Result{Content: "ENOENT: no such file or directory", IsError: true},
		kind: ToolFile, header: "✗ read gone.txt", docArgs: "{\n  \"path\": \"gone.txt\"\n}", failed: true,
	}, {
		name: "became a job",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"make"}`)},
		res: &Result{Content: "building\n\nThe command is now job 2.",
			Details: mustJSON(t, bash.ToolDetails{JobID: "2"})},
		kind: ToolBash, header: "→ $ make", docCommand: "make", badges: []string{"job 2"},
	}, {
		name: "no result saved",
		call: Call{Name: "bash", Args: json.RawMessage(`{"command":"sleep 100"}`)},
		kind: ToolBash, header: "✓ $ sleep 100", docCommand: "sleep 100",
	}}
}

// live is the block as the live transcript builds it: running from the
// call's start, its output streaming, then its result (or the turn's end).
func live(c toolCase, th Theme) ToolBlock {
	v := NewToolView(c.call, nil, ToolOptions{Cwd: "/w"})
	b := NewToolBlock(&v, true)
	if b.Call != nil && c.partial != "" {
		b.Call.Output, b.Call.Styled = c.partial, c.partial
	}
	b.View(80, th) // a frame while it runs
	if c.res == nil {
		b.Finish(nil)
		return b
	}
	r := NewResultView(*c.res, ToolOptions{})
	b.Finish(&r)
	return b
}

// resumed is the block as a resumed transcript builds it from the saved
// call and result.
func resumed(c toolCase, plain bool) ToolBlock {
	v := NewToolView(c.call, c.res, ToolOptions{Cwd: "/w", Plain: plain})
	return NewToolBlock(&v, false)
}

// blockViews is the block at two widths, collapsed and expanded.
func blockViews(b ToolBlock, th Theme) []string {
	var out []string
	for _, exp := range []bool{false, true} {
		if b.File != nil {
			b.File.Expanded = exp
		} else {
			b.Call.Expanded = exp
		}
		for _, w := range []int{40, 100} {
			out = append(out, b.View(w, th))
		}
	}
	return out
}

// The same call and result give the same block live and resumed, and the
// exported document decides the same kind, command and failure.
func TestToolViewSameLiveResumedExported(t *testing.T) {
	colour, plain := NewTheme(false), NewTheme(true)
	for _, c := range viewCases(t) {
		t.Run(c.name, func(t *testing.T) {
			lv := live(c, colour)
			if got, want := blockViews(lv, colour), blockViews(resumed(c, false), colour); !reflect.DeepEqual(got, want) {
				t.Errorf("live and one-shot blocks differ:\n--- live ---\n%s\n--- one-shot ---\n%s",
					strings.Join(got, "\n·\n"), strings.Join(want, "\n·\n"))
			}
			// A resumed transcript shows no colours; else it is the live block.
			if got, want := blockViews(live(c, plain), plain), blockViews(resumed(c, true), plain); !reflect.DeepEqual(got, want) {
				t.Errorf("live and resumed blocks differ:\n--- live ---\n%s\n--- resumed ---\n%s",
					strings.Join(got, "\n·\n"), strings.Join(want, "\n·\n"))
			}
			if c.res != nil && strings.Contains(string(c.res.Details), "styled") &&
				reflect.DeepEqual(blockViews(resumed(c, true), colour), blockViews(lv, colour)) {
				t.Error("a resumed block shows the saved colours")
			}
			if (lv.File != nil) != (c.kind == ToolFile) || (lv.File == nil) == (lv.Call == nil) {
				t.Errorf("block %+v for a %v call", lv, c.kind)
			}
			collapsed := resumed(c, true)
			header, _, _ := strings.Cut(ansi.Strip(collapsed.View(100, plain)), "\n")
			if header != c.header {
				t.Errorf("header %q, want %q", header, c.header)
			}

			doc := NewToolView(c.call, c.res, ToolOptions{})
			if doc.Kind != c.kind || KindOf(c.call.Name) != c.kind {
				t.Errorf("kind %v, want %v", doc.Kind, c.kind)
			}
			cmd, args, ok := doc.CommandLine()
			if ok != (c.docCommand != "") || cmd != c.docCommand {
				t.Errorf("command line %q %v, want %q", cmd, ok, c.docCommand)
			}
			if ok {
				if collapsed.Call == nil || !strings.HasSuffix(header, " "+cmd) {
					t.Errorf("the document's command %q is not the block's header %q", cmd, header)
				}
				var kv []string
				for _, a := range args {
					kv = append(kv, a.Name+"="+a.Value)
				}
				if got := strings.Join(kv, " "); got != c.docArgs {
					t.Errorf("arguments %q, want %q", got, c.docArgs)
				}
			} else if got := doc.ArgsText(); got != c.docArgs {
				t.Errorf("arguments %q, want %q", got, c.docArgs)
			}
			if c.res == nil {
				if doc.HasResult {
					t.Errorf("a result without one: %+v", doc.Result)
				}
				return
			}
			if got := doc.Result.Badges(); !reflect.DeepEqual(got, c.badges) {
				t.Errorf("badges %q, want %q", got, c.badges)
			}
			if doc.Result.Failed() != c.failed || strings.HasPrefix(header, "✗") != c.failed {
				t.Errorf("failed %v, header %q; want %v", doc.Result.Failed(), header, c.failed)
			}
		})
	}
}

// The result facts come from the details: Truncation and JobID only when
// they decode whole, the colours unless plain.
func TestResultViewDetails(t *testing.T) {
	r := NewResultView(Result{Content: "x", Details: json.RawMessage(`{"jobId":"4","styled":"s","meta":{"truncation":{"artifactId":"9"}}}`)}, ToolOptions{})
	if r.JobID != "4" || r.Styled != "s" || r.Truncation == nil || r.Truncation.ArtifactID != "9" {
		t.Errorf("%+v", r)
	}
	if p := NewResultView(Result{Details: json.RawMessage(`{"styled":"s"}`)}, ToolOptions{Plain: true}); p.Styled != "" {
		t.Errorf("plain result keeps colours: %+v", p)
	}
	// exitCode of the wrong type: the document still shows what decoded.
	bad := NewResultView(Result{Details: json.RawMessage(`{"cancelled":true,"jobId":"5","exitCode":"x"}`)}, ToolOptions{})
	if bad.JobID != "" || !reflect.DeepEqual(bad.Badges(), []string{"cancelled", "job 5"}) {
		t.Errorf("partly decoded details: job %q, badges %q", bad.JobID, bad.Badges())
	}
	if none := NewResultView(Result{IsError: true}, ToolOptions{}); none.Badges() != nil || !none.Failed() {
		t.Errorf("no details: badges %q failed %v", none.Badges(), none.Failed())
	}
}

// A bash call's arguments that do not parse are its command line in the
// block; a document shows them as arguments.
func TestToolViewBadBashArgs(t *testing.T) {
	v := NewToolView(Call{Name: "bash", Args: json.RawMessage(`{"command":1}`)}, nil, ToolOptions{})
	if v.Header().Command != `{"command":1}` || v.Kind != ToolBash {
		t.Errorf("%+v", v)
	}
	if _, _, ok := v.CommandLine(); ok || v.ArgsText() != "{\n  \"command\": 1\n}" {
		t.Errorf("document: %v %q", ok, v.ArgsText())
	}
	if e := NewToolView(Call{Name: "jobs", Args: json.RawMessage(`{}`)}, nil, ToolOptions{}); e.ArgsText() != "" || e.Header().Command != "jobs {}" {
		t.Errorf("empty arguments: %q %q", e.ArgsText(), e.Header().Command)
	}
}

// While its arguments stream, a bash call shows its command as it comes;
// another tool keeps its place and shows nothing.
func TestNewStreamingBlock(t *testing.T) {
	b, ok := NewStreamingBlock("bash")
	if !ok || b.File != nil || b.Call == nil || !b.Call.Streaming || !b.Call.Running {
		t.Fatalf("bash: %+v %v", b, ok)
	}
	if v := ansi.Strip(b.View(80, NewTheme(true))); v != "○ $ writing command…" {
		t.Errorf("streaming bash shows %q", v)
	}
	for _, name := range []string{tools.ReadName, tools.EditName, "jobs", "frobnicate"} {
		if b, ok := NewStreamingBlock(name); ok || b.Call != nil || b.File != nil {
			t.Errorf("%s: %+v %v", name, b, ok)
		}
	}
}
