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
	{"gpt-oss", 131_072},
	{"o1", 200_000},
	{"o1-mini", 128_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
	{"claude-", 200_000},
	{"gemini-2.5", 1_048_576},
	{"deepseek-chat", 128_000},
	{"deepseek-reasoner", 128_000},
}

// maxOutputs are the most tokens well-known models write in one answer, by
// name prefix as in contextWindows.
var maxOutputs = []struct {
	prefix string
	tokens int
}{
	{"gpt-5", 128_000},
	{"gpt-4.1", 32_768},
	{"gpt-4o", 16_384},
	{"o1", 100_000},
	{"o3", 100_000},
	{"o4-mini", 100_000},
	{"claude-3-haiku", 4_096},
	{"claude-3-opus", 4_096},
	{"claude-3-5", 8_192},
	{"claude-3-7-sonnet", 64_000},
	{"claude-sonnet-4", 64_000},
	{"claude-haiku-4", 64_000},
	{"claude-opus-4", 32_000},
	{"claude-opus-4-5", 64_000},
}

// reasoningModels are the well-known models that think before they answer
// (or can), by name prefix.
var reasoningModels = []string{
	"gpt-5", "gpt-oss", "o1", "o3", "o4-mini",
	"claude-3-7-sonnet", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4",
	"gemini-2.5", "deepseek-reasoner", "deepseek-r1", "qwq", "qwen3",
}

// ContextWindow is the context window in tokens of the model named model
// (a provider's model name, with or without a "provider/" prefix), or 0
// when it is not known.
func ContextWindow(model string) int {
	best, tokens := -1, 0
	for _, w := range contextWindows {
		if n := prefixLen(model, w.prefix); n > best {
			best, tokens = n, w.tokens
		}
	}
	return tokens
}

// MaxOutputTokens is the most tokens the model named model writes in one
// answer, or 0 when it is not known.
func MaxOutputTokens(model string) int {
	best, tokens := -1, 0
	for _, w := range maxOutputs {
		if n := prefixLen(model, w.prefix); n > best {
			best, tokens = n, w.tokens
		}
	}
	return tokens
}

// IsReasoningModel says whether the model named model is known to think.
func IsReasoningModel(model string) bool {
	for _, p := range reasoningModels {
		if prefixLen(model, p) >= 0 {
			return true
		}
	}
	return false
}

// prefixLen is len(prefix) when the model's name (without "provider/",
// case-insensitive) starts with prefix, else -1.
func prefixLen(model, prefix string) int {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	if strings.HasPrefix(strings.ToLower(model), prefix) {
		return len(prefix)
	}
	return -1
}
