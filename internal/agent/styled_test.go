package agent

import (
	"agentsh/internal/session"
	"bytes"
	"context"
	"reflect"
	"sync"
	"testing"
)

// TestExecuteBashStyled: a bang command run for a UI that shows colours
// streams and records its SGR colours (never cursor movement), while the
// model reads plain text; a progress bar is one line in both.
func TestExecuteBashStyled(t *testing.T) {
	a, s := newAgent(t)
	var streamed bytes.Buffer
	var mu sync.Mutex
	const cmd = `printf '\033[1;32mok\033[0m \033[2K\033[3Atest\n'; for i in 1 2 3; do printf '\r\033[33m%d0%%\033[0m' $i; done; echo`
	res, err := a.ExecuteBash(context.Background(), cmd,
		func(b []byte) { mu.Lock(); streamed.Write(b); mu.Unlock() }, BashOptions{Styled: true})
	if err != nil {
		t.Fatal(err)
	}
	const styled = "\x1b[1;32mok\x1b[0m test\n\x1b[0m\x1b[33m30%\x1b[0m\n"
	if res.Output != "ok test\n30%\n" || res.Styled != styled {
		t.Fatalf("output %q, styled %q", res.Output, res.Styled)
	}
	mu.Lock()
	if got := streamed.String(); got != "\x1b[1;32mok\x1b[0m test\n\x1b[33m\r10%\x1b[0m\x1b[33m\r20%\x1b[0m\x1b[33m\r30%\x1b[0m\n" {
		t.Errorf("streamed %q", got)
	}
	mu.Unlock()
	msgs := a.Messages()
	if m := msgs[0].(*session.BashExecutionMessage); m.Output != "ok test\n30%\n" || m.Styled != styled {
		t.Errorf("recorded %+v", m)
	}
	if got := loadMessages(t, s.Path()); !reflect.DeepEqual(got, msgs) {
		t.Errorf("file holds %#v, memory %#v", got, msgs)
	}
	if got := a.ContextMessages()[0].(*session.UserMessage).Text; got != "Ran `"+cmd+"`\n```\nok test\n30%\n```" {
		t.Errorf("context text %q", got)
	}
	// Without Styled: plain chunks, nothing coloured recorded.
	streamed.Reset()
	res, _ = a.ExecuteBash(context.Background(), cmd, func(b []byte) { mu.Lock(); streamed.Write(b); mu.Unlock() }, BashOptions{})
	if res.Styled != "" || bytes.IndexByte(streamed.Bytes(), 0x1b) >= 0 || a.Messages()[1].(*session.BashExecutionMessage).Styled != "" {
		t.Errorf("plain run: styled %q, streamed %q", res.Styled, streamed.String())
	}
}
