package render

import (
	"strings"

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

// ToolCall is one model bash tool call in the transcript (SPEC §5
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

	cache   toolCache
	renders int // cache misses, so tests can prove hits do no work
}

// toolKey is every input of View; comparing it costs O(1) for an unchanged
// Output because Go compares string data pointers before bytes.
type toolKey struct {
	command, cwdRel, output    string
	timeout                    float64
	running, isError, expanded bool
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
		command: c.Command, cwdRel: c.CwdRel, output: c.Output,
		timeout: c.TimeoutSeconds, running: c.Running, isError: c.IsError,
		expanded: c.Expanded, noColor: th.NoColor, width: width,
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
		// Too narrow for the icon column: the icon alone still tells the state.
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
			// No indent on blank lines: trailing blanks confuse copy-paste.
		case c.IsError:
			l = ind + th.paint(th.Error, l)
		default:
			l = ind + l
		}
		out = append(out, l)
	}
	if c.Running {
		out = appendStyled(out, th, th.Dim, ind, "Running…", bw)
	}
	if c.TimeoutSeconds > 0 {
		out = appendStyled(out, th, th.Dim, ind, TimeoutFooter(c.TimeoutSeconds), bw)
	}
	if c.Truncation != nil {
		out = appendStyled(out, th, th.Warning, ind, TruncationWarning(c.Truncation), bw)
	}
	return strings.Join(out, "\n")
}
