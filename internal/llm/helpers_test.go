package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// jsonPath walks a decoded JSON value: keys for objects, ints for arrays.
func jsonPath(t *testing.T, v any, path ...any) any {
	t.Helper()
	cur := v
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("at %v: want object, got %T (%v)", path[:i], cur, cur)
			}
			cur, ok = m[k]
			if !ok {
				t.Fatalf("at %v: no key %q in %v", path[:i], k, m)
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: want array with index %d, got %T (%v)", path[:i], k, cur, cur)
			}
			cur = a[k]
		}
	}
	return cur
}

func jsonEq(t *testing.T, what string, got any, wantJSON string) {
	t.Helper()
	var want any
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatalf("%s: bad want JSON: %v", what, err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// describe renders events compactly for order assertions.
func describe(evs []Event) []string {
	var out []string
	for _, e := range evs {
		s := e.Kind.String()
		switch e.Kind {
		case TextDelta:
			s += " " + e.Text
		case ToolCallStart:
			s += fmt.Sprintf(" %s %s %q", e.ToolCall.ID, e.ToolCall.Name, e.ToolCall.Arguments)
		case ToolCallDelta:
			s += fmt.Sprintf(" %s %s +%s =%s", e.ToolCall.ID, e.ToolCall.Name, e.Text, e.ToolCall.Arguments)
		case ToolCallEnd:
			s += fmt.Sprintf(" %s %s %s", e.ToolCall.ID, e.ToolCall.Name, e.ToolCall.Arguments)
		case Done:
			s += " " + e.StopReason
			if e.Usage != nil {
				s += fmt.Sprintf(" in=%d out=%d", e.Usage.InputTokens, e.Usage.OutputTokens)
			}
		case Error:
			s += fmt.Sprintf(" %s %v", e.StopReason, e.Err)
		case ThinkingDelta:
			s += " " + e.Text
		case ThinkingEnd:
			s += fmt.Sprintf(" %+v", *e.Thinking)
		}
		out = append(out, s)
	}
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// collect returns an emit func and the events it saw.
func collect() (func(Event), *[]Event) {
	var evs []Event
	return func(e Event) { evs = append(evs, e) }, &evs
}

// bashTool is the tool spec used by the scripted conversations.
var bashTool = ToolSpec{
	Name:        "bash",
	Description: "Run a bash command.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The command"}},"required":["command"],"additionalProperties":false}`),
}

const wantArgs = `{"command":"seq 1 200000"}`

// argPieces is wantArgs split across several deltas.
var argPieces = []string{`{"comm`, `and":"seq`, ` 1 2000`, `00"}`}

// streamWithGuard runs Stream in a goroutine and fails the test if it does
// not return within a generous bound (a hang guard, not a timing assert).
func streamWithGuard(t *testing.T, p Provider, ctx context.Context, req Request, emit func(Event)) (Message, string, error) {
	t.Helper()
	type result struct {
		msg  Message
		stop string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		m, s, err := p.Stream(ctx, req, emit)
		done <- result{m, s, err}
	}()
	select {
	case r := <-done:
		return r.msg, r.stop, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return (hang)")
		return Message{}, "", nil
	}
}

func zero() *int { z := 0; return &z }
