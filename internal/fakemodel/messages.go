package fakemodel

// Message is one message of a recorded OpenAI chat-completions request.
type Message struct {
	Role       string
	Content    string   // the text, content parts joined
	ToolCalls  []string // ids of an assistant message's tool calls
	ToolCallID string   // the call a tool message answers
}

// OpenAIMessages reads the messages of a recorded OpenAI request body.
func OpenAIMessages(body map[string]any) []Message {
	raw, _ := body["messages"].([]any)
	var out []Message
	for _, r := range raw {
		m, _ := r.(map[string]any)
		var msg Message
		msg.Role, _ = m["role"].(string)
		msg.Content, _ = m["content"].(string)
		if parts, ok := m["content"].([]any); ok {
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok {
					s, _ := pm["text"].(string)
					msg.Content += s
				}
			}
		}
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			id, _ := cm["id"].(string)
			msg.ToolCalls = append(msg.ToolCalls, id)
		}
		msg.ToolCallID, _ = m["tool_call_id"].(string)
		out = append(out, msg)
	}
	return out
}

// LastToolResult is the content of the newest tool message of a recorded
// OpenAI request body ("" when it has none).
func LastToolResult(body map[string]any) string {
	msgs := OpenAIMessages(body)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	return ""
}
