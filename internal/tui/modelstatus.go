package tui

import "strings"

// noModelStatus is the status line's model part when no model can be used:
// what is missing, a model name or what the chosen one needs, so a user
// with a key set but no model chosen is not told to set the key.
func noModelStatus(cfg Config) string {
	if cfg.ModelError != "" {
		spec := cfg.ModelLabel
		reason := strings.TrimPrefix(cfg.ModelError, "model "+spec+": ")
		if spec == "" || reason == cfg.ModelError {
			return "model unusable: " + cfg.ModelError
		}
		return spec + ": " + reason
	}
	return `no model chosen · agentsh --model provider/model (or AGENTSH_MODEL, "model" in settings)`
}
