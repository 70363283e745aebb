package agent

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// DefaultRequestTimeout is how long a model call may go without a byte of
// its answer (before the first, or between two) before it fails as timed
// out: a hung server must not leave the agent `working…` for ever. An
// answer that keeps streaming is never cut.
const DefaultRequestTimeout = 10 * time.Minute

// RequestTimeoutError is the error of a model call that timed out
// (DefaultRequestTimeout). It is a timeout as a net.Error is, so
// auto-retry tries the call again.
type RequestTimeoutError struct {
	Provider string
	After    time.Duration
}

func (e *RequestTimeoutError) Error() string {
	return e.Provider + ": no answer for " + FormatTimeout(e.After) + " (the request timeout)"
}

// Timeout implements net.Error.
func (e *RequestTimeoutError) Timeout() bool { return true }

// Temporary implements net.Error.
func (e *RequestTimeoutError) Temporary() bool { return true }

// FormatTimeout is a timeout as people write it: 10m, 1m30s, 1h, 200ms.
func FormatTimeout(d time.Duration) string {
	if d < time.Second || d%time.Second != 0 {
		return d.String()
	}
	s := ""
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.d; n > 0 {
			s += strconv.FormatInt(int64(n), 10) + u.name
			d -= n * u.d
		}
	}
	return s
}

// SetRequestTimeout sets how long a model call may go without a byte of
// its answer (0: the Retry's, else DefaultRequestTimeout; negative: no
// limit).
func (a *AgentSession) SetRequestTimeout(d time.Duration) { a.reqTimeout.Store(int64(d)) }

// RequestTimeout is the request timeout now (0: none).
func (a *AgentSession) RequestTimeout() time.Duration {
	switch d := time.Duration(a.reqTimeout.Load()); {
	case d == 0:
		if r := a.retry.Load(); r != nil && r.RequestTimeout > 0 {
			return r.RequestTimeout
		}
		return DefaultRequestTimeout
	case d < 0:
		return 0
	default:
		return d
	}
}

// errNoAnswer is the cause of a call's context when the timeout ended it.
var errNoAnswer = errors.New("no answer within the request timeout")

// requestWatch ends a model call's context when d passes without a sign of
// life (alive); d 0 watches nothing.
type requestWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	d      time.Duration
}

func watchRequest(ctx context.Context, d time.Duration) *requestWatch {
	w := &requestWatch{d: d}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	if d > 0 {
		w.timer = time.AfterFunc(d, func() { w.cancel(errNoAnswer) })
	}
	return w
}

// alive is a byte of the answer: the wait starts again. It is called on
// the goroutine of the provider's stream.
func (w *requestWatch) alive() {
	if w.timer != nil {
		w.timer.Reset(w.d)
	}
}

// stop ends the watch; err is the call's error, replaced by a
// RequestTimeoutError when the timeout ended the call (and not the
// caller's ctx, parent).
func (w *requestWatch) stop(parent context.Context, provider string, err error) (error, bool) {
	if w.timer != nil {
		w.timer.Stop()
	}
	timedOut := err != nil && parent.Err() == nil && errors.Is(context.Cause(w.ctx), errNoAnswer)
	w.cancel(nil)
	if timedOut {
		return &RequestTimeoutError{Provider: provider, After: w.d}, true
	}
	return err, false
}
