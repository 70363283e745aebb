package main

// End-to-end tests of the TUI: the real binary (built by TestMain) runs in a
// private tmux server at a fixed size; keys go in with send-keys and the
// screen is polled with capture-pane.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

const tuiMarkVar = "AGENTSH_TUI_E2E_MARK"

// tmuxTUI is agentsh running in its own tmux server.
type tmuxTUI struct {
	t    *testing.T
	sock string
	mark string // "NAME=value" carried by agentsh and everything it starts
}

func randomHex(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// startTUI runs agentsh with no arguments in the sandbox's work dir, in a
// 100×30 tmux window.
func startTUI(t *testing.T, s *sandbox, extraEnv ...string) *tmuxTUI {
	t.Helper()
	return startTUIArgs(t, s, nil, extraEnv...)
}

// startTUIArgs is startTUI running agentsh with args.
func startTUIArgs(t *testing.T, s *sandbox, args []string, extraEnv ...string) *tmuxTUI {
	t.Helper()
	return startTUIWith(t, s, args, false, extraEnv...)
}

// startTUIKept is startTUIArgs with the pane kept after agentsh exits: the
// shell then prints "[agentsh exited with status N]" below what agentsh
// printed last (waitExitStatus).
func startTUIKept(t *testing.T, s *sandbox, args []string, extraEnv ...string) *tmuxTUI {
	t.Helper()
	return startTUIWith(t, s, args, true, extraEnv...)
}

func startTUIWith(t *testing.T, s *sandbox, args []string, keep bool, extraEnv ...string) *tmuxTUI {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	id := randomHex(t)
	tt := &tmuxTUI{t: t, sock: "agentsh-e2e-" + id, mark: tuiMarkVar + "=" + id}
	env := s.env(s.work, append(extraEnv, tt.mark, "TERM=xterm-256color")...)
	var script strings.Builder
	script.WriteString("#!/bin/sh\ncd " + shellQuote(s.work) + " || exit 1\n")
	if !keep {
		script.WriteString("exec ")
	}
	script.WriteString("env -i")
	for _, kv := range env {
		script.WriteString(" " + shellQuote(kv))
	}
	script.WriteString(" " + shellQuote(agentshBin))
	for _, a := range args {
		script.WriteString(" " + shellQuote(a))
	}
	script.WriteString("\n")
	if keep {
		script.WriteString("echo \"[agentsh exited with status $?]\"\nexec sleep 600\n")
	}
	path := filepath.Join(s.root, "run-"+id+".sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	tt.tmux("new-session", "-d", "-x", "100", "-y", "30", path)
	socket := strings.TrimSpace(tt.tmux("display-message", "-p", "#{socket_path}"))
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", tt.sock, "kill-server").Run()
		if strings.Contains(socket, tt.sock) {
			os.Remove(socket) // tmux leaves its socket file behind
		}
		// Whatever happened, nothing of this run may survive the test.
		if ok, state := testkit.Poll(0, markedGone(tt.mark)); !ok {
			t.Errorf("processes left after the test: %s", state)
		}
	})
	tt.waitScreen("the first frame", func(s string) bool {
		// the TUI, -r's picker, or the trust question of a project's settings
		return strings.Contains(s, "/help for keys") || strings.Contains(s, "Resume a session") || strings.Contains(s, "Do you trust this folder?")
	})
	return tt
}

func (tt *tmuxTUI) tmux(args ...string) string {
	tt.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tt.sock}, args...)...).CombinedOutput()
	if err != nil {
		tt.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tt *tmuxTUI) screen() string {
	out, err := exec.Command("tmux", "-L", tt.sock, "capture-pane", "-p").CombinedOutput()
	if err != nil {
		return "(no pane: " + strings.TrimSpace(string(out)) + ")"
	}
	return string(out)
}

// tmuxPoll is how often a wait looks at the pane: each look starts tmux.
const tmuxPoll = 50 * time.Millisecond

func (tt *tmuxTUI) waitScreen(what string, cond func(string) bool) string {
	tt.t.Helper()
	var s string
	testkit.EventuallyEvery(tt.t, 0, tmuxPoll, what, func() (bool, string) {
		s = tt.screen()
		return cond(s), "screen:\n" + s
	})
	return s
}

func (tt *tmuxTUI) waitText(text string) string {
	tt.t.Helper()
	return tt.waitScreen(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

// typeLine types text literally and presses enter.
func (tt *tmuxTUI) typeLine(text string) {
	tt.t.Helper()
	tt.tmux("send-keys", "-l", text)
	tt.tmux("send-keys", "Enter")
}

func (tt *tmuxTUI) keys(keys ...string) {
	tt.t.Helper()
	tt.tmux(append([]string{"send-keys"}, keys...)...)
}

// exited reports whether agentsh has ended (the pane, and with it the
// server, is gone).
func (tt *tmuxTUI) exited() bool {
	return exec.Command("tmux", "-L", tt.sock, "has-session").Run() != nil
}

func (tt *tmuxTUI) waitExit() {
	tt.t.Helper()
	testkit.EventuallyEvery(tt.t, 0, tmuxPoll, "agentsh to exit", func() (bool, string) {
		if tt.exited() {
			return true, ""
		}
		return false, "screen:\n" + tt.screen()
	})
}

// markedGone is the condition that no process carries the marker kv.
func markedGone(kv string) testkit.Cond {
	return func() (bool, string) {
		pids := proctest.Marked(kv)
		return len(pids) == 0, fmt.Sprintf("processes left %v", pids)
	}
}

func (tt *tmuxTUI) assertNoProcesses() {
	tt.t.Helper()
	testkit.Eventually(tt.t, 0, "no process of the run left", markedGone(tt.mark))
}

func TestTUIBangCommands(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)

	tt.typeLine("!seq 1 100")
	scr := tt.waitText("… (80 earlier lines, showing 20 of 100)")
	for _, want := range []string{"$ seq 1 100", "\n81\n", "\n100\n"} {
		if !strings.Contains(scr, want) {
			t.Errorf("collapsed block lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "\n80\n") {
		t.Errorf("collapsed block shows more than the last 20 lines:\n%s", scr)
	}

	tt.keys("C-o")
	scr = tt.waitScreen("the expanded block", func(s string) bool { return !strings.Contains(s, "earlier lines") })
	if !strings.Contains(scr, "\n80\n") {
		t.Errorf("expanded block does not show earlier lines:\n%s", scr)
	}
	tt.keys("C-o")
	tt.waitText("… (80 earlier lines, showing 20 of 100)")

	tt.typeLine("!!echo hidden-from-model")
	// Wait for its end: under load a block still running would refuse the
	// next command, and its own running line would answer the next wait.
	scr = tt.waitScreen("the !! command's end", func(s string) bool {
		return strings.Contains(s, "$ echo hidden-from-model") && !strings.Contains(s, "esc to cancel")
	})
	if !strings.Contains(scr, "hidden-from-model\n") {
		t.Errorf("!! output missing:\n%s", scr)
	}

	tt.typeLine("!sleep 100")
	tt.waitText("· esc to cancel")
	tt.typeLine("!echo too-soon")
	tt.waitText("A bash command is already running. Press Esc to cancel it first.")
	time.Sleep(100 * time.Millisecond) // part of the input: an Esc right after another key would read as alt+key
	tt.keys("Escape")
	tt.waitText("Command cancelled")
	if pids := proctest.Marked(tt.mark); len(pids) > 1 {
		// agentsh itself and its idle shell may remain; sleep must not.
		for _, pid := range pids {
			if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cmd), "sleep") {
				t.Errorf("sleep survived esc: pid %d", pid)
			}
		}
	}

	tt.keys("C-c")
	tt.waitText("press ctrl+c again to quit")
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

func TestTUIQuitKillsRunningCommand(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)
	tt.typeLine("!sleep 300")
	tt.waitText("· esc to cancel")
	tt.keys("C-d") // ctrl+c would interrupt the command, not quit
	tt.waitText("a command is running — quit and stop it? y/n")
	tt.keys("y")
	tt.waitExit()
	tt.assertNoProcesses()
}

// modelScript answers the first request with a bash call of command and
// then with a short text.
func modelScript(command string) func(n int, w sseWriter) {
	return func(n int, w sseWriter) {
		if n%2 == 0 {
			w.bash(fmt.Sprintf("call_%d", n), fmt.Sprintf(`{"command":%q}`, command))
			return
		}
		w.answer("Done.")
	}
}

func TestTUIModelToolCallStreams(t *testing.T) {
	srv := newSSEServer(t, modelScript(`for i in $(seq 1 40); do echo "tick $i"; sleep 0.05; done`))
	s := newSandbox(t)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.waitText("openai/test-model")
	tt.typeLine("count for me")
	// Live: an intermediate line appears before the command ends.
	tt.waitScreen("live output", func(s string) bool {
		return strings.Contains(s, "tick 5") && !strings.Contains(s, "Done.")
	})
	scr := tt.waitText("Done.")
	for _, want := range []string{"count for me", "tick 40"} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "tick 20\n") {
		t.Errorf("the finished call is not collapsed:\n%s", scr)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

func TestTUIPTYOverlayVim(t *testing.T) {
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skip("vim not installed")
	}
	srv := newSSEServer(t, modelScript("vim -u NONE notes.txt"))
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.config, "agentsh", "settings.json"), `{"bash":{"virtualTerminal":"on"}}`)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.typeLine("edit the notes")
	// vim is on the alternate screen: esc is vim's, ctrl+\ kills (spec §3).
	scr := tt.waitText(`ctrl+\ force-kill · esc and every other key go to the program`)
	if !strings.Contains(scr, "running") || !strings.Contains(scr, "vim -u NONE notes.txt") {
		t.Errorf("overlay header wrong:\n%s", scr)
	}
	tt.waitText(`"notes.txt" [New`) // vim's own message line, inside the overlay
	tt.keys("i")
	tt.tmux("send-keys", "-l", "hello from the overlay")
	// Typed text on vim's first line proves the keys reached it (vim -u
	// NONE is vi-compatible: no "-- INSERT --").
	scr = tt.waitText("│hello from the overlay")
	if os.Getenv("AGENTSH_E2E_SHOW") != "" {
		t.Logf("overlay:\n%s", scr)
	}
	time.Sleep(100 * time.Millisecond) // part of the input: an Esc right after another key would read as alt+key
	tt.keys("Escape")                  // leaves insert mode; vim keeps running
	tt.tmux("send-keys", "-l", ":wq")
	tt.waitText(":wq")
	tt.keys("Enter")
	tt.waitScreen("the overlay to close", func(s string) bool { return !strings.Contains(s, "force-kill") })
	scr = tt.waitText("Done.")
	if os.Getenv("AGENTSH_E2E_SHOW") != "" {
		t.Logf("after:\n%s", scr)
	}
	if b, _ := os.ReadFile(filepath.Join(s.work, "notes.txt")); string(b) != "hello from the overlay\n" {
		t.Errorf("notes.txt holds %q: esc did not reach vim", b)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

func TestTUINoArgumentsWithoutTerminalPrintsUsage(t *testing.T) {
	// stdin is /dev/null and stdout a pipe: not a terminal, so the usage.
	s := newSandbox(t)
	r := s.run()
	if r.code != 0 || !strings.Contains(r.stdout, "agentsh exec") {
		t.Errorf("%v", r)
	}
}

func TestTUIPTYOverlayResizes(t *testing.T) {
	// A full-screen program (the alternate screen) opens the overlay; a
	// plain loop would stream into the transcript instead.
	srv := newSSEServer(t, modelScript(`tput smcup; while :; do echo "cols=$(tput cols) rows=$(tput lines)"; sleep 0.1; done`))
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.config, "agentsh", "settings.json"), `{"bash":{"virtualTerminal":"on"}}`)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.typeLine("watch the size")
	// 100×30: the overlay is 100 wide and 24 high, the PTY 98×20.
	tt.waitText("cols=98 rows=20")
	tt.tmux("resize-window", "-x", "80", "-y", "25")
	// 80×25: overlay 80×20, PTY 78×16.
	tt.waitText("cols=78 rows=16")
	// On the alternate screen the chord kills, not esc.
	tt.keys(`C-\`)
	tt.waitScreen("the overlay to close", func(s string) bool { return !strings.Contains(s, "force-kill") })
	tt.waitText("Done.")
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// A truncated result's full output opens in the pager: search finds a line
// the collapsed block never showed, q returns to the transcript. `!!` blocks
// are drawn dim.
func TestTUIArtifactPager(t *testing.T) {
	s := newSandbox(t)
	tt := startTUI(t, s)
	tt.typeLine("!!echo hi")
	// Until it has ended, the next command would be refused (one at a time).
	tt.waitScreen("echo to end", func(s string) bool { return strings.Contains(s, "$ echo hi") && !strings.Contains(s, "to cancel)") })
	colored, err := exec.Command("tmux", "-L", tt.sock, "capture-pane", "-e", "-p").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	// tmux writes only attribute changes: the colour in force at the header
	// is the last foreground set before it.
	before, _, found := strings.Cut(string(colored), "$ echo hi")
	fg := before[strings.LastIndex(before, "38;5;")+len("38;5;"):]
	if !found || !strings.HasPrefix(fg, "244m") {
		t.Errorf("the !! header is not dim (colour 244):\n%q", colored)
	}

	tt.typeLine("!seq 1 200000")
	tt.waitText("(ctrl+g to view)")
	tt.keys("C-g")
	scr := tt.waitText("of 200000")
	if !strings.Contains(scr, "artifact://") || !strings.Contains(scr, "seq 1 200000") {
		t.Errorf("pager header lacks the artifact or the command:\n%s", scr)
	}
	tt.typeLine("/123457")
	scr = tt.waitText("123457")
	if strings.Contains(scr, "Pattern not found") {
		t.Fatalf("search failed:\n%s", scr)
	}
	tt.keys("G")
	tt.waitText("200000")
	tt.keys("q")
	tt.waitText("Message the agent")
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// A small coding task end to end in the TUI: the fake model finds, reads and
// edits a file and runs go vet and the program through bash; each call is
// shown with its own compact renderer and the file is fixed on disk.
func TestTUIModelCodingTask(t *testing.T) {
	env := goEnv(t)
	srv := newSSEServer(t, fixTypoScript)
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, "go.mod"), "module typo\n\ngo 1.21\n")
	writeFile(t, filepath.Join(s.work, "main.go"), typoProgram)
	tt := startTUI(t, s, append(append(env, srv.env()...), "AGENTSH_MODEL=openai/test-model")...)
	tt.waitText("openai/test-model")
	tt.typeLine("fix the typo")
	scr := tt.waitText("Fixed the typo.")
	t.Logf("screen:\n%s", scr) // the README's capture comes from here
	for _, want := range []string{"edit main.go", "fmt.Println(\"hello\")", "$ go vet ./... && go run ."} {
		if !strings.Contains(strings.ReplaceAll(scr, "    ", "\t"), want) && !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	got, _ := os.ReadFile(filepath.Join(s.work, "main.go"))
	if !strings.Contains(string(got), `fmt.Println("hello")`) {
		t.Errorf("main.go not fixed:\n%s", got)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// With virtualTerminal on, a model's command that only prints streams into
// the transcript like any other: no overlay takes the screen, and the
// user can keep typing.
func TestTUIPTYPlainOutputStreams(t *testing.T) {
	srv := newSSEServer(t, modelScript(`for i in 1 2 3 4 5 6; do echo "pty line $i"; sleep 0.2; done`))
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.config, "agentsh", "settings.json"), `{"bash":{"virtualTerminal":"on"}}`)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.typeLine("print some lines")
	scr := tt.waitText("pty line 2")
	if strings.Contains(scr, "input forwarded to PTY") {
		t.Fatalf("the overlay opened for plain output:\n%s", scr)
	}
	tt.tmux("send-keys", "-l", "typing meanwhile")
	tt.waitText("typing meanwhile")
	scr = tt.waitText("Done.")
	if strings.Contains(scr, "input forwarded to PTY") || !strings.Contains(scr, "pty line 6") {
		t.Errorf("screen:\n%s", scr)
	}
	tt.keys("C-c") // clears the editor and arms the quit
	tt.keys("C-c")
	tt.waitExit()
	tt.assertNoProcesses()
}
