package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentsh/internal/config"
	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
)

// A model call whose server never answers fails after the request timeout
// (it used to wait for ever) and is tried again; the try that answers ends the
// turn. One that keeps streaming is not cut however long it takes.
func TestRequestTimeoutEndsAHungCall(t *testing.T) {
	a, _, reg := newLoopAgent(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			<-w.Context().Done() // a hung server: nothing, until the client goes
			return
		}
		// Slower than the timeout in all, but never silent for as long.
		for range 40 {
			w.Text("x")
			time.Sleep(50 * time.Millisecond)
		}
		w.Answer(" done")
	})
	a.SetRequestTimeout(1500 * time.Millisecond)
	a.SetRetry(NewRetry(1, time.Millisecond, time.Millisecond))
	var log eventLog
	if err := promptWithGuard(t, context.Background(), a, "hello", openAIProvider(srv), reg, log.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	var retry *Event
	for _, e := range log.all() {
		if e.Type == EventAutoRetryStart {
			retry = &e
		}
	}
	if retry == nil || retry.ErrorMessage != "openai: no answer for 1.5s (the request timeout)" {
		t.Fatalf("retry event %+v", retry)
	}
	if got := lastAssistantText(a); got != strings.Repeat("x", 40)+" done" {
		t.Errorf("answer %q", got)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func lastAssistantText(a *AgentSession) string {
	msgs := a.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, ok := msgs[i].(*session.AssistantMessage); ok {
			return m.Text
		}
	}
	return ""
}

func TestFormatTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{10 * time.Minute: "10m", 90 * time.Second: "1m30s", time.Hour: "1h",
		400 * time.Millisecond: "400ms", 3 * time.Second: "3s", 3*time.Hour + 5*time.Minute: "3h5m"} {
		if got := FormatTimeout(d); got != want {
			t.Errorf("FormatTimeout(%v) = %q, want %q", d, got, want)
		}
	}
}

// ContextWindow, what the TUI's "% context left" counts against: the
// settings' compaction.contextWindow beats the provider's list, which beats
// the table of well-known models.
func TestContextWindowForTheUser(t *testing.T) {
	a, _ := newAgent(t)
	for _, c := range []struct {
		model  string
		listed int
		want   int
	}{{"gpt-4o", 0, 128_000}, {"gpt-4o", 64_000, 64_000}, {"my-local", 0, 0}, {"my-local", 32_000, 32_000}} {
		if got := a.ContextWindow(c.model, c.listed); got != c.want {
			t.Errorf("no settings: ContextWindow(%q, %d) = %d, want %d", c.model, c.listed, got, c.want)
		}
	}
	followCompactionSettings(t, a, `{"contextWindow": {"my-local": 8000}}`)
	if got := a.ContextWindow("my-local", 32_000); got != 8000 {
		t.Errorf("with the setting: %d, want 8000", got)
	}
	if got := a.ContextWindow("gpt-4o", 64_000); got != 64_000 {
		t.Errorf("a model the setting leaves out: %d, want the listed 64000", got)
	}
}

// The request timeout: retry.requestTimeoutMs, else 10 minutes; a
// session's own SetRequestTimeout beats both.
func TestRequestTimeoutSetting(t *testing.T) {
	a, _ := newAgent(t)
	if got := a.RequestTimeout(); got != 10*time.Minute {
		t.Errorf("default %v", got)
	}
	ms, err := config.ModelSettingsOf(settingsFrom(t, `{"retry": {"requestTimeoutMs": 90000}}`))
	if err != nil {
		t.Fatal(err)
	}
	a.SetRetry(NewRetryOf(ms))
	if got := a.RequestTimeout(); got != 90*time.Second {
		t.Errorf("from the settings %v", got)
	}
	a.SetRequestTimeout(5 * time.Second)
	if got := a.RequestTimeout(); got != 5*time.Second {
		t.Errorf("set %v", got)
	}
	a.SetRequestTimeout(-1)
	if got := a.RequestTimeout(); got != 0 {
		t.Errorf("off %v", got)
	}
	if _, err := config.ModelSettingsOf(settingsFrom(t, `{"retry": {"requestTimeoutMs": "10m"}}`)); err == nil ||
		err.Error() != "settings: retry.requestTimeoutMs: expected a number from 0, got 10m" {
		t.Errorf("a string: %v", err)
	}
}
