package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/config"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

// compactModel answers summary requests with "TUI-SUMMARY" once release
// is closed, and every other request with "answer".
func compactModel(t *testing.T, h *harness, release chan struct{}) *fakemodel.Server {
	t.Helper()
	var self atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		msgs := fakemodel.OpenAIMessages(self.Load().Requests()[n].Body)
		if len(msgs) > 0 && strings.Contains(msgs[0].Content, "working memory") {
			select {
			case <-release:
			case <-w.Context().Done():
				return
			}
			w.Answer("TUI-SUMMARY")
			return
		}
		w.Answer("answer")
	})
	self.Store(srv)
	zero := 0
	h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero}), "test")
	dir := t.TempDir()
	global := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(global, []byte(`{"compaction":{"keepRecentTokens":500}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := config.WatchSettingsFrom(global, filepath.Join(dir, "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	h.m.cfg.Session.FollowSettings(live)
	return srv
}

// /compact summarizes the older turns: the status says so while it runs,
// a marker line with the token counts follows, the next prompt carries the
// summary, and the resumed session shows where it was compacted.
func TestSlashCompact(t *testing.T) {
	h := newHarnessStore(t, 120, 40, true)
	release := make(chan struct{})
	srv := compactModel(t, h, release)

	h.sendLine("/compact")
	h.waitFor("the refusal", h.agentIdle)
	if !strings.Contains(h.screen(), "Nothing to compact (session too small).") {
		t.Errorf("no refusal:\n%s", h.screen())
	}
	for _, line := range []string{"!seq 1 1500", "!seq 2000 3500", "!seq 4000 5500"} {
		h.sendLine(line)
		h.waitFor(line, h.bangIdle)
	}
	h.sendLine("/compact the numbers")
	if !h.m.runner.Busy() || !strings.Contains(h.statusLine(), "compacting the conversation…") {
		t.Errorf("status while compacting: %q", h.statusLine())
	}
	// A prompt typed meanwhile waits for the compaction.
	h.sendLine("what next?")
	close(release)
	h.waitFor("the compaction and the queued prompt", func() bool { return h.agentIdle() && len(srv.Requests()) == 2 })
	scr := h.screen()
	if !regexp.MustCompile(`── compacted: the model now reads a summary of the conversation above \([0-9.]+k → [0-9.]+k? tokens\) ──`).MatchString(scr) {
		t.Errorf("no compaction marker:\n%s", scr)
	}
	reqs := srv.Requests()
	sum := fakemodel.OpenAIMessages(reqs[0].Body)
	if !strings.Contains(sum[1].Content, "focus on: the numbers") || !strings.Contains(sum[1].Content, "\n1\n2\n3\n") {
		t.Errorf("summary request %.300s", sum[1].Content)
	}
	next := fakemodel.OpenAIMessages(reqs[1].Body)
	if !strings.Contains(next[1].Content, "TUI-SUMMARY") || strings.Contains(next[1].Content, "\n1\n2\n3\n") ||
		next[len(next)-1].Content != "what next?" {
		t.Errorf("the prompt after /compact sends %v", next)
	}

	m := reopen(t, h)
	if it, ok := m.tr.items[1].(*textItem); !ok || !strings.HasPrefix(it.text, "── compacted earlier: the model reads a summary") {
		t.Errorf("resumed transcript starts with %#v", m.tr.items[1])
	}
}

// An automatic compaction during a turn: the status says so while it
// runs and the marker follows; a failed one is a warning.
func TestAutoCompactionShown(t *testing.T) {
	h := newHarness(t, 120, 30)
	end := h.holdTurn()
	h.m.pump.event(agent.Event{Type: agent.EventAutoCompactionStart, Compaction: &agent.AutoCompaction{Reason: agent.CompactReasonThreshold}})
	h.update(flushMsg{})
	if !strings.Contains(h.statusLine(), "compacting the conversation…") {
		t.Errorf("status during an automatic compaction: %q", h.statusLine())
	}
	h.m.pump.event(agent.Event{Type: agent.EventAutoCompactionEnd, Compaction: &agent.AutoCompaction{
		Result: &agent.CompactionResult{Summary: "s", TokensBefore: 151_000, TokensAfter: 12_345}}})
	h.update(flushMsg{})
	if s := h.statusLine(); strings.Contains(s, "compacting") {
		t.Errorf("status after it: %q", s)
	}
	if !strings.Contains(h.screen(), "── compacted: the model now reads a summary of the conversation above (151.0k → 12.3k tokens) ──") {
		t.Errorf("no marker:\n%s", h.screen())
	}
	h.m.pump.event(agent.Event{Type: agent.EventAutoCompactionStart, Compaction: &agent.AutoCompaction{Reason: agent.CompactReasonOverflow}})
	h.m.pump.event(agent.Event{Type: agent.EventAutoCompactionEnd, Compaction: &agent.AutoCompaction{ErrorMessage: "compaction: summarize: boom"}})
	h.update(flushMsg{})
	if !strings.Contains(h.screen(), "Automatic compaction failed: compaction: summarize: boom") {
		t.Errorf("no failure notice:\n%s", h.screen())
	}
	end()
}
