package main

// The end-to-end tests talk to internal/fakemodel's server through these
// short local names (the binary, built by TestMain, speaks OpenAI's streaming
// chat completions to it unless a test says otherwise).

import (
	"fmt"
	"testing"

	"agentsh/internal/fakemodel"
)

// sseServer is a fakemodel server that speaks OpenAI chat completions.
type sseServer struct{ *fakemodel.Server }

// newSSEServer answers the n-th request (from 0) with script.
func newSSEServer(t *testing.T, script func(n int, w sseWriter)) *sseServer {
	t.Helper()
	return &sseServer{fakemodel.New(t, func(n int, w *fakemodel.Writer) { script(n, sseWriter{w}) })}
}

// requests returns the decoded bodies of the requests so far.
func (s *sseServer) requests() []map[string]any { return s.Bodies() }

// env points agentsh's openai provider at the server.
func (s *sseServer) env() []string { return s.OpenAIEnv() }

// sseWriter answers one request; the whole fakemodel.Writer is there too
// (Chunk, Finish, Error, Context…).
type sseWriter struct{ *fakemodel.Writer }

func (w sseWriter) answer(text string)         { w.Answer(text) }
func (w sseWriter) bash(id, args string)       { w.Bash(id, args) }
func (w sseWriter) tool(id, name, args string) { w.Call(id, name, args) }

// seqScript calls bash with seq 1 200000, then answers.
func seqScript(n int, w sseWriter) {
	if n%2 == 0 {
		w.bash(fmt.Sprintf("call_%d", n), `{"command":"seq 1 200000"}`)
		return
	}
	w.answer("There are 200000 lines.")
}

// wire lists a request's messages as "role: content".
func wire(body map[string]any) []string {
	var out []string
	for _, m := range fakemodel.OpenAIMessages(body) {
		out = append(out, m.Role+": "+m.Content)
	}
	return out
}

// lastToolResult is the content of the newest tool message of a request.
func lastToolResult(body map[string]any) string { return fakemodel.LastToolResult(body) }
