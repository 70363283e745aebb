package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/fakemodel"
)

// --thinking reaches the request, and a 429 is retried with the events of
// the reference in --mode json.
func TestPrintThinkingAndRetry(t *testing.T) {
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"retry": {"baseDelayMs": 1}}`)
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			w.Error(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`)
			return
		}
		w.ReasoningAnswer("let me think", "done")
	})
	srv.SetModels(fakemodel.Model{ID: "test", Reasoning: true})
	r := s.runIn(nil, srv.env(), "-p", "--mode", "json", "--model", "openai/test", "--thinking", "high", "hi")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, w := range []string{`{"type":"auto_retry_start","attempt":1,"maxAttempts":10,"delayMs":1,"errorMessage":"openai: HTTP 429 Too Many Requests: slow down"}`,
		`{"type":"auto_retry_end","success":true,"attempt":1}`, `"thinking":"let me think"`} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %s:\n%s", w, clip(r.stdout))
		}
	}
	reqs := srv.requests()
	if len(reqs) != 2 || reqs[1]["reasoning_effort"] != "high" {
		t.Fatalf("requests %d, effort %v", len(reqs), reqs[len(reqs)-1]["reasoning_effort"])
	}

	if r := s.runIn(nil, srv.env(), "-p", "--thinking", "max", "hi"); r.code != 2 ||
		!strings.Contains(r.stderr, `Invalid thinking level "max": use off, minimal, low, medium, high, xhigh`) {
		t.Errorf("bad level: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A continued session goes on with the model and thinking level its file
// recorded last, unless --model says otherwise.
func TestContinueRestoresTheSessionsModel(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "test"}, fakemodel.Model{ID: "thinker", Reasoning: true})
	env := append(srv.env(), "AGENTSH_MODEL=openai/test")
	want(t, s.runIn(nil, env, "-p", "one"), "ok\n", "", 0)
	files := s.sessionFiles()
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"model_change","timestamp":"2026-01-01T00:00:00.000Z","model":"openai/thinker"}` + "\n" +
		`{"type":"thinking_level_change","timestamp":"2026-01-01T00:00:00.000Z","thinkingLevel":"low"}` + "\n")
	f.Close()

	want(t, s.runIn(nil, env, "-p", "-c", "two"), "ok\n", "", 0)
	want(t, s.runIn(nil, env, "-p", "-c", "--model", "openai/test", "three"), "ok\n", "", 0)
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[1]["model"] != "thinker" || reqs[1]["reasoning_effort"] != "low" {
		t.Errorf("continued: model %v effort %v", reqs[1]["model"], reqs[1]["reasoning_effort"])
	}
	if reqs[2]["model"] != "test" || reqs[2]["reasoning_effort"] != nil {
		t.Errorf("continued with --model: model %v effort %v", reqs[2]["model"], reqs[2]["reasoning_effort"])
	}
}
