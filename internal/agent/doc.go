// Package agent is a running conversation: the AgentSession over a
// session.Store (agent.go) that runs the user's `!` commands and the agent
// loop (loop.go) with its events (events.go), the system prompt, auto-retry
// and the request timeout of a model call (retry.go, reqtimeout.go),
// steering and follow-up queues (steer.go), compaction (compact.go), the
// current model and thinking level (models.go), the approvals in front of
// the model's commands and file writes (approvals.go), the sandbox a
// conversation runs in (sandbox.go), its jobs' notices, and NewTools, the
// one place that wires a conversation's tools for every mode.
//
// Sessions (sessions.go) is the one way conversations are assembled, opened,
// switched and closed, and Runner (runner.go) runs one agent run at a time;
// the TUI, RPC and print mode use both and keep no bookkeeping of their own.
package agent
