package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/llm"
	"agentsh/internal/session"
)

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

func TestRecordModelOnlyWhenChanged(t *testing.T) {
	st, err := session.CreateIn(t.TempDir(), "/w")
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
	if err := a.Append(&session.UserMessage{Text: "x"}); err != nil {
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

// nameOnly is a provider that only has a name: it cannot list its models,
// so nothing asks a server.
type nameOnly string

func (n nameOnly) Name() string { return string(n) }

func (nameOnly) Stream(context.Context, llm.Request, func(llm.Event)) (llm.Message, string, error) {
	return llm.Message{}, "", errors.New("nameOnly does not stream")
}

// ModelsOf starts on the provider it is given, which serves its provider's
// other models too, and reads no environment: a key set there configures
// nothing.
func TestModelsOf(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-set")
	p := nameOnly("ollama")
	ms := ModelsOf(p, "llama3")
	if got, id := ms.Provider(); got != p || id != "llama3" || ms.Spec() != "ollama/llama3" {
		t.Fatalf("Provider() = %v %q, Spec %q", got, id, ms.Spec())
	}
	if got := ms.ConfiguredProviders(); len(got) != 1 || got[0] != "ollama" {
		t.Errorf("ConfiguredProviders = %v, want [ollama]", got)
	}
	if md, ok := ms.CurrentModel(); !ok || md.Spec() != "ollama/llama3" {
		t.Errorf("CurrentModel = %+v %v", md, ok)
	}
	if avail := ms.Available(context.Background()); len(avail) != 1 || avail[0].Spec() != "ollama/llama3" {
		t.Errorf("Available = %+v", avail)
	}
	if err := ms.Use("ollama", "qwen"); err != nil {
		t.Fatal(err)
	}
	if got, id := ms.Provider(); got != p || id != "qwen" {
		t.Errorf("after Use: %v %q, want the same provider on qwen", got, id)
	}
	if err := ms.Use("openai", "gpt-4o"); err == nil {
		t.Errorf("switched to openai with no environment: %s", ms.Spec())
	}

	none := ModelsOf(nil, "")
	if p, _ := none.Provider(); p != nil || none.Spec() != "" {
		t.Errorf("ModelsOf(nil) has a model: %s", none.Spec())
	}
	if _, ok := none.CurrentModel(); ok {
		t.Error("ModelsOf(nil) has a current model")
	}
}
