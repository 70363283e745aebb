package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"agentsh/internal/llm"
	"agentsh/internal/session"
)

// Auto-retry events (the reference's): a model call failed with a passing
// error and is tried again after DelayMs; the end says whether a try
// succeeded.
const (
	EventAutoRetryStart = "auto_retry_start"
	EventAutoRetryEnd   = "auto_retry_end"
)

// RetryCancelled is auto_retry_end's finalError when abort_retry (or the
// prompt's abort) ended the wait.
const RetryCancelled = "Retry cancelled"

// Retry defaults (the reference's retry.* settings).
const (
	DefaultMaxRetries  = 10
	DefaultRetryBaseMs = 500
	DefaultRetryMaxMs  = 5 * 60 * 1000
)

// Retry is the auto-retry of model calls that failed with a passing error
// (HTTP 429, 5xx, an overloaded server, a dropped connection) before the
// answer had any text or tool call: the agent loop waits BaseDelay,
// doubling each time up to MaxDelay, and calls again, at most MaxRetries
// times. It is shared by the sessions of a process and safe for concurrent
// use.
type Retry struct {
	MaxRetries int
	BaseDelay  time.Duration
	MaxDelay   time.Duration
	// RequestTimeout is the request timeout of the sessions' model calls
	// (retry.requestTimeoutMs); 0 = DefaultRequestTimeout. A session's
	// SetRequestTimeout beats it.
	RequestTimeout time.Duration

	enabled atomic.Bool
	mu      sync.Mutex
	waits   map[*retryWait]struct{}
}

type retryWait struct{ cancel context.CancelFunc }

// NewRetry returns an enabled Retry with the given limits (0: the defaults).
func NewRetry(maxRetries int, base, maxDelay time.Duration) *Retry {
	if maxRetries <= 0 {
		maxRetries = DefaultMaxRetries
	}
	if base <= 0 {
		base = DefaultRetryBaseMs * time.Millisecond
	}
	if maxDelay <= 0 {
		maxDelay = DefaultRetryMaxMs * time.Millisecond
	}
	r := &Retry{MaxRetries: maxRetries, BaseDelay: base, MaxDelay: maxDelay, waits: map[*retryWait]struct{}{}}
	r.enabled.Store(true)
	return r
}

// SetEnabled turns auto-retry on or off (set_auto_retry).
func (r *Retry) SetEnabled(on bool) { r.enabled.Store(on) }

// Enabled reports whether auto-retry is on.
func (r *Retry) Enabled() bool { return r != nil && r.enabled.Load() }

// Abort ends every wait for a retry now (abort_retry): those prompts fail
// with the error that would have been retried.
func (r *Retry) Abort() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.waits {
		w.cancel()
	}
}

// delay is the wait before retry number attempt (from 1).
func (r *Retry) delay(attempt int) time.Duration {
	d := r.BaseDelay
	for i := 1; i < attempt && d < r.MaxDelay; i++ {
		d *= 2
	}
	return min(d, r.MaxDelay)
}

// startWait registers a wait for a retry, so that an Abort from the
// moment it is announced ends it.
func (r *Retry) startWait(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	w := &retryWait{cancel: cancel}
	r.mu.Lock()
	r.waits[w] = struct{}{}
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		delete(r.waits, w)
		r.mu.Unlock()
		cancel()
	}
}

// sleep waits d; errRetryAborted when ctx (the prompt's, or Abort through
// startWait) ended it first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errRetryAborted
	}
}

var errRetryAborted = errors.New("retry aborted")

// SetRetry makes the session's agent loop retry failed model calls as r
// says (nil: never).
func (a *AgentSession) SetRetry(r *Retry) { a.retry.Store(r) }

// Retryable reports whether a model call's error is passing: HTTP 408, 429
// or 5xx, an overloaded or rate-limited stream, or a connection that broke
// or timed out. Cancellation is not.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var api *llm.APIError
	if errors.As(err, &api) {
		switch {
		case api.StatusCode == 408 || api.StatusCode == 429 || api.StatusCode >= 500:
			return true
		case api.StatusCode < 400:
			msg := strings.ToLower(api.Message)
			if strings.Contains(msg, "overloaded") || strings.Contains(msg, "rate limit") || strings.Contains(msg, "rate_limit") {
				return true
			}
		default:
			return false
		}
	}
	// A connection that broke (the server or a proxy went away mid-request)
	// or timed out. One that could not be made (refused, an unknown host)
	// is an address to fix, not a passing error.
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "connection reset") || strings.Contains(msg, "overloaded")
}

// retryable says whether the failed call that gave msg and err is tried
// again: auto-retry is on, tries are left, and the answer has nothing that
// cannot be thrown away (text, tool calls; thinking alone may go).
func (r *run) retryable(ctx context.Context, msg *session.AssistantMessage, err error, attempt int) bool {
	rt := r.a.retry.Load()
	return rt.Enabled() && attempt < rt.MaxRetries && ctx.Err() == nil && Retryable(err) &&
		msg.Text == "" && len(msg.ToolCalls) == 0
}

// streamRetry is stream with auto-retry: a failed call that retryable
// allows is reported (message_end with the error, not recorded), followed
// by auto_retry_start, a wait, and the call again; the try that ends the
// series (a success, a failure not to retry, or the cancelled wait) is
// followed by auto_retry_end.
func (r *run) streamRetry(ctx context.Context, pick func() (llm.Provider, llm.Request)) (*session.AssistantMessage, error) {
	for attempt := 0; ; attempt++ {
		p, req := pick()
		r.mayRetry = func(msg *session.AssistantMessage, err error) bool { return r.retryable(ctx, msg, err, attempt) }
		msg, err := r.stream(ctx, p, req)
		r.mayRetry = nil
		if err == nil || !r.retrying {
			if attempt > 0 {
				end := Event{Type: EventAutoRetryEnd, Attempt: attempt, Success: err == nil}
				if err != nil {
					end.FinalError = err.Error()
				}
				r.send(end)
			}
			return msg, err
		}
		rt := r.a.retry.Load()
		d := rt.delay(attempt + 1)
		wctx, done := rt.startWait(ctx)
		r.send(Event{Type: EventAutoRetryStart, Attempt: attempt + 1, MaxAttempts: rt.MaxRetries,
			DelayMs: d.Milliseconds(), ErrorMessage: err.Error()})
		werr := sleep(wctx, d)
		done()
		if werr != nil {
			r.send(Event{Type: EventAutoRetryEnd, Attempt: attempt + 1, FinalError: RetryCancelled})
			r.keepFailed(msg)
			return msg, err
		}
	}
}

// keepFailed records a failed answer that was held back for a retry that
// did not happen, when it has something (thinking) worth keeping.
func (r *run) keepFailed(msg *session.AssistantMessage) {
	if msg.Text != "" || len(msg.ToolCalls) > 0 || len(msg.Thinking) > 0 {
		r.append(msg)
	}
}

// marshalRetryEvent writes the auto-retry events in the reference's shape.
func (e Event) marshalRetryEvent() ([]byte, error) {
	if e.Type == EventAutoRetryStart {
		return json.Marshal(struct {
			Type         string `json:"type"`
			Attempt      int    `json:"attempt"`
			MaxAttempts  int    `json:"maxAttempts"`
			DelayMs      int64  `json:"delayMs"`
			ErrorMessage string `json:"errorMessage"`
		}{e.Type, e.Attempt, e.MaxAttempts, e.DelayMs, e.ErrorMessage})
	}
	return json.Marshal(struct {
		Type       string `json:"type"`
		Success    bool   `json:"success"`
		Attempt    int    `json:"attempt"`
		FinalError string `json:"finalError,omitempty"`
	}{e.Type, e.Success, e.Attempt, e.FinalError})
}
