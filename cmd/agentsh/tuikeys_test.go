package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/proctest"
)

// sleepPIDs are the marked processes running sleep.
func (tt *tmuxTUI) sleepPIDs() []int {
	var out []int
	for _, pid := range proctest.Marked(tt.mark) {
		if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(cmd), "sleep\x00") {
			out = append(out, pid)
		}
	}
	return out
}

// ctrl+c interrupts a running `!` command the way esc does and agentsh
// keeps running; on the idle editor, ctrl+c twice quits.
func TestTUICtrlCInterruptsThenQuits(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)
	tt.typeLine("!sleep 300")
	tt.waitText("· esc to cancel")
	tt.waitScreen("sleep to start", func(string) bool { return len(tt.sleepPIDs()) > 0 })
	tt.keys("C-c")
	scr := tt.waitText("Command cancelled")
	if strings.Contains(scr, "again to quit") {
		t.Errorf("interrupting armed quitting:\n%s", scr)
	}
	tt.waitScreen("sleep to go", func(string) bool { return len(tt.sleepPIDs()) == 0 })
	if tt.exited() {
		t.Fatal("ctrl+c during a command quit agentsh")
	}
	// Still alive and answering.
	tt.typeLine("!echo still-here")
	tt.waitText("$ echo still-here")
	tt.waitScreen("the echo to end", func(s string) bool { return !strings.Contains(s, "Running…") })
	tt.keys("C-c")
	tt.waitText("press ctrl+c again to quit")
	tt.keys("C-c")
	tt.waitExit()
	tt.assertNoProcesses()
}

// A message sent while the model's bash call runs is queued, shown above
// the editor, and sent as the next user message when the turn ends.
func TestTUIQueuedMessageSentAfterTurn(t *testing.T) {
	s := newSandbox(t)
	gate := filepath.Join(s.work, "gate")
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", fmt.Sprintf(`{"command":"while [ ! -e %s ]; do sleep 0.05; done; echo gate-open"}`, gate))
		case 1:
			w.answer("First done.")
		default:
			w.answer("Second done.")
		}
	})
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.waitText("openai/test-model")
	tt.typeLine("first message")
	tt.waitText("running tool…")
	tt.typeLine("second message")
	scr := tt.waitText("queued: second message · esc takes it back")
	if strings.Contains(scr, "still working") {
		t.Errorf("a refusal in the transcript:\n%s", scr)
	}
	writeFile(t, gate, "")
	tt.waitText("Second done.")
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(reqs))
	}
	for i, want := range []string{"user: first message", "user: first message", "user: second message"} {
		msgs := wire(reqs[i])
		var lastUser string
		for _, m := range msgs {
			if strings.HasPrefix(m, "user: ") {
				lastUser = m
			}
		}
		if lastUser != want {
			t.Errorf("request %d: last user message %q, want %q (%q)", i, lastUser, want, msgs)
		}
	}
	if last := wire(reqs[2]); len(last) == 0 || last[len(last)-1] != "user: second message" {
		t.Errorf("the queued message is not the next message after the turn: %q", last)
	}
	scr = tt.screen()
	if strings.Contains(scr, "queued:") {
		t.Errorf("the queue is still shown:\n%s", scr)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// A pasted line that ends in a newline (as a copied line does) leaves the
// editor one line high with the cursor after the text.
func TestTUIPasteEndingInNewline(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)
	tt.tmux("set-buffer", "!echo pasted-line\n")
	tt.tmux("paste-buffer", "-p") // bracketed, as a terminal pastes
	scr := tt.waitText("│ !echo pasted-line")
	lines := strings.Split(scr, "\n")
	for i, l := range lines {
		if strings.Contains(l, "│ !echo pasted-line") {
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "╰") {
				t.Fatalf("the editor has a line under the paste:\n%s", scr)
			}
		}
	}
	tt.tmux("send-keys", "-l", " more")
	tt.tmux("send-keys", "Enter")
	tt.waitText("$ echo pasted-line more")
	tt.bangDone("!echo pasted-line more") // ctrl+d during a command asks first
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// A bracketed paste keeps its tabs in what the model gets, and a long one
// shows as one marker in the editor while the whole text is sent.
func TestTUIPasteKeepsTabsAndCollapses(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer(fmt.Sprintf("answer-%d", n)) })
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test")...)
	lines := []string{"name\tsize"}
	for i := 2; i <= 300; i++ {
		lines = append(lines, fmt.Sprintf("file%d\t%d", i, i*10))
	}
	paste := strings.Join(lines, "\n")
	tt.tmux("set-buffer", paste+"\n")
	tt.tmux("paste-buffer", "-p")
	tt.waitText("│ [pasted 300 lines]")
	tt.tmux("send-keys", "-l", " sum the sizes")
	tt.waitText("│ [pasted 300 lines] sum the sizes")
	tt.tmux("send-keys", "Enter")
	tt.waitText("answer-0")
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := wire(reqs[0])
	if last := msgs[len(msgs)-1]; last != "user: "+paste+" sum the sizes" {
		t.Errorf("the model got %.120q…", last)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// ctrl+d while the model's command runs asks first; y ends agentsh and the
// command with it.
func TestTUICtrlDMidTurnAsks(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			w.bash("call_1", `{"command":"sleep 300"}`)
			return
		}
		w.answer("done")
	})
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test")...)
	tt.typeLine("wait a while")
	tt.waitScreen("sleep to start", func(string) bool { return len(tt.sleepPIDs()) > 0 })
	tt.keys("C-d")
	tt.waitText("the agent is working — quit and stop it? y/n")
	tt.keys("n")
	tt.waitScreen("the question to go", func(s string) bool { return !strings.Contains(s, "quit and stop it?") })
	if tt.exited() || len(tt.sleepPIDs()) == 0 {
		t.Fatalf("n ended something; screen:\n%s", tt.screen())
	}
	tt.keys("C-d")
	tt.waitText("the agent is working — quit and stop it? y/n")
	tt.keys("y")
	tt.waitExit()
	tt.assertNoProcesses()
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d model requests: the turn went on", n)
	}
}
