package tui

import (
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
)

// withModels gives the harness a Models on a fake server's OpenAI-compatible
// endpoint, starting on spec.
func withModels(t *testing.T, h *harness, srv *fakemodel.Server, spec string) *agent.Models {
	t.Helper()
	env := map[string]string{}
	for _, kv := range srv.OpenAIEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	ms, err := agent.NewModels(spec, agent.ModelsOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	h.m.cfg.Models = ms
	h.m.layout()
	return ms
}

func TestModelPickerSwitchesTheModel(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "alpha", ContextWindow: 128_000}, fakemodel.Model{ID: "beta", Reasoning: true})
	h := newHarnessWith(t, 100, 30, true, false)
	ms := withModels(t, h, srv, "openai/alpha")
	if s := statusLine(h); !strings.Contains(s, "openai/alpha") {
		t.Fatalf("status line %q", s)
	}

	cmd := h.sendLine("/model")
	p := layerOn[*modelPicker](h)
	if p == nil {
		t.Fatalf("no picker:\n%s", h.screen())
	}
	if s := h.screen(); !strings.Contains(s, "Asking the providers for their models…") {
		t.Errorf("before the list:\n%s", s)
	}
	h.run(cmd)
	s := h.screen()
	if !strings.Contains(s, "› openai/alpha  128k context  (current)") || !strings.Contains(s, "  openai/beta   thinks") {
		t.Fatalf("picker:\n%s", s)
	}
	h.press(tea.KeyDown, 0)
	h.press(tea.KeyEnter, 0)
	if layerOn[*modelPicker](h) != nil {
		t.Fatal("the picker stays open after the choice")
	}
	if ms.Spec() != "openai/beta" {
		t.Errorf("model %s, want openai/beta", ms.Spec())
	}
	if s := h.screen(); !strings.Contains(s, "Model: openai/beta.") || !strings.Contains(statusLine(h), "openai/beta") {
		t.Errorf("after the switch:\n%s", s)
	}
	if m, _ := h.m.session().Store().ModelState(); m != "openai/beta" {
		t.Errorf("recorded model %q", m)
	}

	// esc leaves the model as it is.
	h.run(h.sendLine("/model"))
	h.press(tea.KeyUp, 0)
	h.press(tea.KeyEscape, 0)
	if layerOn[*modelPicker](h) != nil || ms.Spec() != "openai/beta" {
		t.Errorf("after esc: picker %v, model %s", layerOn[*modelPicker](h) != nil, ms.Spec())
	}

	// The next prompt goes to the chosen model.
	h.sendLine("hello")
	h.waitFor("the answer", h.agentIdle)
	if b := srv.Bodies(); len(b) != 1 || b[0]["model"] != "beta" {
		t.Errorf("request model %v", b)
	}
}

func TestThinkingLevelKeyCycles(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "thinker", Reasoning: true}, fakemodel.Model{ID: "plain"})
	h := goldenHarness(t, 120, 30, false)
	ms := withModels(t, h, srv, "openai/thinker")
	h.run(h.press(tea.KeyTab, tea.ModShift))
	if s := statusLine(h); !strings.Contains(s, "openai/thinker · thinking minimal") || !strings.Contains(s, "Thinking: minimal") {
		t.Errorf("status after shift+tab: %q", s)
	}
	h.run(h.press(tea.KeyTab, tea.ModShift))
	if _, _, level := ms.Current(t.Context()); level != "low" {
		t.Errorf("level %s after two presses", level)
	}
	if err := ms.Use("openai", "plain"); err != nil {
		t.Fatal(err)
	}
	h.run(h.press(tea.KeyTab, tea.ModShift))
	if s := statusLine(h); strings.Contains(s, "thinking") || !strings.Contains(s, "This model does not think") {
		t.Errorf("status on a plain model: %q", s)
	}
}

// thinkingAnswer streams an answer that thinks first, as the loop reports it.
func thinkingAnswer(h *harness, thinking, text string) {
	end := h.holdTurn()
	ev := func(e agent.Event) { h.m.pump.event(e) }
	ev(agent.Event{Type: agent.EventMessageStart, Message: &session.AssistantMessage{}})
	half := thinking[:len(thinking)/2]
	ev(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateThinkingDelta, Delta: half,
		Message: &session.AssistantMessage{Thinking: []session.ThinkingBlock{{Thinking: half}}}})
	done := &session.AssistantMessage{Thinking: []session.ThinkingBlock{{Thinking: thinking, Signature: "sig"}}, Text: text}
	ev(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateTextDelta, Delta: text, Message: done})
	ev(agent.Event{Type: agent.EventMessageEnd, Message: done, StopReason: "stop"})
	h.update(flushMsg{})
	end()
}

const longThinking = "The user asks why the build fails. The log shows a missing import in parser.go, " +
	"so the fix is to add it and run the tests again.\n\nAlso check the vendored copy."

func TestThinkingShownCollapsedAndExpanded(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.add(&textItem{kind: kindUser, text: "why does the build fail?"})
	thinkingAnswer(h, longThinking, "A missing import.")
	s := h.screen()
	if !strings.Contains(s, "Thinking… The user asks why the build fails.") || strings.Contains(s, "vendored copy") {
		t.Fatalf("collapsed:\n%s", s)
	}
	if strings.Index(s, "Thinking…") > strings.Index(s, "A missing import.") {
		t.Errorf("the thinking comes after the answer:\n%s", s)
	}
	h.press('t', tea.ModAlt)
	if s := h.screen(); !strings.Contains(s, "Also check the vendored copy.") {
		t.Errorf("expanded:\n%s", s)
	}
	h.press('t', tea.ModAlt)
	if s := h.screen(); strings.Contains(s, "vendored copy") {
		t.Errorf("collapsed again:\n%s", s)
	}
}

func TestResumedThinkingIsCollapsed(t *testing.T) {
	items := resumeItems([]session.Message{
		&session.UserMessage{Text: "why?"},
		&session.AssistantMessage{Thinking: []session.ThinkingBlock{{Thinking: longThinking}, {Redacted: true, Data: "xx"}}, Text: "Because."},
	}, "/")
	h := newHarness(t, 80, 24)
	h.add(items...)
	s := h.screen()
	if !strings.Contains(s, "Thinking… The user asks") || strings.Contains(s, "vendored copy") || !strings.Contains(s, "Because.") {
		t.Fatalf("resumed:\n%s", s)
	}
	h.press('t', tea.ModAlt)
	if s := h.screen(); !strings.Contains(s, "(redacted by the provider)") || !strings.Contains(s, "vendored copy") {
		t.Errorf("resumed, expanded:\n%s", s)
	}
}

func TestGoldenModelScreens(t *testing.T) {
	scenes := []struct {
		name  string
		setup func(h *harness)
	}{
		{"model_picker", func(h *harness) {
			p := &modelPicker{current: "openai/gpt-4.1"}
			h.m.push(p)
			h.update(modelsLoadedMsg{models: []agent.Model{
				{ID: "gpt-4.1", Provider: "openai", ContextWindow: 1_047_576},
				{ID: "o3", Provider: "openai", ContextWindow: 200_000, Reasoning: true},
				{ID: "claude-sonnet-4-5", Provider: "anthropic", ContextWindow: 200_000, Reasoning: true},
			}})
			h.press(tea.KeyDown, 0)
		}},
		{"thinking_collapsed", func(h *harness) {
			h.add(&textItem{kind: kindUser, text: "why does the build fail?"})
			thinkingAnswer(h, longThinking, "A missing import in `parser.go`.")
		}},
		{"thinking_expanded", func(h *harness) {
			h.add(&textItem{kind: kindUser, text: "why does the build fail?"})
			thinkingAnswer(h, longThinking, "A missing import in `parser.go`.")
			h.press('t', tea.ModAlt)
		}},
	}
	for _, sc := range scenes {
		for _, sz := range screenSizes {
			h := goldenHarness(t, sz[0], sz[1], false)
			sc.setup(h)
			checkScreen(t, sc.name+"_"+strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), ansi.Strip(h.m.View().Content), sz[0], sz[1])
		}
	}
}

func TestRetryShownInTheTranscript(t *testing.T) {
	h := newHarness(t, 100, 24)
	h.holdTurn()
	h.m.pump.event(agent.Event{Type: agent.EventMessageStart, Message: &session.AssistantMessage{}})
	h.m.pump.event(agent.Event{Type: agent.EventMessageEnd, Message: &session.AssistantMessage{StopReason: "error"}})
	h.m.pump.event(agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 10, DelayMs: 2000,
		ErrorMessage: "openai: HTTP 429 Too Many Requests: slow down"})
	h.update(flushMsg{})
	if s := h.screen(); !strings.Contains(s, "openai: HTTP 429 Too Many Requests: slow down · trying again in 2s (1 of 10; esc gives up)") {
		t.Errorf("screen:\n%s", s)
	}
}

func TestModelCommandWithAName(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	srv.SetModels(fakemodel.Model{ID: "alpha"}, fakemodel.Model{ID: "beta"})
	h := newHarness(t, 140, 24)
	ms := withModels(t, h, srv, "openai/alpha")
	h.run(h.sendLine("/model anthropic/claude-sonnet-4-5"))
	if s := h.screen(); !strings.Contains(s, "Model unchanged (openai/alpha): model anthropic/claude-sonnet-4-5: no Anthropic API key: set ANTHROPIC_API_KEY") {
		t.Errorf("unconfigured provider:\n%s", s)
	}
	// A name the server does not list is refused, with where to see them.
	cmd := h.sendLine("/model openai/gamma")
	if s := statusLine(h); !strings.Contains(s, "asking openai for its models…") {
		t.Errorf("status while asking: %q", s)
	}
	h.run(cmd)
	if s := h.screen(); ms.Spec() != "openai/alpha" ||
		!strings.Contains(s, "Model unchanged (openai/alpha): openai does not list openai/gamma · /model alone shows the models to choose from") {
		t.Errorf("model %s:\n%s", ms.Spec(), s)
	}
	h.run(h.sendLine("/model openai/Beta2"))
	if s := h.screen(); ms.Spec() != "openai/alpha" ||
		!strings.Contains(s, "openai does not list openai/Beta2 (like it: openai/beta) · /model alone shows the models to choose from") {
		t.Errorf("model %s:\n%s", ms.Spec(), s)
	}
	h.run(h.sendLine("/model openai/beta"))
	if s := h.screen(); ms.Spec() != "openai/beta" || !strings.Contains(s, "Model: openai/beta.") || strings.Contains(s, "not checked") {
		t.Errorf("model %s:\n%s", ms.Spec(), s)
	}
	// The model given at start is there whatever the list says.
	h.run(h.sendLine("/model openai/alpha"))
	if ms.Spec() != "openai/alpha" {
		t.Errorf("back to the first model: %s\n%s", ms.Spec(), h.screen())
	}
	if b := srv.Bodies(); len(b) != 0 {
		t.Errorf("/model reached the model: %v", b)
	}
}

// A server that gives no list cannot refuse a name: the switch goes ahead
// and says it was not checked.
func TestModelCommandWithoutAList(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(*fakemodel.Server)
	}{
		{"listing fails", func(s *fakemodel.Server) { s.SetModelsError(404, `{"error":{"message":"no such route"}}`) }},
		{"empty list", func(s *fakemodel.Server) { s.SetModels() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
			c.setup(srv)
			h := newHarness(t, 140, 24)
			ms := withModels(t, h, srv, "openai/alpha")
			h.run(h.sendLine("/model openai/gamma"))
			s := h.screen()
			if ms.Spec() != "openai/gamma" || !strings.Contains(s, "Model: openai/gamma.") ||
				!strings.Contains(s, "openai gives no list of its models: the name gamma was not checked.") {
				t.Errorf("model %s:\n%s", ms.Spec(), s)
			}
			if len(srv.ModelRequests()) == 0 {
				t.Error("the server was not asked for its models")
			}
		})
	}
}
