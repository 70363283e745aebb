package rpc

import (
	"context"
	"errors"

	"agentsh/internal/agent"
	"agentsh/internal/llm"
)

// Model, thinking and retry command types (docs/rpc.md).
const (
	CmdSetModel           = "set_model"
	CmdCycleModel         = "cycle_model"
	CmdGetAvailableModels = "get_available_models"
	CmdSetThinkingLevel   = "set_thinking_level"
	CmdCycleThinkingLevel = "cycle_thinking_level"
	CmdSetAutoRetry       = "set_auto_retry"
	CmdAbortRetry         = "abort_retry"
)

func init() {
	register(
		cmd(CmdSetModel, (*server).setModel),
		cmd(CmdCycleModel, (*server).cycleModel),
		cmd(CmdGetAvailableModels, (*server).availableModels),
		cmd(CmdSetThinkingLevel, (*server).setThinkingLevel),
		cmd(CmdCycleThinkingLevel, (*server).cycleThinkingLevel),
		cmd(CmdSetAutoRetry, (*server).setAutoRetry),
		cmd(CmdAbortRetry, (*server).abortRetry),
	)
}

// setModelParams is set_model {provider, modelId}.
type setModelParams struct {
	Provider *string `json:"provider"`
	ModelID  *string `json:"modelId"`
}

// thinkingLevelParams is set_thinking_level {level}.
type thinkingLevelParams struct {
	Level *string `json:"level"`
}

// autoRetryParams is set_auto_retry {enabled}.
type autoRetryParams struct {
	Enabled *bool `json:"enabled"`
}

func (p *autoRetryParams) check() error {
	if p.Enabled == nil {
		return errors.New(`set_auto_retry needs "enabled": true or false`)
	}
	return nil
}

// currentModel is the model a prompt uses now.
func (s *server) currentModel() (llm.Provider, string) { return s.cfg.Models.Provider() }

// attachModels gives sess the server's models and retry, so its loop reads
// the model and level at every call.
func (s *server) attachModels(sess *agent.AgentSession) {
	sess.SetModels(s.cfg.Models)
	if s.cfg.Retry != nil {
		sess.SetRetry(s.cfg.Retry)
	}
}

// recordModel writes the current model and level to the session file.
func (s *server) recordModel() {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	// A session file that cannot take the entry keeps the switch in effect
	// for this process: the change itself succeeded.
	_ = sess.RecordModelsOf(s.cfg.Models)
}

func (s *server) setModel(c *command, p *setModelParams) {
	ms := s.cfg.Models
	provider, id := "", ""
	if p.Provider != nil {
		provider = *p.Provider
	}
	if p.ModelID != nil {
		id = *p.ModelID
	}
	// Listing the models may take a while: answered in the background,
	// like bash, so later commands are not held up.
	s.background(func(ctx context.Context) {
		md, err := ms.Set(ctx, provider, id)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.recordModel()
		s.ok(c, md)
	})
}

func (s *server) cycleModel(c *command, _ *noParams) {
	ms := s.cfg.Models
	s.background(func(ctx context.Context) {
		res, err := ms.Cycle(ctx)
		switch {
		case err != nil:
			s.fail(c, err)
		case res == nil:
			s.writeLine(nullData(c))
		default:
			s.recordModel()
			s.ok(c, res)
		}
	})
}

func (s *server) availableModels(c *command, _ *noParams) {
	ms := s.cfg.Models
	s.background(func(ctx context.Context) {
		models := ms.Available(ctx)
		if models == nil {
			models = []agent.Model{}
		}
		s.ok(c, map[string]any{"models": models})
	})
}

func (s *server) setThinkingLevel(c *command, p *thinkingLevelParams) {
	ms := s.cfg.Models
	level := ""
	if p.Level != nil {
		level = *p.Level
	}
	if err := ms.SetThinkingLevel(level); err != nil {
		s.fail(c, err)
		return
	}
	s.recordModel()
	s.ok(c, nil)
}

func (s *server) cycleThinkingLevel(c *command, _ *noParams) {
	ms := s.cfg.Models
	s.background(func(ctx context.Context) {
		level, ok := ms.CycleThinkingLevel(ctx)
		if !ok {
			s.writeLine(nullData(c))
			return
		}
		s.recordModel()
		s.ok(c, map[string]string{"level": level})
	})
}

// setAutoRetry and abortRetry work without Config.Models.
func (s *server) setAutoRetry(c *command, p *autoRetryParams) {
	if s.cfg.Retry != nil {
		s.cfg.Retry.SetEnabled(*p.Enabled)
	}
	s.ok(c, nil)
}

func (s *server) abortRetry(c *command, _ *noParams) {
	if s.cfg.Retry != nil {
		s.cfg.Retry.Abort()
	}
	s.ok(c, nil)
}

// nullData is a success whose data is null, as the reference answers
// cycle_model and cycle_thinking_level when there is nothing to cycle.
func nullData(c *command) any {
	return struct {
		ID      any    `json:"id,omitempty"`
		Type    string `json:"type"`
		Command string `json:"command"`
		Success bool   `json:"success"`
		Data    any    `json:"data"`
	}{ID: rawID(c), Type: "response", Command: c.Type, Success: true}
}

func rawID(c *command) any {
	if len(c.ID) == 0 {
		return nil
	}
	return c.ID
}

// background runs f in its own goroutine, waited for by Serve.
func (s *server) background(f func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.base)
	}()
}
