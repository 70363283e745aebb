package agent

// The sandbox of a running conversation: the settings it was given
// (config.SandboxSettings), the Policy its model's shells and file tools
// get, and the file system the file tools reach through it.

import (
	"agentsh/internal/config"
	"agentsh/internal/confinedfs"
	"agentsh/internal/sandbox"
	"agentsh/internal/tools"
)

// SetSandbox sets the sandbox of the model's commands in this session: the
// settings as read at start, under the flags (SandboxSettings.With). A
// session never given one confines nothing.
func (a *AgentSession) SetSandbox(s config.SandboxSettings) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sandbox, a.sbPolicy = s, nil
}

// Sandbox is what SetSandbox set.
func (a *AgentSession) Sandbox() config.SandboxSettings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sandbox
}

// SandboxPolicy is the confinement of the model's shells (bash tool, its
// jobs, the PTY path): the session's sandbox for the directory the session
// started in, with its artifact folder readable; nil = none.
func (a *AgentSession) SandboxPolicy() *sandbox.Policy {
	a.mu.Lock()
	defer a.mu.Unlock()
	// Made once per SetSandbox: every model command asks for it.
	if a.sbPolicy == nil {
		a.sbPolicy = &policyOnce{p: a.SandboxPolicyOf(a.sandbox)}
	}
	return a.sbPolicy.p
}

// policyOnce is a made policy, nil included, and the file system of the
// session's file tools under it.
type policyOnce struct {
	p  *sandbox.Policy
	fs *confinedfs.FS
}

// FileSystem is what the model's file tools (and the TUI's @ completion)
// work through: the sandbox's view under SandboxPolicy, where a confined
// helper opens every path (internal/confinedfs), or the host's when the
// sandbox is off.
func (a *AgentSession) FileSystem() tools.FS {
	p := a.SandboxPolicy()
	if !p.Enabled() {
		return tools.HostFS
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sbPolicy == nil || a.sbPolicy.p != p {
		return confinedfs.New(p) // the sandbox changed meanwhile
	}
	if a.sbPolicy.fs == nil {
		a.sbPolicy.fs = confinedfs.New(p)
	}
	return a.sbPolicy.fs
}

// SandboxPolicyOf is the policy s gives this session's commands (for an RPC
// client's own mode, set_sandbox).
func (a *AgentSession) SandboxPolicyOf(s config.SandboxSettings) *sandbox.Policy {
	arts := ""
	if a.artifacts != nil {
		arts = a.artifacts.Dir()
	}
	return s.Policy(a.cwd, arts)
}
