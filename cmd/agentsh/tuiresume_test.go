package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// /resume in the running TUI: the picker lists the directory's sessions
// with the one on screen marked; choosing an older one redraws its
// conversation, ends the left session's shell (and what it left running)
// at once, runs the ! commands and the model's bash calls in the resumed
// session's state, gives the model its history, and the exit hint names it.
// /new ends the session it leaves at once too.
func TestTUIResumeCommandSwitchesSessions(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 2 {
			w.bash("call_2", `{"command":"pwd; echo \"mark=$RESUME_MARK\""}`)
			return
		}
		w.answer(fmt.Sprintf("answer %d", n))
	})
	s := newSandbox(t)
	env := append(srv.env(), "AGENTSH_MODEL=openai/test-model")
	older := twoSessions(t, s, env)

	tt := startTUIKept(t, s, nil, env...)
	waitGone := func(what, tag string) {
		t.Helper()
		if ok, state := testkit.Poll(0, func() (bool, string) {
			left := proctest.WithArg(tag)
			return len(left) == 0, fmt.Sprint(left)
		}); !ok {
			t.Errorf("%s: the left session's background process still runs: %s", what, state)
		}
	}
	waitFiles := func(n int) []string {
		t.Helper()
		var files []string
		testkit.Poll(0, func() (bool, string) {
			files = s.sessionFiles()
			return len(files) >= n, ""
		})
		if len(files) != n {
			t.Fatalf("session files %q, want %d", files, n)
		}
		return files
	}
	tag0 := proctest.SleepTag()
	tt.typeLine("!sleep " + tag0 + " >/dev/null 2>&1 &")
	waitFiles(3)
	// bash forks the background sleep before the command ends, but its
	// exec may come a moment later on a loaded machine.
	proctest.WaitWithArg(t, tag0, 1)
	tt.typeLine("/new")
	tt.waitText("New session ")
	waitGone("/new", tag0)

	// The new session's shell moves away, exports a mark and leaves a
	// process running.
	tag := proctest.SleepTag()
	tt.typeLine(`!cd / && export RESUME_MARK=first; echo "shell=$$"; sleep ` + tag + ` >/dev/null 2>&1 &`)
	pidRE := regexp.MustCompile(`\nshell=(\d+)\n`)
	shellPid := pidRE.FindStringSubmatch(tt.waitScreen("the shell's pid", pidRE.MatchString))[1]
	if len(proctest.WithArg(tag)) == 0 {
		t.Fatal("the background sleep is not running")
	}
	files := waitFiles(4) // its end is saved: the session has a file now
	first, second := sessionID(files[2]), sessionID(files[3])

	tt.typeLine("/resume")
	tt.waitText("Resume a session")
	scr := tt.waitText("the older task")
	cur, newer, old := strings.Index(scr, "(current) !cd /"), strings.Index(scr, "the newer task"), strings.Index(scr, "the older task")
	if cur < 0 || newer < cur || old < newer || !strings.Contains(scr, "› ") {
		t.Fatalf("picker (newest first, the current session marked):\n%s", scr)
	}
	tt.keys("Down", "Down") // the selection starts on the session before the current one
	tt.keys("Enter")
	scr = tt.waitText("resumed " + older + " · 2 messages")
	if !strings.Contains(scr, "the older task") || !strings.Contains(scr, "answer 0") ||
		strings.Contains(scr, "the newer task") || strings.Contains(scr, "RESUME_MARK") {
		t.Errorf("resumed screen:\n%s", scr)
	}

	// The left session's shell and its background sleep end now, not at
	// exit.
	waitGone("/resume", tag)
	if _, err := os.Stat("/proc/" + shellPid); err == nil {
		t.Errorf("the left session's shell %s still runs", shellPid)
	}

	// ! commands and the model's calls run in the resumed session's state.
	tt.typeLine(`!pwd; echo "mark=$RESUME_MARK"`)
	tt.waitText("\n" + s.work + "\nmark=\n")
	tt.typeLine("what about the older one?")
	tt.waitText("answer 3")
	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	got := strings.Join(wire(reqs[2]), "|")
	if !strings.Contains(got, "user: the older task|assistant: answer 0|") || !strings.HasSuffix(got, "user: what about the older one?") ||
		strings.Contains(got, "the newer task") || strings.Contains(got, "RESUME_MARK=first") {
		t.Errorf("the request after /resume %q lacks the older session's history (or has another's)", got)
	}
	if res := lastToolResult(reqs[3]); !strings.HasPrefix(res, s.work+"\nmark=\n") {
		t.Errorf("the model's bash call ran elsewhere: %q", res)
	}

	tt.keys("C-d")
	scr, code := tt.waitExitStatus()
	hint := "Session " + older + " saved. Resume it with: agentsh -r " + older
	if code != 0 || !strings.Contains(scr, hint) || strings.Contains(scr, first) || strings.Contains(scr, second) {
		t.Errorf("exit %d; want %q and nothing of %s or %s:\n%s", code, hint, first, second, scr)
	}
	if files := s.sessionFiles(); len(files) != 4 {
		t.Errorf("session files %q, want 4", files)
	}
}
