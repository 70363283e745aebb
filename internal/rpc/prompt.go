package rpc

// prompt, steer, follow_up, abort_and_prompt and abort: the commands that
// start, feed and stop the agent's runs. What runs and what is queued is
// the run bookkeeping's (rpc.go); these check their parameters and hand
// the message over.

import (
	"fmt"
	"strings"
)

// Prompting command types.
const (
	CmdPrompt         = "prompt"
	CmdSteer          = "steer"
	CmdFollowUp       = "follow_up"
	CmdAbortAndPrompt = "abort_and_prompt"
	CmdAbort          = "abort"
)

func init() {
	register(
		cmd(CmdPrompt, (*server).promptCmd),
		cmd(CmdSteer, (*server).queueInput),
		cmd(CmdFollowUp, (*server).queueInput),
		cmd(CmdAbortAndPrompt, (*server).abortAndPrompt),
		cmd(CmdAbort, (*server).abort).answeredDuringFileWork(),
	)
}

// Values of prompt's streamingBehavior.
const (
	behaviorSteer    = "steer"
	behaviorFollowUp = "followUp"
)

// promptParams is prompt {message, streamingBehavior?}.
type promptParams struct {
	Message           *string `json:"message"`
	StreamingBehavior *string `json:"streamingBehavior"`
}

// messageParams is abort_and_prompt, steer and follow_up {message}.
type messageParams struct {
	Message *string `json:"message"`
}

// promptCmd is a run on the message, or, while one runs and
// streamingBehavior says so, a steer or follow-up of it.
func (s *server) promptCmd(c *command, p *promptParams) {
	s.startPrompt(c, p.Message, p.StreamingBehavior)
}

// abortAndPrompt is abort, then prompt (without a streamingBehavior: no
// run is left to queue for).
func (s *server) abortAndPrompt(c *command, p *messageParams) {
	s.abortRuns()
	s.startPrompt(c, p.Message, nil)
}

func (s *server) startPrompt(c *command, message, streamingBehavior *string) {
	if provider, _ := s.currentModel(); provider == nil {
		s.fail(c, ErrNoModel)
		return
	}
	if message == nil || strings.TrimSpace(*message) == "" {
		s.fail(c, fmt.Errorf(`%s needs a non-empty "message"`, c.Type))
		return
	}
	behavior := ""
	if streamingBehavior != nil {
		behavior = *streamingBehavior
		if behavior != behaviorSteer && behavior != behaviorFollowUp {
			s.fail(c, fmt.Errorf(`streamingBehavior must be %q or %q, not %q`, behaviorSteer, behaviorFollowUp, behavior))
			return
		}
	}
	s.promptOrQueue(c, *message, behavior)
}

// queueInput is steer and follow_up: queued for the running prompt, or,
// when none runs, the start of a run on it.
func (s *server) queueInput(c *command, p *messageParams) {
	if provider, _ := s.currentModel(); provider == nil {
		s.fail(c, ErrNoModel)
		return
	}
	if p.Message == nil || strings.TrimSpace(*p.Message) == "" {
		s.fail(c, fmt.Errorf(`%s needs a non-empty "message"`, c.Type))
		return
	}
	s.queueOrRun(c, c.Type == CmdSteer, *p.Message)
}

// abort stops the running prompt and compactions and waits for them.
func (s *server) abort(c *command, _ *noParams) {
	s.abortRuns()
	s.abortCompactions()
	s.ok(c, nil)
}
