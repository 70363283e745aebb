package render

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi/parser"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/sink"
)

func TestHintTexts(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{CollapsedHint(15, 10, 25), "… (15 earlier lines, showing 10 of 25) (ctrl+o to expand)"},
		{EarlierHint(5, 3, 8, ""), "… (5 earlier lines, showing 3 of 8)"},
		{EarlierHint(191698, 8302, 200000, ""), "… (191698 earlier lines, showing 8302 of 200000)"},
		{LaterHint(3, 10, 13, ExpandAction), "… (3 later lines, showing 10 of 13) (ctrl+o to expand)"},
		{TimeoutFooter(60), "⟦Timeout: 60s⟧"},
		{TimeoutFooter(1.5), "⟦Timeout: 1.5s⟧"},
		{TimeoutFooter(3600), "⟦Timeout: 3600s⟧"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "bytes", TotalLines: 100000, OutputLines: 8302, OutputBytes: 51200,
			ShownRange: bash.ShownRange{Start: 91699, End: 100000}, ArtifactID: "3"}),
			"[Showing lines 91699-100000 of 100000 (50.0KB limit). Full output: artifact://3 (ctrl+g to view)]"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "bytes", TotalLines: 9, OutputLines: 2, OutputBytes: 900,
			ShownRange: bash.ShownRange{Start: 8, End: 9}, ArtifactError: "no space left on device"}),
			"[Showing lines 8-9 of 9 (50.0KB limit). Full output not saved: no space left on device]"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "lines", OutputLines: 2000, TotalLines: 5000, ArtifactID: "12"}),
			"[Showing 2000 of 5000 lines. Full output: artifact://12 (ctrl+g to view)]"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "lines", OutputLines: 2000, TotalLines: 5000}),
			"[Showing 2000 of 5000 lines]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestToolCallHintInView(t *testing.T) {
	c := &ToolCall{Command: "seq 1 25", Output: seq(1, 25)}
	v := c.View(100, NewTheme(true))
	want := "  … (15 earlier lines, showing 10 of 25) (ctrl+o to expand)\n  16\n"
	if !strings.Contains(v, want) {
		t.Fatalf("missing %q in\n%s", want, v)
	}
	c.Expanded = true
	if v := c.View(100, NewTheme(true)); strings.Contains(v, "earlier lines") || !strings.Contains(v, "\n  1\n") {
		t.Fatalf("expanded view should show every line and no hint:\n%s", v)
	}
	short := &ToolCall{Command: "seq 1 10", Output: seq(1, 10)}
	if v := short.View(100, NewTheme(true)); strings.Contains(v, "earlier") {
		t.Fatalf("no hint when nothing is hidden:\n%s", v)
	}
}

func TestStripNotice(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\nb\n\n[Showing lines 9901-10000 of 10000 (50.0KB limit). Full: artifact://3]", "a\nb"},
		{"a\n\n[Showing 5 of 10 lines]", "a"},
		{"[Showing lines 1-2 of 3]", ""},
		{"a\n\n[Showing lines 9901-10000 of 10000 (50.0KB limit). Full: artifact://3]\n", "a"},
		// Not the notice: kept as is.
		{"a\n[Showing lines of things]", "a\n[Showing lines of things]"},
		{"echo [Showing lines 1-2 of 3]", "echo [Showing lines 1-2 of 3]"},
		{"plain", "plain"},
		{"", ""},
	} {
		if got := stripNotice(c.in); got != c.want {
			t.Errorf("stripNotice(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	tr := &bash.TruncationMeta{TruncatedBy: "bytes", TotalLines: 9, OutputLines: 3, OutputBytes: 6,
		ShownRange: bash.ShownRange{Start: 7, End: 9}, ArtifactID: "1"}
	c := &ToolCall{Command: "x", Output: "7\n8\n9\n\n[" + bash.TruncationNotice(tr) + "]", Truncation: tr}
	if v := c.View(100, NewTheme(true)); strings.Count(v, "Showing") != 1 || strings.Contains(v, "Full: artifact://1") ||
		strings.Count(v, "artifact://1") != 1 {
		t.Fatalf("notice should show once, in the warning line:\n%s", v)
	}
}

func TestToolCallCache(t *testing.T) {
	th := NewTheme(true)
	c := &ToolCall{Command: "cat big", Output: strings.Repeat("lorem ipsum dolor sit amet ", 400)}
	a := c.View(80, th)
	b := c.View(80, th)
	if a != b || c.renders != 1 {
		t.Fatalf("cached view re-rendered: renders=%d", c.renders)
	}
	steps := []func(){
		func() { c.Output += "more" },
		func() { c.Expanded = true },
		func() { c.Running = true },
		func() { c.IsError = true },
		func() { c.TimeoutSeconds = 5 },
		func() { c.CwdRel = "sub" },
		func() { c.Command = "cat other" },
		func() { c.Truncation = &bash.TruncationMeta{OutputLines: 1} },
		func() { c.Truncation.OutputLines = 2 }, // same pointer, new value
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
	c.View(81, th)
	c.View(81, NewTheme(false))
	if c.renders != len(steps)+3 {
		t.Fatalf("width and theme must be part of the key: renders=%d", c.renders)
	}
}

func TestBangCache(t *testing.T) {
	th := NewTheme(true)
	b := NewBang("yes", false)
	b.Append("y\n")
	b.View(80, th, "a")
	b.View(80, th, "a")
	if b.renders != 1 {
		t.Fatalf("renders=%d", b.renders)
	}
	b.View(80, th, "b") // spinner ticks while running
	b.Append("y\n")
	b.View(80, th, "b")
	if b.renders != 3 {
		t.Fatalf("renders=%d", b.renders)
	}
	b.Finish("y\n", intp(0), false, nil)
	b.View(80, th, "c")
	b.View(80, th, "d") // finished: the spinner no longer matters
	if b.renders != 4 {
		t.Fatalf("renders=%d", b.renders)
	}
	b.Expanded = true
	b.View(80, th, "d")
	if b.renders != 5 {
		t.Fatalf("renders=%d", b.renders)
	}
}

func TestBangStreaming(t *testing.T) {
	b := NewBang("x", false)
	b.Append("hel")
	b.Append("lo\nwor")
	if got := b.logical(); strings.Join(got, "|") != "hello|wor" {
		t.Fatalf("got %q", got)
	}
	b.Append("ld\n")
	b.Append("\n")
	if got := b.logical(); strings.Join(got, "|") != "hello|world|" {
		t.Fatalf("got %q", got)
	}
	v := b.View(40, NewTheme(true), "")
	if !strings.Contains(v, "\nhello\nworld\n\nRunning… 0s · esc to cancel\n") {
		t.Fatalf("view:\n%s", v)
	}
	b.Finish("final\n", intp(0), false, nil)
	b.Append("late\n")
	if got := b.logical(); strings.Join(got, "|") != "final" {
		t.Fatalf("final output must replace the stream, got %q", got)
	}
}

func TestBangStates(t *testing.T) {
	for _, c := range []struct {
		exit      *int
		cancelled bool
		want      BangState
		status    string
	}{
		{nil, false, BangComplete, ""},
		{intp(0), false, BangComplete, ""},
		{intp(2), false, BangError, "(exit 2)"},
		{intp(130), true, BangCancelled, "Command cancelled"},
		{nil, true, BangCancelled, "Command cancelled"},
	} {
		b := NewBang("x", false)
		if b.State() != BangRunning {
			t.Fatal("a new bang runs")
		}
		b.Finish("out\n", c.exit, c.cancelled, nil)
		if b.State() != c.want {
			t.Errorf("exit=%v cancelled=%v: state %d, want %d", c.exit, c.cancelled, b.State(), c.want)
		}
		v := b.View(40, NewTheme(true), "")
		if strings.Contains(v, "Running…") {
			t.Errorf("finished block still running:\n%s", v)
		}
		if c.status != "" && !strings.Contains(v, "\n"+c.status+"\n") {
			t.Errorf("missing %q:\n%s", c.status, v)
		}
		if c.status == "" && (strings.Contains(v, "(exit") || strings.Contains(v, "cancelled")) {
			t.Errorf("complete block shows a status:\n%s", v)
		}
	}
}

func TestBangLineCap(t *testing.T) {
	want := strings.Repeat("x", MaxLineChars) + "… [6000 chars omitted]"
	if got := capLine(strings.Repeat("x", 10000)); got != want {
		t.Fatalf("capLine: len %d", len(got))
	}
	// Streamed in pieces, without a newline for a long time.
	b := NewBang("x", false)
	for range 30 {
		b.Append(strings.Repeat("x", 333) + "")
	}
	b.Append(strings.Repeat("x", 10) + "\nnext")
	if got := b.logical(); len(got) != 2 || got[0] != want || got[1] != "next" {
		t.Fatalf("streamed cap: %d lines, first %d bytes", len(got), len(got[0]))
	}
	// Characters, not bytes.
	wide := strings.Repeat("日", 4001)
	if got := capLine(wide); utf8.RuneCountInString(got) != MaxLineChars+len([]rune("… [1 chars omitted]")) ||
		!strings.HasSuffix(got, "日… [1 chars omitted]") {
		t.Fatalf("rune cap: %q", got[len(got)-40:])
	}
	if capLine(strings.Repeat("日", 4000)) != strings.Repeat("日", 4000) {
		t.Fatal("4000 characters is within the cap")
	}
}

func TestBangHidden(t *testing.T) {
	th := NewTheme(true)
	b := NewBang("seq 1 100", false)
	b.Finish(seq(1, 100), intp(0), false, nil)
	v := b.View(80, th, "")
	// The hint stands where the hidden lines are: above the preview.
	if !strings.Contains(v, "\n$ seq 1 100\n"+CollapsedHint(80, 20, 100)+"\n81\n") || strings.Contains(v, "\n80\n") {
		t.Fatalf("view:\n%s", v)
	}
	b.Expanded = true
	if v := b.View(80, th, ""); !strings.Contains(v, "\n1\n") || strings.Contains(v, "earlier lines") {
		t.Fatalf("expanded:\n%s", v)
	}
	// 20 logical lines of 100 chars are 60 visual lines at 40: the preview
	// keeps the 20 lines, not 20 rows.
	b = NewBang("x", false)
	var out strings.Builder
	for i := range 20 {
		out.WriteString(strings.Repeat(string(rune('a'+i)), 100) + "\n")
	}
	b.Finish(out.String(), intp(0), false, nil)
	v = b.View(40, th, "")
	lines := strings.Split(v, "\n")
	// border, header, 60 rows, border
	if len(lines) != 63 || lines[2] != strings.Repeat("a", 40) || lines[61] != strings.Repeat("t", 20) || strings.Contains(v, "…") {
		t.Fatalf("%d lines:\n%s", len(lines), v)
	}
}

// TestBangLongLineKeepsThePreview: one long line among the last 20 shows
// its first BangLineRows rows ending in "…", and the lines before it stay
// in the preview (it used to take all 20 rows).
func TestBangLongLineKeepsThePreview(t *testing.T) {
	th := NewTheme(true)
	b := NewBang("x", false)
	out := seq(1, 29) + strings.Repeat("0123456789", 300) + "\n" + seq(30, 30)
	b.Finish(out, intp(0), false, nil)
	v := b.View(80, th, "")
	want := "\n$ x\n" + EarlierHint(11, 20, 31, ExpandAction) + "\n12\n13\n"
	if !strings.Contains(v, want) {
		t.Fatalf("the lines before the long one are not shown, want %q:\n%s", want, v)
	}
	row := strings.Repeat("0123456789", 8)
	if !strings.Contains(v, "\n29\n"+row+"\n"+row+"\n"+row[:79]+"…\n30\n") {
		t.Fatalf("the long line is not cut to %d rows:\n%s", BangLineRows, v)
	}
	if n := strings.Count(v, "\n") + 1; n != 2+1+19+BangLineRows+1 { // borders, header, hint, 19 short lines
		t.Errorf("%d rows:\n%s", n, v)
	}
	b.Expanded = true
	if v := b.View(80, th, ""); strings.Contains(v, "…") || strings.Count(v, row) != 300*10/80 {
		t.Errorf("expanded, the long line is not whole:\n%s", v)
	}
}

// TestPreviewCountsWhatTheCommandPrinted: the hint of a truncated result
// counts the lines the command printed, not those of the tail kept in
// memory, in the bang block and the tool block, collapsed and expanded.
func TestPreviewCountsWhatTheCommandPrinted(t *testing.T) {
	th := NewTheme(true)
	tr := &bash.TruncationMeta{Direction: "tail", TruncatedBy: "bytes", TotalLines: 200000, TotalBytes: 1288895,
		OutputLines: 7315, OutputBytes: 51200, ShownRange: bash.ShownRange{Start: 192686, End: 200000}, ArtifactID: "3"}
	tail := seq(192686, 200000)
	b := NewBang("seq 1 200000", false)
	b.Finish(tail, intp(0), false, tr)
	v := b.View(100, th, "")
	if !strings.Contains(v, "\n$ seq 1 200000\n"+CollapsedHint(199980, 20, 200000)+"\n199981\n") {
		t.Errorf("bang collapsed:\n%s", v)
	}
	b.Expanded = true
	if v := b.View(100, th, ""); !strings.Contains(v, "\n$ seq 1 200000\n"+
		EarlierHint(192685, 7315, 200000, "")+"\n192686\n") {
		t.Errorf("bang expanded:\n%.300s", v)
	}
	c := &ToolCall{Command: "seq 1 200000", Output: tail + "\n[" + bash.TruncationNotice(tr) + "]", Truncation: tr}
	v = c.View(100, th)
	if !strings.Contains(v, "\n  "+CollapsedHint(199990, 10, 200000)+"\n  199991\n") ||
		!strings.Contains(v, "\n  [Showing lines 192686-200000 of 200000 (50.0KB limit). Full output: artifact://3 (ctrl+g to view)]") {
		t.Errorf("tool collapsed:\n%s", v)
	}
	c.Expanded = true
	if v := c.View(100, th); !strings.Contains(v, "\n  "+EarlierHint(192685, 7315, 200000, "")+"\n  192686\n") {
		t.Errorf("tool expanded:\n%.300s", v)
	}
	// A failed command: the status follows the output and is not counted.
	c = &ToolCall{Command: "seq 1 30; exit 2", IsError: true, Output: seq(1, 30) + "\nCommand exited with code 2"}
	if v := c.View(100, th); !strings.Contains(v, "\n  "+CollapsedHint(20, 10, 30)+"\n  21\n") ||
		!strings.HasSuffix(v, "\n  30\n  Command exited with code 2") {
		t.Errorf("tool error:\n%s", v)
	}
	// `tail: 3` of the same output: nothing to expand; the warning line
	// offers the pager.
	tr3 := &bash.TruncationMeta{Direction: "tail", TruncatedBy: "lines", TotalLines: 200000, OutputLines: 3, OutputBytes: 21,
		ShownRange: bash.ShownRange{Start: 199998, End: 200000}, ArtifactID: "4"}
	c = &ToolCall{Command: "seq 1 200000", Output: seq(199998, 200000), Truncation: tr3}
	if v := c.View(100, th); !strings.Contains(v, "\n  "+EarlierHint(199997, 3, 200000, "")+"\n  199998\n") ||
		!strings.Contains(v, "Full output: artifact://4 (ctrl+g to view)]") {
		t.Errorf("tool tail 3:\n%s", v)
	}
	// `head: 3`: the hidden lines are below.
	trh := &bash.TruncationMeta{Direction: "head", TruncatedBy: "lines", TotalLines: 200000, OutputLines: 3, OutputBytes: 6,
		ShownRange: bash.ShownRange{Start: 1, End: 3}, ArtifactID: "5"}
	c = &ToolCall{Command: "seq 1 200000", Output: seq(1, 3), Truncation: trh}
	if v := c.View(100, th); !strings.Contains(v, "\n  3\n  "+LaterHint(199997, 3, 200000, "")+"\n") ||
		strings.Contains(v, "earlier") {
		t.Errorf("tool head 3:\n%s", v)
	}
}

func TestBangLiveBound(t *testing.T) {
	b := NewBang("yes", false)
	chunk := strings.Repeat("y\n", 16<<10)
	for range 200 {
		b.Append(chunk)
	}
	b.Append("partial")
	if n := len(b.lines) - b.head; n > maxLiveLines {
		t.Fatalf("%d live lines", n)
	}
	if got := b.dropped + len(b.lines) - b.head; got != 200*16<<10 {
		t.Fatalf("dropped+kept = %d", got)
	}
	if len(b.lines) > 2*maxLiveLines+1024 {
		t.Fatalf("backing slice grows: %d", len(b.lines))
	}
	v := b.View(40, NewTheme(true), "")
	if !strings.Contains(v, "\ny\npartial\nRunning…") {
		t.Fatalf("view:\n%s", v)
	}
	// Long lines hit the byte budget before the line budget.
	b = NewBang("x", false)
	line := strings.Repeat("z", 3000) + "\n"
	for range 1000 {
		b.Append(line)
	}
	if b.liveBytes > maxLiveBytes {
		t.Fatalf("live bytes %d", b.liveBytes)
	}
}

// TestNarrowWidths renders every case at tiny and odd widths: nothing may
// panic or overflow, CJK and emoji included.
func TestNarrowWidths(t *testing.T) {
	for _, th := range []Theme{NewTheme(true), NewTheme(false)} {
		for w := -1; w <= 13; w++ {
			for name, mk := range toolCases() {
				for _, exp := range []bool{false, true} {
					c := mk()
					c.Expanded = exp
					c.Command += " 日本語🎉\tx"
					v := c.View(w, th)
					if th.NoColor && strings.Contains(v, "\x1b") {
						t.Fatalf("%s: SGR under NO_COLOR", name)
					}
					checkFits(t, v, w)
				}
			}
			for name, mk := range bangCases() {
				b := mk()
				b.Command = "日本語🎉 " + b.Command
				v := b.View(w, th, "⠋")
				if th.NoColor && strings.Contains(v, "\x1b") {
					t.Fatalf("%s: SGR under NO_COLOR", name)
				}
				checkFits(t, v, w)
			}
		}
	}
}

func TestSanitizesOutput(t *testing.T) {
	c := &ToolCall{Command: "x", Output: "\x1b[31mred\x1b[0m\x07bell\r\nnext"}
	v := c.View(40, NewTheme(true))
	if strings.ContainsAny(v, "\x1b\x07\r") || !strings.Contains(v, "  redbell\n  next") {
		t.Fatalf("%q", v)
	}
}

// refToolCallRender is (*ToolCall).render before collapsed calls counted
// rows instead of wrapping everything: it wraps the whole output and keeps
// the tail. The differential tests hold the new path to it byte for byte.
func refToolCallRender(c *ToolCall, width int, th Theme) string {
	w := max(width, 1)
	ind := ""
	if w >= indentMin {
		ind = "  "
	}
	bw := w - len(ind)
	var out []string

	icon, iconStyle := "✓", th.Success
	switch {
	case c.Running:
		icon, iconStyle = "○", th.Accent
	case c.IsError:
		icon, iconStyle = "✗", th.Error
	}
	cmd := c.Command
	if strings.TrimSpace(cmd) == "" {
		cmd = "…"
	}
	if c.CwdRel != "" {
		cmd = "cd " + c.CwdRel + " && " + cmd
	}
	head := "$ " + sink.Sanitize(cmd)
	if w >= 3 {
		hl := wrapText(nil, head, w-2)
		more := 0
		if !c.Expanded && len(hl) > maxCommandLines {
			more = len(hl) - (maxCommandLines - 1)
			hl = hl[:maxCommandLines-1]
		}
		for i, l := range hl {
			if i == 0 {
				out = append(out, th.paint(iconStyle, icon)+" "+l)
			} else {
				out = append(out, "  "+l)
			}
		}
		if more > 0 {
			for _, l := range wrapText(nil, "… ("+itoa(more)+" more command lines)", w-2) {
				out = append(out, "  "+th.paint(th.Dim, l))
			}
		}
	} else {
		out = append(out, th.paint(iconStyle, fit(icon, w)))
	}

	text := stripNotice(sink.Sanitize(c.Output))
	status := ""
	if c.IsError {
		if i := strings.LastIndex(text, "Command "); i >= 0 && statusRE.MatchString(text[max(i-2, 0):]) {
			text, status = strings.TrimSuffix(text[:i], "\n\n"), text[i:]
		}
	}
	var vis []string
	owner := []int{} // the logical line of each row
	lines := splitLines(text)
	for i, l := range lines {
		n := len(vis)
		vis = wrapLine(vis, l, bw)
		for range len(vis) - n {
			owner = append(owner, i)
		}
	}
	before := 0
	if tr := c.Truncation; tr != nil {
		before = tr.TotalLines - tr.OutputLines
	}
	if total := len(vis); !c.Expanded && (total > PreviewLines || before > 0) {
		first := 0
		if total > PreviewLines {
			first = owner[total-PreviewLines]
			vis = vis[total-PreviewLines:]
		}
		k, v := before+first, len(lines)-first
		act := ""
		if total > PreviewLines {
			act = ExpandAction
		}
		hint := EarlierHint(k, v, k+v, act)
		if k == 0 {
			hint = "… (" + act + ")"
		}
		out = appendStyled(out, th, th.Dim, ind, hint, bw)
	}
	for _, l := range vis {
		switch {
		case l == "":
		case c.IsError:
			l = ind + th.paint(th.Error, l)
		default:
			l = ind + l
		}
		out = append(out, l)
	}
	if status != "" {
		out = appendStyled(out, th, th.Error, ind, status, bw)
	}
	if c.Running {
		out = appendStyled(out, th, th.Dim, ind, RunningText(c.Elapsed), bw)
	}
	if c.TimeoutSeconds > 0 {
		out = appendStyled(out, th, th.Dim, ind, TimeoutFooter(c.TimeoutSeconds), bw)
	}
	if c.Truncation != nil {
		out = appendStyled(out, th, th.Warning, ind, TruncationWarning(c.Truncation), bw)
	}
	return strings.Join(out, "\n")
}

// collapsePieces are the contents that move row counts: wide characters,
// emoji sequences, combining marks, tabs, escapes, C0/C1 controls, CR,
// invalid UTF-8, hyphens, runs of spaces and words longer than any width.
var collapsePieces = []string{
	"word", "a", "output text", " ", "  ", "   ", "-", "--", "a-b", "x-", "\t", "\t\t",
	"日本語", "漢", "한국어", "ｗｉｄｅ", "🎉", "👍🏽", "👨‍👩‍👧", "🇯🇵", "❤️", "e\u0301", "\u00a0", "\u200b",
	"\u3000", "\u2028", "\u0085", "\u2003", "\x1b[31m", "\x1b[0m", "\x1b[1;32mok\x1b[0m",
	"\x1b]8;;http://x\x07link\x1b]8;;\x07", "\x1b]0;t\x1b\\", "\x1bP1$r\x1b\\", "\x1b(B", "\x1b",
	"\x07", "\x00", "\x08", "\x7f", "\r", "\r\n", "\x9b", "\xff", "\xe6\x97", "\xc2",
	"[Showing lines 1-2 of 9]", "path/to/file.go:12:3:", "\\", "@@ -1,2 +1,3 @@",
}

// collapseOutput builds a random tool output: blank lines, trailing
// newlines, lines of one long word and lines of many pieces.
func collapseOutput(r *rand.Rand) string {
	var b strings.Builder
	lines := r.IntN(30)
	if r.IntN(8) == 0 {
		lines = r.IntN(120)
	}
	for i := range lines {
		switch r.IntN(10) {
		case 0: // blank
		case 1:
			b.WriteString(strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(300)))
		case 2:
			b.WriteString(strings.Repeat(collapsePieces[r.IntN(len(collapsePieces))], 1+r.IntN(60)))
		default:
			for range r.IntN(30) {
				b.WriteString(collapsePieces[r.IntN(len(collapsePieces))])
			}
		}
		if i < lines-1 || r.IntN(3) > 0 {
			b.WriteString(strings.Repeat("\n", 1+r.IntN(2)*r.IntN(3)))
		}
	}
	if r.IntN(10) == 0 {
		b.WriteString("\n\n[Showing lines 1-50 of 900. Full: artifact://7]\n")
	}
	return b.String()
}

// checkCollapsed compares the collapsed View and the row counter with the
// reference at width w.
func checkCollapsed(t *testing.T, c *ToolCall, w int, th Theme) {
	t.Helper()
	c.Expanded = false
	got := c.View(w, th)
	if want := refToolCallRender(c, w, th); got != want {
		t.Fatalf("width %d, output %q:\ngot:\n%s\nwant:\n%s", w, c.Output, got, want)
	}
}

// checkRows compares wrapRows with the wrap it stands for, on raw lines
// (unsanitised, so escapes and controls reach the counter too).
func checkRows(t *testing.T, text string, w int) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if got, want := wrapRows(l, w), len(wrapLine(nil, l, w)); got != want {
			t.Fatalf("wrapRows(%q, %d) = %d, wrap gives %d", l, w, got, want)
		}
	}
}

func TestToolCallCollapsedMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	n := 60
	if testing.Short() {
		n = 20
	}
	themes := []Theme{NewTheme(true), NewTheme(false)}
	for range n {
		out := collapseOutput(r)
		c := &ToolCall{Command: "cat x", Output: out, IsError: r.IntN(4) == 0, Running: r.IntN(6) == 0}
		if r.IntN(4) == 0 {
			c.TimeoutSeconds = 30
		}
		if r.IntN(5) == 0 {
			c.Truncation = &bash.TruncationMeta{TruncatedBy: "lines", OutputLines: 50, TotalLines: 900, ArtifactID: "7"}
		}
		th := themes[r.IntN(2)]
		for w := 1; w <= 120; w++ {
			checkCollapsed(t, c, w, th)
			checkRows(t, out, w)
		}
	}
}

func TestWrapRowsEdges(t *testing.T) {
	long := strings.Repeat("x", 250)
	for _, l := range []string{
		"", " ", "-", "a-", "-a", "--------", "a - b", long, long + " " + long, " " + long,
		strings.Repeat("ab ", 90), strings.Repeat("a-", 90), strings.Repeat("日", 90),
		"x" + strings.Repeat("日", 90), strings.Repeat("👨‍👩‍👧 ", 40), "\t" + long, "a\tb\tc\t" + long,
		strings.Repeat("\x1b[31mab\x1b[0m ", 40), strings.Repeat(" ", 200) + "x", long + strings.Repeat(" ", 200),
		strings.Repeat("a\u00a0", 90), strings.Repeat("\u3000b", 90), "a\r" + long,
	} {
		for w := -1; w <= 130; w++ {
			checkRows(t, l, w)
		}
	}
}

// TestASCIIFastPathAssumption pins what asciiWrapRows takes for granted:
// the parser prints every byte ' '..'~' from its ground state and stays
// there, so the wrap never sees an escape or a cluster in such a line.
func TestASCIIFastPathAssumption(t *testing.T) {
	for c := byte(' '); c <= '~'; c++ {
		state, action := parser.Table.Transition(parser.GroundState, c)
		if state != parser.GroundState || action != parser.PrintAction {
			t.Fatalf("byte %q: state %v action %v", c, state, action)
		}
	}
}

func FuzzToolCallCollapsed(f *testing.F) {
	f.Add("hello\nworld\n", uint8(40), false)
	f.Add(strings.Repeat("line of output text that wraps at narrow widths\n", 30), uint8(17), true)
	f.Add("\t日本語\t🎉\x1b[31mred\x1b[0m\r\n"+strings.Repeat("y", 300), uint8(9), false)
	themes := []Theme{NewTheme(true), NewTheme(false)}
	f.Fuzz(func(t *testing.T, out string, width uint8, isError bool) {
		if len(out) > 1<<16 {
			t.Skip("large inputs add time, not coverage")
		}
		w := int(width) % 131
		c := &ToolCall{Command: "x", Output: out, IsError: isError}
		checkCollapsed(t, c, w, themes[int(width)%2])
		checkRows(t, out, w)
	})
}

// A command that became a job neither failed nor was cancelled: its block
// says which job it is now.
func TestBangJob(t *testing.T) {
	b := NewBang("sleep 100", false)
	b.Append("started\n")
	b.FinishAsJob("started\n\n["+bash.DetachSentence(bash.DetachUser, "3", 0)+"]", "3", nil)
	if b.State() != BangJob || b.JobID() != "3" || b.ExitCode() != nil {
		t.Fatalf("state %d, job %q, exit %v", b.State(), b.JobID(), b.ExitCode())
	}
	v := b.View(100, NewTheme(true), "⠋")
	for _, want := range []string{"\nstarted\n", "it became job 3.]\n", "\n→ job 3\n"} {
		if !strings.Contains(v, want) {
			t.Errorf("missing %q:\n%s", want, v)
		}
	}
	for _, bad := range []string{"Running…", "(exit", "(cancelled)"} {
		if strings.Contains(v, bad) {
			t.Errorf("shows %q:\n%s", bad, v)
		}
	}
}

// The collapsed call of a command that became a job drops the output's
// notice (the warning line says it) and the model's instructions; expanded,
// the result is whole.
func TestToolCallJob(t *testing.T) {
	tr := &bash.TruncationMeta{Direction: "tail", TruncatedBy: "lines", TotalLines: 3000, TotalBytes: 13893,
		OutputLines: 2000, OutputBytes: 9893, ShownRange: bash.ShownRange{Start: 1001, End: 3000}, ArtifactID: "2"}
	notice := "[" + bash.TruncationNotice(tr) + "]"
	para := bash.DetachSentence(bash.DetachTimer, "2", 2*time.Second) + " Job 2 is running."
	c := &ToolCall{Command: "seq 3000; sleep 100", JobID: "2", Truncation: tr,
		Output: "2999\n3000\n\n" + notice + "\n\n" + para + " " + bash.JobToolsHint("2")}
	v := c.View(200, NewTheme(true))
	if !strings.HasPrefix(v, "→ $ seq 3000") {
		t.Errorf("icon of a job is not →:\n%s", v)
	}
	if !strings.Contains(v, "  3000\n\n  "+para+"\n") {
		t.Errorf("output then the job paragraph expected:\n%s", v)
	}
	for _, bad := range []string{notice, "job_output"} {
		if strings.Contains(v, bad) {
			t.Errorf("collapsed view shows %q:\n%s", bad, v)
		}
	}
	c.Expanded = true
	if v := c.View(200, NewTheme(true)); !strings.Contains(v, "job_output") {
		t.Errorf("expanded view lost the result's end:\n%s", v)
	}
}

// TestBangProgressBar: a line drawn over itself with CR streams as one line
// in its latest state, also when the CR ends a chunk.
func TestBangProgressBar(t *testing.T) {
	b := NewBang("pip install x", false)
	b.Append("Collecting x\n 10%")
	b.Append("\r 50%")
	if got := strings.Join(b.logical(), "|"); got != "Collecting x| 50%" {
		t.Fatalf("got %q", got)
	}
	b.Append("\r")
	b.Append("100%\ndone\r\n")
	if got := strings.Join(b.logical(), "|"); got != "Collecting x|100%|done" {
		t.Fatalf("got %q", got)
	}
	for range 1000 {
		b.Append("\r" + strings.Repeat("#", 30))
	}
	b.Append("\rfinished")
	if got := strings.Join(b.logical(), "|"); got != "Collecting x|100%|done|finished" {
		t.Fatalf("got %q", got)
	}
}

// TestCancelNotice: a cancelled or timed-out command shows one notice,
// after its output, in the tool block (with the truncation notice and the
// agent loop's suffix around the output) and in the bang block; the hint
// does not count it.
func TestCancelNotice(t *testing.T) {
	th := NewTheme(true)
	tr := &bash.TruncationMeta{Direction: "tail", TruncatedBy: "bytes", TotalLines: 100, OutputLines: 30, OutputBytes: 51200,
		ShownRange: bash.ShownRange{Start: 71, End: 100}, ArtifactID: "2"}
	res := bash.Finalize(nil, &bash.ToolAbortError{Message: "[Command cancelled]\n" + seq(71, 100),
		Details: bash.ToolDetails{Meta: &bash.OutputMeta{Truncation: tr}}})
	c := &ToolCall{Command: "seq 100; sleep 9", IsError: true, Truncation: tr,
		Output: res.Content + "\n\n" + agent.AbortedToolText}
	v := c.View(100, th)
	if !strings.Contains(v, "\n  "+CollapsedHint(90, 10, 100)+"\n  91\n") ||
		!strings.Contains(v, "\n  100\n  Command cancelled\n  [Showing lines 71-100") ||
		strings.Count(v, "ancel") != 1 || strings.Contains(v, "abort") {
		t.Errorf("cancelled tool call:\n%s", v)
	}
	c = &ToolCall{Command: "sleep 9", IsError: true, Output: "[Command timed out after 1 seconds]\npartial\n"}
	if v := c.View(100, th); !strings.HasSuffix(v, "\n  partial\n  Command timed out after 1 seconds") || strings.Contains(v, "[Command") {
		t.Errorf("timed-out tool call:\n%s", v)
	}
	for _, out := range []string{agent.CancelledToolText, agent.AbortedToolText} {
		c = &ToolCall{Command: "echo never", IsError: true, Output: out}
		want := "✗ $ echo never\n  " + out
		if out == agent.AbortedToolText {
			want = "✗ $ echo never\n  Command cancelled"
		}
		if v := c.View(100, th); v != want {
			t.Errorf("%q:\n%s", out, v)
		}
	}
	// Output that merely mentions it is output.
	c = &ToolCall{Command: "cat log", Output: "[Command cancelled]\nrest\n"}
	if v := c.View(100, th); !strings.Contains(v, "\n  [Command cancelled]\n  rest") {
		t.Errorf("successful output lost its first line:\n%s", v)
	}
	b := NewBang("sleep 9", false)
	b.Finish("[Command timed out after 305 seconds]\nwaited\n", nil, true, nil)
	if v := b.View(100, th, ""); !strings.Contains(v, "\n$ sleep 9\nwaited\nCommand timed out after 305 seconds\n") {
		t.Errorf("timed-out bang:\n%s", v)
	}
}

// TestTabStops: a tab moves to the next multiple of 8 columns, as in a
// terminal, counted from the start of the output's line (not the block's
// indent), in cells.
func TestTabStops(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\tx", "        x"},
		{"a\tb", "a       b"},
		{"1234567\tx", "1234567 x"},
		{"12345678\tx", "12345678        x"},
		{"ok  \tagentsh/sink\t0.01s", "ok      agentsh/sink    0.01s"},
		{"日本\tx", "日本    x"},
	} {
		if got := expandTabs(c.in); got != c.want {
			t.Errorf("expandTabs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	c := &ToolCall{Command: "go test", Output: "ok  \tagentsh/sink\t0.01s\nFAIL\tagentsh/bash\t3.20s\n"}
	if v := c.View(80, NewTheme(true)); !strings.HasSuffix(v, "\n  ok      agentsh/sink    0.01s\n  FAIL    agentsh/bash    3.20s") {
		t.Errorf("view:\n%s", v)
	}
}

func TestTruncateWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"short", 10, "short"},
		{"the full output of a result", 20, "the full output of…"},
		{"the full output of a result", 19, "the full output…"},
		{"averyveryverylongpathname and more", 12, "averyveryve…"},
		{"a b", 0, ""},
		{"\x1b[33mthe full output\x1b[m of", 12, "\x1b[33mthe full\x1b[m…"},
	} {
		if got := TruncateWords(c.in, c.w); got != c.want {
			t.Errorf("TruncateWords(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// checkContained asserts that no colour leaks: every row that opens a
// style ends with a reset, and without SGR the view is the plain one.
func checkContained(t *testing.T, v, plain string) {
	t.Helper()
	for _, l := range strings.Split(v, "\n") {
		if sink.SGRState(l) != "" && !strings.HasSuffix(l, "\x1b[m") {
			t.Errorf("row leaks its colour: %q", l)
		}
		for _, bad := range []string{"\x1b[2J", "\x1b[H", "\x1b[A", "\x1b]"} {
			if strings.Contains(l, bad) {
				t.Errorf("row holds %q: %q", bad, l)
			}
		}
	}
	if got := stripSGR(v); got != plain {
		t.Errorf("without colours:\n%s\nplain view:\n%s", got, plain)
	}
}

// TestStyledBlocks: the tool block and the bang block show the command's
// SGR colours (kept per row, never leaking, never cursor movement), also
// after a cancel annotation, while running and wrapped; NO_COLOR shows none.
func TestStyledBlocks(t *testing.T) {
	color, plain := NewTheme(false), NewTheme(true)
	out := "\x1b[32mPASS\x1b[0m a\n\x1b[1;31mFAIL\x1b[0m b: " + strings.Repeat("long words ", 8) + "\n"
	c := &ToolCall{Command: "go test", Output: sink.Sanitize(out), Styled: out}
	v := c.View(40, color)
	if !strings.Contains(v, "  \x1b[32mPASS\x1b[0m a\n") || !strings.Contains(v, "\n  \x1b[1;31mFAIL\x1b[0m b: long words") {
		t.Errorf("tool block:\n%q", v)
	}
	cp := *c
	cp.Styled = ""
	checkContained(t, v, stripSGR(cp.View(40, color)))
	if v := c.View(40, plain); strings.Contains(v, "\x1b") {
		t.Errorf("NO_COLOR: %q", v)
	}
	// A style open across the wrap of a long line goes on in its next row.
	c = &ToolCall{Command: "x", Output: "red " + strings.Repeat("word ", 20), Styled: "\x1b[31mred " + strings.Repeat("word ", 20)}
	for _, l := range strings.Split(c.View(30, color), "\n")[1:] {
		if !strings.HasPrefix(l, "  \x1b[31m") {
			t.Errorf("row without its colour: %q", l)
		}
	}
	// Cancelled: the annotation line is the status, the colours stay on
	// the output; a hostile session file cannot move the cursor.
	c = &ToolCall{Command: "x", IsError: true, Output: "[Command cancelled]\nred\n",
		Styled: "[Command cancelled]\n\x1b[2J\x1b[31mred\x1b[0m\n"}
	if v := c.View(40, color); !strings.Contains(v, "  \x1b[31mred\x1b[0m\n") || strings.Contains(v, "\x1b[2J") ||
		!strings.HasSuffix(stripSGR(v), "  red\n  Command cancelled") {
		t.Errorf("cancelled: %q", v)
	}
	// Output the colours do not belong to (a head/tail window): plain.
	c = &ToolCall{Command: "x", Output: "other\n", Styled: "\x1b[31mred\x1b[0m\n"}
	if v := c.View(40, color); strings.Contains(v, "\x1b[31m") || !strings.Contains(v, "other") {
		t.Errorf("mismatch: %q", v)
	}

	b := NewBang("ls --color=always", false)
	b.Append("\x1b[34mdir\x1b[0m\n\x1b[32mexe")
	v = b.View(40, color, "")
	if !strings.Contains(v, "\n\x1b[34mdir\x1b[0m\n\x1b[32mexe\x1b[m\n") {
		t.Errorf("running bang: %q", v)
	}
	if v := b.View(40, plain, ""); strings.Contains(v, "\x1b") || !strings.Contains(v, "\ndir\nexe\n") {
		t.Errorf("running bang, NO_COLOR: %q", v)
	}
	b.Styled = "\x1b[34mdir\x1b[0m\n\x1b[32mexe\x1b[0m\n"
	b.Finish("dir\nexe\n", intp(0), false, nil)
	v = b.View(40, color, "")
	if !strings.Contains(v, "\n\x1b[34mdir\x1b[0m\n\x1b[32mexe\x1b[0m\n") {
		t.Errorf("finished bang: %q", v)
	}
	checkContained(t, v, b.View(40, plain, ""))
}
func TestElapsedOnRunningBlocks(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1500 * time.Millisecond: "1s", 59 * time.Second: "59s", 65 * time.Second: "1m05s",
		3725 * time.Second: "1h02m", -time.Second: "0s",
	} {
		if got := FormatElapsed(d); got != want {
			t.Errorf("FormatElapsed(%v) = %q, want %q", d, got, want)
		}
	}
	// A new second redraws a running block; the same second is a cache hit.
	b := NewBang("sleep 9", false)
	b.Elapsed = 2 * time.Second
	if v := b.View(40, NewTheme(true), "⠋"); !strings.Contains(v, "⠋ Running… 2s · esc to cancel") {
		t.Fatalf("bang view:\n%s", v)
	}
	b.Elapsed = 2*time.Second + 300*time.Millisecond
	n := b.renders
	b.View(40, NewTheme(true), "⠋")
	b.Elapsed = 3 * time.Second
	if v := b.View(40, NewTheme(true), "⠋"); b.renders != n+1 || !strings.Contains(v, "Running… 3s") {
		t.Fatalf("renders %d→%d, view:\n%s", n, b.renders, v)
	}
	c := &ToolCall{Command: "make", Running: true, Elapsed: 4 * time.Second}
	if v := c.View(40, NewTheme(true)); !strings.Contains(v, "Running… 4s · esc to cancel") {
		t.Fatalf("tool view:\n%s", v)
	}
	c.Elapsed = 5 * time.Second
	if v := c.View(40, NewTheme(true)); !strings.Contains(v, "Running… 5s · esc to cancel") {
		t.Fatalf("tool view did not move:\n%s", v)
	}
}

// TestBangFullScreenIsOneLine: a finished full-screen program's block is
// one line, its command and how it ended; its last screen shows expanded.
func TestBangFullScreenIsOneLine(t *testing.T) {
	th := NewTheme(true)
	screen := "hello\n" + strings.Repeat("~\n", 20) + "\"notes.txt\" 1L, 6B written\n"
	b := NewBang("vim notes.txt", false)
	b.FullScreen = true
	b.Finish(screen, intp(0), false, nil)
	border := strings.Repeat("─", 60)
	if v, want := b.View(60, th, ""), border+"\n$ vim notes.txt · exited 0 (ctrl+o to expand)\n"+border; v != want {
		t.Errorf("collapsed:\n%s\nwant:\n%s", v, want)
	}
	b.Expanded = true
	if v := b.View(60, th, ""); !strings.Contains(v, "\n$ vim notes.txt\nhello\n~\n") || !strings.Contains(v, "written\n"+border) {
		t.Errorf("expanded:\n%s", v)
	}

	b = NewBang("less big.log", false)
	b.FullScreen = true
	b.Finish(screen, intp(2), false, nil)
	if v := b.View(20, th, ""); v != strings.Repeat("─", 20)+"\n$ less big.log ·\nexited 2\n(ctrl+o to expand)\n"+strings.Repeat("─", 20) {
		t.Errorf("narrow, exit 2:\n%s", v)
	}
	b = NewBang("top", false)
	b.FullScreen = true
	b.Finish("[Command cancelled]\n"+screen, nil, true, nil)
	if v := b.View(60, th, ""); !strings.Contains(v, "\n$ top · Command cancelled (ctrl+o to expand)\n") {
		t.Errorf("cancelled:\n%s", v)
	}
}
