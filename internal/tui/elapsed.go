package tui

import (
	"encoding/json"
	"strings"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/render"
)

// timed is an item that shows how long it has been running: the
// transcript tells it the time before drawing it.
type timed interface {
	at(now time.Time)
}

func (b *bangItem) at(now time.Time) {
	if b.bang.State() == render.BangRunning {
		b.bang.Elapsed = now.Sub(b.started)
	}
}

func (t *toolItem) at(now time.Time) {
	if t.call != nil && t.call.Running {
		t.call.Elapsed = now.Sub(t.started)
	}
}

// streamToolCall shows a bash call while the model is still writing it:
// `○ $ writing command…` from its start, then the command as far as it
// has arrived. The item becomes the running call at tool_execution_start.
func (t *transcript) streamToolCall(e agent.Event) {
	if e.ToolCallID == "" {
		return
	}
	switch e.UpdateKind {
	case agent.UpdateToolCallStart:
		if t.tools[e.ToolCallID] != nil {
			return
		}
		// Another tool's place is kept from its start too, so the calls
		// stand in the order the model wrote them (as a resumed session
		// shows them); it is drawn once it runs.
		b, shown := render.NewStreamingBlock(e.ToolName)
		it := &toolItem{id: e.ToolCallID, started: t.clock(), call: b.Call, placeholder: !shown}
		t.tools[e.ToolCallID] = it
		t.add(it)
	case agent.UpdateToolCallDelta:
		it := t.tools[e.ToolCallID]
		if it == nil || it.call == nil || !it.call.Streaming {
			return
		}
		it.args = append(it.args, e.Delta...)
		it.call.Command = partialStringField(it.args, "command")
	}
}

// partialStringField is the value of key in a JSON object that may still
// be cut short: as much of the string as has arrived, "" before it starts.
func partialStringField(js []byte, key string) string {
	s := string(js)
	needle, _ := json.Marshal(key)
	i := strings.Index(s, string(needle))
	if i < 0 {
		return ""
	}
	s = strings.TrimLeft(s[i+len(needle):], " \t\r\n")
	if !strings.HasPrefix(s, ":") {
		return ""
	}
	s = strings.TrimLeft(s[1:], " \t\r\n")
	if !strings.HasPrefix(s, `"`) {
		return ""
	}
	s = s[1:]
	// Close the string where it ends (or where the input ends, dropping a
	// cut-off escape) and let the JSON decoder handle the escapes.
	end := len(s)
	for j := 0; j < len(s); j++ {
		if s[j] == '\\' {
			if j+1 >= len(s) {
				end = j
				break
			}
			if s[j+1] == 'u' && j+6 > len(s) {
				end = j
				break
			}
			j++
			continue
		}
		if s[j] == '"' {
			end = j
			break
		}
	}
	var out string
	if json.Unmarshal([]byte(`"`+s[:end]+`"`), &out) != nil {
		return ""
	}
	return out
}
