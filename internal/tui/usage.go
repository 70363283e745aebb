package tui

import (
	"agentsh/internal/agent"
	"strconv"
)

// usage is what the status line knows of the conversation's size: the
// tokens of the latest model call (its input is the whole conversation so
// far, its output the answer), as the provider reported them, and the
// model's context window then.
type usage struct {
	tokens int64
	window int // 0: not known
	known  bool
}

// observe takes the token counts a model call ends with; window is the
// context window of the model on screen (model.contextWindow).
func (u *usage) observe(e agent.Event, window func() int) {
	if e.Type == agent.EventMessageEnd && e.Usage != nil {
		u.tokens, u.window, u.known = e.Usage.TotalTokens(), window(), true
	}
}

// parts are the status line's `12.3k tokens` and `88% context left`, the
// second "" unless the context window is known; both "" before the
// provider has reported anything.
func (u *usage) parts() (tokens, left string) {
	if !u.known {
		return "", ""
	}
	tokens = formatTokens(u.tokens) + " tokens"
	if w := int64(u.window); w > 0 {
		pct := 100 - (u.tokens*100+w/2)/w
		left = strconv.FormatInt(min(max(pct, 0), 100), 10) + "% context left"
	}
	return tokens, left
}

// contextWindow is the context window of the model on screen: the
// settings' compaction.contextWindow, else what its provider's list says,
// else the table of well-known models (session.ContextWindow).
func (m *model) contextWindow() int {
	_, name, _ := m.modelNow()
	listed := 0
	if cur, ok := m.cfg.Models.CurrentModel(); ok {
		listed = cur.ContextWindow
	}
	return m.session().ContextWindow(name, listed)
}

// formatTokens is a token count in at most four significant characters:
// 950, 12.3k, 1.2M.
func formatTokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M"
}
