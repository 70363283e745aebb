package session

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

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
