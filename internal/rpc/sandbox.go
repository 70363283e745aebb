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

// CmdSetSandbox chooses the sandbox of the model's and the client's
// commands.
const CmdSetSandbox = "set_sandbox"

func init() {
	register(cmd(CmdSetSandbox, (*server).setSandbox))
}

// sandboxParams is set_sandbox {mode?, yolo?, bash?}; check parses the
// modes into modelMode and bashMode ("" when not given).
type sandboxParams struct {
	Mode *string `json:"mode"`
	Yolo *bool   `json:"yolo"`
	Bash *string `json:"bash"`

	modelMode, bashMode sandbox.Mode
}

func (p *sandboxParams) check() error {
	var err error
	if p.Mode != nil {
		if p.modelMode, err = sandbox.ParseMode(*p.Mode); err != nil {
			return err
		}
	}
	if p.Bash != nil {
		if p.bashMode, err = sandbox.ParseMode(*p.Bash); err != nil {
			return errors.New("bash: " + err.Error())
		}
	}
	if p.Yolo != nil && *p.Yolo && p.Mode != nil {
		return errors.New(`"yolo": true and "mode" cannot be combined`)
	}
	return nil
}

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
func (s *server) setSandbox(c *command, p *sandboxParams) {
	s.mu.Lock()
	ch := s.sbox
	switch {
	case p.Yolo != nil && *p.Yolo:
		ch.model = ch.model.With(config.SandboxFlags{Yolo: true})
	case p.Yolo != nil:
		ch.model.Yolo = false
	}
	if p.modelMode != "" {
		ch.model = ch.model.With(config.SandboxFlags{Mode: p.modelMode})
	}
	if p.bashMode != "" {
		ch.bash = p.bashMode
	}
	s.sbox = ch
	s.sess.SetSandbox(ch.model)
	s.mu.Unlock()
	s.ok(c, ch.state())
}
