package tui

import (
	"context"
	"sync"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/tools"
)

// holdRun starts a turn on m's runner as a prompt starts one, whose
// function only waits to be released (or for the model's context to end):
// the test streams the turn's events through the pump meanwhile, and the
// model sees a turn running all along. release lets the function return;
// its end then reaches Update as a real turn's does.
func holdRun(tb testing.TB, m *model) (release func()) {
	tb.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	m.startRun(func(ctx context.Context, _ *agent.AgentSession, _ *tools.Registry, _ func(agent.Event)) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	run := m.runner.Current()
	if run == nil {
		tb.Fatal("the held turn did not start: another run is under way")
	}
	tb.Cleanup(func() {
		release()
		run.Wait()
	})
	return release
}

// holdTurn holds a turn on the harness's model (holdRun); end releases it
// and waits until Update has taken its end.
func (h *harness) holdTurn() (end func()) {
	h.t.Helper()
	release := holdRun(h.t, h.m)
	return func() {
		h.t.Helper()
		release()
		h.waitFor("the held turn to end", h.agentIdle)
	}
}
