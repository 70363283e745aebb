package tui

import (
	"bytes"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
)

// frameInterval bounds how often streamed output reaches Update: a flood
// (`yes`, a chatty build) costs one redraw per frame, not one per chunk.
const frameInterval = 16 * time.Millisecond

// maxPendingChunk caps the live output buffered between two frames. The
// live view only shows a tail, and the final result replaces it, so under a
// flood the middle can be dropped; this keeps memory flat.
const maxPendingChunk = 64 << 10

// pump collects what the background goroutines produce (agent events, bang
// output) and hands it to the program in batches, at most one flushMsg per
// frameInterval. Producers never block on the UI.
type pump struct {
	send func(tea.Msg)

	mu        sync.Mutex
	queue     []any // session.Event, bangChunk
	scheduled bool
	closed    bool
	// buf collects the output of the last queued bangChunk (queue[bufAt])
	// and is reused from frame to frame: a flood then costs one string per
	// frame instead of one per chunk.
	buf   []byte
	bufAt int // -1: no chunk is collecting
}

// bangChunk is live output of the running bang command gen.
type bangChunk struct {
	gen  int
	data string
}

// flushMsg tells Update to drain the pump.
type flushMsg struct{}

func newPump(send func(tea.Msg)) *pump { return &pump{send: send, bufAt: -1} }

// event queues an agent event, merging it into the previous one when only
// the newest snapshot matters (text deltas carry the whole answer so far;
// tool updates carry the whole live tail).
func (p *pump) event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.queue); n > 0 {
		if prev, ok := p.queue[n-1].(agent.Event); ok && prev.Type == e.Type {
			switch {
			case e.Type == agent.EventMessageUpdate && e.UpdateKind == agent.UpdateTextDelta && prev.UpdateKind == agent.UpdateTextDelta,
				e.Type == agent.EventToolExecutionUpdate && e.ToolCallID == prev.ToolCallID:
				p.queue[n-1] = e
				return
			}
		}
	}
	p.queue = append(p.queue, e)
	p.scheduleLocked()
}

// chunk queues bang output, concatenated with the previous chunk.
func (p *pump) chunk(gen int, b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.queue)
	if p.bufAt < 0 || p.bufAt != n-1 || p.queue[n-1].(bangChunk).gen != gen {
		p.sealLocked()
		p.queue = append(p.queue, bangChunk{gen: gen})
		p.bufAt = len(p.queue) - 1
		p.scheduleLocked()
	}
	p.buf = append(p.buf, b...)
	if len(p.buf) > 2*maxPendingChunk {
		// Keep the tail, from a line start; the headroom makes the copy
		// rare.
		tail := p.buf[len(p.buf)-maxPendingChunk:]
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		p.buf = p.buf[:copy(p.buf, tail)]
	}
}

// sealLocked turns the collecting chunk's bytes into its data.
func (p *pump) sealLocked() {
	if p.bufAt < 0 {
		return
	}
	c := p.queue[p.bufAt].(bangChunk)
	c.data = trimToTail(string(p.buf))
	p.queue[p.bufAt] = c
	p.buf, p.bufAt = p.buf[:0], -1
}

// trimToTail keeps at most maxPendingChunk bytes, cut after a newline so the
// live view never starts mid-line.
func trimToTail(s string) string {
	if len(s) <= maxPendingChunk {
		return s
	}
	s = s[len(s)-maxPendingChunk:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func (p *pump) scheduleLocked() {
	if p.scheduled || p.closed {
		return
	}
	p.scheduled = true
	time.AfterFunc(frameInterval, func() { p.send(flushMsg{}) })
}

// drain takes everything queued so far.
func (p *pump) drain() []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sealLocked()
	q := p.queue
	p.queue, p.scheduled = nil, false
	return q
}

// close stops scheduling flushes (the program is gone).
func (p *pump) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
