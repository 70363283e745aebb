package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/fakemodel"
)

// TestTUISlashCommands drives the slash commands in the real binary: the
// menu on /, /he + enter, an unknown command, /copy through the terminal
// (tmux keeps what OSC 52 sets), /model (a name the server does not list
// is refused), /new and /quit. No command reaches the model.
func TestTUISlashCommands(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer(fmt.Sprintf("answer-%d", n)) })
	srv.SetModels(fakemodel.Model{ID: "model-a"}, fakemodel.Model{ID: "model-b"}) // /model checks names against it
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/model-a")...)
	tt.tmux("set-option", "-g", "set-clipboard", "on")

	tt.keys("-l", "/")
	scr := tt.waitText("esc closes")
	for _, want := range []string{"/help", "/new", "/model [provider/name]", "/jobs", "/copy", "/status", "/clear", "/exit", "/quit"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the menu lacks %s:\n%s", want, scr)
		}
	}
	tt.typeLine("he")
	tt.waitText("Commands (typed in the editor")

	tt.typeLine("/nope")
	tt.waitText("Unknown command /nope — /help lists them")

	tt.typeLine("hello")
	tt.waitText("answer-0")
	tt.typeLine("/copy")
	tt.waitText("Copied the last answer (1 line)")
	tt.waitScreen("the clipboard", func(string) bool {
		out, _ := execTmux(tt, "show-buffer")
		return out == "answer-0"
	})

	tt.typeLine("/model openai/model-c")
	tt.waitText("openai does not list openai/model-c")
	tt.typeLine("/model openai/model-b")
	tt.waitText("Model: openai/model-b.")
	tt.typeLine("/new")
	tt.waitText("New session ")
	tt.typeLine("again")
	tt.waitText("answer-1")

	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (commands reached the model?)", len(reqs))
	}
	if reqs[0]["model"] != "model-a" || reqs[1]["model"] != "model-b" {
		t.Errorf("models %v, %v; want model-a, model-b", reqs[0]["model"], reqs[1]["model"])
	}
	second, _ := json.Marshal(reqs[1]["messages"])
	if strings.Contains(string(second), "hello") || strings.Contains(string(second), "answer-0") {
		t.Errorf("the new session's request carries the old conversation: %s", second)
	}
	// /new wrote a second session file.
	files, _ := filepath.Glob(filepath.Join(s.data, "agentsh", "sessions", "*", "*.jsonl"))
	if len(files) != 2 {
		entries, _ := os.ReadDir(filepath.Join(s.data, "agentsh"))
		t.Errorf("session files %v (%v), want 2", files, entries)
	}

	tt.typeLine("/quit")
	tt.waitExit()
	tt.assertNoProcesses()
}

// execTmux runs a tmux command on tt's server; an error (no buffer yet)
// is not the test's end.
func execTmux(tt *tmuxTUI, args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", tt.sock}, args...)...).Output()
	return string(out), err
}
