package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"agentsh/internal/fakemodel"
)

// A print-mode session that outgrows the window set in settings.json
// compacts by itself (--mode json shows it), and -c continues from the
// summary.
func TestAutoCompactionAndContinue(t *testing.T) {
	s := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(s.config, "agentsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(s.config, "agentsh", "settings.json"),
		`{"compaction":{"contextWindow":{"test":8000},"reserveTokens":1000,"keepRecentTokens":1500}}`)
	var mu sync.Mutex
	turns := 0
	// The script reads its own request from the server, which is made
	// after the script: handed over through an atomic.
	var self atomic.Pointer[sseServer]
	srv := newSSEServer(t, func(n int, w sseWriter) {
		msgs := fakemodel.OpenAIMessages(self.Load().requests()[n])
		if strings.Contains(msgs[0].Content, "working memory") {
			w.answer("CLI-SUMMARY of the turns")
			return
		}
		mu.Lock()
		k := turns
		turns++
		mu.Unlock()
		if k < 8 {
			w.bash(fmt.Sprintf("call_%d", k), fmt.Sprintf(`{"command":"for i in $(seq 1 400); do echo turn%d-line$i; done"}`, k))
			return
		}
		w.answer(fmt.Sprintf("answer %d", k))
	})
	self.Store(srv)
	r := s.runIn(nil, srv.env(), "--mode", "json", "-p", "print the turns", "--model", "openai/test")
	if r.code != 0 {
		t.Fatalf("first run: %v", r)
	}
	if !strings.Contains(r.stdout, `{"type":"auto_compaction_start","reason":"threshold","action":"context-full"}`) ||
		!strings.Contains(r.stdout, `"summary":"CLI-SUMMARY of the turns"`) {
		t.Errorf("no compaction events in:\n%.2000s", r.stdout)
	}
	r = s.runIn(nil, srv.env(), "-c", "-p", "and then?", "--model", "openai/test")
	want(t, r, "answer 9\n", "", 0)
	reqs := srv.requests()
	got := wire(reqs[len(reqs)-1])
	if len(got) < 3 || !strings.Contains(got[1], "CLI-SUMMARY of the turns") || got[len(got)-1] != "user: and then?" ||
		strings.Contains(strings.Join(got, "|"), "print the turns") {
		t.Errorf("-c request %q", got)
	}
}
