package agent

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A run is busy from Start until its owner Ends it, even after its function
// returned; a second Start meanwhile is refused; Abort cancels its context
// (its function returns context.Canceled); Wait waits for the function.
func TestRunnerOneRunAtATime(t *testing.T) {
	r := NewRunner(context.Background())
	release := make(chan struct{})
	finished := make(chan error, 1)
	run, err := r.Start(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, func(_ *Run, err error) { finished <- err })
	if err != nil || !r.Busy() || r.Current() != run {
		t.Fatalf("Start = %v, %v; busy %v", run, err, r.Busy())
	}
	if _, err := r.Start(func(context.Context) error { return nil }, nil); !errors.Is(err, ErrRunBusy) {
		t.Fatalf("second Start = %v, want ErrRunBusy", err)
	}
	if got := r.Abort(); got != run {
		t.Fatalf("Abort = %v, want the run under way", got)
	}
	select {
	case err := <-finished:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("finished with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the aborted run did not return within 30 s")
	}
	run.Wait()
	if !r.Busy() {
		t.Fatal("not busy before End: a run ends when its owner says so")
	}
	if !run.End() || r.Busy() || run.End() {
		t.Fatalf("End: busy %v", r.Busy())
	}
	next, err := r.Start(func(context.Context) error { <-release; return nil }, nil)
	if err != nil {
		t.Fatalf("Start after End = %v", err)
	}
	close(release)
	r.Wait()
	<-next.Done()
	if !next.End() || r.Abort() != nil {
		t.Fatal("after the last run: still busy")
	}
}

// The Runner's context ends every run.
func TestRunnerBelowItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := NewRunner(ctx)
	run, err := r.Start(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-run.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the run outlived the Runner's context by 30 s")
	}
}
