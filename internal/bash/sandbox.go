package bash

import (
	"agentsh/internal/guard"
	"agentsh/internal/pty"
	"agentsh/internal/sandbox"
)

// guardSandbox is the confinement of a shell started under p: nil when p
// confines nothing. runtime are the shell's own folders, which stay
// writable. The caller closes the ruleset once the guardian has started.
func guardSandbox(p *sandbox.Policy, runtime ...string) (*guard.Sandbox, error) {
	return pty.GuardSandbox(p, runtime...)
}
