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
