package render

import (
	"regexp"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/sink"
)

// PreviewLines is how many visual lines a collapsed tool call shows
// (the reference's BASH_DEFAULT_PREVIEW_LINES).
const PreviewLines = 10

// maxCommandLines bounds the header of a collapsed call: a heredoc that
// writes a whole file would otherwise push the output off the screen.
const maxCommandLines = 10

// indentMin is the narrowest width that still gets the body indent; below
// it every cell is worth more than the visual nesting.
const indentMin = 10

// ToolCall is one model bash tool call in the transcript (spec §5
// BashToolRenderer). Set the fields freely between frames; View notices.
// It is not safe for concurrent use, because View fills a cache.
type ToolCall struct {
	Command        string               // Command is the command as the model sent it.
	CwdRel         string               // CwdRel is "" for the session cwd, else the path shown in `cd <rel> &&`.
	TimeoutSeconds float64              // TimeoutSeconds is the model's timeout; 0 hides the footer.
	Output         string               // Output is the live tail while running, the result text after.
	Running        bool                 // Running is set until the result arrives.
	IsError        bool                 // IsError marks an error result (non-zero exit, timeout, …).
	Truncation     *bash.TruncationMeta // Truncation comes from the result's details.
	Expanded       bool                 // Expanded is toggled by ctrl+o.
	JobID          string               // JobID is the job the command became (the result's details), "" if none.
	// Styled is the output with its SGR colours (the result's details, or
	// the live snapshot); the block shows them unless NO_COLOR. "" = plain.
	Styled  string
	Elapsed time.Duration // Elapsed is how long it has run, shown while Running.
	// Streaming is set while the model is still sending the call's
	// arguments: Command is what has arrived of it, and nothing runs yet.
	Streaming bool
	// Waiting is set while the call waits for the user's answer to a
	// question about it: the block says so instead of "Running…".
	Waiting bool

	cache   toolCache
	overlay overlayCache
	renders int // cache misses, so tests can prove hits do no work
}

// toolKey is every input of View; comparing it costs O(1) for an unchanged
// Output because Go compares string data pointers before bytes.
type toolKey struct {
	command, cwdRel, output    string
	styled                     string
	jobID                      string
	timeout                    float64
	running, isError, expanded bool
	streaming, waiting         bool
	elapsed                    string
	hasTrunc, noColor          bool
	trunc                      bash.TruncationMeta
	width                      int
}

type toolCache struct {
	valid bool
	key   toolKey
	out   string
}

// View renders the call at width cells; an unchanged call at the same width
// returns the previous string without wrapping again.
func (c *ToolCall) View(width int, th Theme) string {
	k := toolKey{
		command: c.Command, cwdRel: c.CwdRel, output: c.Output, styled: c.Styled, jobID: c.JobID,
		timeout: c.TimeoutSeconds, running: c.Running, isError: c.IsError,
		expanded: c.Expanded, noColor: th.NoColor, width: width, streaming: c.Streaming,
		waiting: c.Waiting && c.Running,
	}
	if c.Running && !c.Streaming && !k.waiting {
		k.elapsed = FormatElapsed(c.Elapsed)
	}
	if c.Truncation != nil {
		k.hasTrunc, k.trunc = true, *c.Truncation
	}
	if c.cache.valid && c.cache.key == k {
		return c.cache.out
	}
	c.renders++
	out := c.render(width, th)
	c.cache = toolCache{valid: true, key: k, out: out}
	return out
}

func (c *ToolCall) render(width int, th Theme) string {
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
	case c.JobID != "":
		// Neither done nor failed: it goes on as a job.
		icon, iconStyle = "→", th.Accent
	}
	cmd := c.Command
	switch {
	case c.Streaming && strings.TrimSpace(cmd) == "":
		cmd = "writing command…"
	case c.Streaming:
		cmd += "…"
	case strings.TrimSpace(cmd) == "":
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
		// Too narrow for the icon column: the icon alone still tells the state.
		out = append(out, th.paint(iconStyle, fit(icon, w)))
	}

	text, status := c.shownOutput()
	lines := splitLines(text)
	styled := false
	if c.Styled != "" && !th.NoColor {
		if st, ok := c.overlay.get(text, c.Styled); ok {
			lines, styled = selfContained(splitLines(st)), true
		}
	}
	top, vis, bottom := layout(lines, bw, 0, PreviewLines, 0, c.Expanded, hiddenOf(c.Truncation))
	if styled {
		vis = selfContained(vis)
	}
	if top != "" {
		out = appendStyled(out, th, th.Dim, ind, top, bw)
	}
	for _, l := range vis {
		switch {
		case l == "":
			// No indent on blank lines: trailing blanks confuse copy-paste.
		case c.IsError && !hasStyle(l):
			// The command's own colours win over the error colour.
			l = ind + th.paint(th.Error, l)
		default:
			l = ind + l
		}
		out = append(out, l)
	}
	if bottom != "" {
		out = appendStyled(out, th, th.Dim, ind, bottom, bw)
	}
	if status != "" {
		out = appendStyled(out, th, th.Error, ind, status, bw)
	}
	switch {
	case c.Running && c.Waiting:
		out = appendStyled(out, th, th.Warning, ind, WaitingText, bw)
	case c.Running && !c.Streaming:
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

// shownOutput is the result text as the body shows it, and the status
// line that follows it (the exit code of a failed command), kept apart so
// the hint counts only what the command printed. The job paragraph of a
// call that became a job (spec §9) follows the output's notice, which is
// stripped all the same; collapsed, the paragraph loses how to use the job
// tools, which is for the model: the user has the jobs panel, and the
// preview rows are better spent on output.
func (c *ToolCall) shownOutput() (text, status string) {
	out := sink.Sanitize(c.Output)
	if c.JobID == "" {
		if !c.IsError {
			return stripNotice(out), ""
		}
		// A cancelled call carries up to three notices (the engine's
		// first line, the agent loop's last one, and the truncation notice
		// between): the block shows one, after the output.
		text, aborted := cutAborted(out)
		text = stripNotice(text)
		if text, status = cutStatus(text); status == "" {
			text, status = cutCancelled(text)
		}
		if status == "" && aborted != "" {
			status = CancelledStatus
			if aborted == agent.CancelledToolText {
				status = aborted // it never ran
			}
		}
		return text, status
	}
	t := strings.TrimRight(out, "\n")
	if !c.Expanded {
		t = strings.TrimSuffix(t, " "+bash.JobToolsHint(c.JobID))
	}
	i := strings.LastIndex(t, "\n\n")
	if i < 0 {
		return t, ""
	}
	if body := stripNotice(t[:i]); body != "" {
		return body + "\n\n" + t[i+2:], ""
	}
	return t[i+2:], ""
}

// statusRE matches the status bash's result shaping puts after the output
// of a failed command (spec §1.6).
var statusRE = regexp.MustCompile(`(?:^|\n\n)(Command exited with code -?\d+|Command failed: missing exit status)$`)

// CancelledStatus is the one notice of a cancelled command, in the bang
// block and the tool block alike: the engine's annotation (spec §2.3)
// without its brackets.
const CancelledStatus = "Command cancelled"

// cancelRE matches the annotation the engine puts on the first line of a
// cancelled or timed-out command's output (spec §2.3).
var cancelRE = regexp.MustCompile(`^\[(Command cancelled|Command timed out after \d+ seconds)\](?:\n|$)`)

// cutCancelled splits the engine's cancel or timeout annotation off the
// start of a text, returning it without brackets as the status.
func cutCancelled(text string) (body, status string) {
	m := cancelRE.FindStringSubmatchIndex(text)
	if m == nil {
		return text, ""
	}
	return text[m[1]:], text[m[2]:m[3]]
}

// cutAborted splits off what the agent loop writes for a tool call that a
// cancelled turn stopped (session.AbortedToolText after the output) or
// never ran (the whole text is session.CancelledToolText).
func cutAborted(text string) (body, notice string) {
	if text == agent.CancelledToolText || text == agent.AbortedToolText {
		return "", text
	}
	if b, ok := strings.CutSuffix(text, "\n\n"+agent.AbortedToolText); ok {
		return b, agent.AbortedToolText
	}
	return text, ""
}

// cutStatus splits the trailing status line off a failed result's text.
func cutStatus(text string) (body, status string) {
	m := statusRE.FindStringSubmatchIndex(text)
	if m == nil {
		return text, ""
	}
	return text[:m[0]], text[m[2]:m[3]]
}

// wrapRows is len(wrapLine(nil, line, w)) without building the rows: the
// same gates, then a count of the breaks ansi.Wrap inserts (replayed for
// plain ASCII, the common case; the wrap itself otherwise). The
// differential tests hold it to the real wrap, so an ansi upgrade that
// changes the algorithm fails them rather than the screen.
func wrapRows(line string, w int) int {
	line = expandTabs(line)
	if len(line) <= w {
		return 1
	}
	if rows, ok := asciiWrapRows(line, w); ok {
		// One cell per byte, so the width gate failed with the length.
		return rows
	}
	if ansi.StringWidth(line) <= w {
		return 1
	}
	return ansiWrapRows(line, w)
}

// asciiWrapRows is ansiWrapRows for a line of printable ASCII (' '..'~'),
// which the ANSI parser prints one cell a byte from its ground state: no
// escapes, no clusters, and a word's bytes are its cells. It gives up,
// ok == false, at the first other byte.
func asciiWrapRows(s string, limit int) (rows int, ok bool) {
	if limit < 1 {
		return 1, true
	}
	rows = 1
	curWidth, wordLen, spaceWidth := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ':
			if wordLen > 0 { // addWord
				curWidth += spaceWidth + wordLen
				spaceWidth, wordLen = 0, 0
			}
			spaceWidth++
		case '-':
			curWidth += spaceWidth // addSpace
			spaceWidth = 0
			if curWidth+wordLen >= limit {
				wordLen++
			} else {
				curWidth += wordLen + 1 // addWord, then the hyphen
				wordLen = 0
			}
		default:
			if c < ' ' || c > '~' {
				return 0, false
			}
			if curWidth == limit {
				rows++
				curWidth, spaceWidth = 0, 0
			}
			wordLen++
			if wordLen == limit { // hard-wrap the word
				curWidth += spaceWidth + wordLen
				spaceWidth, wordLen = 0, 0
			}
			if curWidth+wordLen+spaceWidth > limit {
				rows++
				curWidth, spaceWidth = 0, 0
			}
		}
	}
	return rows, true
}

// ansiWrapRows counts the lines of ansi.Wrap(s, limit, ""), for the lines
// the ASCII count cannot take (escapes, wide characters, clusters).
func ansiWrapRows(s string, limit int) int {
	return strings.Count(ansi.Wrap(s, limit, ""), "\n") + 1
}

// FormatElapsed is a running time as the spinners show it: 12s, 3m05s,
// 1h02m.
func FormatElapsed(d time.Duration) string {
	s := int(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return itoa(s) + "s"
	case s < 3600:
		return itoa(s/60) + "m" + pad2(s%60) + "s"
	}
	return itoa(s/3600) + "h" + pad2(s/60%60) + "m"
}

func pad2(n int) string {
	if n < 10 {
		return "0" + itoa(n)
	}
	return itoa(n)
}

// WaitingText is the line under a tool call that waits for the user to
// answer a question about it (an ask rule, a sandbox refusal): nothing of
// it runs meanwhile.
const WaitingText = "Waiting for your answer…"

// RunningText is the line under a running `!` command or tool call.
func RunningText(elapsed time.Duration) string {
	return "Running… " + FormatElapsed(elapsed) + " · esc to cancel"
}
