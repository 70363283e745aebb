package tui

import (
	"strings"
	"time"

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

	live   bool              // an assistant answer still streaming
	blocks map[string]string // a live answer's rendered blocks

	cacheW     int
	cacheText  string
	cache      string
	renderedAt time.Time
}

// liveMarkdownEvery bounds how often a streaming answer is re-rendered:
// glamour takes milliseconds on a long answer, and keys must stay quick.
const liveMarkdownEvery = 50 * time.Millisecond

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
		if !t.live {
			t.blocks = nil
			out = st.md.render(t.text, width)
			break
		}
		if t.cache != "" && t.cacheW == width && time.Since(t.renderedAt) < liveMarkdownEvery {
			// A streaming answer is re-rendered a few times a second, not
			// on every chunk; the spinner tick brings the rest.
			return t.cache
		}
		if t.blocks == nil || t.cacheW != width {
			t.blocks = map[string]string{}
		}
		out = st.md.liveBlocks(t.text, width, t.blocks)
		t.renderedAt = time.Now()
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

// toolItem is one model tool call: bash calls are rendered by
// render.ToolCall, the file tools by render.FileCall (both cache their own
// output); render.NewToolBlock decides which, live and resumed alike.
type toolItem struct {
	id    string
	call  *render.ToolCall // bash (and any tool without a renderer of its own)
	file  *render.FileCall // read, grep, find, edit, write
	views int              // how often the transcript asked; tests check only visible items are
	// started is when it started running (or streaming its arguments).
	started time.Time
	args    []byte // the arguments received so far, while they stream
	// placeholder: a non-bash call whose arguments still stream; it keeps
	// its place and draws nothing until it runs.
	placeholder bool
}

func (t *toolItem) view(width int, st *styles, _ string) string {
	t.views++
	if t.placeholder {
		return ""
	}
	return t.block().View(width, st.theme)
}

// block is the call's block, whichever kind it is.
func (t *toolItem) block() render.ToolBlock {
	return render.ToolBlock{Call: t.call, File: t.file}
}

// toggle is ctrl+o on the call.
func (t *toolItem) toggle() {
	if t.file != nil {
		t.file.Expanded = !t.file.Expanded
		return
	}
	t.call.Expanded = !t.call.Expanded
}

// bangItem is one `!cmd` / `!!cmd`.
type bangItem struct {
	bang    *render.Bang
	started time.Time
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
