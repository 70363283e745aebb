package agent

import (
	"errors"
	"strings"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/sandbox"
)

// StartJob runs command as the user's own job of m (spec §9): in the
// session's cwd, with the session's exports and agentsh's whole environment
// (nothing scrubbed, as for bang commands), the shell and prefix of the
// settings as they are now, no timeout, and an artifact for the full output
// when the session keeps artifacts. Nothing is recorded in the conversation.
func (a *AgentSession) StartJob(m *jobs.Manager, command string) (*jobs.Job, error) {
	return a.StartJobIn(m, command, nil)
}

// StartJobIn is StartJob confined by p (an RPC client's set_sandbox); nil
// confines nothing.
func (a *AgentSession) StartJobIn(m *jobs.Manager, command string, p *sandbox.Policy) (*jobs.Job, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("Command must not be empty") //lint:ignore ST1005 user-facing text
	}
	ts := bash.ToolSettings{Shell: a.shell}
	if l := a.live.Load(); l != nil {
		var err error
		if ts, err = l.ToolSettings(); err != nil {
			return nil, err
		}
	}
	ts.Shell.ScrubEnv = nil // the user's own commands keep the whole environment
	ts.Shell.Sandbox = p
	cwd := a.Cwd()
	tc := bash.ToolContext{Cwd: cwd, Settings: ts, State: a.state}
	var artID, artPath string
	if a.artifacts != nil {
		tc.Artifacts = a.artifacts
		if id, p, err := a.artifacts.Allocate("bash"); err == nil {
			artID, artPath = id, p
		}
	}
	return bash.StartJob(m, command, cwd, 0, artPath, artID, tc)
}
