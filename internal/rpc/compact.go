package rpc

// compact and set_auto_compaction: the client asks for a
// compaction of the conversation, or turns the automatic one off and on,
// with the reference's request and response shapes.

import (
	"agentsh/internal/agent"
	"context"
	"errors"
)

// Compaction commands.
const (
	CmdCompact           = "compact"
	CmdSetAutoCompaction = "set_auto_compaction"
)

func init() {
	register(
		cmd(CmdCompact, (*server).compact),
		cmd(CmdSetAutoCompaction, (*server).setAutoCompaction),
	)
}

// compactParams is compact {customInstructions?}.
type compactParams struct {
	CustomInstructions *string `json:"customInstructions"`
}

// autoCompactionParams is set_auto_compaction {enabled}.
type autoCompactionParams struct {
	Enabled *bool `json:"enabled"`
}

func (p *autoCompactionParams) check() error {
	if p.Enabled == nil {
		return errors.New(`set_auto_compaction needs "enabled" (true or false)`)
	}
	return nil
}

// CompactData is compact's data: the reference's CompactionResult, plus
// saveError when the compaction could not be written to the session file
// (it holds in memory all the same).
type CompactData struct {
	*agent.CompactionResult
	SaveError string `json:"saveError,omitempty"`
}

// errCompactionCancelled answers a compact that abort stopped (the
// reference's words); the conversation stays as it was.
var errCompactionCancelled = errors.New("Compaction cancelled") //lint:ignore ST1005 the reference's text

// compact summarizes the session's older turns in its own goroutine, so
// get_state answers meanwhile (isCompacting); the response comes when it
// is done, or when abort stops it.
func (s *server) compact(c *command, p *compactParams) {
	provider, model := s.currentModel()
	if provider == nil {
		s.fail(c, ErrNoModel)
		return
	}
	instructions := ""
	if p.CustomInstructions != nil {
		instructions = *p.CustomInstructions
	}
	ctx, cancel := context.WithCancel(s.base)
	j := &job{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	sess := s.sess
	s.compactions[j] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer close(j.done)
		defer cancel()
		res, err := sess.Compact(ctx, provider, model, instructions)
		s.mu.Lock()
		delete(s.compactions, j)
		s.mu.Unlock()
		var save *agent.SaveError
		switch {
		case res != nil && errors.As(err, &save):
			s.ok(c, CompactData{CompactionResult: res, SaveError: err.Error()})
		case err != nil && ctx.Err() != nil && s.base.Err() == nil:
			s.fail(c, errCompactionCancelled) // abort stopped it
		case err != nil:
			s.fail(c, err)
		default:
			s.ok(c, CompactData{CompactionResult: res})
		}
	}()
}

// setAutoCompaction is set_auto_compaction {enabled}.
func (s *server) setAutoCompaction(c *command, p *autoCompactionParams) {
	s.mu.Lock()
	sess := s.sess
	on := *p.Enabled
	s.autoCompact = &on // the client's choice: kept for the sessions after this one
	s.mu.Unlock()
	sess.SetAutoCompaction(on)
	s.ok(c, nil)
}

// abortCompactions stops the running compactions and waits for them.
func (s *server) abortCompactions() {
	s.mu.Lock()
	js := make([]*job, 0, len(s.compactions))
	for j := range s.compactions {
		j.cancel()
		js = append(js, j)
	}
	s.mu.Unlock()
	s.waitJobs(js)
}
