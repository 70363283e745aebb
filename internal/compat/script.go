// Package compat checks that agentsh keeps the reference agent's (omp's)
// protocol shapes (spec §7). It holds omp's recorded RPC and JSON
// transcripts and session files (testdata/), the scripted fake model both
// agents run against (ModelScript), the runners that drive a binary through
// a script and record what it writes (RunRPC, RunJSON), and the shape
// comparison with its allow-list of omp-only fields (shape.go, allow.go).
package compat

import (
	"strings"

	"agentsh/internal/fakemodel"
)

// Prompt is the user prompt of the fixed script.
const Prompt = "Say hello with bash, then tell me what it printed."

// BashArgs is the bash tool call the model makes for Prompt.
const BashArgs = `{"command":"echo hello"}`

// ModelScript answers like a model that makes one bash tool call and then a
// text answer. It reads the request rather than counting, so that side
// requests a client may make (a title for the session, say) get a plain
// text answer and do not shift the script.
func ModelScript(srv func() *fakemodel.Server) fakemodel.Script {
	return func(n int, w *fakemodel.Writer) {
		body := srv().Requests()[n].Body
		msgs, _ := body["messages"].([]any)
		_, hasTools := body["tools"]
		var last map[string]any
		if len(msgs) > 0 {
			last, _ = msgs[len(msgs)-1].(map[string]any)
		}
		switch {
		case last != nil && last["role"] == "tool":
			w.Text("It printed hello.")
			w.FinishUsage("stop", 120, 8)
		case hasTools && last != nil && last["role"] == "user" && strings.Contains(flatten(last["content"]), "Say hello"):
			w.ToolCall(0, "call_1", "bash", BashArgs)
			w.FinishUsage("tool_calls", 100, 12)
		default:
			w.Text("Hello.")
			w.FinishUsage("stop", 30, 2)
		}
	}
}

// flatten gives the text of a chat message's content, a string or parts.
func flatten(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}
