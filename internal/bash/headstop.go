package bash

import (
	"bytes"
	"sync/atomic"
)

// headStop decides when the output of a run whose trailing `| head -n N`
// NormalizeCommand removed may be closed (spec §1.1).
//
// Only the final pipeline, the one head read from, may be cut early: the
// statements before it (`a; b && c | head -n 2`: a and b) ran to their end
// in bash whatever head did, so their side effects must happen here too.
// The final pipeline starts with a mark the engine put there (markFinal):
// before the mark every byte passes, however many lines it has (the limit
// cuts the text after the run); once the mark is read and the output holds N
// lines, it is closed, so an endless producer (`yes | head -n 2`) ends at
// once with SIGPIPE. Without a mark (the whole command is the final
// pipeline) it is closed as soon as N lines passed.
//
// The mark never reaches the output. The reader goroutine is its only user
// while the run goes on; dropped is read after it.
type headStop struct {
	limit int
	lines int    // newlines passed so far
	mark  []byte // nil once the final pipeline started (or there is no mark)
	held  []byte // the end of the last chunk, which may be the start of the mark
	// dropped: output of the final pipeline was read and not passed on.
	dropped atomic.Bool
}

// newHeadStop returns a stop after limit lines; mark is what starts the
// final pipeline, nil when the whole command is that pipeline.
func newHeadStop(limit int, mark []byte) *headStop {
	if limit <= 0 {
		return nil
	}
	return &headStop{limit: limit, mark: mark}
}

// feed takes the next chunk read from the output and returns what to pass
// on (which may alias chunk or be empty) and whether the output must now be
// closed.
func (h *headStop) feed(chunk []byte) ([]byte, bool) {
	if h.mark == nil {
		return h.final(chunk)
	}
	data := chunk
	if len(h.held) > 0 {
		data = append(h.held, chunk...)
		h.held = nil
	}
	if i := bytes.Index(data, h.mark); i >= 0 {
		before, after := data[:i], data[i+len(h.mark):]
		h.lines += bytes.Count(before, []byte{'\n'})
		h.mark = nil
		if h.lines >= h.limit {
			// The earlier statements printed the limit already: nothing
			// of the final pipeline can be shown.
			if len(after) > 0 {
				h.dropped.Store(true)
			}
			return before, true
		}
		rest, stop := h.final(after)
		if len(rest) == 0 {
			return before, stop
		}
		// before and rest are adjacent in data but for the mark.
		out := make([]byte, 0, len(before)+len(rest))
		return append(append(out, before...), rest...), stop
	}
	// Keep back a tail that may be the mark's first bytes: the rest of the
	// mark is in the next chunk.
	keep := partialSuffix(data, h.mark)
	if keep > 0 {
		h.held = append([]byte(nil), data[len(data)-keep:]...)
		data = data[:len(data)-keep]
	}
	h.lines += bytes.Count(data, []byte{'\n'})
	return data, false
}

// final passes chunk of the final pipeline's output up to the limit-th line.
func (h *headStop) final(chunk []byte) ([]byte, bool) {
	nl := bytes.Count(chunk, []byte{'\n'})
	if h.lines+nl < h.limit {
		h.lines += nl
		return chunk, false
	}
	// Keep exactly what `| head -n N` would have let through.
	end := 0
	for ; h.lines < h.limit; h.lines++ {
		end += bytes.IndexByte(chunk[end:], '\n') + 1
	}
	if end < len(chunk) {
		h.dropped.Store(true)
	}
	return chunk[:end], true
}

// flush returns what feed kept back, at the end of the output (nil for a
// nil stop).
func (h *headStop) flush() []byte {
	if h == nil {
		return nil
	}
	b := h.held
	h.held = nil
	return b
}

// partialSuffix is the length of the longest end of data that is a proper
// start of mark.
func partialSuffix(data, mark []byte) int {
	for n := min(len(mark)-1, len(data)); n > 0; n-- {
		if bytes.HasPrefix(mark, data[len(data)-n:]) {
			return n
		}
	}
	return 0
}
