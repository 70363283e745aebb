package rpc

// set_sandbox: the client chooses the sandbox of the model's
// commands (as --sandbox and --yolo do) and of its own bash commands,
// which are unconfined unless it asks, like the user's `!` commands.

import (
	"errors"

	"agentsh/internal/agent"
	"agentsh/internal/config"
	"agentsh/internal/sandbox"
)

// Sandbox is the sandbox state in get_state and set_sandbox's answer.
type Sandbox struct {
	// Mode is the model's commands' mode as in effect ("off" under yolo).
	Mode    sandbox.Mode `json:"mode"`
	Yolo    bool         `json:"yolo"`
	Network bool         `json:"network"`
	// Bash is the mode of the client's own bash commands.
	Bash sandbox.Mode `json:"bash"`
	// Status is the state in a few words, as the TUI's status line says it.
	Status string `json:"status"`
}

// sandboxChoice is what the client chose, over the settings and flags.
type sandboxChoice struct {
	model config.SandboxSettings
	bash  sandbox.Mode
}

func (c sandboxChoice) state() Sandbox {
	return Sandbox{Mode: c.model.Effective(), Yolo: c.model.Yolo, Network: c.model.Network, Bash: c.bash, Status: c.model.Describe()}
}

// bashPolicy confines a client's bash command in sess: its mode with the
// settings' paths and network; nil when off.
func (c sandboxChoice) bashPolicy(sess *agent.AgentSession) *sandbox.Policy {
	sb := c.model
	sb.Mode, sb.Yolo = c.bash, false
	return sess.SandboxPolicyOf(sb)
}

// setSandbox applies set_sandbox {mode?, yolo?, bash?}: mode or yolo to the
// model's commands of this session and the next ones, bash to the client's
// own; all or nothing.
func (s *server) setSandbox(c *command) {
	var mode, bash sandbox.Mode
	var err error
	if c.Mode != nil {
		if mode, err = sandbox.ParseMode(*c.Mode); err != nil {
			s.fail(c, err)
			return
		}
	}
	if c.Bash != nil {
		if bash, err = sandbox.ParseMode(*c.Bash); err != nil {
			s.fail(c, errors.New("bash: "+err.Error()))
			return
		}
	}
	if c.Yolo != nil && *c.Yolo && c.Mode != nil {
		s.fail(c, errors.New(`"yolo": true and "mode" cannot be combined`))
		return
	}
	s.mu.Lock()
	ch := s.sbox
	switch {
	case c.Yolo != nil && *c.Yolo:
		ch.model = ch.model.With(config.SandboxFlags{Yolo: true})
	case c.Yolo != nil:
		ch.model.Yolo = false
	}
	if mode != "" {
		ch.model = ch.model.With(config.SandboxFlags{Mode: mode})
	}
	if bash != "" {
		ch.bash = bash
	}
	s.sbox = ch
	s.sess.SetSandbox(ch.model)
	s.mu.Unlock()
	s.ok(c, ch.state())
}
