package main

// End-to-end tests of sessions from the command line: no file before the
// first message, --continue with nothing to continue, --no-session's
// temporary artifacts, `agentsh artifact` finding a session's artifacts,
// --version, a prompt on the command line, resuming in the TUI and the
// resume hint printed at exit.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// sessionID is the id in a session file's name.
func sessionID(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return name[strings.LastIndexByte(name, '_')+1:]
}

// twoSessions makes two saved sessions with -p ("the older task", then "the
// newer task"; the model answers "answer N") and returns the older's id.
func twoSessions(t *testing.T, s *sandbox, env []string) string {
	t.Helper()
	want(t, s.runIn(nil, env, "-p", "the older task"), "answer 0\n", "", 0)
	want(t, s.runIn(nil, env, "-p", "the newer task"), "answer 1\n", "", 0)
	files := s.sessionFiles()
	if len(files) != 2 {
		t.Fatalf("session files %q", files)
	}
	return sessionID(files[0]) // names start with the creation time
}

// tempArtifactFolders lists the --no-session artifact folders in dir.
func tempArtifactFolders(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "agentsh-artifacts-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestContinueWithNothingToContinue(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer(fmt.Sprintf("answer %d", n)) })
	// A header alone, as every start of an older agentsh left: nothing to
	// continue either.
	dir := filepath.Join(s.data, "agentsh", "sessions", encodedCwd(s.work))
	writeFile(t, filepath.Join(dir, "2026-01-01T00-00-00-000Z_00000000000000aa.jsonl"),
		`{"type":"session","version":1,"id":"00000000000000aa","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`+"\n")

	r := s.runIn(nil, srv.env(), "-c", "-p", "first", "--model", "openai/test")
	want(t, r, "answer 0\n", "agentsh: No session to continue in "+s.work+": starting a new one.\n", 0)
	files := s.sessionFiles()
	if len(files) != 2 {
		t.Fatalf("session files %q, want the old header and the new session", files)
	}
	// Now there is one: -c continues it, silently.
	r = s.runIn(nil, srv.env(), "-c", "-p", "second", "--model", "openai/test")
	want(t, r, "answer 1\n", "", 0)
	if got := strings.Join(wire(srv.requests()[1]), "|"); !strings.HasSuffix(got, "user: first|assistant: answer 0|user: second") {
		t.Errorf("-c request %q lacks the first session's history", got)
	}
}

// RPC mode writes no session file until something is said.
func TestRPCWritesNoSessionFileUntilAMessage(t *testing.T) {
	s := newSandbox(t)
	r := s.runIn(strings.NewReader(`{"id":"1","type":"get_state"}`+"\n"), nil, "--mode", "rpc")
	if r.code != 0 || !strings.Contains(r.stdout, `"sessionFile"`) {
		t.Fatalf("%v", r)
	}
	if files := s.sessionFiles(); len(files) != 0 {
		t.Errorf("RPC without a message left session files %q", files)
	}
	r = s.runIn(strings.NewReader(`{"id":"1","type":"bash","command":"echo hi"}`+"\n"), nil, "--mode", "rpc")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	if files := s.sessionFiles(); len(files) != 1 {
		t.Errorf("after a bash command: session files %q, want one", files)
	}
}

// --no-session keeps truncated output in a temporary folder while agentsh
// runs: the model gets the artifact:// link and can read it; the folder is
// gone at exit, and one left by a killed agentsh is removed at the next
// start.
func TestNoSessionKeepsArtifactsWhileRunning(t *testing.T) {
	s := newSandbox(t)
	_, tmp, env := privateDirs(t)
	stale := filepath.Join(tmp, "agentsh-artifacts-999999999-1-abc")
	writeFile(t, filepath.Join(stale, "0.bash.log"), "old\n")
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", `{"command":"seq 1 200000"}`)
		case 1:
			w.tool("call_1", "read", `{"path":"artifact://0","offset":199999}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, append(env, srv.env()...), "--no-session", "-p", "count", "--model", "openai/test")
	want(t, r, "done\n", "", 0)
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !toolNoticeRE.MatchString(got) {
		t.Errorf("the model got no artifact link: …%q", got[max(0, len(got)-200):])
	}
	if got := lastToolResult(reqs[2]); !strings.Contains(got, "199999") || !strings.Contains(got, "200000") {
		t.Errorf("reading artifact://0 gave %q", got)
	}
	if left := tempArtifactFolders(t, tmp); len(left) != 0 {
		t.Errorf("artifact folders left after exit: %q", left)
	}
	if files := s.sessionFiles(); len(files) != 0 {
		t.Errorf("--no-session wrote %q", files)
	}
}

// `agentsh artifact N` reads the artifact://N just shown: of the session
// (or `agentsh exec`) of this directory that kept one last; --session picks
// a session.
func TestArtifactCommandReadsSessionArtifacts(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", `{"command":"seq 1 200000"}`)
		case 1:
			w.bash("call_1", `{"command":"seq 1 300000"}`)
		default:
			w.answer("done")
		}
	})
	if r := s.run("exec", "--", "seq 1 100000"); r.code != 0 || !strings.HasSuffix(r.stdout, "Full: artifact://0]\n") {
		t.Fatalf("exec: %v", r)
	}
	want(t, s.runIn(nil, srv.env(), "-p", "count", "--model", "openai/test"), "done\n", "", 0)
	files := s.sessionFiles()
	if len(files) != 1 {
		t.Fatalf("session files %q", files)
	}
	id := sessionID(files[0])
	if got := lastToolResult(srv.requests()[2]); !strings.HasSuffix(got, "Full: artifact://1]") {
		t.Fatalf("the second call's result: …%q", got[max(0, len(got)-100):])
	}

	checkOut := func(r result, n int) {
		t.Helper()
		if r.code != 0 || r.stderr != "" || sha([]byte(r.stdout)) != sha(seqOutput(n)) {
			t.Errorf("want the %d lines of seq 1 %d; got exit %d, %d bytes, stderr %q", n, n, r.code, len(r.stdout), r.stderr)
		}
	}
	// The session wrote last: its numbering.
	checkOut(s.run("artifact", "1"), 300000)
	checkOut(s.run("artifact", "artifact://0"), 200000)
	want(t, s.run("artifact", "7"), "",
		"agentsh: Artifact 7 not found. Available: 0, 1 (read in session "+id+", the last to keep one here; --session ID reads another)\n", 1)

	// Then exec: its numbering, until the session writes again.
	if r := s.run("exec", "--", "seq 1 100000"); r.code != 0 || !strings.HasSuffix(r.stdout, "Full: artifact://1]\n") {
		t.Fatalf("second exec: %v", r)
	}
	checkOut(s.run("artifact", "1"), 100000)
	checkOut(s.run("artifact", "--session", id, "1"), 300000)
	checkOut(s.run("artifact", "--session="+id[:6], "0"), 200000)
	checkOut(s.run("artifact", "0", "--session", files[0]), 200000)
	r := s.run("artifact", "--session", "nosuch", "0")
	if r.code != 1 || !strings.Contains(r.stderr, `no session "nosuch"`) {
		t.Errorf("unknown session: %v", r)
	}
	for _, args := range [][]string{{"artifact", "--session"}, {"artifact", "1", "2"}, {"artifact", "--session", id}} {
		if r := s.run(args...); r.code != 2 || !strings.Contains(r.stderr, "usage: agentsh artifact [--session ID|PATH] N") {
			t.Errorf("%q: %v", args, r)
		}
	}
}

// wantVersion is what --version of bin must print: base, then the commit
// and whether the tree was modified when Go recorded them in the binary.
func wantVersion(t *testing.T, bin, base string) string {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	// A build from a clean checkout with VCS stamping names the main module
	// by a pseudo-version that already holds the revision.
	if base == "devel" {
		if m := regexp.MustCompile(`(?m)^\s*mod\s+agentsh\s+(\S+)`).FindSubmatch(out); m != nil && string(m[1]) != "(devel)" {
			base = string(m[1])
		}
	}
	rev := regexp.MustCompile(`(?m)^\s*build\s+vcs\.revision=([0-9a-f]+)$`).FindSubmatch(out)
	if rev == nil || strings.Contains(base, string(rev[1][:12])) {
		return "agentsh " + base + "\n"
	}
	v := "agentsh " + base + " (" + string(rev[1][:12])
	if strings.Contains(string(out), "vcs.modified=true") {
		v += ", modified"
	}
	return v + ")\n"
}

func TestVersion(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	want(t, s.run("--version"), wantVersion(t, agentshBin, "devel"), "", 0)

	// A release build names its version.
	bin := filepath.Join(t.TempDir(), "agentsh")
	build := exec.Command("go", "build", "-ldflags=-X main.buildVersion=v1.2.3", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if w := wantVersion(t, bin, "v1.2.3"); string(out) != w {
		t.Errorf("release build: %q, want %q", out, w)
	}
}

var exitedRE = regexp.MustCompile(`\[agentsh exited with status (\d+)\]`)

// waitExitStatus waits until agentsh started by startTUIKept has ended and
// returns the pane with its history (what agentsh printed after leaving the
// screen) and the exit status.
func (tt *tmuxTUI) waitExitStatus() (string, int) {
	tt.t.Helper()
	var scr string
	var m []string
	testkit.EventuallyEvery(tt.t, 0, tmuxPoll, "agentsh to exit", func() (bool, string) {
		scr = tt.tmux("capture-pane", "-p", "-S", "-")
		m = exitedRE.FindStringSubmatch(scr)
		return m != nil, fmt.Sprintf("processes %v; screen:\n%s", proctest.Marked(tt.mark), scr)
	})
	code, _ := strconv.Atoi(m[1])
	return scr, code
}

// A TUI in which nothing was said leaves no session; -c then says there is
// nothing to continue; the status line says what is missing when a key is
// set but no model chosen.
func TestTUIEmptySessionLeavesNothing(t *testing.T) {
	s := newSandbox(t)
	tt := startTUIKept(t, s, nil, "OPENAI_API_KEY=sk-test")
	tt.waitText("no model chosen · agentsh --model")
	tt.keys("C-d")
	if scr, code := tt.waitExitStatus(); code != 0 || strings.Contains(scr, "Resume it with") {
		t.Errorf("exit %d, a resume hint for an empty session:\n%s", code, scr)
	}
	if files := s.sessionFiles(); len(files) != 0 {
		t.Fatalf("an empty TUI session left %q", files)
	}
	tt = startTUIArgs(t, s, []string{"-c"})
	notice := "No session to continue in " + s.work + ": starting a new one."
	tt.waitScreen(notice, func(scr string) bool { return strings.Contains(strings.ReplaceAll(scr, "\n", " "), notice) })
	tt.keys("C-d")
	tt.waitExit()
	if files := s.sessionFiles(); len(files) != 0 {
		t.Fatalf("-c with nothing to continue left %q", files)
	}
}

// `agentsh "prompt"` sends the prompt; at exit the session id and the
// command that resumes it are printed; `agentsh -c` shows the conversation
// again, and the model gets its history.
func TestTUIPromptArgumentResumeHintAndContinue(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", `{"command":"seq 1 50"}`)
		case 1:
			w.answer("Counted to fifty.")
		default:
			w.answer("Still fifty.")
		}
	})
	s := newSandbox(t)
	env := append(srv.env(), "AGENTSH_MODEL=openai/test-model")
	tt := startTUIKept(t, s, []string{"count to fifty"}, env...)
	tt.waitText("Counted to fifty.")
	tt.typeLine("!echo bang-after")
	// Ended, not only printed: ctrl+d during a command asks first.
	tt.waitScreen("!echo bang-after to end", func(s string) bool {
		return strings.Contains(s, "$ echo bang-after\nbang-after\n") && !strings.Contains(s, "to cancel") && !strings.Contains(s, "Running…")
	})
	tt.keys("C-d")
	scr, code := tt.waitExitStatus()
	if code != 0 {
		t.Errorf("exit status %d", code)
	}
	files := s.sessionFiles()
	if len(files) != 1 {
		t.Fatalf("session files %q", files)
	}
	id := sessionID(files[0])
	if hint := "Session " + id + " saved. Resume it with: agentsh -r " + id; !strings.Contains(scr, hint) {
		t.Errorf("no %q after exit:\n%s", hint, scr)
	}
	if got := strings.Join(wire(srv.requests()[0]), "|"); !strings.HasSuffix(got, "user: count to fifty") {
		t.Errorf("the first request %q is not the command line's prompt", got)
	}

	tt = startTUIArgs(t, s, []string{"-c"}, env...)
	scr = tt.waitText("resumed " + id + " · 5 messages")
	for _, w := range []string{"count to fifty", "$ seq 1 50", "… (40 earlier lines, showing 10 of 50) (ctrl+o to expand)", "Counted to fifty.", "$ echo bang-after", "bang-after\n"} {
		if !strings.Contains(scr, w) {
			t.Errorf("resumed screen lacks %q:\n%s", w, scr)
		}
	}
	tt.typeLine("and now?")
	tt.waitText("Still fifty.")
	got := strings.Join(wire(srv.requests()[2]), "|")
	if !strings.Contains(got, "user: count to fifty|assistant: |tool: ") || !strings.HasSuffix(got, "user: and now?") {
		t.Errorf("the resumed request %q lacks the history", got)
	}
	tt.keys("C-d")
	tt.waitExit()
	if files := s.sessionFiles(); len(files) != 1 {
		t.Errorf("-c made another session: %q", files)
	}
}

// --no-session in the TUI: a truncated output opens in the pager, also in a
// session /new made, and the temporary folders are gone at exit; no resume
// hint.
func TestTUINoSessionPager(t *testing.T) {
	s := newSandbox(t)
	_, tmp, env := privateDirs(t)
	tt := startTUIKept(t, s, []string{"--no-session"}, env...)
	tt.typeLine("!seq 1 200000")
	tt.waitText("(ctrl+g to view)")
	tt.keys("C-g")
	scr := tt.waitText("of 200000")
	if !strings.Contains(scr, "artifact://0") {
		t.Errorf("pager header lacks the artifact:\n%s", scr)
	}
	tt.keys("q")
	tt.waitText("Message the agent")
	if left := tempArtifactFolders(t, tmp); len(left) != 1 {
		t.Errorf("artifact folders while running: %q, want one", left)
	}
	// A session /new makes keeps its full outputs too.
	tt.typeLine("/new")
	tt.waitText("New session ")
	tt.typeLine("!seq 1 300000")
	tt.waitText("(ctrl+g to view)")
	tt.keys("C-g")
	scr = tt.waitText("of 300000")
	if !strings.Contains(scr, "artifact://0") {
		t.Errorf("after /new the pager header lacks the artifact:\n%s", scr)
	}
	tt.keys("q")
	tt.waitText("Message the agent")
	if left := tempArtifactFolders(t, tmp); len(left) != 2 {
		t.Errorf("artifact folders after /new: %q, want two", left)
	}
	tt.keys("C-d")
	if scr, code := tt.waitExitStatus(); code != 0 || strings.Contains(scr, "Resume it with") {
		t.Errorf("exit %d, a resume hint for --no-session:\n%s", code, scr)
	}
	if left := tempArtifactFolders(t, tmp); len(left) != 0 {
		t.Errorf("artifact folders left after exit: %q", left)
	}
	if files := s.sessionFiles(); len(files) != 0 {
		t.Errorf("--no-session wrote %q", files)
	}
}

// `agentsh -r` without an id lists the sessions, newest first; enter
// resumes the selected one, esc leaves without opening anything.
func TestTUIResumePicker(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer(fmt.Sprintf("answer %d", n)) })
	env := append(srv.env(), "AGENTSH_MODEL=openai/test-model")
	// Nothing to pick from: said, and a new session starts.
	tt := startTUIArgs(t, s, []string{"-r"}, env...)
	notice := "No session to resume in " + s.work + ": starting a new one."
	tt.waitScreen(notice, func(scr string) bool { return strings.Contains(strings.ReplaceAll(scr, "\n", " "), notice) })
	tt.keys("C-d")
	tt.waitExit()

	older := twoSessions(t, s, env)
	tt = startTUIArgs(t, s, []string{"-r"}, env...)
	scr := tt.waitText("Resume a session")
	newer, old := strings.Index(scr, "the newer task"), strings.Index(scr, "the older task")
	if newer < 0 || old < newer || !strings.Contains(scr, "› ") || !strings.Contains(scr, "2 messages") {
		t.Fatalf("picker:\n%s", scr)
	}
	tt.keys("Down")
	tt.keys("Enter")
	scr = tt.waitText("resumed " + older + " · 2 messages")
	if !strings.Contains(scr, "the older task") || !strings.Contains(scr, "answer 0") || strings.Contains(scr, "the newer task") {
		t.Errorf("resumed screen:\n%s", scr)
	}
	tt.keys("C-d")
	tt.waitExit()

	tt = startTUIKept(t, s, []string{"-r"}, env...)
	tt.waitText("Resume a session")
	tt.keys("Escape")
	scr, code := tt.waitExitStatus()
	if code != 0 || strings.Contains(scr, "Resume it with") {
		t.Errorf("after esc in the picker: exit %d\n%s", code, scr)
	}
	if files := s.sessionFiles(); len(files) != 2 {
		t.Errorf("session files after the picker: %q", files)
	}
	r := s.runIn(nil, env, "-p", "x", "-r")
	if r.code != 2 || !strings.Contains(r.stderr, "--resume needs a session id or path") {
		t.Errorf("-p -r: %v", r)
	}
}
