package tui

// The model's thinking in the transcript: each answer's thinking is one
// block before its text, collapsed to a "Thinking…" line with its first
// words; keys.Main.Thinking shows every block in full, and again collapsed.

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/session"
)

// thinkingLabel starts a thinking block's line.
const thinkingLabel = "Thinking…"

// thinkingItem is one answer's thinking. show points at the transcript's
// switch (all blocks expanded or collapsed); nil: collapsed.
type thinkingItem struct {
	text string
	show *bool

	cacheW    int
	cacheText string
	cacheShow bool
	cache     string
}

func (t *thinkingItem) expanded() bool { return t.show != nil && *t.show }

func (t *thinkingItem) view(width int, st *styles, _ string) string {
	show := t.expanded()
	if t.cache != "" && t.cacheW == width && t.cacheText == t.text && t.cacheShow == show {
		return t.cache
	}
	var out string
	if show {
		body := wrap(t.text, max(width-2, 1))
		out = st.dim.Render(thinkingLabel) + "\n" + prefixLines(body, "  ", st.dim)
	} else {
		// The first words, on one line: enough to tell what it was about.
		first := strings.Join(strings.Fields(t.text), " ")
		line := thinkingLabel
		if first != "" {
			line += " " + first
		}
		out = st.dim.Render(ansi.Truncate(line, width, "…"))
	}
	t.cacheW, t.cacheText, t.cacheShow, t.cache = width, t.text, show, out
	return out
}

// thinkingText is the text of an answer's thinking blocks, a redacted one
// said as such; "" when it has none.
func thinkingText(blocks []session.ThinkingBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Redacted:
			parts = append(parts, "(redacted by the provider)")
		case strings.TrimSpace(b.Thinking) != "":
			parts = append(parts, strings.TrimSpace(b.Thinking))
		}
	}
	return strings.Join(parts, "\n\n")
}

// streamThinking shows the streaming answer's thinking, in a block just
// before its text.
func (t *transcript) streamThinking(am *session.AssistantMessage) {
	text := thinkingText(am.Thinking)
	if text == "" || t.assistant == nil {
		return
	}
	if t.thinking == nil {
		t.thinking = &thinkingItem{show: &t.showThinking}
		t.insertBefore(t.thinking, t.assistant)
	}
	t.thinking.text = text
}

// insertBefore puts it just before the item before (at the end when
// before is not there).
func (t *transcript) insertBefore(it, before item) {
	for i, x := range t.items {
		if x == before {
			t.items = append(t.items[:i], append([]item{it}, t.items[i:]...)...)
			t.dirty = true
			return
		}
	}
	t.add(it)
}

// toggleThinking shows every thinking block in full, or collapses them
// again.
func (t *transcript) toggleThinking() {
	t.showThinking = !t.showThinking
	t.dirty = true
}
