package agent

import (
	"errors"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/tools"
)

// ToolsConfig is what NewTools wires a session's tools from.
type ToolsConfig struct {
	// Current returns the session the tools act on. It is called on every
	// tool call, so a mode that switches sessions (RPC's new_session, a new
	// conversation in the TUI) keeps one registry. It must be safe to call
	// from any goroutine.
	Current func() *AgentSession
	// Executor runs the model's commands; nil = bash.Default().
	Executor *bash.Executor
	// Jobs is where `background: true` starts jobs; with it the job tools
	// (jobs, job_output, job_input, job_kill) are registered. nil = neither.
	Jobs *jobs.Manager
	// Settings are the bash tool's settings while the session does not
	// follow its settings files (see AgentSession.ToolContext).
	Settings bash.ToolSettings
	// Terminal is the UI's PTY host: with it a call may run in a
	// pseudo-terminal shown to the user; nil = headless (print, json, RPC).
	Terminal bash.TerminalUI
	// Approvals decide on the model's commands that bash.patterns rules or
	// the sandbox stop (approvals.go).
	Approvals Approvals
}

// NewTools builds the registry every mode gives the model: bash, the file
// tools and, with a job manager, the job tools, all of them reading the
// current session on each call.
func NewTools(c ToolsConfig) (*tools.Registry, error) {
	if c.Current == nil {
		return nil, errors.New("tools: no session")
	}
	cur, settings, term := c.Current, c.Settings, c.Terminal
	bt := tools.NewGatedBash(&bash.Tool{Executor: c.Executor, Jobs: c.Jobs}, func() bash.ToolContext {
		tc := cur().ToolContext(settings)
		if term != nil {
			tc.HasUI, tc.Terminal = true, term
		}
		return tc
	}, c.Approvals.gate(func() string { return cur().StartDir() },
		func() bool { return cur().Sandbox().Yolo }))
	return tools.Standard(bt, tools.Env{
		Cwd:  func() string { return cur().Cwd() },
		FS:   func() tools.FS { return cur().FileSystem() },
		Gate: c.Approvals.fileGate(func() tools.FS { return cur().FileSystem() }, func() bool { return cur().Sandbox().Yolo }),
		ResolveArtifact: func(url string) (string, error) {
			arts := cur().Artifacts()
			if arts == nil {
				return "", tools.ErrNoArtifacts
			}
			return arts.Resolve(url)
		},
	})
}
