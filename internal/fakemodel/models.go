package fakemodel

import (
	"encoding/json"
	"net/http"
)

// Model is one entry of the server's model list. Fields left zero are left
// out of the answer.
type Model struct {
	ID string
	// Name: OpenAI "name" (as OpenRouter sends it), Anthropic
	// "display_name".
	Name string
	// ContextWindow: OpenAI "context_length" (OpenRouter), Anthropic
	// "max_input_tokens".
	ContextWindow int
	// MaxTokens: OpenAI "top_provider.max_completion_tokens" (OpenRouter),
	// Anthropic "max_tokens".
	MaxTokens int
	// Reasoning: OpenAI "supported_parameters":["reasoning", …]
	// (OpenRouter), Anthropic "capabilities.thinking.supported".
	Reasoning bool
	// Extra are more fields of the model object, as they are (e.g. vLLM's
	// "max_model_len", llama.cpp's "meta").
	Extra map[string]any
}

// DefaultModels is the list the server answers until SetModels: the model
// the tests name ("openai/test").
var DefaultModels = []Model{{ID: "test", Name: "Test model", ContextWindow: 128_000, MaxTokens: 16_384}}

// modelList is the server's answer to GET /v1/models (and /models): not
// scripted, so asking for the models does not shift the script's request
// numbers, and recorded apart from Requests.
type modelList struct {
	set       bool
	models    []Model
	errStatus int
	errBody   string
	reqs      []Request
}

// SetModels sets the list GET /v1/models answers (none: an empty list).
func (s *Server) SetModels(models ...Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.set, s.models.models = true, append([]Model(nil), models...)
	s.models.errStatus = 0
}

// SetModelsError makes GET /v1/models fail with status and a JSON body.
func (s *Server) SetModelsError(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models.errStatus, s.models.errBody = status, body
}

// ModelRequests are the model-list requests so far.
func (s *Server) ModelRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.models.reqs...)
}

// isModelsRequest says whether r asks for the model list.
func isModelsRequest(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.URL.Path == "/v1/models" || r.URL.Path == "/models")
}

// serveModels answers a model-list request, in Anthropic's shape when the
// client sent anthropic-version, else in OpenAI's.
func (s *Server) serveModels(rw http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.models.reqs = append(s.models.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	models := DefaultModels
	if s.models.set {
		models = s.models.models
	}
	status, body := s.models.errStatus, s.models.errBody
	s.mu.Unlock()

	rw.Header().Set("Content-Type", "application/json")
	if status != 0 {
		rw.WriteHeader(status)
		_, _ = rw.Write([]byte(body))
		return
	}
	anthropic := r.Header.Get("Anthropic-Version") != ""
	data := make([]map[string]any, 0, len(models))
	for _, m := range models {
		o := map[string]any{}
		if anthropic {
			o["type"], o["id"], o["created_at"] = "model", m.ID, "2025-01-01T00:00:00Z"
			o["display_name"] = m.ID
			if m.Name != "" {
				o["display_name"] = m.Name
			}
			if m.ContextWindow > 0 {
				o["max_input_tokens"] = m.ContextWindow
			}
			if m.MaxTokens > 0 {
				o["max_tokens"] = m.MaxTokens
			}
			o["capabilities"] = map[string]any{"thinking": map[string]any{"supported": m.Reasoning}}
		} else {
			o["id"], o["object"], o["created"], o["owned_by"] = m.ID, "model", 1700000000, "fake"
			if m.Name != "" {
				o["name"] = m.Name
			}
			if m.ContextWindow > 0 {
				o["context_length"] = m.ContextWindow
			}
			if m.MaxTokens > 0 {
				o["top_provider"] = map[string]any{"max_completion_tokens": m.MaxTokens}
			}
			if m.Reasoning {
				o["supported_parameters"] = []string{"reasoning", "tools"}
			}
		}
		for k, v := range m.Extra {
			o[k] = v
		}
		data = append(data, o)
	}
	answer := map[string]any{"data": data}
	if anthropic {
		answer["has_more"] = false
		if len(models) > 0 {
			answer["first_id"], answer["last_id"] = models[0].ID, models[len(models)-1].ID
		}
	} else {
		answer["object"] = "list"
	}
	b, _ := json.Marshal(answer)
	_, _ = rw.Write(b)
}
