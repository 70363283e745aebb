package rpc

// The state and the client's settings of the session: get_state,
// negotiate_protocol, the queue modes and get_available_commands.

import (
	"agentsh/internal/agent"
	"encoding/json"
	"fmt"
	"strings"
)

// State and settings command types.
const (
	CmdGetState             = "get_state"
	CmdNegotiateProtocol    = "negotiate_protocol"
	CmdSetSteeringMode      = "set_steering_mode"
	CmdSetFollowUpMode      = "set_follow_up_mode"
	CmdSetInterruptMode     = "set_interrupt_mode"
	CmdGetAvailableCommands = "get_available_commands"
)

func init() {
	register(
		cmd(CmdGetState, (*server).getState).answeredDuringFileWork(),
		cmd(CmdNegotiateProtocol, (*server).negotiate),
		cmd(CmdSetSteeringMode, (*server).setQueueMode),
		cmd(CmdSetFollowUpMode, (*server).setQueueMode),
		cmd(CmdSetInterruptMode, (*server).setQueueMode),
		cmd(CmdGetAvailableCommands, (*server).getAvailableCommands),
	)
}

// negotiateParams is negotiate_protocol {protocolVersion}, kept raw to
// quote what the client sent.
type negotiateParams struct {
	ProtocolVersion json.RawMessage `json:"protocolVersion"`
}

// check accepts ProtocolVersion only, the one agentsh speaks.
func (p *negotiateParams) check() error {
	var v float64
	if json.Unmarshal(p.ProtocolVersion, &v) != nil || v != ProtocolVersion {
		got := strings.TrimSpace(string(p.ProtocolVersion))
		if got == "" {
			got = "undefined"
		}
		return fmt.Errorf("Unsupported RPC protocol version: %s", got) //lint:ignore ST1005 the reference's text
	}
	return nil
}

// queueModeParams is set_steering_mode, set_follow_up_mode and
// set_interrupt_mode {mode}.
type queueModeParams struct {
	Mode *string `json:"mode"`
}

func (s *server) getState(c *command, _ *noParams) {
	s.ok(c, s.state())
}

func (s *server) negotiate(c *command, _ *negotiateParams) {
	s.ok(c, map[string]int{"protocolVersion": ProtocolVersion})
}

// setQueueMode sets a queue mode for this session and the ones after it.
func (s *server) setQueueMode(c *command, p *queueModeParams) {
	mode := ""
	if p.Mode != nil {
		mode = *p.Mode
	}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	var err error
	switch c.Type {
	case CmdSetSteeringMode:
		err = sess.SetSteeringMode(mode)
	case CmdSetFollowUpMode:
		err = sess.SetFollowUpMode(mode)
	default:
		err = sess.SetInterruptMode(mode)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, nil)
}

func (s *server) getAvailableCommands(c *command, _ *noParams) {
	s.ok(c, map[string]any{"commands": availableCommands()})
}

// ModelInfo is a model in the reference's Model shape (get_state's model,
// set_model's answer). What agentsh does not know is zero.
type ModelInfo = agent.Model

// State is get_state's data: the reference's RpcSessionState, plus
// isBashRunning and sandbox.
type State struct {
	Model                 *ModelInfo `json:"model,omitempty"`
	ThinkingLevel         string     `json:"thinkingLevel,omitempty"`
	IsStreaming           bool       `json:"isStreaming"`
	IsCompacting          bool       `json:"isCompacting"`
	SteeringMode          string     `json:"steeringMode"`
	FollowUpMode          string     `json:"followUpMode"`
	InterruptMode         string     `json:"interruptMode"`
	SessionFile           string     `json:"sessionFile,omitempty"`
	SessionID             string     `json:"sessionId"`
	SessionName           string     `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool       `json:"autoCompactionEnabled"`
	FastModeEnabled       bool       `json:"fastModeEnabled"`
	FastModeActive        bool       `json:"fastModeActive"`
	TokensPerSecond       *float64   `json:"tokensPerSecond"`
	MessageCount          int        `json:"messageCount"`
	QueuedMessageCount    int        `json:"queuedMessageCount"`
	TodoPhases            []any      `json:"todoPhases"`
	// SystemPrompt is the system prompt the model gets now (one part), and
	// ContextUsage how full its context is (both absent without a model).
	SystemPrompt  []string            `json:"systemPrompt,omitempty"`
	ContextUsage  *agent.ContextUsage `json:"contextUsage,omitempty"`
	IsBashRunning bool                `json:"isBashRunning"`
	Sandbox       Sandbox             `json:"sandbox"`
}

func (s *server) state() State {
	s.mu.Lock()
	sess, streaming, sbox := s.sess, s.runner.Busy(), s.sbox
	s.mu.Unlock()
	st := State{
		Model:                 s.modelInfo(),
		ThinkingLevel:         s.thinkingLevel(),
		IsStreaming:           streaming,
		IsCompacting:          sess.IsCompacting(),
		SteeringMode:          sess.SteeringMode(),
		FollowUpMode:          sess.FollowUpMode(),
		InterruptMode:         sess.InterruptMode(),
		SessionID:             sess.ID(),
		SessionName:           sess.Name(),
		AutoCompactionEnabled: sess.AutoCompactionEnabled(),
		TodoPhases:            []any{},
		Sandbox:               sbox.state(),
		IsBashRunning:         sess.IsBashRunning(),
		MessageCount:          len(sess.Messages()),
		// Steers and follow-ups waiting, and bash results recorded while
		// the prompt streams (they join with the next one).
		QueuedMessageCount: sess.QueuedInputCount() + len(sess.QueuedMessages()),
	}
	if store := sess.Store(); store != nil {
		st.SessionFile = store.Path()
	}
	if st.ContextUsage = s.contextUsage(sess); st.ContextUsage != nil {
		var names []string
		if s.cfg.Tools != nil {
			names = s.cfg.Tools.Names()
		}
		st.SystemPrompt = []string{agent.SystemPrompt(sess.Cwd(), names)}
	}
	return st
}

// The model fields of get_state: the current model (Config.Models) and its
// thinking level.

// modelInfo is the model prompts go to; nil without one.
func (s *server) modelInfo() *ModelInfo {
	if m, ok := s.cfg.Models.CurrentModel(); ok {
		return &m
	}
	return nil
}

// thinkingLevel is the level the model is asked to think at; "" (no level,
// as the reference says for a model without reasoning) when no model is
// configured.
func (s *server) thinkingLevel() string { return s.cfg.Models.ThinkingLevel() }

// contextUsage is how full sess's context is for the current model; nil
// without one.
func (s *server) contextUsage(sess *agent.AgentSession) *agent.ContextUsage {
	p, model := s.currentModel()
	if p == nil {
		return nil
	}
	u := sess.ContextUsage(model, s.cfg.Tools)
	return &u
}

// AvailableCommand is one entry of get_available_commands, the reference's
// RpcAvailableSlashCommand.
type AvailableCommand struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Input       *AvailableCmdInput `json:"input,omitempty"`
	Source      string             `json:"source"`
}

// AvailableCmdInput is what a command takes.
type AvailableCmdInput struct {
	Hint string `json:"hint,omitempty"`
}

// availableCommands lists agentsh's slash commands (the TUI's).
func availableCommands() []AvailableCommand {
	out := make([]AvailableCommand, 0, len(agent.SlashCommands))
	for _, sc := range agent.SlashCommands {
		ac := AvailableCommand{Name: sc.Name, Description: sc.Description, Source: "builtin"}
		if sc.Args != "" {
			ac.Input = &AvailableCmdInput{Hint: sc.Args}
		}
		out = append(out, ac)
	}
	return out
}
