package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/config"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
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
	h.m.cfg.Models = agent.ModelsOf(p, name)
	h.m.layout()
}

// A model call that failed and is tried again shows one notice, the
// newest try's; the try that succeeds takes it away. A series
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
	h.m.session().SetRetry(agent.NewRetry(2, time.Millisecond, time.Millisecond))
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

// usageServer answers every prompt with a text and the usage of a
// 12,000-token prompt.
func usageServer(t *testing.T) *fakemodel.Server {
	return fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		w.Text("ok")
		w.FinishUsage("stop", 11_950, 50)
	})
}

// "% context left" shows for a model of the table of known windows on an
// 80-column line with a sandbox and a long folder, where it was cut off
// the end: the folder gives way first, then the token count,
// then the end of a long model name.
func TestContextLeftOnANarrowLine(t *testing.T) {
	srv := usageServer(t)
	h := newHarness(t, 100, 24)
	withServer(h, srv, "openai/gpt-4o")
	h.m.cfg.Sandbox = func() (string, bool) { return "sandbox: workspace-write", false }
	h.sendLine("hello")
	h.waitFor("the answer", h.agentIdle)
	if s := statusLine(h); !strings.Contains(s, "sandbox: workspace-write · openai/gpt-4o · 12.0k tokens · 91% context left") {
		t.Errorf("100 columns: %q", s)
	}
	h.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if s := statusLine(h); !strings.HasSuffix(strings.TrimRight(s, " "), " · sandbox: workspace-write · openai/gpt-4o · 91% context left") ||
		!strings.HasPrefix(s, "…") {
		t.Errorf("80 columns: %q", s)
	}

	h2 := newHarness(t, 80, 24)
	withServer(h2, usageServer(t), "openai/claude-sonnet-4-5-20250929")
	h2.m.cfg.Sandbox = h.m.cfg.Sandbox
	h2.sendLine("hello")
	h2.waitFor("the answer", h2.agentIdle)
	if s := statusLine(h2); !strings.Contains(s, "sandbox: workspace-write · openai/claude-sonn… · 94% context left") {
		t.Errorf("a long model name: %q", s)
	}
}

// A model the table does not know shows "% context left" once its
// provider's list gave its window.
func TestContextLeftFromTheProviderList(t *testing.T) {
	srv := usageServer(t)
	srv.SetModels(fakemodel.Model{ID: "fake-model", ContextWindow: 100_000})
	h := newHarness(t, 120, 24)
	ms := withModels(t, h, srv, "openai/fake-model")
	h.sendLine("hello")
	h.waitFor("the answer", h.agentIdle)
	if s := statusLine(h); !strings.Contains(s, "openai/fake-model · 12.0k tokens") || strings.Contains(s, "context left") {
		t.Errorf("before the list: %q", s)
	}
	ms.Available(context.Background()) // what /model asks
	h.sendLine("again")
	h.waitFor("the answer", h.agentIdle)
	if s := statusLine(h); !strings.Contains(s, "openai/fake-model · 12.0k tokens · 88% context left") {
		t.Errorf("after the list: %q", s)
	}
}

// A settings file saved broken does not stop the `!` commands (the `!vim`
// that would fix it among them): they run with the last settings that
// loaded, after a warning naming the file and the error; once the file is
// fixed the warning is not given again.
func TestBangRunsOnBrokenSettings(t *testing.T) {
	h := newHarness(t, 120, 30)
	sess := h.m.session()
	global := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "agentsh", "settings.json")
	project := config.ProjectSettingsPath(sess.Cwd())
	for _, f := range []string{global, project} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(global, `{"shell": {"env": {"GREETING": "hello from the settings"}}}`)
	write(project, `{}`)
	live, err := config.WatchSettingsFrom(global, project)
	if err != nil {
		t.Fatal(err)
	}
	sess.FollowSettings(live)

	write(project, "{\n  \"shell\": {\"env\": \n")
	h.bang(`echo "$GREETING"`)
	h.waitFor("the command's end", h.bangIdle)
	b := lastBang(t, sess)
	if b.ExitCode == nil || *b.ExitCode != 0 || b.Output != "hello from the settings\n" {
		t.Errorf("the ! command on broken settings: %+v %q", b.ExitCode, b.Output)
	}
	s := strings.Join(strings.Fields(h.screen()), " ")
	want := "settings: " + project + ":3:1: "
	if !strings.Contains(s, want) || !strings.Contains(s, "`!` commands run with the last settings that loaded until the file is fixed") {
		t.Errorf("no warning naming %s:\n%s", want, h.screen())
	}

	write(project, `{}`)
	h.bang("echo fixed")
	h.waitFor("the command's end", h.bangIdle)
	if b := lastBang(t, sess); b.Output != "fixed\n" {
		t.Errorf("after the fix: %q", b.Output)
	}
	if n := strings.Count(strings.Join(strings.Fields(h.screen()), " "), "commands run with the last settings"); n != 1 {
		t.Errorf("%d warnings after the fix, want the first one only:\n%s", n, h.screen())
	}
}

// A `!` command's long line does not eat the preview: the lines before it
// stay on screen, the long one shows three rows ending in "…".
func TestBangPreviewKeepsLinesAroundALongOne(t *testing.T) {
	h := newHarness(t, 80, 40)
	h.bang(`seq -f 'line %g' 1 5; printf 'x%.0s' $(seq 2000); echo; echo end`)
	h.waitFor("the command's end", h.bangIdle)
	s := h.screen()
	row := strings.Repeat("x", 80)
	if !strings.Contains(s, "line 1\nline 2\nline 3\nline 4\nline 5\n"+row+"\n"+row+"\n"+row[:79]+"…\nend\n") {
		t.Errorf("the preview:\n%s", s)
	}
}

// A program that used the alternate screen leaves a one-line block, its
// command and how it ended; its last screen is one ctrl+o away.
// A plain command's block is as before.
func TestBangFullScreenBlockIsOneLine(t *testing.T) {
	h := newHarness(t, 100, 40)
	sess := withTerminalShell(h)
	h.bang(`printf '\033[?1049hthe last screen\n~\n~\n~\n'; printf '\033[?1049l'`)
	h.waitFor("the command's end", func() bool { return h.bangIdle() && layerOn[*overlay](h) == nil })
	if b := lastBang(t, sess); b.Output != "the last screen\n~\n~\n~\n" {
		t.Errorf("the recorded result is not the last screen: %q", b.Output)
	}
	s := h.screen()
	if !strings.Contains(s, `· exited 0 (ctrl+o to expand)`) || strings.Contains(s, "\nthe last screen\n") || strings.Contains(s, "\n~\n") {
		t.Errorf("the collapsed block:\n%s", s)
	}
	h.press('o', tea.ModCtrl)
	if s := h.screen(); !strings.Contains(s, "\nthe last screen\n~\n~\n~\n") {
		t.Errorf("expanded:\n%s", s)
	}
	h.bang("echo plain")
	h.waitFor("the command's end", h.bangIdle)
	if s := h.screen(); !strings.Contains(s, "$ echo plain\nplain\n") {
		t.Errorf("a plain command's block:\n%s", s)
	}
}

// A model call that gets no answer shows how long it has waited and the
// request timeout that will end it, ticking with the clock; streaming
// text shows no count (a bare `working…` for ever told the user nothing).
func TestWorkingShowsTheWaitAndTheTimeout(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		<-w.Context().Done() // a hung server
	})
	h := newHarness(t, 120, 24)
	withServer(h, srv, "openai/model-a")
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h.m.tr.clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
		h.update(tickMsg{})
	}
	h.sendLine("hello")
	h.waitFor("the request", func() bool { return h.m.waiting.on && len(srv.Requests()) == 1 })
	if s := statusLine(h); !strings.HasSuffix(s, " working… (esc to abort)") {
		t.Errorf("at the start: %q", s)
	}
	advance(42 * time.Second)
	if s := statusLine(h); !strings.HasSuffix(s, " working… 42s (timeout 10m; esc to abort)") {
		t.Errorf("after 42s: %q", s)
	}
	advance(65 * time.Second)
	if s := statusLine(h); !strings.HasSuffix(s, " working… 1m47s (timeout 10m; esc to abort)") {
		t.Errorf("after 1m47s: %q", s)
	}
	h.press(tea.KeyEscape, 0)
	h.waitFor("the abort", h.agentIdle)
}
