package pty

import (
	"sync"

	"agentsh/internal/guard"
	"agentsh/internal/sandbox"
)

// GuardSandbox is p made ready for guard.Start, for a PTY program here and
// a persistent shell in internal/bash: nil when p confines nothing. extra
// are folders the program itself needs to write (a shell's runtime
// folder); the engine's folder (guard.EngineBase) is masked in the view
// but for them. Should the namespaces or the view fail although
// sandbox.Detect said they work, the fallback records it (the status line
// then says the sandbox is weaker) and confines without them. The caller
// closes Ruleset once the guardian has started.
func GuardSandbox(p *sandbox.Policy, extra ...string) (*guard.Sandbox, error) {
	c, err := p.ConfineHiding([]string{guard.EngineBase()}, extra...)
	if err != nil || c == nil {
		return nil, err
	}
	sb := &guard.Sandbox{Ruleset: c.Ruleset, NewNetwork: c.NewNetwork, View: c.View, Unsetenv: sandbox.SocketEnv}
	if c.NewNetwork || c.View != nil {
		sb.Share = nsShare(p)
		sb.Fallback = func(err error) (*guard.Sandbox, error) {
			sandbox.NamespacesFailed(err)
			return GuardSandbox(p, extra...)
		}
	}
	return sb, nil
}

// nsShares are the namespaces of this process's sandboxes, one set per
// policy: every shell, job and PTY program the model runs under one policy
// shares its user namespace (one is not made at each start) and, with the
// network off, its network namespace, so a server a job started is
// reachable from the next call while the host stays out of reach. They
// live as long as agentsh.
var nsShares sync.Map // Policy.Key() → *guard.NsShare

func nsShare(p *sandbox.Policy) *guard.NsShare {
	sh, _ := nsShares.LoadOrStore(p.Key(), &guard.NsShare{})
	return sh.(*guard.NsShare)
}
