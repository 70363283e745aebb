package session

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// List is what a session picker shows: one row per session with a message,
// newest first, with the first prompt on one line and the message count.
func TestListSessions(t *testing.T) {
	isolateData(t)
	cwd := t.TempDir()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var paths []string
	session := func(age time.Duration, msgs ...Message) *Store {
		t.Helper()
		s, err := Create(cwd)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := s.Append(m); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		if len(msgs) > 0 {
			mt := base.Add(-age)
			if err := os.Chtimes(s.Path(), mt, mt); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, s.Path())
		}
		return s
	}
	long := "fix the failing test in\n\tparser_test.go   " + strings.Repeat("and then more ", 10)
	code := 0
	older := session(2*time.Minute,
		&UserMessage{Text: long},
		&AssistantMessage{Text: "", ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: []byte(`{"command":"go test"}`)}}},
		&ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: strings.Repeat("ok\n", 20000)},
		&AssistantMessage{Text: "Fixed."})
	newer := session(time.Minute,
		&BashExecutionMessage{Command: "git status", Output: "clean\n", ExitCode: &code, ExcludeFromContext: true},
		&UserMessage{Text: "what changed?"})
	session(0) // nothing said: no file at all
	if _, err := os.Stat(filepath.Dir(paths[0])); err != nil {
		t.Fatal(err)
	}
	// A header alone (as older versions left on every start) and a file
	// that is not a session are not listed.
	writeFile(t, filepath.Join(SessionsDir(cwd), "2026-01-01T00-00-00-000Z_0000000000000000.jsonl"), testHeader+"\n")
	writeFile(t, filepath.Join(SessionsDir(cwd), "2026-01-01T00-00-00-000Z_1111111111111111.jsonl"), "garbage\n")
	// A corrupt line, and one cut by a crash, are not messages.
	f, err := os.OpenFile(older.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{not json\n\n" + `{"type":"message","message":{"role":"user","text":"cut`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mt := base.Add(-2 * time.Minute)
	if err := os.Chtimes(older.Path(), mt, mt); err != nil {
		t.Fatal(err)
	}

	got, err := List(cwd)
	if err != nil {
		t.Fatal(err)
	}
	want := []Info{
		{ID: newer.ID(), Path: newer.Path(), Modified: base.Add(-time.Minute), FirstPrompt: "!!git status", Messages: 2},
		{ID: older.ID(), Path: older.Path(), Modified: base.Add(-2 * time.Minute),
			FirstPrompt: "fix the failing test in parser_test.go and then more and then more and then mor…", Messages: 4},
	}
	for i := range got {
		if i < len(want) && got[i].Modified.Equal(want[i].Modified) {
			got[i].Modified = want[i].Modified
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List =\n%+v\nwant\n%+v", got, want)
	}
	if n := len([]rune(want[1].FirstPrompt)); n != PromptPreviewRunes {
		t.Errorf("preview of %d runes, want %d", n, PromptPreviewRunes)
	}

	// Touching the older one makes it the newest.
	now := time.Now()
	if err := os.Chtimes(older.Path(), now, now); err != nil {
		t.Fatal(err)
	}
	got, _ = List(cwd)
	if len(got) != 2 || got[0].ID != older.ID() {
		t.Errorf("after a write to the older session: %+v", got)
	}

	if got, err := List(t.TempDir()); err != nil || len(got) != 0 {
		t.Errorf("List of a directory without sessions = %v, %v", got, err)
	}
}

func BenchmarkList(b *testing.B) {
	b.Setenv("XDG_DATA_HOME", b.TempDir())
	cwd := b.TempDir()
	out := strings.Repeat("output line\n", 4000) // ~48 KB, a truncated tool result
	for range 50 {
		s, err := Create(cwd)
		if err != nil {
			b.Fatal(err)
		}
		for i := range 20 {
			_ = s.Append(&UserMessage{Text: "prompt"})
			_ = s.Append(&ToolResultMessage{ToolCallID: "c" + string(rune('a'+i)), ToolName: "bash", Content: out})
		}
		s.Close()
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := List(cwd)
		if err != nil || len(got) != 50 {
			b.Fatal(len(got), err)
		}
	}
}
