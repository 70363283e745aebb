package tui

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/session"
)

// withServer makes srv's model spec (openai/NAME) the model on screen.
func withServer(h *harness, srv *fakemodel.Server, spec string) {
	h.t.Helper()
	env := map[string]string{}
	for _, kv := range srv.OpenAIEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	p, name, err := llm.FromEnv(spec, func(k string) string { return env[k] })
	if err != nil {
		h.t.Fatal(err)
	}
	h.m.cfg.Provider, h.m.cfg.Model, h.m.cfg.ModelLabel = p, name, spec
	h.m.layout()
}

// A model call that failed and is tried again shows one notice, the
// newest try's; the try that succeeds takes it away (issue 22). A series
// that gives up keeps it above the error.
func TestRetryNoticeGoesOnSuccess(t *testing.T) {
	var fails atomic.Int64
	fails.Store(2)
	first := atomic.Int64{} // the first request of the prompt
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if int64(n)-first.Load() < fails.Load() {
			w.Error(429, `{"error":{"message":"slow down","type":"rate_limit"}}`)
			return
		}
		w.Answer("done at last")
	})
	h := newHarness(t, 120, 30)
	withServer(h, srv, "openai/model-a")
	h.m.session().SetRetry(session.NewRetry(2, time.Millisecond, time.Millisecond))
	h.sendLine("hello")
	h.waitFor("the answer", h.agentIdle)
	s := h.screen()
	if !strings.Contains(s, "done at last") || strings.Contains(s, "trying again") || strings.Contains(s, "slow down") {
		t.Errorf("after the successful try:\n%s", s)
	}
	if len(srv.Requests()) != 3 {
		t.Fatalf("%d requests, want 3", len(srv.Requests()))
	}

	// Three failures against two retries: the last notice stays, one of it.
	fails.Store(3)
	first.Store(3)
	h.sendLine("again")
	h.waitFor("the turn's end", h.agentIdle)
	s = h.screen()
	if n := strings.Count(s, "trying again"); n != 1 || !strings.Contains(s, "(2 of 2; esc gives up)") ||
		!strings.Contains(s, "Error: ") {
		t.Errorf("after giving up (%d notices):\n%s", n, s)
	}
}
