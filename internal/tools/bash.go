package tools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"agentsh/internal/bash"
)

// BashName is the bash tool's name.
const BashName = "bash"

// bashDescription states the contract the model relies on: a trailing
// `| head`/`| tail` is taken off and applied to the whole output (spec §1.1,
// see bash.Tool.Execute), the exit status is the command's own, truncation is
// by bytes only (the sink has no line cap), and the head/tail parameters
// replace an extracted limit and are described exactly by the notice.
const bashDescription = "Run a command in bash in the session's working directory and return its output " +
	"(stdout and stderr combined). A trailing `| head -n N` or `| tail -n N` (also -nN, -N) is taken off the command " +
	"and applied to the command's whole output, stderr and earlier commands included: `echo x; seq 100 | head -n 3` " +
	"returns x, 1 and 2. The exit status is the command's own: `false | head -n 1` fails with code 1, like " +
	"`/bin/false | head -n 1`. With head, the output is closed after N lines, so an endless producer such as " +
	"`yes | head -n 5` ends at once; whatever still writes then is stopped, and a stop by that closed output " +
	"(SIGPIPE) counts as success. Output over 50KB is truncated to its last 50KB, with a notice giving the lines " +
	"shown and an artifact:// link to the full output. The head and tail parameters keep the first or last N lines " +
	"of the output (head first, then tail) and replace a trailing head or tail of the command; on a truncated " +
	"output the notice then gives the lines returned and still links the full output. " +
	"A non-zero exit code is reported as an error together with the output."

var bashSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"command":{"type":"string","description":"The bash command to run."},` +
	`"timeout":{"type":"number","description":"Timeout in seconds (default 300, between 1 and 3600)."},` +
	`"cwd":{"type":"string","description":"Working directory for this command, absolute or relative to the session's cwd (default: the session's cwd)."},` +
	`"head":{"type":"integer","description":"Return only the first N lines of the command's output (replaces a trailing | head of the command)."},` +
	`"tail":{"type":"integer","description":"Return only the last N lines of the command's output, after head when both apply (replaces a trailing | tail of the command)."}` +
	`},"required":["command"],"additionalProperties":false}`)

// bashJobsSchema is bashSchema with background, offered when the bash tool
// has a job manager.
var bashJobsSchema = json.RawMessage(strings.Replace(string(bashSchema), `},"required"`, `,`+
	`"background":{"type":"boolean","description":"Start the command as a job and return at once (within 1 second, with what it printed by then): `+
	`for servers, watchers and anything that does not end by itself. No default timeout; an explicit timeout still kills it. `+
	`head and tail do not apply. Follow it up with job_output, job_input and job_kill. Without it, a command that waits `+
	`for input (a prompt) or runs past the auto-background limit also becomes a job, and the result says so."}`+
	`},"required"`, 1))

type bashTool struct {
	tool *bash.Tool
	ctx  func() bash.ToolContext
	gate BashGate

	mu  sync.Mutex
	reg *Registry
}

// NewBash adapts the bash tool to the registry. ctx is called on every call
// for the current ToolContext (may be nil: a zero context); its ToolNames is
// replaced by the names of the registry the tool is registered in, at call
// time, so the interceptor only suggests tools that exist.
func NewBash(tool *bash.Tool, ctx func() bash.ToolContext) Tool {
	if tool == nil {
		tool = &bash.Tool{}
	}
	return &bashTool{tool: tool, ctx: ctx}
}

// BashGate stands between the model and each bash call, for the
// approvals (bash.patterns, the sandbox question): it may refuse the call, or run it (with run, on a context it
// may change, such as without the sandbox) once or twice, and it returns
// what the model gets.
type BashGate func(ctx context.Context, p bash.ToolParams, tc bash.ToolContext,
	run func(bash.ToolContext) (*bash.ToolResult, error)) (*bash.ToolResult, error)

// NewGatedBash is NewBash with every call going through gate (nil: none).
func NewGatedBash(tool *bash.Tool, ctx func() bash.ToolContext, gate BashGate) Tool {
	t := NewBash(tool, ctx).(*bashTool)
	t.gate = gate
	return t
}

func (b *bashTool) Name() string        { return BashName }
func (b *bashTool) Description() string { return bashDescription }
func (b *bashTool) Schema() json.RawMessage {
	if b.tool.Jobs != nil {
		return bashJobsSchema
	}
	return bashSchema
}

func (b *bashTool) bind(r *Registry) {
	b.mu.Lock()
	b.reg = r
	b.mu.Unlock()
}

func (b *bashTool) Execute(ctx context.Context, args json.RawMessage, onUpdate func(string)) Result {
	p, err := bash.ParseToolParams(args)
	if err != nil {
		return fromFinal(bash.Finalize(nil, err))
	}
	var tc bash.ToolContext
	if b.ctx != nil {
		tc = b.ctx()
	}
	b.mu.Lock()
	reg := b.reg
	b.mu.Unlock()
	if reg != nil {
		tc.ToolNames = reg.Names()
	}
	run := func(tc bash.ToolContext) (*bash.ToolResult, error) { return b.tool.Execute(ctx, p, tc, onUpdate) }
	var res *bash.ToolResult
	if b.gate != nil {
		res, err = b.gate(ctx, p, tc, run)
	} else {
		res, err = run(tc)
	}
	return fromFinal(bash.Finalize(res, err))
}

// Prestart starts the shell the next call would run on, in the
// background (bash.Tool.Prestart).
func (b *bashTool) Prestart() {
	var tc bash.ToolContext
	if b.ctx != nil {
		tc = b.ctx()
	}
	b.tool.Prestart(tc)
}

func fromFinal(f bash.FinalResult) Result {
	r := Result{Content: f.Content, IsError: f.IsError, Aborted: f.Aborted}
	if d, err := json.Marshal(f.Details); err == nil && string(d) != "{}" {
		r.Details = d
	}
	return r
}
