package tui

import (
	"strconv"

	"agentsh/internal/llm"
	"agentsh/internal/session"
)

// usage is what the status line knows of the conversation's size: the
// tokens of the latest model call (its input is the whole conversation so
// far, its output the answer), as the provider reported them.
type usage struct {
	tokens int64
	known  bool
}

// observe takes the token counts a model call ends with.
func (u *usage) observe(e session.Event) {
	if e.Type == session.EventMessageEnd && e.Usage != nil {
		u.tokens, u.known = e.Usage.TotalTokens(), true
	}
}

// text is the status line's `12.3k tokens · 88% context left`, the second
// part only for a model whose context window is known; "" before the
// provider has reported anything.
func (u *usage) text(model string) string {
	if !u.known {
		return ""
	}
	s := formatTokens(u.tokens) + " tokens"
	if w := llm.ContextWindow(model); w > 0 {
		left := 100 - (u.tokens*100+int64(w)/2)/int64(w)
		s += " · " + strconv.FormatInt(min(max(left, 0), 100), 10) + "% context left"
	}
	return s
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
