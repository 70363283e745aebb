package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/pty"
	"agentsh/internal/session"
	"agentsh/internal/testkit"
)

// withTerminalShell puts a session on screen whose shell has a terminal and
// a job manager, as agentsh's own sessions have: `!` commands then run on
// the shell's terminal.
func withTerminalShell(h *harness) *agent.AgentSession {
	h.t.Helper()
	shell, err := bash.ResolveShell("")
	if err != nil {
		h.t.Skipf("no shell: %v", err)
	}
	work := h.t.TempDir()
	sess, err := agent.New(work, nil, h.ex, bash.ShellConfig{Path: shell, TerminalStdin: true})
	if err != nil {
		h.t.Fatal(err)
	}
	sess.SetJobs(withJobs(h))
	h.m.current.Store(sess)
	return sess
}

// bang types !command and enter.
func (h *harness) bang(command string) {
	h.typeText("!" + command)
	h.press(tea.KeyEnter, 0)
}

// lastBang is the newest `!` command the session recorded.
func lastBang(t *testing.T, sess *agent.AgentSession) *session.BashExecutionMessage {
	t.Helper()
	msgs := sess.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if b, ok := msgs[i].(*session.BashExecutionMessage); ok {
			return b
		}
	}
	t.Fatal("no ! command recorded")
	return nil
}

// TestBangVim: `!vim f` opens the overlay when vim takes the screen; esc
// goes to vim (it leaves insert mode, the overlay stays and says which key
// kills instead: the footer), :wq saves, the overlay closes with the command, and the
// recorded result is vim's last screen without escape sequences.
func TestBangVim(t *testing.T) {
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skip("vim not installed")
	}
	h := newHarness(t, 80, 30)
	sess := withTerminalShell(h)
	f := filepath.Join(t.TempDir(), "f.txt")
	h.bang("vim -u NONE -N " + f)
	h.waitFor("vim's overlay", func() bool {
		o := layerOn[*overlay](h)
		return o != nil && strings.Contains(h.screen(), "~")
	})
	if c, r := layerOn[*overlay](h).s.Screen().Size(); c != 78 || r != 30*4/5-overlayChrome {
		t.Errorf("vim's terminal is %dx%d, want the overlay's inside", c, r)
	}
	if s := h.screen(); !strings.Contains(s, name(keys.Overlay.KillFull)+" force-kill") {
		t.Errorf("the footer does not name the kill chord:\n%s", s)
	}
	h.typeText("ihello")
	h.waitFor("the typed text", func() bool { return strings.Contains(h.screen(), "hello") })
	h.press(tea.KeyEscape, 0)
	h.typeText(":wq")
	h.waitFor("vim's command line", func() bool { return strings.Contains(h.screen(), ":wq") })
	if layerOn[*overlay](h) == nil {
		t.Fatal("esc closed vim's overlay")
	}
	h.press(tea.KeyEnter, 0)
	h.waitFor("the command's end", func() bool { return h.bangIdle() && layerOn[*overlay](h) == nil })
	if b, _ := os.ReadFile(f); string(b) != "hello\n" {
		t.Errorf("file holds %q, want hello", b)
	}
	b := lastBang(t, sess)
	if b.ExitCode == nil || *b.ExitCode != 0 || b.Cancelled || !strings.Contains(b.Output, "~\n~\n") ||
		!strings.Contains(b.Output, "written") || strings.Contains(b.Output, "\x1b") {
		t.Errorf("result is not vim's last screen: %+v %q", b, b.Output)
	}
	// On screen the block is one line, not a screenful of `~`; ctrl+o
	// shows the last screen.
	if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, "$ vim -u NONE -N "+f+" · exited 0 (ctrl+o to expand)") ||
		strings.Contains(s, "~ ~") {
		t.Errorf("vim's block:\n%s", h.screen())
	}
	h.press('o', tea.ModCtrl)
	if s := h.screen(); !strings.Contains(s, "\n~\n~\n") || !strings.Contains(s, "written") {
		t.Errorf("ctrl+o does not show vim's last screen:\n%s", s)
	}
}

// TestBangREPLAndPersistence: `!python3` waits for input: the overlay opens,
// what is typed runs; then a plain `!cd` and `!pwd` stream into the
// transcript with no overlay, and the cd persists.
func TestBangREPLAndPersistence(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	h := newHarness(t, 80, 30)
	sess := withTerminalShell(h)
	h.bang("python3 -q")
	h.waitFor("python's overlay", func() bool { return layerOn[*overlay](h) != nil })
	if s := h.screen(); !strings.Contains(s, overlayFooterText(false, true)) {
		t.Errorf("a plain program's footer:\n%s", s)
	}
	h.typeText("print(6*7)")
	h.press(tea.KeyEnter, 0)
	// As in a terminal, keys typed while python runs the line are echoed
	// by the kernel before readline redraws them: type on at the prompt.
	h.waitFor("42 and the next prompt", func() bool {
		return strings.Contains(h.screen(), "42") && strings.Count(h.screen(), ">>>") >= 2
	})
	h.typeText("exit()")
	h.press(tea.KeyEnter, 0)
	h.waitFor("the command's end", func() bool { return h.bangIdle() && layerOn[*overlay](h) == nil })
	if b := lastBang(t, sess); !strings.Contains(b.Output, ">>> print(6*7)\n42\n") {
		t.Errorf("python's result %q", b.Output)
	}
	if !strings.Contains(h.screen(), "42") {
		t.Errorf("42 not in the transcript:\n%s", h.screen())
	}

	dir := t.TempDir()
	h.bang("cd " + dir + " && seq 1 3")
	h.waitFor("cd", h.bangIdle)
	h.bang("pwd")
	opened := false
	h.waitFor("pwd", func() bool {
		opened = opened || layerOn[*overlay](h) != nil
		return h.bangIdle()
	})
	if opened {
		t.Error("a plain command opened the overlay")
	}
	if b := lastBang(t, sess); b.Output != dir+"\n" {
		t.Errorf("pwd after cd: %q, want %q", b.Output, dir)
	}
}

// TestOverlayEscOnAltScreen (spec §3): esc kills a plain program, but a
// program on the alternate screen gets esc, and the kill chord ends it.
func TestOverlayEscOnAltScreen(t *testing.T) {
	h := newHarness(t, 80, 30)
	s := pty.Start(context.Background(), pty.Options{Shell: "/bin/sh",
		Command: `printf '\033[?1049h'; stty raw -echo; od -An -c`, Cols: 78, Rows: 20})
	defer s.Close()
	h.m.host.AttachPTY(s, "fullscreen")
	h.waitFor("the alternate screen", func() bool { return s.Screen().AltScreen() && layerOn[*overlay](h) != nil })
	if s := h.screen(); !strings.Contains(s, overlayFooterText(true, false)) {
		t.Errorf("footer on the alternate screen:\n%s", s)
	}
	h.press(tea.KeyEscape, 0)
	for range 20 { // od prints a line per 16 bytes
		h.typeText("x")
	}
	h.waitFor("od to show the esc", func() bool { return strings.Contains(h.screen(), "033") })
	if layerOn[*overlay](h) == nil {
		t.Fatal("esc killed a full-screen program")
	}
	h.press('\\', tea.ModCtrl)
	h.waitFor("the overlay to close", func() bool { return layerOn[*overlay](h) == nil })
	if r := s.Wait(); !r.Cancelled {
		t.Errorf("the kill chord did not kill: %+v", r)
	}
}

// TestBangKeepsUserPager: the user's `!` commands run attended, with the
// user's pager and editor rather than the model's hardened ones.
func TestBangKeepsUserPager(t *testing.T) {
	t.Setenv("GIT_PAGER", "my-pager")
	t.Setenv("EDITOR", "my-editor")
	h := newHarness(t, 80, 30)
	sess := withTerminalShell(h)
	h.bang(`echo "$GIT_PAGER $EDITOR"`)
	h.waitFor("the command's end", h.bangIdle)
	if b := lastBang(t, sess); b.Output != "my-pager my-editor\n" {
		t.Errorf("the ! command saw %q, want the user's pager and editor", b.Output)
	}
}

// TestBangCtrlBReachesTheProgram: while a program has the
// terminal, ctrl+b is its key (less pages back with it, readline moves
// left), not agentsh's: the byte 0x02 arrives, and the command ends on its
// own, not as a job.
func TestBangCtrlBReachesTheProgram(t *testing.T) {
	h := newHarness(t, 80, 30)
	sess := withTerminalShell(h)
	h.bang(`read -rsn1 -p "key? " k; printf 'got %q\n' "$k"`)
	h.waitFor("the prompt's overlay", func() bool {
		return layerOn[*overlay](h) != nil && strings.Contains(h.screen(), "│key?")
	})
	h.press('b', tea.ModCtrl)
	h.waitFor("the command's end", func() bool { return h.bangIdle() && layerOn[*overlay](h) == nil })
	b := lastBang(t, sess)
	if b.ExitCode == nil || *b.ExitCode != 0 || !strings.Contains(b.Output, `got $'\002'`) {
		t.Errorf("the program did not get ctrl+b: exit %v, output %q", b.ExitCode, b.Output)
	}
	if _, ok := sess.Jobs().Get("1"); ok {
		t.Error("ctrl+b made the command a job")
	}
}

// TestBangPromptToBackground: a `!` command waiting at a prompt opens the
// overlay, whose ctrl+z moves it to the background: the overlay
// closes, the block says → job 1 and the job still waits for its answer.
func TestBangPromptToBackground(t *testing.T) {
	h := newHarness(t, 80, 30)
	sess := withTerminalShell(h)
	h.bang(`read -p "Proceed? [y/N] " a; echo "got $a"`)
	h.waitFor("the prompt's overlay", func() bool {
		return layerOn[*overlay](h) != nil && strings.Contains(h.screen(), "│Proceed? [y/N]")
	})
	if s := h.screen(); !strings.Contains(s, overlayFooterText(false, true)) || !strings.Contains(s, "ctrl+z background") {
		t.Errorf("the footer does not offer ctrl+z:\n%s", s)
	}
	h.press('z', tea.ModCtrl)
	h.waitFor("the job", func() bool { return h.bangIdle() && layerOn[*overlay](h) == nil })
	if s := h.screen(); !strings.Contains(s, "→ job 1") {
		t.Errorf("no job badge:\n%s", s)
	}
	j, ok := sess.Jobs().Get("1")
	if !ok {
		t.Fatal("no job 1")
	}
	if err := j.Input("y\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the job did not end after its answer")
	}
	st := j.Final()
	// The job's last line may be recorded just after its end is.
	out := ""
	testkit.Poll(0, func() (bool, string) {
		out += j.ReadNew().Text
		return strings.Contains(out, "got y"), ""
	})
	if st.Kind != jobs.Exited || st.Code != 0 || !strings.Contains(out, "got y") {
		t.Errorf("job ended %+v with output %q", st, out)
	}
}
