package agent

import (
	"context"
	"errors"
	"sync"
)

// ErrRunBusy is Runner.Start's error while a run is under way.
var ErrRunBusy = errors.New("a run is under way")

// Runner runs the agent of a UI one run at a time — a prompt, a continue on
// queued input, a compaction — in the background, and is the one place
// that knows whether one runs, stops it and waits for it: the TUI, RPC and
// print mode keep no bookkeeping of their own.
//
// A run is under way (Busy) from Start until its owner Ends it: the TUI
// when its Update has taken the run's result, RPC when agent_end is
// written, so nothing can start between the run's last event and the
// moment its owner has shown it.
type Runner struct {
	base context.Context

	mu  sync.Mutex
	cur *Run
	wg  sync.WaitGroup
}

// Run is one run of a Runner.
type Run struct {
	r      *Runner
	cancel context.CancelFunc
	done   chan struct{}
}

// NewRunner runs below ctx: its end cancels every run.
func NewRunner(ctx context.Context) *Runner { return &Runner{base: ctx} }

// Start runs fn in the background unless a run is under way (ErrRunBusy);
// finished gets fn's error when it returns. The run stays Busy until End.
func (r *Runner) Start(fn func(ctx context.Context) error, finished func(run *Run, err error)) (*Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		return nil, ErrRunBusy
	}
	ctx, cancel := context.WithCancel(r.base)
	run := &Run{r: r, cancel: cancel, done: make(chan struct{})}
	r.cur = run
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(run.done)
		defer cancel()
		err := fn(ctx)
		if finished != nil {
			finished(run, err)
		}
	}()
	return run, nil
}

// Busy reports whether a run is under way.
func (r *Runner) Busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur != nil
}

// Current is the run under way, nil if none.
func (r *Runner) Current() *Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// Abort cancels the run under way and returns it (nil if none); it stays
// Busy until its owner Ends it.
func (r *Runner) Abort() *Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil
	}
	r.cur.cancel()
	return r.cur
}

// Wait waits until every run started has returned.
func (r *Runner) Wait() { r.wg.Wait() }

// End says the run is over for its owner: the Runner is free for the next
// one. It reports false when the run had ended already. The run's function
// may still be finishing (its context stays as it is until it returns).
func (run *Run) End() bool {
	r := run.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != run {
		return false
	}
	r.cur = nil
	return true
}

// Wait waits until the run's function has returned.
func (run *Run) Wait() { <-run.done }

// Done is closed when the run's function has returned.
func (run *Run) Done() <-chan struct{} { return run.done }
