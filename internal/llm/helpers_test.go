package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptedServer answers the n-th request (from 0) with script(n, w, r)
// and records every request body and header.
type scriptedServer struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
}

func newScriptedServer(t *testing.T, script func(n int, w http.ResponseWriter, r *http.Request)) *scriptedServer {
	t.Helper()
	s := &scriptedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json: "+err.Error(), 400)
			return
		}
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		script(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedServer) body(t *testing.T, n int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.bodies) {
		t.Fatalf("request %d was never made (%d requests)", n, len(s.bodies))
	}
	return s.bodies[n]
}

func (s *scriptedServer) header(n int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[n]
}

// sse writes Server-Sent Events, flushing after each.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// event writes "event: name" (when name is not empty) and "data: data".
func (s sse) event(name, data string) {
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	s.w.(http.Flusher).Flush()
}

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
