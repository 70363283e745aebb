package testkit

import (
	"testing"
	"time"
)

// Poll intervals: a condition is first looked at again quickly (most waits
// end within milliseconds), then less often, so a long wait does not spin
// on a busy machine.
const (
	firstInterval = time.Millisecond
	maxInterval   = 20 * time.Millisecond
)

// Cond reports whether what a test waits for has happened, and a short
// description of the state it saw (printed if the wait gives up).
type Cond func() (done bool, state string)

// Eventually calls cond until it reports done, and fails the test (Fatalf)
// if bound passes first, with what it waited for and the last state cond
// reported. A bound of 0 is DefaultBound; every bound is scaled by Scale.
// It is a hang guard, not a timing assertion.
func Eventually(t testing.TB, bound time.Duration, what string, cond Cond) {
	t.Helper()
	if ok, state, waited := poll(bound, firstInterval, maxInterval, cond); !ok {
		fail(t, what, state, waited)
	}
}

// EventuallyEvery is Eventually for a costly condition (one that starts a
// process, say): it looks at cond every interval.
func EventuallyEvery(t testing.TB, bound, interval time.Duration, what string, cond Cond) {
	t.Helper()
	if ok, state, waited := poll(bound, interval, interval, cond); !ok {
		fail(t, what, state, waited)
	}
}

func fail(t testing.TB, what, state string, waited time.Duration) {
	t.Helper()
	t.Fatalf("gave up after %v waiting for %s (hang guard); last state:\n%s", waited.Round(time.Millisecond), what, state)
}

// Poll is Eventually without failing: it reports whether cond was done
// within bound, and the last state it reported, for a caller that reports
// the failure itself (a cleanup that goes on, a loop that kills what is left).
func Poll(bound time.Duration, cond Cond) (done bool, state string) {
	done, state, _ = poll(bound, firstInterval, maxInterval, cond)
	return done, state
}

func poll(bound, first, most time.Duration, cond Cond) (bool, string, time.Duration) {
	if bound <= 0 {
		bound = DefaultBound
	}
	start := time.Now()
	deadline := start.Add(Scale(bound))
	interval := first
	for {
		done, state := cond()
		if done {
			return true, state, time.Since(start)
		}
		if time.Now().After(deadline) {
			return false, state, time.Since(start)
		}
		time.Sleep(interval)
		interval = min(2*interval, most)
	}
}
