package render

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi/parser"

	"agentsh/internal/bash"
	"agentsh/internal/sink"
)

func TestHintTexts(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{CollapsedHint(15, 10, 25), "… (15 earlier lines, showing 10 of 25) (ctrl+o to expand)"},
		{MoreLinesHint(80), "… 80 more lines (ctrl+o to expand)"},
		{TimeoutFooter(60), "⟦Timeout: 60s⟧"},
		{TimeoutFooter(1.5), "⟦Timeout: 1.5s⟧"},
		{TimeoutFooter(3600), "⟦Timeout: 3600s⟧"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "bytes", OutputLines: 8302, OutputBytes: 51200, ArtifactID: "3"}),
			"[Full output: artifact://3 (ctrl+g to view). Truncated: 8302 lines shown (50.0KB limit)]"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "bytes", OutputLines: 12, OutputBytes: 900}),
			"[Truncated: 12 lines shown (900B limit)]"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "lines", OutputLines: 2000, TotalLines: 5000, ArtifactID: "a1"}),
			"[Full output: artifact://a1 (ctrl+g to view). Truncated: showing 2000 of 5000 lines]"},
		{TruncationWarning(&bash.TruncationMeta{TruncatedBy: "lines", OutputLines: 2000, TotalLines: 5000}),
			"[Truncated: showing 2000 of 5000 lines]"},
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
	if v := c.View(100, NewTheme(true)); strings.Contains(v, "Showing") || strings.Count(v, "artifact://1") != 1 {
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
		{intp(130), true, BangCancelled, "(cancelled)"},
		{nil, true, BangCancelled, "(cancelled)"},
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
		if c.status == "" && (strings.Contains(v, "(exit") || strings.Contains(v, "(cancelled)")) {
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
	if !strings.Contains(v, "\n81\n") || strings.Contains(v, "\n80\n") || !strings.Contains(v, "\n"+MoreLinesHint(80)+"\n") {
		t.Fatalf("view:\n%s", v)
	}
	b.Expanded = true
	if v := b.View(80, th, ""); !strings.Contains(v, "\n1\n") || strings.Contains(v, "more lines") {
		t.Fatalf("expanded:\n%s", v)
	}
	// 20 logical lines of 100 chars are 60 visual lines at 40: only 20 show,
	// from 7 logical lines (the first one partly), so 13 are hidden.
	b = NewBang("x", false)
	var out strings.Builder
	for i := range 20 {
		out.WriteString(strings.Repeat(string(rune('a'+i)), 100) + "\n")
	}
	b.Finish(out.String(), intp(0), false, nil)
	v = b.View(40, th, "")
	lines := strings.Split(v, "\n")
	// border, header, 20 rows, hint, border
	if len(lines) != 24 || lines[len(lines)-2] != MoreLinesHint(13) {
		t.Fatalf("%d lines:\n%s", len(lines), v)
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

	var vis []string
	for _, l := range splitLines(stripNotice(sink.Sanitize(c.Output))) {
		vis = wrapLine(vis, l, bw)
	}
	if total := len(vis); !c.Expanded && total > PreviewLines {
		out = appendStyled(out, th, th.Dim, ind, CollapsedHint(total-PreviewLines, PreviewLines, total), bw)
		vis = vis[total-PreviewLines:]
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
	for _, bad := range []string{"[Showing", "job_output"} {
		if strings.Contains(v, bad) {
			t.Errorf("collapsed view shows %q:\n%s", bad, v)
		}
	}
	c.Expanded = true
	if v := c.View(200, NewTheme(true)); !strings.Contains(v, "job_output") {
		t.Errorf("expanded view lost the result's end:\n%s", v)
	}
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
