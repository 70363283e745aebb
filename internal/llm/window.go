package llm

import "strings"

// contextWindows are the context windows (input plus output tokens) of
// well-known models, by name prefix; the longest matching prefix wins, so
// "gpt-4o-mini" is not read as "gpt-4".
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-5", 400_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_192},
	{"gpt-3.5-turbo", 16_385},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
	{"claude-", 200_000},
}

// ContextWindow is the context window in tokens of the model named model
// (a provider's model name, with or without a "provider/" prefix), or 0
// when it is not known.
func ContextWindow(model string) int {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	model = strings.ToLower(model)
	best, tokens := -1, 0
	for _, w := range contextWindows {
		if strings.HasPrefix(model, w.prefix) && len(w.prefix) > best {
			best, tokens = len(w.prefix), w.tokens
		}
	}
	return tokens
}
