package tui

// /compact and the automatic compaction as the transcript and the status
// line show them: while it runs the status says so, and when it is done a
// marker line tells where the model's view of the conversation was
// summarized (the transcript above it stays).

import (
	"agentsh/internal/agent"
	"context"
	"errors"
	"strconv"

	tea "charm.land/bubbletea/v2"
)

// compactDoneMsg ends a /compact.
type compactDoneMsg struct {
	run *agent.Run
	res *agent.CompactionResult
	err error
}

// cmdCompact is /compact [instructions]: the older turns are summarized by
// the model now; like a turn, esc cancels it and prompts typed meanwhile
// wait for it.
func (m *model) cmdCompact(arg string) tea.Cmd {
	provider, modelName, _ := m.modelNow()
	if provider == nil {
		m.tr.notice(kindWarning, "/compact needs a model: "+noModelText(m.cfg.ModelError))
		return nil
	}
	if m.runner.Busy() || m.bangRunning {
		m.tr.notice(kindWarning, somethingRuns("/compact summarizes the conversation"))
		return nil
	}
	sess, send := m.session(), m.send
	var res *agent.CompactionResult
	_, err := m.runner.Start(func(ctx context.Context) (err error) {
		res, err = sess.Compact(ctx, provider, modelName, arg)
		return err
	}, func(r *agent.Run, err error) { send(compactDoneMsg{run: r, res: res, err: err}) })
	if err != nil {
		m.tr.notice(kindError, "Compaction failed: "+err.Error())
		return nil
	}
	m.compacting = true
	return m.startTick()
}

// compactFinished shows how /compact ended and sends a prompt queued
// meanwhile.
func (m *model) compactFinished(msg compactDoneMsg) tea.Cmd {
	msg.run.End()
	m.compacting = false
	aborted := errors.Is(msg.err, context.Canceled)
	var save *agent.SaveError
	switch {
	case msg.res != nil:
		m.tr.add(compactedItem(msg.res.TokensBefore, msg.res.TokensAfter))
		if errors.As(msg.err, &save) {
			m.tr.notice(kindError, "The compaction holds for this session but was not saved: "+msg.err.Error())
		}
	case aborted:
		m.tr.notice(kindInfo, "Compaction aborted.")
	case errors.Is(msg.err, agent.ErrNothingToCompact):
		m.tr.notice(kindWarning, msg.err.Error()+".")
	default:
		m.tr.notice(kindError, "Compaction failed: "+msg.err.Error())
	}
	if aborted {
		return m.sendQueued(msg.err)
	}
	return m.sendQueued(nil)
}

// compactedItem is the marker line of a compaction.
func compactedItem(before, after int64) *textItem {
	return &textItem{kind: kindInfo, text: compactedText(before, after)}
}

// compactedText is the marker's words: the model now reads a summary of
// what is above, instead of all of it.
func compactedText(before, after int64) string {
	s := "── compacted: the model now reads a summary of the conversation above"
	if before > 0 {
		s += " (" + tokenCount(before) + " → " + tokenCount(after) + " tokens)"
	}
	return s + " ──"
}

// resumedCompactedText heads a resumed session that was compacted.
func resumedCompactedText(before, after int64) string {
	s := "── compacted earlier: the model reads a summary of the conversation before this point"
	if before > 0 {
		s += " (" + tokenCount(before) + " → " + tokenCount(after) + " tokens)"
	}
	return s + " ──"
}

// tokenCount writes n as 950, 12.3k or 1.2M.
func tokenCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M"
}

// applyCompaction brings an automatic compaction's events into the
// transcript.
func (t *transcript) applyCompaction(e agent.Event) {
	switch e.Type {
	case agent.EventAutoCompactionStart:
		t.compacting = true
	case agent.EventAutoCompactionEnd:
		t.compacting = false
		c := e.Compaction
		switch {
		case c.Result != nil:
			t.add(compactedItem(c.Result.TokensBefore, c.Result.TokensAfter))
		case c.ErrorMessage != "":
			t.notice(kindWarning, "Automatic compaction failed: "+c.ErrorMessage)
		}
	}
}
