package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/llm"
)

func settingsFrom(t *testing.T, json string) *Settings {
	t.Helper()
	p := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(p, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSettingsFrom(p, filepath.Join(t.TempDir(), "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestModelSettingsOf(t *testing.T) {
	ms, err := ModelSettingsOf(settingsFrom(t, `{"defaultThinkingLevel":"high","enabledModels":["openai/a","anthropic/*"],
		"retry":{"enabled":false,"maxRetries":2,"baseDelayMs":250,"maxDelayMs":1000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ms.ThinkingLevel != "high" || strings.Join(ms.Enabled, ",") != "openai/a,anthropic/*" || ms.RetryEnabled ||
		ms.MaxRetries != 2 || ms.BaseDelay != 250*time.Millisecond || ms.MaxDelay != time.Second {
		t.Errorf("settings %+v", ms)
	}
	r := ms.NewRetryOf()
	if r.Enabled() || r.MaxRetries != 2 || r.delay(1) != 250*time.Millisecond || r.delay(2) != 500*time.Millisecond ||
		r.delay(5) != time.Second {
		t.Errorf("retry %+v: delays %v %v %v", r, r.delay(1), r.delay(2), r.delay(5))
	}

	ms, err = ModelSettingsOf(settingsFrom(t, `{}`))
	if err != nil || ms.ThinkingLevel != "" || !ms.RetryEnabled {
		t.Errorf("defaults %+v %v", ms, err)
	}
	if r := ms.NewRetryOf(); r.MaxRetries != DefaultMaxRetries || r.delay(1) != DefaultRetryBaseMs*time.Millisecond || !r.Enabled() {
		t.Errorf("default retry %+v", r)
	}

	_, err = ModelSettingsOf(settingsFrom(t, `{"defaultThinkingLevel":"max"}`))
	if err == nil || err.Error() != "settings: defaultThinkingLevel: must be one of off, minimal, low, medium, high, xhigh, got max" {
		t.Errorf("bad level: %v", err)
	}
	if _, err = ModelSettingsOf(settingsFrom(t, `{"retry":{"enabled":"yes"}}`)); err == nil {
		t.Error("retry.enabled as a string is accepted")
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&llm.APIError{Provider: "openai", StatusCode: 429}, true},
		{fmt.Errorf("wrapped: %w", &llm.APIError{Provider: "openai", StatusCode: 503}), true},
		{&llm.APIError{Provider: "anthropic", StatusCode: 529, Message: "Overloaded"}, true},
		{&llm.APIError{Provider: "anthropic", StatusCode: 200, Message: "Overloaded"}, true}, // an error event in the stream
		{&llm.APIError{Provider: "openai", StatusCode: 400, Message: "bad request"}, false},
		{&llm.APIError{Provider: "openai", StatusCode: 401}, false},
		{&llm.APIError{Provider: "openai", StatusCode: 200, Message: "invalid tool"}, false},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false},
		{fmt.Errorf("post: %w", io.EOF), true},
		{io.ErrUnexpectedEOF, true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("something else"), false},
	} {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestStoreModelEntries(t *testing.T) {
	dir := t.TempDir()
	st, err := CreateIn(dir, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendModelChange("openai/gpt-4.1"); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendThinkingLevelChange("high"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a session without a message has a file: %v", err)
	}
	if err := st.Append(&UserMessage{Text: "hi", Timestamp: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendModelChange("anthropic/claude-sonnet-4-5"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	data, _ := os.ReadFile(st.Path())
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		types = append(types, strings.SplitN(strings.SplitN(l, `"type":"`, 2)[1], `"`, 2)[0])
	}
	if strings.Join(types, ",") != "session,model_change,thinking_level_change,message,model_change" {
		t.Errorf("entries %v\n%s", types, data)
	}
	s, errs, err := Load(st.Path())
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	if s.Model != "anthropic/claude-sonnet-4-5" || s.ThinkingLevel != "high" || len(s.Messages) != 1 {
		t.Errorf("loaded model %q level %q, %d messages", s.Model, s.ThinkingLevel, len(s.Messages))
	}
	// A broken entry is reported with its line and skipped.
	f, _ := os.OpenFile(st.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"model_change","timestamp":"2026-01-01T00:00:00.000Z"}` + "\n")
	f.Close()
	_, errs, err = Load(st.Path())
	if err != nil || len(errs) != 1 || errs[0].Line != 6 || !strings.Contains(errs[0].Error(), `model_change entry without "model"`) {
		t.Errorf("broken entry: %v %v", err, errs)
	}
}

func TestRecordModelOnlyWhenChanged(t *testing.T) {
	st, err := CreateIn(t.TempDir(), "/w")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := New("/w", st, nil, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"openai/a", "off"}, {"openai/a", "off"}, {"openai/b", "off"}, {"openai/b", "low"}, {"openai/b", "low"}} {
		if err := a.RecordModel(c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Append(&UserMessage{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(st.Path())
	if got := strings.Count(string(data), `"model_change"`); got != 2 {
		t.Errorf("%d model changes:\n%s", got, data)
	}
	if got := strings.Count(string(data), `"thinking_level_change"`); got != 1 {
		t.Errorf("%d level changes:\n%s", got, data)
	}
}

// BenchmarkLoadSession loads a session of 2000 messages and a few model
// changes: the cost of looking for model entries on every line.
func BenchmarkLoadSession(b *testing.B) {
	st, err := CreateIn(b.TempDir(), "/w")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if i%100 == 0 {
			st.AppendModelChange(fmt.Sprintf("openai/m%d", i))
		}
		st.Append(&UserMessage{Text: fmt.Sprintf("question %d about model_change handling", i)})
		st.Append(&AssistantMessage{Text: strings.Repeat("an answer ", 20)})
	}
	st.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Load(st.Path()); err != nil {
			b.Fatal(err)
		}
	}
}
