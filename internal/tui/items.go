package tui

import (
	"strings"

	"charm.land/lipgloss/v2"

	"agentsh/internal/render"
)

// item is one entry of the transcript. view must be cheap when nothing
// changed: the transcript asks every visible item on every frame.
type item interface {
	view(width int, st *styles, spinner string) string
}

// textItem is a user message, an assistant answer or a notice. Its
// rendering is cached per width and text, so a long transcript costs
// nothing to redraw.
type textItem struct {
	kind textKind
	text string

	cacheW    int
	cacheText string
	cache     string
}

type textKind int

const (
	kindUser textKind = iota
	kindAssistant
	kindInfo
	kindWarning
	kindError
)

func (t *textItem) view(width int, st *styles, _ string) string {
	if t.cache != "" && t.cacheW == width && t.cacheText == t.text {
		return t.cache
	}
	var out string
	switch t.kind {
	case kindUser:
		// A bar on the left marks the user's turns, as in most agent TUIs.
		body := wrap(t.text, width-2)
		out = prefixLines(body, st.userBar.Render("▌")+" ", st.user)
	case kindAssistant:
		out = renderMarkdownLite(t.text, width, st)
	case kindInfo:
		out = st.dim.Render(wrap(t.text, width))
	case kindWarning:
		out = st.warning.Render(wrap(t.text, width))
	case kindError:
		out = st.errorText.Render(wrap(t.text, width))
	}
	t.cacheW, t.cacheText, t.cache = width, t.text, out
	return out
}

// toolItem is one model tool call, rendered by render.ToolCall (which
// caches its own output).
type toolItem struct {
	id    string
	call  *render.ToolCall
	views int // how often the transcript asked; tests check only visible items are
}

func (t *toolItem) view(width int, st *styles, _ string) string {
	t.views++
	return t.call.View(width, st.theme)
}

// bangItem is one `!cmd` / `!!cmd`.
type bangItem struct {
	bang *render.Bang
}

func (b *bangItem) view(width int, st *styles, spinner string) string {
	return b.bang.View(width, st.theme, spinner)
}

// wrap soft-wraps s to width cells, breaking long words too, so no line is
// ever wider than the screen.
func wrap(s string, width int) string {
	if width < 1 {
		width = 1
	}
	return lipgloss.Wrap(s, width, "")
}

func prefixLines(s, prefix string, style lipgloss.Style) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + style.Render(l)
	}
	return strings.Join(lines, "\n")
}

// renderMarkdownLite renders the few Markdown constructs that matter most
// in agent answers (headings, fenced code, bullets, **bold**, `code`)
// without a full Markdown engine: a partial answer streams in, so the
// renderer must accept any prefix of a document.
func renderMarkdownLite(text string, width int, st *styles) string {
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			for _, l := range strings.Split(wrap(strings.ReplaceAll(line, "\t", "    "), width-2), "\n") {
				out = append(out, "  "+st.code.Render(l))
			}
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "#"):
			h := strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			out = append(out, st.heading.Render(wrap(h, width)))
		case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* "):
			indent := len(line) - len(strings.TrimLeft(line, " "))
			body := wrap(inlineMarkdown(trimmed[2:], st), max(width-indent-2, 1))
			for i, l := range strings.Split(body, "\n") {
				lead := strings.Repeat(" ", indent) + "• "
				if i > 0 {
					lead = strings.Repeat(" ", indent+2)
				}
				out = append(out, lead+l)
			}
		default:
			out = append(out, wrap(inlineMarkdown(line, st), width))
		}
	}
	return strings.Join(out, "\n")
}

// inlineMarkdown styles **bold** and `code` spans; an unclosed marker (a
// still-streaming answer) is left as typed.
func inlineMarkdown(s string, st *styles) string {
	if !strings.ContainsAny(s, "*`") {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "**"):
			if end := strings.Index(s[2:], "**"); end > 0 {
				b.WriteString(st.bold.Render(s[2 : 2+end]))
				s = s[4+end:]
				continue
			}
		case s[0] == '`':
			if end := strings.IndexByte(s[1:], '`'); end > 0 {
				b.WriteString(st.code.Render(s[1 : 1+end]))
				s = s[2+end:]
				continue
			}
		}
		b.WriteByte(s[0])
		s = s[1:]
	}
	return b.String()
}
