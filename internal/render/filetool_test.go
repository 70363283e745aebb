package render

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/tools"
)

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// numbered formats lines like the read tool: "%6d\t%s" from line from.
func numbered(from int, lines ...string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("%6d\t%s", from+i, l)
	}
	return strings.Join(out, "\n")
}

var readLines = []string{
	"// fit guarantees a line is at most w cells. Wrapping cannot split a wide",
	"// character, so at w == 1 a CJK or emoji cell would overflow without it.",
	"func fit(s string, w int) string {",
	"\tif len(s) <= w {",
	"\t\t// Bytes bound cells from above for text without escapes.",
	"\t\treturn s",
	"\t}",
	"\tif ansi.StringWidth(s) <= w {",
	"\t\treturn s",
	"\t}",
	"\treturn ansi.Truncate(s, w, \"\")",
	"}",
	"",
	"// wrapLine wraps one logical line (no newlines) into visual lines of at",
}

const editDiff = `--- internal/render/theme.go
+++ internal/render/theme.go
@@ -33,9 +33,10 @@
 	c := lipgloss.Color
 	return Theme{
 		Dim:     lipgloss.NewStyle().Foreground(c("244")),
-		Warning: lipgloss.NewStyle().Foreground(c("214")),
-		Error:   lipgloss.NewStyle().Foreground(c("203")),
+		Warning: lipgloss.NewStyle().Foreground(c("215")),
+		Error:   lipgloss.NewStyle().Foreground(c("196")).Bold(true),
+		Info:    lipgloss.NewStyle().Foreground(c("117")),
 		Success: lipgloss.NewStyle().Foreground(c("114")),
 		Bash:    lipgloss.NewStyle().Foreground(c("211")),
 		Accent:  lipgloss.NewStyle().Foreground(c("75")),
@@ -52,3 +53,3 @@
 func (th Theme) paint(s lipgloss.Style, text string) string {
-	if th.NoColor || text == "" {
+	if th.NoColor || len(text) == 0 {
 		return text
`

// fileCases are the five tools in their four states, built from the
// tools' own Details structs so a renamed JSON field breaks the test.
func fileCases(t testing.TB) map[string]map[string]func() *FileCall {
	readArgs := mustJSON(t, map[string]any{"path": "internal/render/text.go", "offset": 98, "limit": 14})
	readOK := func() *FileCall {
		return &FileCall{Tool: tools.ReadName, Args: readArgs,
			Output: numbered(98, readLines...) + "\n\n[Showing lines 98-111 of 155. Use offset=112 to continue.]",
			Details: mustJSON(t, tools.ReadDetails{Path: "/work/main/internal/render/text.go", StartLine: 98, EndLine: 111,
				TotalLines: 155, TruncatedBy: "lines", NextOffset: 112})}
	}

	grepArgs := mustJSON(t, map[string]any{"pattern": `func \(c \*\w+\) View`, "path": "internal", "glob": "*.go"})
	grepOut := strings.Join([]string{
		"internal/render/bang.go:180:func (b *Bang) View(width int, th Theme, spinner string) string {",
		"internal/render/filetool.go:68:func (c *FileCall) View(width int, th Theme) string {",
		"internal/render/toolcall.go:57:func (c *ToolCall) View(width int, th Theme) string {",
		"internal/tui/items.go:31:func (c *cachedText) View(width int) string {",
		"internal/tui/items.go:92:func (c *toolItem) View(width int, st *styles, _ string) string {",
		"internal/tui/pager.go:140:func (c *pager) View() string {",
		"internal/tui/pager.go:141:\treturn c.\tview()",
		"internal/tui/editor.go:77:func (c *editor) View(width int) string { // 日本語のコメント 🎉",
	}, "\n")
	grepOK := func() *FileCall {
		return &FileCall{Tool: tools.GrepName, Args: grepArgs, Output: grepOut,
			Details: mustJSON(t, tools.GrepDetails{Matches: 7, Files: 5, Engine: "ripgrep"})}
	}

	findArgs := mustJSON(t, map[string]any{"pattern": "**/*_test.go", "path": "internal/tools"})
	findOut := strings.Join([]string{
		"internal/tools/diff_test.go", "internal/tools/edit_test.go", "internal/tools/filetest_helpers_test.go",
		"internal/tools/find_test.go", "internal/tools/grep_test.go", "internal/tools/ignore_test.go",
		"internal/tools/read_test.go", "internal/tools/tools_test.go", "internal/tools/write_test.go",
	}, "\n")
	findOK := func() *FileCall {
		return &FileCall{Tool: tools.FindName, Args: findArgs, Output: findOut,
			Details: mustJSON(t, tools.FindDetails{Count: 9})}
	}

	editArgs := mustJSON(t, map[string]any{"path": "internal/render/theme.go",
		"oldText": "Foreground(c(\"214\"))", "newText": "Foreground(c(\"215\"))"})
	editOK := func() *FileCall {
		return &FileCall{Tool: tools.EditName, Args: editArgs,
			Output:  "Replaced 1 occurrence in internal/render/theme.go.\n" + strings.TrimSuffix(editDiff, "\n"),
			Details: mustJSON(t, tools.EditDetails{Diff: editDiff, Path: "/work/main/internal/render/theme.go", Replacements: 1})}
	}

	writeArgs := mustJSON(t, map[string]any{"path": "docs/filetool-notes.md", "content": strings.Repeat("notes\n", 42)})
	writeOK := func() *FileCall {
		return &FileCall{Tool: tools.WriteName, Args: writeArgs, Output: "Wrote 252 bytes (42 lines) to docs/filetool-notes.md",
			Details: mustJSON(t, tools.WriteDetails{Path: "/work/main/docs/filetool-notes.md", Bytes: 252, Lines: 42, Created: true})}
	}

	states := func(args json.RawMessage, tool string, ok func() *FileCall, errText string) map[string]func() *FileCall {
		return map[string]func() *FileCall{
			"running":   func() *FileCall { return &FileCall{Tool: tool, Args: args, Running: true} },
			"collapsed": ok,
			"expanded": func() *FileCall {
				c := ok()
				c.Expanded = true
				return c
			},
			"error": func() *FileCall { return &FileCall{Tool: tool, Args: args, IsError: true, Output: errText} },
		}
	}
	return map[string]map[string]func() *FileCall{
		"read": states(readArgs, tools.ReadName, readOK, "File not found: internal/render/text.go"),
		"grep": states(grepArgs, tools.GrepName, grepOK,
			"Invalid regular expression: error parsing regexp: invalid escape sequence: `\\w+\\) View\\(`\n"+
				"Go RE2 syntax: no lookaround or backreferences.\nEscape literal metacharacters like \\( or \\.\n"+
				"See https://github.com/google/re2/wiki/Syntax"),
		"find": states(findArgs, tools.FindName, findOK, "File not found: internal/tools (a parent is not a directory)"),
		"edit": states(editArgs, tools.EditName, editOK,
			"Could not find the text to replace in internal/render/theme.go. oldText must match exactly, including "+
				"whitespace and indentation; read the file again to check."),
		"write": states(writeArgs, tools.WriteName, writeOK, "Permission denied: docs/filetool-notes.md"),
	}
}

// fileExtraCases are the special shapes: partial reads of artifacts,
// empty results, long paths, unknown tools and unusable details.
func fileExtraCases(t testing.TB) map[string]func() *FileCall {
	return map[string]func() *FileCall{
		"read_artifact": func() *FileCall {
			return &FileCall{Tool: tools.ReadName, Args: mustJSON(t, map[string]any{"path": "artifact://3"}),
				Output: numbered(1, "a", "b", "c") + "\n\n[Showing lines 1-2000 of 100000 (50.0KB limit). Use offset=2001 to continue.]",
				Details: mustJSON(t, tools.ReadDetails{Path: "/tmp/a/3.log", Artifact: "artifact://3", StartLine: 1, EndLine: 2000,
					TotalLines: 100000, TruncatedBy: "bytes", NextOffset: 2001})}
		},
		"read_whole": func() *FileCall {
			return &FileCall{Tool: tools.ReadName, Args: mustJSON(t, map[string]any{"path": "go.mod"}),
				Output:  numbered(1, "module agentsh", "", "go 1.26"),
				Details: mustJSON(t, tools.ReadDetails{Path: "/work/main/go.mod", StartLine: 1, EndLine: 3, TotalLines: 3})}
		},
		"read_empty": func() *FileCall {
			return &FileCall{Tool: tools.ReadName, Args: mustJSON(t, map[string]any{"path": "empty.txt"}),
				Output: "[File is empty: empty.txt]", Details: mustJSON(t, tools.ReadDetails{Path: "/w/empty.txt"})}
		},
		"read_longpath": func() *FileCall {
			return &FileCall{Tool: tools.ReadName,
				Args:   mustJSON(t, map[string]any{"path": "internal/some/deeply/nested/package/with/a_really_long_file_name_test.go"}),
				Output: numbered(1, "package with"),
				Details: mustJSON(t, tools.ReadDetails{Path: "/x", StartLine: 1, EndLine: 1, TotalLines: 4000,
					TruncatedBy: "lines", NextOffset: 2})}
		},
		"grep_none": func() *FileCall {
			return &FileCall{Tool: tools.GrepName, Args: mustJSON(t, map[string]any{"pattern": "TODO", "ignoreCase": true, "context": 2}),
				Output: "No matches found", Details: mustJSON(t, tools.GrepDetails{Engine: "go"})}
		},
		"grep_limit": func() *FileCall {
			return &FileCall{Tool: tools.GrepName, Args: mustJSON(t, map[string]any{"pattern": "x", "limit": "2"}),
				Output:  "a.go:1:x\nb.go:9:xx\n\n[Showing first 2 matches. Narrow the search or raise limit.]",
				Details: mustJSON(t, tools.GrepDetails{Matches: 2, Files: 2, Truncated: true, Engine: "go"})}
		},
		"find_none": func() *FileCall {
			return &FileCall{Tool: tools.FindName, Args: mustJSON(t, map[string]any{"pattern": "*.rs"}),
				Output: "No files found matching pattern", Details: mustJSON(t, tools.FindDetails{})}
		},
		"edit_replaceall": func() *FileCall {
			return &FileCall{Tool: tools.EditName,
				Args:   mustJSON(t, map[string]any{"path": "a.txt", "oldText": "x", "newText": "y", "replaceAll": true}),
				Output: "Replaced 2 occurrences in a.txt.",
				Details: mustJSON(t, tools.EditDetails{Path: "/w/a.txt", Replacements: 2,
					Diff: "--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n-x\n--- x\n+y\n+--- y\n\\ No newline at end of file\n"})}
		},
		"write_existing": func() *FileCall {
			return &FileCall{Tool: tools.WriteName, Args: mustJSON(t, map[string]any{"path": "a.txt", "content": "y\n"}),
				Output: "Wrote 2 bytes (1 line) to a.txt", Details: mustJSON(t, tools.WriteDetails{Path: "/w/a.txt", Bytes: 2, Lines: 1})}
		},
		"unknown": func() *FileCall {
			return &FileCall{Tool: "web_fetch", Args: json.RawMessage(`{ "url": "https://example.com/docs",  "max": 3 }`),
				Output: seq(1, 8)}
		},
		"bad_args": func() *FileCall {
			return &FileCall{Tool: tools.ReadName, Args: json.RawMessage(`{"path": 42}`), Output: "Invalid path: expected a string, got 42", IsError: true}
		},
		"no_details": func() *FileCall {
			return &FileCall{Tool: tools.GrepName, Args: mustJSON(t, map[string]any{"pattern": "x"}), Output: "a.go:1:x\n"}
		},
	}
}

func TestFileCallGolden(t *testing.T) {
	th := NewTheme(true)
	for tool, states := range fileCases(t) {
		for state, mk := range states {
			for _, w := range goldenWidths {
				name := fmt.Sprintf("filetool_%s_%s_w%d", tool, state, w)
				t.Run(name, func(t *testing.T) { checkGolden(t, name, mk().View(w, th), w) })
			}
		}
	}
	for extra, mk := range fileExtraCases(t) {
		for _, w := range goldenWidths {
			name := fmt.Sprintf("filetool_%s_w%d", extra, w)
			t.Run(name, func(t *testing.T) { checkGolden(t, name, mk().View(w, th), w) })
		}
	}
}

// TestFileCallColorGolden proves the diff is coloured: added lines in the
// success colour, removed ones in the error colour, hunk headers dim.
func TestFileCallColorGolden(t *testing.T) {
	th := NewTheme(false)
	c := fileCases(t)["edit"]["collapsed"]()
	v := c.View(40, th)
	for _, want := range []string{
		th.Success.Render("+                Warning: lipgloss.Ne…"),
		th.Dim.Render("@@ -33,9 +33,10 @@"),
		th.Success.Render("+4") + " " + th.Error.Render("−3"),
	} {
		if !strings.Contains(v, want) {
			t.Errorf("missing %q in\n%s", want, v)
		}
	}
	checkGolden(t, "filetool_edit_color_w40", v, 40)
}

func TestFileCallHeaders(t *testing.T) {
	th := NewTheme(true)
	first := func(c *FileCall, w int) string { return strings.SplitN(c.View(w, th), "\n", 2)[0] }
	cases := fileCases(t)
	extra := fileExtraCases(t)
	for _, c := range []struct {
		c    *FileCall
		want string
	}{
		{cases["read"]["collapsed"](), "✓ read internal/render/text.go:98-111 (of 155 lines)"},
		{cases["read"]["running"](), "○ read internal/render/text.go:98-111"},
		{extra["read_whole"](), "✓ read go.mod:1-3"},
		{extra["read_artifact"](), "✓ read artifact://3:1-2000 (of 100000 lines)"},
		{extra["read_empty"](), "✓ read empty.txt · empty file"},
		{cases["grep"]["collapsed"](), `✓ grep "func \(c \*\w+\) View" in internal [*.go] · 7 matches in 5 files`},
		{extra["grep_none"](), `✓ grep -i -C2 "TODO" · No matches`},
		{extra["grep_limit"](), `✓ grep "x" · first 2 matches in 2 files`},
		{cases["find"]["collapsed"](), "✓ find **/*_test.go in internal/tools · 9 files"},
		{extra["find_none"](), "✓ find *.rs · No files"},
		{cases["edit"]["collapsed"](), "✓ edit internal/render/theme.go · +4 −3"},
		{extra["edit_replaceall"](), "✓ edit a.txt · +2 −2 in 2 places"},
		{cases["write"]["collapsed"](), "✓ write docs/filetool-notes.md · created, 252 bytes, 42 lines"},
		{extra["write_existing"](), "✓ write a.txt · 2 bytes, 1 line"},
		{cases["write"]["error"](), "✗ write docs/filetool-notes.md"},
		{extra["unknown"](), `✓ web_fetch {"url":"https://example.com/docs","max":3}`},
		{extra["bad_args"](), `✗ read {"path":42}`},
		{extra["no_details"](), `✓ grep "x"`},
	} {
		if got := first(c.c, 120); got != c.want {
			t.Errorf("header:\n got %q\nwant %q", got, c.want)
		}
	}
}

func TestFileCallBodies(t *testing.T) {
	th := NewTheme(true)
	cases := fileCases(t)
	for _, c := range []struct {
		c             *FileCall
		want, notWant []string
	}{
		{c: cases["read"]["collapsed"](), want: []string{"\n  " + ReadHint(14)}, notWant: []string{"fit"}},
		{c: cases["read"]["expanded"](), want: []string{"\n   98  // fit", "\n  100  func fit(s string, w int) string {\n  101          if len(s) <= w {"},
			notWant: []string{"Showing", "ctrl+o"}},
		{c: cases["grep"]["collapsed"](), want: []string{"\n  " + laterHint(3)}, notWant: []string{"pager.go:141"}},
		{c: cases["grep"]["expanded"](), want: []string{"pager.go:141:      return c.       view()"}, notWant: []string{"ctrl+o"}},
		{c: cases["find"]["collapsed"](), want: []string{"\n  internal/tools/grep_test.go\n  " + laterHint(4)}},
		{c: cases["edit"]["collapsed"](), want: []string{"\n  @@ -33,9 +33,10 @@\n", "\n  " + laterHint(5)},
			notWant: []string{"--- internal", "+++ internal", "len(text)"}},
		{c: cases["edit"]["expanded"](), want: []string{"\n  +        if th.NoColor || len(text) == 0 {\n"}, notWant: []string{"ctrl+o"}},
		{c: fileExtraCases(t)["grep_limit"](), notWant: []string{"Showing"}},
		{c: fileExtraCases(t)["unknown"](), want: []string{"\n  5\n  " + laterHint(3)}},
	} {
		v := c.c.View(100, th)
		for _, w := range c.want {
			if !strings.Contains(v, w) {
				t.Errorf("%s: missing %q in\n%s", c.c.Tool, w, v)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(v, w) {
				t.Errorf("%s: unexpected %q in\n%s", c.c.Tool, w, v)
			}
		}
	}
	// Errors show three visual lines, then the hint; expanded, all of them.
	e := cases["edit"]["error"]()
	if lines := strings.Split(e.View(40, th), "\n"); len(lines) != 6 || !strings.HasPrefix(lines[4], "  "+laterHint(2)) {
		t.Errorf("collapsed error:\n%s", strings.Join(lines, "\n"))
	}
	e.Expanded = true
	if v := e.View(40, th); strings.Contains(v, "ctrl+o") || !strings.HasSuffix(v, "check.") {
		t.Errorf("expanded error:\n%s", v)
	}
	for _, state := range []string{"running", "collapsed", "expanded"} {
		if v := cases["write"][state]().View(100, th); strings.Contains(v, "\n") {
			t.Errorf("write %s has a body:\n%s", state, v)
		}
	}
	if v := cases["read"]["running"]().View(100, th); strings.Contains(v, "\n") {
		t.Errorf("running read has a body:\n%s", v)
	}
}

func TestFileCallCache(t *testing.T) {
	th := NewTheme(true)
	c := fileCases(t)["edit"]["collapsed"]()
	big := mustJSON(t, map[string]any{"path": "big.txt", "oldText": strings.Repeat("a", 1<<20), "newText": "b"})
	c.Args = big
	a := c.View(80, th)
	if b := c.View(80, th); a != b || c.renders != 1 {
		t.Fatalf("cached view re-rendered: renders=%d", c.renders)
	}
	steps := []func(){
		func() { c.Expanded = true },
		func() { c.Output += "more" },
		func() { c.Running = true },
		func() { c.Running = false; c.IsError = true },
		func() { c.IsError = false; c.Tool = tools.ReadName },
		func() { c.Tool = tools.EditName; c.Args = mustJSON(t, map[string]any{"path": "other.go"}) },
		func() { c.Details = mustJSON(t, tools.EditDetails{Diff: "@@ -1 +1 @@\n-a\n+b\n"}) },
	}
	for i, step := range steps {
		step()
		c.View(80, th)
		if c.renders != i+2 {
			t.Fatalf("step %d: renders=%d, want %d", i, c.renders, i+2)
		}
		c.View(80, th)
		if c.renders != i+2 {
			t.Fatalf("step %d: second view re-rendered", i)
		}
	}
	// A new slice with the same bytes is not a change.
	c.Details = append(json.RawMessage(nil), c.Details...)
	c.Args = append(json.RawMessage(nil), c.Args...)
	c.View(80, th)
	if c.renders != len(steps)+1 {
		t.Fatalf("equal copies re-rendered: renders=%d", c.renders)
	}
	c.View(81, th)
	c.View(81, NewTheme(false))
	if c.renders != len(steps)+3 {
		t.Fatalf("width and theme must be part of the key: renders=%d", c.renders)
	}
}

// randomText mixes the contents that break renderers: wide characters,
// emoji, tabs, escape sequences, controls, long words and blank lines.
func randomText(r *rand.Rand, lines int) string {
	pieces := []string{"word", "日本語", "🎉👍🏽", "\t", "\x1b[31mred\x1b[0m", "\x07", "\r", " ", "",
		strings.Repeat("x", 150), "a/b/c.go:12:", "é", "\x1b]0;title\x07", "-", "+", "@@", "\\"}
	var b strings.Builder
	for range lines {
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// fitCalls are the fixtures and random-ish calls of every tool and state.
func fitCalls(t *testing.T) []*FileCall {
	r := rand.New(rand.NewPCG(1, 2))
	var calls []*FileCall
	for _, states := range fileCases(t) {
		for _, mk := range states {
			calls = append(calls, mk())
		}
	}
	for _, mk := range fileExtraCases(t) {
		calls = append(calls, mk())
	}
	for i := range 6 {
		txt := randomText(r, 1+r.IntN(20))
		path := strings.ReplaceAll(randomText(r, 1), "\n", "")
		calls = append(calls,
			&FileCall{Tool: tools.ReadName, Args: mustJSON(t, map[string]any{"path": "p" + path, "offset": i}),
				Output: numbered(1, strings.Split(txt, "\n")...), Expanded: i%2 == 0,
				Details: mustJSON(t, tools.ReadDetails{StartLine: 1, EndLine: 9999, TotalLines: 100000})},
			&FileCall{Tool: tools.GrepName, Args: mustJSON(t, map[string]any{"pattern": path + "x", "path": path, "glob": path}),
				Output: txt, Expanded: i%3 == 0, Details: mustJSON(t, tools.GrepDetails{Matches: 123456, Files: 7890})},
			&FileCall{Tool: tools.FindName, Args: mustJSON(t, map[string]any{"pattern": path + "x"}),
				Output: txt, Details: mustJSON(t, tools.FindDetails{Count: i})},
			&FileCall{Tool: tools.EditName, Args: mustJSON(t, map[string]any{"path": "p" + path}), Expanded: i%2 == 1,
				Details: mustJSON(t, tools.EditDetails{Diff: "--- a\n+++ b\n@@ -1 +1 @@\n" + txt, Replacements: i})},
			&FileCall{Tool: tools.WriteName, Args: mustJSON(t, map[string]any{"path": "p" + path}),
				Details: mustJSON(t, tools.WriteDetails{Bytes: 1 << 40, Lines: 1 << 30, Created: true})},
			&FileCall{Tool: "t" + path, Args: json.RawMessage(txt), Output: txt, IsError: i%2 == 0},
			&FileCall{Tool: tools.EditName, Args: mustJSON(t, map[string]any{"path": "p" + path}), Output: txt, IsError: true, Expanded: i%4 == 0},
			&FileCall{Tool: tools.ReadName, Args: mustJSON(t, map[string]any{"path": "p" + path}), Running: true},
		)
	}
	return calls
}

// TestFileCallFits renders every call at widths 1..120 (and the degenerate
// -1 and 0): nothing may panic, overflow or leak a control character. The
// colour theme styles after wrapping, so a sample of widths covers it.
func TestFileCallFits(t *testing.T) {
	for _, th := range []Theme{NewTheme(true), NewTheme(false)} {
		t.Run(fmt.Sprintf("nocolor=%v", th.NoColor), func(t *testing.T) {
			t.Parallel()
			calls := fitCalls(t) // View fills caches: one set per goroutine
			for w := -1; w <= 120; w++ {
				if !th.NoColor && w > 13 && w%10 != 0 {
					continue
				}
				for _, c := range calls {
					v := c.View(w, th)
					if th.NoColor && strings.Contains(v, "\x1b") {
						t.Fatalf("%s at %d: escape under NO_COLOR: %q", c.Tool, w, v)
					}
					if strings.ContainsAny(ansi0(v), "\t\r\x07") {
						t.Fatalf("%s at %d: control characters: %q", c.Tool, w, v)
					}
					checkFits(t, v, w)
					if t.Failed() {
						t.Fatalf("%s at %d (expanded=%v): %q", c.Tool, w, c.Expanded, v)
					}
				}
			}
		})
	}
}

// ansi0 drops SGR sequences, leaving the text the user sees.
func ansi0(s string) string {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+1:]
	}
}

func TestFileCallNoColor(t *testing.T) {
	th := NewTheme(true)
	for tool, states := range fileCases(t) {
		for state, mk := range states {
			if v := mk().View(60, th); strings.Contains(v, "\x1b") {
				t.Errorf("%s %s: escape under NO_COLOR: %q", tool, state, v)
			}
		}
	}
	if v := fileCases(t)["edit"]["collapsed"]().View(60, NewTheme(false)); !strings.Contains(v, "\x1b[") {
		t.Fatal("the colour theme emits no SGR")
	}
	// The icons are ToolCall's, in its colours.
	col := NewTheme(false)
	for state, icon := range map[string]string{
		"running": col.Accent.Render("○"), "collapsed": col.Success.Render("✓"), "error": col.Error.Render("✗"),
	} {
		if v := fileCases(t)["read"][state]().View(60, col); !strings.HasPrefix(v, icon+" ") {
			t.Errorf("%s: icon %q, view %q", state, icon, v)
		}
	}
}

// TestFileCallRealTools renders results of the real tools, so the renderer
// keeps up with the Details and Content they produce.
func TestFileCallRealTools(t *testing.T) {
	dir := t.TempDir()
	env := tools.Env{Cwd: func() string { return dir }}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() {}\n\nfunc B() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	th := NewTheme(true)
	run := func(tool tools.Tool, args map[string]any) *FileCall {
		raw := mustJSON(t, args)
		res := tool.Execute(context.Background(), raw, nil)
		return &FileCall{Tool: tool.Name(), Args: raw, Output: res.Content, Details: res.Details, IsError: res.IsError}
	}
	for _, c := range []struct {
		c    *FileCall
		want string
	}{
		{run(tools.NewRead(env), map[string]any{"path": "a.go", "limit": 2}), "✓ read a.go:1-2 (of 5 lines)\n  " + ReadHint(2)},
		{run(tools.NewGrep(env), map[string]any{"pattern": "^func"}), "✓ grep \"^func\" · 2 matches in 1 file\n  a.go:3:func A() {}\n  a.go:5:func B() {}"},
		{run(tools.NewFind(env), map[string]any{"pattern": "*.go"}), "✓ find *.go · 1 file\n  a.go"},
		{run(tools.NewEdit(env), map[string]any{"path": "a.go", "oldText": "func B() {}", "newText": "func B() int {\n\treturn 1\n}"}),
			"✓ edit a.go · +3 −1\n  @@ -2,4 +2,6 @@\n   \n   func A() {}\n   \n  -func B() {}\n  +func B() int {\n  +        return 1\n  +}"},
		{run(tools.NewWrite(env), map[string]any{"path": "b/c.txt", "content": "hi\n"}), "✓ write b/c.txt · created, 3 bytes, 1 line"},
		{run(tools.NewRead(env), map[string]any{"path": "nope.go"}), "✗ read nope.go\n  File not found: nope.go"},
	} {
		if got := c.c.View(100, th); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.c.Tool, got, c.want)
		}
	}
}

func BenchmarkFileCallView(b *testing.B) {
	th := NewTheme(false)
	c := fileCases(b)["edit"]["expanded"]()
	c.View(100, th)
	b.ReportAllocs()
	for b.Loop() {
		c.View(100, th)
	}
}

// laterHint is the start of LaterHint for n hidden lines.
func laterHint(n int) string { return fmt.Sprintf("… (%d later lines, showing ", n) }
