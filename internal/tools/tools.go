// Package tools is the model's tool registry: each tool has a name, a
// description, a JSON schema for its arguments and an Execute that streams
// live updates and returns what the model reads. The tools are bash (the
// bash package's tool behind a BashGate, where the approvals stand; bash.go),
// the job tools jobs, job_output, job_input and job_kill (jobs.go) when the
// bash tool has a job manager, and the file tools read, write, edit, grep
// and find. The file tools work through an FS (fs.go): the host's, or the
// sandbox's confined view (internal/confinedfs) the session gives them for
// each call; grep and find leave out what .gitignore and .ignore files do
// (ignore.go).
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"agentsh/internal/llm"
)

// Result is what one tool call produced. Content is exactly what the model
// reads; Details is the tool's structured side (for bash a marshalled
// bash.ToolDetails). Aborted is set when the call was cancelled by the
// caller's context.
type Result struct {
	Content string          `json:"content"`
	IsError bool            `json:"isError"`
	Aborted bool            `json:"aborted,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
}

// Tool is one tool the model can call.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema object of the arguments.
	Schema() json.RawMessage
	// Execute runs one call. onUpdate (may be nil) receives live snapshots
	// of the output, possibly from another goroutine, never after Execute
	// returns. Failures are error results, not Go errors.
	Execute(ctx context.Context, args json.RawMessage, onUpdate func(text string)) Result
}

// registryAware tools learn the registry they were registered in (the bash
// tool needs the names available at call time).
type registryAware interface {
	bind(r *Registry)
}

// Registry holds tools by name, in registration order. It is safe for
// concurrent use.
type Registry struct {
	mu    sync.RWMutex
	order []string
	tools map[string]Tool
}

// NewRegistry returns a registry holding the given tools (see Register).
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range ts {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds t; a second tool with the same name is refused.
func (r *Registry) Register(t Tool) error {
	if t == nil || t.Name() == "" {
		return fmt.Errorf("tools: a tool needs a name")
	}
	r.mu.Lock()
	if r.tools == nil {
		r.tools = map[string]Tool{}
	}
	if _, dup := r.tools[t.Name()]; dup {
		r.mu.Unlock()
		return fmt.Errorf("tools: %q is already registered", t.Name())
	}
	r.tools[t.Name()] = t
	r.order = append(r.order, t.Name())
	r.mu.Unlock()
	if ra, ok := t.(registryAware); ok {
		ra.bind(r)
	}
	return nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the registered names in registration order.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.order...)
}

// Specs describes every tool to the model, in registration order.
func (r *Registry) Specs() []llm.ToolSpec {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]llm.ToolSpec, 0, len(r.order))
	for _, n := range r.order {
		t := r.tools[n]
		out = append(out, llm.ToolSpec{Name: n, Description: t.Description(), Parameters: t.Schema()})
	}
	return out
}

// Prestarter is a tool that can get ready for its next call ahead of it
// (the bash tool starts its shell), without blocking.
type Prestarter interface {
	Prestart()
}

// Prestart lets every tool that can get ready for a call do so in the
// background: the agent loop calls it with each model request, so that the
// work overlaps the model's answer instead of following it.
func (r *Registry) Prestart() {
	if r == nil {
		return
	}
	r.mu.RLock()
	var ps []Prestarter
	for _, n := range r.order {
		if p, ok := r.tools[n].(Prestarter); ok {
			ps = append(ps, p)
		}
	}
	r.mu.RUnlock()
	for _, p := range ps {
		p.Prestart()
	}
}

// Standard is the registry every mode gives the model: bash first, then the
// file tools, so `agentsh exec`, print mode, RPC and the TUI all offer (and
// the interceptor suggests) the same set; then the job tools when the bash
// tool has a job manager (spec §9).
func Standard(bt Tool, env Env) (*Registry, error) {
	ts := append([]Tool{bt}, FileTools(env)...)
	if b, ok := bt.(*bashTool); ok && b.tool.Jobs != nil {
		ts = append(ts, JobTools(b.tool.Jobs)...)
	}
	return NewRegistry(ts...)
}
