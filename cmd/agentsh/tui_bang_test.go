package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The overlay's footers for a `!` command: a plain program's, and a
// full-screen one's.
const (
	plainFooter = "esc force-kill · ctrl+z background · input forwarded to PTY"
	fullFooter  = `ctrl+\ force-kill · esc and every other key go to the program`
)

// haveProgram reports whether name is installed, and says so when not.
func haveProgram(t *testing.T, name string) bool {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Logf("%s not installed: its part is skipped", name)
		return false
	}
	return true
}

// bang types !command and waits for its block.
func (tt *tmuxTUI) bang(command string) {
	tt.t.Helper()
	tt.typeLine("!" + command)
	tt.waitText("$ " + command)
}

// bangDone waits until the `!` command is no longer running and its
// overlay is closed.
func (tt *tmuxTUI) bangDone(what string) string {
	tt.t.Helper()
	return tt.waitScreen(what+" to end", func(s string) bool {
		return !strings.Contains(s, "Running…") && !strings.Contains(s, "force-kill") && !strings.Contains(s, "to cancel)")
	})
}

// TestTUIBangInteractive: the user's `!` commands get a terminal. vim,
// python3, less, git's pager and top open the overlay and take the keys,
// esc is vim's, the block's result is vim's last screen; plain commands
// stream, and `cd` persists across them.
func TestTUIBangInteractive(t *testing.T) {
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, "f.txt"), strings.Repeat("a line of f\n", 3)+"last line of f\n")
	// less on the alternate screen, with no quitting when the text fits.
	tt := startTUI(t, s, "LESS=R", "GIT_PAGER=less", "PAGER=less")

	if haveProgram(t, "vim") {
		tt.bang("vim -N -u NONE new.txt")
		tt.waitText(fullFooter)
		tt.keys("i")
		tt.tmux("send-keys", "-l", "hello")
		tt.waitText("│hello")
		time.Sleep(100 * time.Millisecond) // an Esc right after another key would read as alt+key
		tt.keys("Escape")
		tt.tmux("send-keys", "-l", ":wq")
		tt.waitText(":wq")
		tt.keys("Enter")
		scr := tt.bangDone("vim")
		if os.Getenv("AGENTSH_E2E_SHOW") != "" {
			t.Logf("after vim:\n%s", scr)
		}
		if b, _ := os.ReadFile(filepath.Join(s.work, "new.txt")); string(b) != "hello\n" {
			t.Errorf("new.txt holds %q, want hello", b)
		}
		// The block is one line, not vim's screenful of `~`; ctrl+o shows vim's last
		// screen: its message line, no escape sequences or leftovers of
		// the redraws.
		if !strings.Contains(scr, "$ vim -N -u NONE new.txt · exited 0 (ctrl+o to expand)") || strings.Contains(scr, "written") {
			t.Errorf("vim's block is not one line:\n%s", scr)
		}
		tt.keys("C-o")
		scr = tt.waitText("written")
		if !strings.Contains(scr, `"new.txt" [New] 1L, 6B written`) && !strings.Contains(scr, `"new.txt" [New] 1 line, 6 bytes written`) {
			t.Errorf("vim's last screen is not the block's result:\n%s", scr)
		}
		if strings.Contains(scr, "[?") || strings.Contains(scr, "\x1b") || strings.Contains(scr, "ihello") {
			t.Errorf("garbage in the block:\n%s", scr)
		}
	}

	if haveProgram(t, "python3") {
		tt.bang("python3")
		tt.waitText(plainFooter)
		tt.waitText(">>>")
		tt.typeLine("print(6*7)")
		tt.waitText("│42 ")
		tt.typeLine("exit()")
		scr := tt.bangDone("python3")
		if !strings.Contains(scr, ">>> print(6*7)") || !strings.Contains(scr, "42") {
			t.Errorf("python's session is not in the block:\n%s", scr)
		}
	}

	if haveProgram(t, "less") {
		tt.bang("less f.txt")
		tt.waitText(fullFooter)
		tt.waitText("last line of f")
		tt.keys("q")
		tt.bangDone("less")
	}

	if haveProgram(t, "git") {
		repo := filepath.Join(s.work, "repo")
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
				"GIT_COMMITTER_EMAIL=t@e", "HOME="+s.home)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		if err := os.MkdirAll(repo, 0o755); err != nil {
			t.Fatal(err)
		}
		git("init", "-q")
		git("commit", "-q", "--allow-empty", "-m", "first-commit")
		git("commit", "-q", "--allow-empty", "-m", "second-commit")
		// cd persists after the interactive commands above.
		tt.bang("cd repo")
		tt.bangDone("cd")
		tt.bang("git log")
		tt.waitText(fullFooter)
		tt.waitText("second-commit")
		tt.keys("q")
		tt.bangDone("git log")
		tt.waitText("$ git log · exited 0 (ctrl+o to expand)")
		tt.keys("C-o")
		tt.waitText("second-commit")
		tt.bang("pwd")
		tt.waitText("\n" + repo + "\n")
		tt.bangDone("pwd")
	}

	if haveProgram(t, "top") {
		tt.bang("top")
		// procps top draws on the normal screen and reads keys: either
		// takeover opens the overlay.
		tt.waitText(" force-kill · ")
		tt.waitText("PID")
		tt.keys("q")
		scr := tt.bangDone("top")
		if strings.Contains(scr, "failed tty get") {
			t.Errorf("top found no terminal:\n%s", scr)
		}
	}

	// A plain command still streams into the transcript, no overlay.
	tt.bang("seq 1 100000")
	scr := tt.bangDone("seq")
	if !strings.Contains(scr, "\n100000\n") || strings.Contains(scr, "force-kill") {
		t.Errorf("seq's block:\n%s", scr)
	}
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// TestTUIBangPagerCtrlB: in `!git log`'s pager (less with git's LESS=FRX,
// not on the alternate screen) ctrl+b pages back, as in a terminal: it is
// the program's, not agentsh's background key.
func TestTUIBangPagerCtrlB(t *testing.T) {
	if !haveProgram(t, "git") || !haveProgram(t, "less") {
		return
	}
	s := newSandbox(t)
	repo := filepath.Join(s.work, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("git init -q && ")
	for i := range 60 {
		fmt.Fprintf(&script, "git commit -q --allow-empty -m commit-%02d && ", i)
	}
	script.WriteString("true")
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@e", "HOME="+s.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git: %v\n%s", err, out)
	}
	tt := startTUI(t, s, "GIT_PAGER=less", "LESS=FRX")
	tt.bang("cd repo && git log")
	tt.waitText(plainFooter)
	tt.waitText("commit-59")
	tt.keys("Space")
	tt.waitScreen("the next page", func(s string) bool { return !strings.Contains(s, "commit-59") })
	tt.keys("C-b")
	scr := tt.waitText("commit-59")
	if strings.Contains(scr, "→ job") {
		t.Errorf("ctrl+b moved the pager to the background:\n%s", scr)
	}
	tt.keys("q")
	tt.bangDone("git log")
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}
