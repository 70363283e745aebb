// Package fakemodel is the one fake model server of the tests: a local HTTP
// server that answers each request with a script and records what the client
// sent. A script writes OpenAI chat-completions chunks or Anthropic Messages
// events as Server-Sent Events, the same bytes a real provider streams, so
// the real SDKs (and the real agentsh binary) parse them, thinking blocks
// and usage details included; its /v1/models list can be set.
//
// Every test that needs a model uses this package rather than its own
// httptest server, so a change of the wire format is made in one place.
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Script answers the n-th request (from 0). The request is recorded before
// the script runs, so it may read the server's requests, its own included.
type Script func(n int, w *Writer)

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any // the decoded JSON body; nil when the body was empty
}

// Server is a scripted fake model server; it closes with its test.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []Request
	models modelList
}

// New starts a server that answers the n-th request with script. A body
// that is not JSON is answered 400 and neither recorded nor scripted. The
// model list (GET /v1/models) is answered apart: see SetModels.
func New(t testing.TB, script Script) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if isModelsRequest(r) {
			s.serveModels(rw, r)
			return
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, "read body: "+err.Error(), http.StatusInternalServerError)
			return
		}
		var body map[string]any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				http.Error(rw, "bad json: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		script(n, &Writer{rw: rw, req: r})
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Bodies returns the decoded bodies of the requests so far.
func (s *Server) Bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r.Body
	}
	return out
}

// Request returns the n-th request (from 0), failing the test if it never
// came.
func (s *Server) Request(t testing.TB, n int) Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.reqs) {
		t.Fatalf("request %d was never made (%d requests)", n, len(s.reqs))
	}
	return s.reqs[n]
}

// OpenAIBaseURL is the base URL an OpenAI client needs (the SDK appends
// /chat/completions).
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// OpenAIEnv points agentsh's openai provider at the server.
func (s *Server) OpenAIEnv() []string {
	return []string{"OPENAI_BASE_URL=" + s.OpenAIBaseURL(), "OPENAI_API_KEY=test"}
}

// AnthropicEnv points agentsh's anthropic provider at the server.
func (s *Server) AnthropicEnv() []string {
	return []string{"ANTHROPIC_BASE_URL=" + s.URL, "ANTHROPIC_API_KEY=sk-ant-test"}
}

// Writer answers one request. The first event sends the SSE headers with
// status 200; Error sends a plain JSON error instead. Every event is flushed
// at once, so a client sees it while the script goes on or blocks.
type Writer struct {
	rw      http.ResponseWriter
	req     *http.Request
	started bool
}

// Header is the response header, to set before the first event or Error.
func (w *Writer) Header() http.Header { return w.rw.Header() }

// Context ends when the client goes away: a script that holds a stream
// open waits on it.
func (w *Writer) Context() context.Context { return w.req.Context() }

// Error answers with status and a JSON body, the way providers report a
// refused request.
func (w *Writer) Error(status int, body string) {
	w.rw.Header().Set("Content-Type", "application/json")
	w.rw.WriteHeader(status)
	io.WriteString(w.rw, body)
	w.started = true
}

// Start sends the SSE headers now; events call it themselves.
func (w *Writer) Start() {
	if w.started {
		return
	}
	w.started = true
	w.rw.Header().Set("Content-Type", "text/event-stream")
	w.rw.Header().Set("Cache-Control", "no-cache")
	w.rw.WriteHeader(http.StatusOK)
	w.rw.(http.Flusher).Flush()
}

// Event writes one SSE event: "event: name" (left out when name is empty)
// and "data: data".
func (w *Writer) Event(name, data string) {
	w.Start()
	if name != "" {
		fmt.Fprintf(w.rw, "event: %s\n", name)
	}
	fmt.Fprintf(w.rw, "data: %s\n\n", data)
	w.rw.(http.Flusher).Flush()
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// OpenAI chat completions.

// Chunk writes one chat.completion.chunk with the given choices JSON.
func (w *Writer) Chunk(choices string) {
	w.Event("", `{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake","system_fingerprint":"fp_fake","choices":`+choices+`}`)
}

// Text streams a piece of the answer's text.
func (w *Writer) Text(text string) {
	w.Chunk(`[{"index":0,"delta":{"role":"assistant","content":` + quote(text) + `},"finish_reason":null}]`)
}

// ToolCall streams the tool call at index (0 for the first call of an
// answer): its id and name, then its arguments as one more chunk per piece.
func (w *Writer) ToolCall(index int, id, name string, argPieces ...string) {
	w.Chunk(fmt.Sprintf(`[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]},"finish_reason":null}]`,
		index, quote(id), quote(name)))
	for _, p := range argPieces {
		w.Chunk(fmt.Sprintf(`[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]},"finish_reason":null}]`, index, quote(p)))
	}
}

// Finish ends the answer with a finish reason ("stop", "tool_calls",
// "length") and the stream with [DONE].
func (w *Writer) Finish(reason string) {
	w.Chunk(`[{"index":0,"delta":{},"finish_reason":` + quote(reason) + `}]`)
	w.Event("", "[DONE]")
}

// FinishUsage is Finish with a usage chunk (as stream_options.include_usage
// asks) between the finish reason and [DONE].
func (w *Writer) FinishUsage(reason string, promptTokens, completionTokens int) {
	w.Chunk(`[{"index":0,"delta":{},"finish_reason":` + quote(reason) + `}]`)
	w.Event("", fmt.Sprintf(`{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		promptTokens, completionTokens, promptTokens+completionTokens))
	w.Event("", "[DONE]")
}

// Answer is a whole text answer.
func (w *Writer) Answer(text string) {
	w.Text(text)
	w.Finish("stop")
}

// Call is a whole answer that calls one tool with args (JSON text).
func (w *Writer) Call(id, name, args string) {
	w.ToolCall(0, id, name, args)
	w.Finish("tool_calls")
}

// Bash is Call of the bash tool.
func (w *Writer) Bash(id, args string) { w.Call(id, "bash", args) }

// Anthropic Messages.

// MessageStart opens an Anthropic message.
func (w *Writer) MessageStart(inputTokens int) {
	w.Event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_fake","type":"message","role":"assistant","model":"fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, inputTokens))
}

// TextBlock streams a text content block at index, one delta per piece.
func (w *Writer) TextBlock(index int, pieces ...string) {
	w.Event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
	for _, p := range pieces {
		w.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, quote(p)))
	}
	w.Event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// ToolUseBlock streams a tool_use content block at index, its input JSON
// one delta per piece.
func (w *Writer) ToolUseBlock(index int, id, name string, inputPieces ...string) {
	w.Event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, index, quote(id), quote(name)))
	for _, p := range inputPieces {
		w.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, quote(p)))
	}
	w.Event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// MessageStop ends an Anthropic message with a stop reason ("end_turn",
// "tool_use", "max_tokens").
func (w *Writer) MessageStop(reason string, outputTokens int) {
	w.Event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, quote(reason), outputTokens))
	w.Event("message_stop", `{"type":"message_stop"}`)
}

// AnthropicAnswer is a whole Anthropic text answer.
func (w *Writer) AnthropicAnswer(text string) {
	w.MessageStart(25)
	w.TextBlock(0, text)
	w.MessageStop("end_turn", 6)
}

// AnthropicCall is a whole Anthropic answer that calls one tool with input
// (JSON text).
func (w *Writer) AnthropicCall(id, name, input string) {
	w.MessageStart(25)
	w.ToolUseBlock(0, id, name, input)
	w.MessageStop("tool_use", 40)
}
