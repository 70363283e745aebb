package agent

import (
	"context"
	"testing"

	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
)

// The provider's token counts reach the caller on message_end, per call.
func TestMessageEndCarriesUsage(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.ToolCall(0, "call_1", "bash", `{"command":"true"}`)
			w.FinishUsage("tool_calls", 1200, 30)
			return
		}
		w.Text("done")
		w.Finish("stop") // no usage chunk: none reported
	})
	var log eventLog
	if err := promptWithGuard(t, context.Background(), a, "go", openAIProvider(srv), reg, log.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	var ends []Event
	log.mu.Lock()
	for _, e := range log.evs {
		if e.Type == EventMessageEnd && e.Message.Role() == session.RoleAssistant {
			ends = append(ends, e)
		}
	}
	log.mu.Unlock()
	if len(ends) != 2 {
		t.Fatalf("%d message_end events, want 2", len(ends))
	}
	if u := ends[0].Usage; u == nil || u.InputTokens != 1200 || u.OutputTokens != 30 {
		t.Errorf("first call's usage = %+v, want 1200 in, 30 out", u)
	}
	if ends[1].Usage != nil {
		t.Errorf("second call reported no usage, event has %+v", ends[1].Usage)
	}
}
