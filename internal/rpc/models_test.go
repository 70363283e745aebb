package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
	"agentsh/internal/testkit"
)

// envOf turns "K=V" pairs into a getenv.
func envOf(pairs []string) func(string) string {
	m := map[string]string{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// modelsServer serves with models made from spec and env, retries waiting
// base at first, and sessions stored in dir when store is set.
type modelsSetup struct {
	spec    string
	env     []string
	level   string
	enabled []string
	base    time.Duration
	store   string // a sessions folder; "" = in memory
}

func startModels(t *testing.T, ms modelsSetup) (*client, *agent.Models, *agent.Retry) {
	t.Helper()
	models, err := agent.NewModels(ms.spec, agent.ModelsOptions{Getenv: envOf(ms.env), ThinkingLevel: ms.level, Enabled: ms.enabled})
	if err != nil {
		t.Fatal(err)
	}
	base := ms.base
	if base == 0 {
		base = time.Millisecond
	}
	retry := agent.NewRetry(3, base, time.Hour)
	tag := newTag(t)
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			var store *session.Store
			if ms.store != "" {
				var err error
				if store, err = session.CreateIn(ms.store, dir); err != nil {
					return nil, err
				}
			}
			return agent.New(dir, store, exec, bash.ShellConfig{})
		},
		Models: models,
		Retry:  retry,
	}
	return serve(t, cfg, tag), models, retry
}

// prompt sends a prompt and returns the events up to agent_end and the
// error response that may follow it (nil when the prompt succeeded).
func (c *client) prompt(id, text string) (events []map[string]any, failure map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]string{"id": id, "type": "prompt", "message": text})
	c.send(string(b))
	if r := c.response(id); r["success"] != true {
		c.t.Fatalf("prompt refused: %v", r)
	}
	for {
		l := c.next()
		events = append(events, l)
		if l["type"] == "agent_end" {
			break
		}
	}
	if l, _ := events[len(events)-1]["error"].(string); l != "" {
		failure = c.response(id)
	}
	// agent_end comes just before the prompt is done: the next prompt
	// waits until get_state says so.
	i := 0
	testkit.Eventually(c.t, 0, "the prompt to stop streaming after its agent_end", func() (bool, string) {
		sid := id + "_state" + strconv.Itoa(i)
		i++
		data := c.call(sid, `{"id":"`+sid+`","type":"get_state"}`)["data"].(map[string]any)
		return data["isStreaming"] == false, fmt.Sprintf("state %v", data)
	})
	return events, failure
}

func (c *client) call(id, line string) map[string]any {
	c.t.Helper()
	c.send(line)
	return c.response(id)
}

func ofType(events []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestSetModelSwitchesTheNextRequest(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "test", Name: "Test model", ContextWindow: 128_000, MaxTokens: 16_384},
		fakemodel.Model{ID: "other", Name: "Other model", ContextWindow: 32_000, MaxTokens: 4_096})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})

	c.prompt("p1", "one")
	r := c.call("s", `{"id":"s","type":"set_model","provider":"openai","modelId":"other"}`)
	if r["success"] != true {
		t.Fatalf("set_model: %v", r)
	}
	got, _ := json.Marshal(r["data"])
	want := `{"api":"openai-completions","baseUrl":"` + srv.OpenAIBaseURL() + `","contextWindow":32000,` +
		`"cost":{"cacheRead":0,"cacheWrite":0,"input":0,"output":0},"id":"other","input":["text"],"maxTokens":4096,` +
		`"name":"Other model","provider":"openai","reasoning":false}`
	if string(got) != want {
		t.Errorf("set_model data\n got %s\nwant %s", got, want)
	}
	c.prompt("p2", "two")
	bodies := srv.Bodies()
	if len(bodies) != 2 || bodies[0]["model"] != "test" || bodies[1]["model"] != "other" {
		t.Fatalf("request models: %v then %v", bodies[0]["model"], bodies[len(bodies)-1]["model"])
	}
	st := c.call("st", `{"id":"st","type":"get_state"}`)["data"].(map[string]any)["model"].(map[string]any)
	if st["id"] != "other" || st["provider"] != "openai" {
		t.Errorf("get_state model %v", st)
	}
	// The answer's message names the model that gave it.
	msgs := c.call("m", `{"id":"m","type":"get_messages"}`)["data"].(map[string]any)["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["model"] != "other" {
		t.Errorf("last answer's model %v", last["model"])
	}
}

func TestSetModelUnknown(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	c, models, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	r := c.call("s", `{"id":"s","type":"set_model","provider":"openai","modelId":"nope"}`)
	if r["success"] != false || r["error"] != "Model not found: openai/nope" {
		t.Errorf("response %v", r)
	}
	r = c.call("s2", `{"id":"s2","type":"set_model","provider":"anthropic","modelId":"claude-sonnet-4-5"}`)
	if r["error"] != "Model not found: anthropic/claude-sonnet-4-5" {
		t.Errorf("unconfigured provider: %v", r)
	}
	if models.Spec() != "openai/test" {
		t.Errorf("model changed to %s", models.Spec())
	}
}

func TestAvailableModelsFromTheServer(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "test", ContextWindow: 8_000, MaxTokens: 1_000},
		fakemodel.Model{ID: "thinker", Name: "Thinker", ContextWindow: 64_000, MaxTokens: 8_000, Reasoning: true})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	r := c.call("a", `{"id":"a","type":"get_available_models"}`)
	models := r["data"].(map[string]any)["models"].([]any)
	if len(models) != 2 {
		t.Fatalf("models %v", models)
	}
	th := models[1].(map[string]any)
	if th["id"] != "thinker" || th["name"] != "Thinker" || th["reasoning"] != true || th["contextWindow"] != float64(64000) ||
		th["maxTokens"] != float64(8000) || th["provider"] != "openai" || th["api"] != "openai-completions" {
		t.Errorf("thinker %v", th)
	}
	// Cached for the process: asked once.
	c.call("a2", `{"id":"a2","type":"get_available_models"}`)
	if n := len(srv.ModelRequests()); n != 1 {
		t.Errorf("%d model list requests, want 1", n)
	}
}

// A server may answer for a model it does not list (an alias, a model
// loaded on demand): the configured one is available all the same, so a
// client can switch back to it.
func TestAvailableModelsKeepTheConfiguredOne(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "listed"})
	c, models, _ := startModels(t, modelsSetup{spec: "openai/unlisted", env: srv.OpenAIEnv()})
	var ids []string
	for _, m := range c.call("a", `{"id":"a","type":"get_available_models"}`)["data"].(map[string]any)["models"].([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	if strings.Join(ids, ",") != "listed,unlisted" {
		t.Fatalf("models %v, want the listed one and the configured one", ids)
	}
	if r := c.call("s", `{"id":"s","type":"set_model","provider":"openai","modelId":"listed"}`); r["success"] != true || models.Spec() != "openai/listed" {
		t.Errorf("set_model to the listed model: %v (now %s)", r, models.Spec())
	}
	if r := c.call("b", `{"id":"b","type":"set_model","provider":"openai","modelId":"unlisted"}`); r["success"] != true || models.Spec() != "openai/unlisted" {
		t.Errorf("set_model back to the configured model: %v (now %s)", r, models.Spec())
	}
}

func TestAvailableModelsListingFails(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModelsError(http.StatusInternalServerError, `{"error":"down"}`)
	c, _, _ := startModels(t, modelsSetup{spec: "openai/gpt-4.1", env: srv.OpenAIEnv()})
	models := c.call("a", `{"id":"a","type":"get_available_models"}`)["data"].(map[string]any)["models"].([]any)
	if len(models) != 1 {
		t.Fatalf("models %v", models)
	}
	m := models[0].(map[string]any)
	// The configured model, described by the table of well-known models.
	if m["id"] != "gpt-4.1" || m["contextWindow"] != float64(1047576) || m["reasoning"] != false {
		t.Errorf("model %v", m)
	}
	if r := c.call("c", `{"id":"c","type":"cycle_model"}`); r["success"] != true || r["data"] != nil {
		t.Errorf("cycle with one model: %v", r)
	}
	if _, has := c.call("c2", `{"id":"c2","type":"cycle_model"}`)["data"]; !has {
		t.Error("cycle_model's null data is left out")
	}
}

func TestCycleModel(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "a"}, fakemodel.Model{ID: "b"}, fakemodel.Model{ID: "c"})
	c, models, _ := startModels(t, modelsSetup{spec: "openai/b", env: srv.OpenAIEnv()})
	var seen []string
	for i := range 3 {
		id := "c" + string(rune('0'+i))
		r := c.call(id, `{"id":"`+id+`","type":"cycle_model"}`)
		d := r["data"].(map[string]any)
		if d["isScoped"] != false || d["thinkingLevel"] != "off" {
			t.Errorf("cycle data %v", d)
		}
		seen = append(seen, d["model"].(map[string]any)["id"].(string))
	}
	if strings.Join(seen, ",") != "c,a,b" || models.Spec() != "openai/b" {
		t.Errorf("cycled through %v, now %s", seen, models.Spec())
	}

	// enabledModels: the cycle goes through them only.
	c2, _, _ := startModels(t, modelsSetup{spec: "openai/a", env: srv.OpenAIEnv(), enabled: []string{"openai/a", "openai/c"}})
	d := c2.call("x", `{"id":"x","type":"cycle_model"}`)["data"].(map[string]any)
	if d["model"].(map[string]any)["id"] != "c" || d["isScoped"] != true {
		t.Errorf("scoped cycle %v", d)
	}
	if ms := c2.call("y", `{"id":"y","type":"get_available_models"}`)["data"].(map[string]any)["models"].([]any); len(ms) != 2 {
		t.Errorf("enabled models %v", ms)
	}
}

func TestThinkingLevelReachesTheRequest(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.ReasoningAnswer("let me see", "ok") })
	srv.SetModels(fakemodel.Model{ID: "thinker", Reasoning: true}, fakemodel.Model{ID: "plain"})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/thinker", env: srv.OpenAIEnv()})

	if r := c.call("bad", `{"id":"bad","type":"set_thinking_level","level":"extreme"}`); r["success"] != false ||
		r["error"] != `Invalid thinking level "extreme": use off, minimal, low, medium, high, xhigh` {
		t.Errorf("invalid level: %v", r)
	}
	if r := c.call("h", `{"id":"h","type":"set_thinking_level","level":"high"}`); r["success"] != true {
		t.Fatalf("set_thinking_level: %v", r)
	}
	events, _ := c.prompt("p1", "think")
	if b := srv.Bodies()[0]; b["reasoning_effort"] != "high" {
		t.Errorf("reasoning_effort %v", b["reasoning_effort"])
	}
	var thinking []string
	for _, e := range ofType(events, "message_update") {
		ae := e["assistantMessageEvent"].(map[string]any)
		if strings.HasPrefix(ae["type"].(string), "thinking_") {
			thinking = append(thinking, ae["type"].(string))
		}
	}
	if strings.Join(thinking, ",") != "thinking_start,thinking_delta,thinking_end" {
		t.Errorf("thinking events %v", thinking)
	}
	r := c.call("cy", `{"id":"cy","type":"cycle_thinking_level"}`)
	if r["data"].(map[string]any)["level"] != "xhigh" {
		t.Errorf("cycle from high: %v", r)
	}
	r = c.call("cy2", `{"id":"cy2","type":"cycle_thinking_level"}`)
	if r["data"].(map[string]any)["level"] != "off" {
		t.Errorf("cycle from xhigh: %v", r)
	}
	c.prompt("p2", "no thinking")
	if b := srv.Bodies()[1]; b["reasoning_effort"] != nil {
		t.Errorf("off sent reasoning_effort %v", b["reasoning_effort"])
	}

	// A model that does not think: nothing to cycle, and no effort sent.
	c.call("h2", `{"id":"h2","type":"set_thinking_level","level":"medium"}`)
	c.call("s", `{"id":"s","type":"set_model","provider":"openai","modelId":"plain"}`)
	if r := c.call("cy3", `{"id":"cy3","type":"cycle_thinking_level"}`); r["success"] != true || r["data"] != nil {
		t.Errorf("cycle on a plain model: %v", r)
	}
	c.prompt("p3", "plain")
	if b := srv.Bodies()[2]; b["model"] != "plain" || b["reasoning_effort"] != nil {
		t.Errorf("plain model request: model %v effort %v", b["model"], b["reasoning_effort"])
	}
	// Back on the thinker, the chosen level applies again.
	c.call("s2", `{"id":"s2","type":"set_model","provider":"openai","modelId":"thinker"}`)
	c.prompt("p4", "again")
	if b := srv.Bodies()[3]; b["reasoning_effort"] != "medium" {
		t.Errorf("thinker again: effort %v", b["reasoning_effort"])
	}
}

func TestThinkingBudgetForAnthropic(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.AnthropicThinkingAnswer("hmm", "sig", "ok") })
	srv.SetModels(fakemodel.Model{ID: "claude-sonnet-4-5", Reasoning: true})
	c, _, _ := startModels(t, modelsSetup{spec: "anthropic/claude-sonnet-4-5", env: srv.AnthropicEnv(), level: "low"})
	c.prompt("p", "think")
	th, _ := srv.Bodies()[0]["thinking"].(map[string]any)
	if th["type"] != "enabled" || th["budget_tokens"] != float64(2048) {
		t.Errorf("thinking %v", srv.Bodies()[0]["thinking"])
	}
	msgs := c.call("m", `{"id":"m","type":"get_messages"}`)["data"].(map[string]any)["messages"].([]any)
	content := msgs[1].(map[string]any)["content"].([]any)
	if b := content[0].(map[string]any); b["type"] != "thinking" || b["thinking"] != "hmm" || b["thinkingSignature"] != "sig" {
		t.Errorf("first block %v", b)
	}
}

func TestAutoRetryAfter429(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Error(http.StatusTooManyRequests, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
			return
		}
		w.Answer("made it")
	})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	events, failure := c.prompt("p", "hi")
	if failure != nil {
		t.Fatalf("prompt failed: %v", failure)
	}
	starts, ends := ofType(events, "auto_retry_start"), ofType(events, "auto_retry_end")
	if len(starts) != 1 || len(ends) != 1 {
		t.Fatalf("retry events: %d starts, %d ends", len(starts), len(ends))
	}
	s := starts[0]
	if s["attempt"] != float64(1) || s["maxAttempts"] != float64(3) || s["delayMs"] != float64(1) ||
		!strings.Contains(s["errorMessage"].(string), "HTTP 429") || !strings.Contains(s["errorMessage"].(string), "slow down") {
		t.Errorf("auto_retry_start %v", s)
	}
	if e := ends[0]; e["success"] != true || e["attempt"] != float64(1) || e["finalError"] != nil {
		t.Errorf("auto_retry_end %v", e)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	msgs := c.call("m", `{"id":"m","type":"get_messages"}`)["data"].(map[string]any)["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["stopReason"] != "stop" {
		t.Errorf("messages %v", msgs)
	}
}

func TestAbortRetry(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Error(http.StatusServiceUnavailable, `{"error":{"message":"busy"}}`)
	})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv(), base: time.Hour})
	c.send(`{"id":"p","type":"prompt","message":"hi"}`)
	for {
		if l := c.next(); l["type"] == "auto_retry_start" {
			if l["delayMs"] != float64(time.Hour.Milliseconds()) {
				t.Errorf("delay %v", l["delayMs"])
			}
			break
		}
	}
	c.send(`{"id":"a","type":"abort_retry"}`)
	var sawEnd, sawAck, sawFailure bool
	for !sawAck || !sawFailure {
		l := c.next()
		switch {
		case l["type"] == "auto_retry_end":
			sawEnd = true
			if l["success"] != false || l["finalError"] != "Retry cancelled" || l["attempt"] != float64(1) {
				t.Errorf("auto_retry_end %v", l)
			}
		case l["id"] == "a":
			sawAck = true
		}
		if l["id"] == "p" && l["type"] == "response" {
			if l["success"] != false || !strings.Contains(l["error"].(string), "HTTP 503") {
				t.Errorf("prompt failure %v", l)
			}
			sawFailure = true
		}
	}
	if !sawEnd || !sawAck {
		t.Errorf("auto_retry_end seen %v, abort_retry answered %v", sawEnd, sawAck)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestAutoRetryDisabled(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.Error(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`)
			return
		}
		w.Answer("too late")
	})
	c, _, retry := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	if r := c.call("r", `{"id":"r","type":"set_auto_retry","enabled":false}`); r["success"] != true || retry.Enabled() {
		t.Fatalf("set_auto_retry: %v (enabled %v)", r, retry.Enabled())
	}
	events, failure := c.prompt("p", "hi")
	if failure == nil || !strings.Contains(failure["error"].(string), "HTTP 429") {
		t.Errorf("failure %v", failure)
	}
	if n := len(ofType(events, "auto_retry_start")) + len(ofType(events, "auto_retry_end")); n != 0 {
		t.Errorf("%d retry events", n)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestModelChangesRecordedInTheSessionFile(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "test"}, fakemodel.Model{ID: "thinker", Reasoning: true})
	dir := t.TempDir()
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv(), store: dir})
	c.call("s", `{"id":"s","type":"set_model","provider":"openai","modelId":"thinker"}`)
	c.call("l", `{"id":"l","type":"set_thinking_level","level":"high"}`)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 0 {
		t.Fatalf("a session without a message wrote %v", files)
	}
	c.prompt("p", "hi")
	files, _ = filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var types []string
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		types = append(types, e["type"].(string))
		switch e["type"] {
		case "model_change":
			if e["model"] != "openai/thinker" {
				t.Errorf("model_change %v", e)
			}
		case "thinking_level_change":
			if e["thinkingLevel"] != "high" {
				t.Errorf("thinking_level_change %v", e)
			}
		}
	}
	if strings.Join(types, ",") != "session,model_change,thinking_level_change,message,message" {
		t.Errorf("entries %v", types)
	}
	// Resumed, the session continues with its model and level.
	store, errs, err := session.Open(files[0])
	if err != nil || len(errs) != 0 {
		t.Fatalf("open: %v %v", err, errs)
	}
	defer store.Close()
	if m, l := store.ModelState(); m != "openai/thinker" || l != "high" {
		t.Errorf("loaded %q %q", m, l)
	}
	sess, err := agent.New(t.TempDir(), store, nil, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	models, _ := agent.NewModels("openai/test", agent.ModelsOptions{Getenv: envOf(srv.OpenAIEnv())})
	if err := sess.RestoreModel(models); err != nil {
		t.Fatal(err)
	}
	if models.Spec() != "openai/thinker" {
		t.Errorf("restored model %s", models.Spec())
	}
	if _, _, level := models.Current(context.Background()); level != "high" {
		t.Errorf("restored level %s", level)
	}
}

func TestAutoRetryGivesUp(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Error(http.StatusInternalServerError, `{"error":{"message":"boom"}}`)
	})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	events, failure := c.prompt("p", "hi")
	if failure == nil || !strings.Contains(failure["error"].(string), "HTTP 500") {
		t.Fatalf("failure %v", failure)
	}
	starts, ends := ofType(events, "auto_retry_start"), ofType(events, "auto_retry_end")
	if len(starts) != 3 || len(ends) != 1 {
		t.Fatalf("%d starts, %d ends", len(starts), len(ends))
	}
	for i, s := range starts {
		if s["attempt"] != float64(i+1) || s["delayMs"] != float64(int(1)<<i) {
			t.Errorf("start %d: %v", i, s)
		}
	}
	if e := ends[0]; e["success"] != false || e["attempt"] != float64(3) || !strings.Contains(e["finalError"].(string), "HTTP 500") {
		t.Errorf("end %v", e)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestAutoRetryAfterADroppedConnection(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			panic(http.ErrAbortHandler) // the server drops the connection without an answer
		}
		w.Answer("made it")
	})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	events, failure := c.prompt("p", "hi")
	if failure != nil {
		t.Fatalf("prompt failed: %v", failure)
	}
	if s := ofType(events, "auto_retry_start"); len(s) != 1 {
		t.Fatalf("retry starts %v", s)
	}
}

func TestNoRetryAfterOutput(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Text("half an answer")
		panic(http.ErrAbortHandler)
	})
	c, _, _ := startModels(t, modelsSetup{spec: "openai/test", env: srv.OpenAIEnv()})
	events, failure := c.prompt("p", "hi")
	if failure == nil {
		t.Fatal("the prompt did not fail")
	}
	if n := len(ofType(events, "auto_retry_start")); n != 0 || len(srv.Requests()) != 1 {
		t.Errorf("%d retries, %d requests after text had come", n, len(srv.Requests()))
	}
	msgs := c.call("m", `{"id":"m","type":"get_messages"}`)["data"].(map[string]any)["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["stopReason"] != "error" {
		t.Errorf("the partial answer is not kept: %v", msgs)
	}
}
