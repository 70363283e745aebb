package bash

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/jobs"
	"agentsh/internal/pty"
	"agentsh/internal/testkit"
)

// runTerminal starts command with a TerminalView in the background and
// returns the view, a channel with the takeover reason and one with the
// result.
func runTerminal(t *testing.T, e *Executor, m *jobs.Manager, command string) (*TerminalView, chan pty.Takeover, chan BashResult) {
	t.Helper()
	took := make(chan pty.Takeover, 1)
	v := &TerminalView{Cols: 80, Rows: 24, OnTakeover: func(r pty.Takeover) { took <- r }}
	done := make(chan BashResult, 1)
	go func() {
		r, err := e.Run(context.Background(), command, RunOptions{Shell: ttyShell(t), Jobs: m, Terminal: v, SessionKey: "user"})
		if err != nil {
			t.Errorf("run %q: %v", command, err)
		}
		done <- r
	}()
	return v, took, done
}

func waitResult(t *testing.T, done chan BashResult) BashResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(hangGuard):
		t.Fatal("the command never ended (hang guard)")
	}
	return BashResult{}
}

// waitScreen waits (hang guard) until the screen that screen returns (nil
// before the program starts) shows want.
func waitScreen(t *testing.T, what string, screen func() *pty.Screen, want string) {
	t.Helper()
	testkit.Eventually(t, hangGuard, what, func() (bool, string) {
		s := screen()
		if s == nil {
			return false, "no screen yet"
		}
		text := strings.Join(s.Text(), "\n")
		return strings.Contains(text, want), "screen:\n" + text
	})
}

func waitTakeover(t *testing.T, took chan pty.Takeover) pty.Takeover {
	t.Helper()
	select {
	case r := <-took:
		return r
	case <-time.After(hangGuard):
		t.Fatal("the program never took the screen (hang guard)")
	}
	return 0
}

// TestTerminalPlainOutput: with its output on the terminal a command sees
// a terminal on stdout (colours, isatty), the text reaches the result
// without escape sequences, nothing takes the screen, and `cd` persists
// in the session's shell.
func TestTerminalPlainOutput(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	dir := t.TempDir()
	_, took, done := runTerminal(t, e, m, `printf '\e[31mred\e[0m\n'; [ -t 1 ] && echo tty-out; cd `+dir)
	r := waitResult(t, done)
	if r.Output != "red\ntty-out\n" || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("%+v", r)
	}
	select {
	case why := <-took:
		t.Errorf("a plain command took the screen (%v)", why)
	default:
	}
	_, _, done = runTerminal(t, e, m, "pwd")
	if r := waitResult(t, done); r.Output != dir+"\n" {
		t.Errorf("cd did not persist: %q", r.Output)
	}
}

// TestTerminalVim: vim takes the screen (alternate screen), keys typed
// through the view edit and save the file, and the result is vim's last
// screen rather than its stream of redraws.
func TestTerminalVim(t *testing.T) {
	if _, err := exec.LookPath("vim"); err != nil {
		t.Skip("vim not installed")
	}
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	f := filepath.Join(t.TempDir(), "f.txt")
	v, took, done := runTerminal(t, e, m, "vim -u NONE -N "+f)
	if why := waitTakeover(t, took); why != pty.TakeoverFullScreen {
		t.Fatalf("takeover %v", why)
	}
	waitScreen(t, "vim to draw", v.Screen, "~")
	if _, err := v.Write([]byte("ihello\x1b:wq\r")); err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, done)
	if r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("%+v", r)
	}
	if b, _ := os.ReadFile(f); string(b) != "hello\n" {
		t.Errorf("file %q", b)
	}
	// Its last frame: the file's lines (vim scrolls the first away as it
	// leaves), the tildes and the "written" message; 24 rows at most.
	if !strings.Contains(r.Output, "~\n~\n") || !strings.Contains(r.Output, "written") ||
		strings.Contains(r.Output, "\x1b") || strings.Count(r.Output, "\n") > 24 {
		t.Errorf("output is not vim's last screen: %q", r.Output)
	}
}

// TestTerminalREPL: python3's prompt waits for input: the UI is handed the
// keys, and what is typed runs.
func TestTerminalREPL(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	v, took, done := runTerminal(t, e, m, "python3 -q")
	if why := waitTakeover(t, took); why != pty.TakeoverInput {
		t.Fatalf("takeover %v", why)
	}
	if _, err := v.Write([]byte("print(6*7)\rexit()\r")); err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, done)
	if r.ExitCode == nil || *r.ExitCode != 0 || !strings.Contains(r.Output, ">>> print(6*7)\n42\n") {
		t.Errorf("%+v", r)
	}
	if _, err := v.Write([]byte("x")); err == nil {
		t.Errorf("a write after the end succeeded")
	}
}

// TestTerminalLastOutput: nothing a command printed on the terminal is
// lost at its end (the epilogue's end mark is waited for), and the mark
// itself never shows.
func TestTerminalLastOutput(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	for range 3 {
		_, _, done := runTerminal(t, e, m, "seq 1 5000; printf abc")
		r := waitResult(t, done)
		if r.TotalLines != 5001 || !strings.HasSuffix(r.Output, "4999\n5000\nabc") || strings.Contains(r.Output, "]6973;") {
			t.Fatalf("lines %d, output ends %q", r.TotalLines, r.Output[max(0, len(r.Output)-40):])
		}
	}
}

// BenchmarkTerminalFlood: `seq 1 100000` with its output on the terminal
// and an emulated screen (a user's `!seq 1 100000` in the TUI).
func BenchmarkTerminalFlood(b *testing.B) {
	e := NewExecutor()
	b.Cleanup(e.Close)
	m := jobs.NewManager()
	b.Cleanup(m.Close)
	sh, err := ResolveShell("")
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		v := &TerminalView{Cols: 80, Rows: 24}
		r, err := e.Run(context.Background(), "seq 1 100000", RunOptions{Shell: ShellConfig{Path: sh, TerminalStdin: true},
			Jobs: m, Terminal: v, SessionKey: "bench"})
		if err != nil || r.TotalLines != 100000 {
			b.Fatalf("%v %d lines", err, r.TotalLines)
		}
	}
}

// TestTerminalShellExits: `exit 3` on the terminal ends the run at once
// with its output and status (no epilogue will write the end mark, so none
// is waited for), and the next command runs on a fresh shell with the
// session's folder.
func TestTerminalShellExits(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	dir := t.TempDir()
	opts := RunOptions{Shell: ttyShell(t), Jobs: m, SessionKey: "user", State: NewSessionState(t.TempDir()), Capture: CaptureAll}
	runOn := func(command string) chan BashResult {
		done := make(chan BashResult, 1)
		go func() {
			o := opts
			o.Terminal = &TerminalView{Cols: 80, Rows: 24}
			r, err := e.Run(context.Background(), command, o)
			if err != nil {
				t.Errorf("run %q: %v", command, err)
			}
			done <- r
		}()
		return done
	}
	waitResult(t, runOn("cd "+dir))
	done := runOn("echo bye; exit 3")
	var r BashResult
	select {
	case r = <-done:
	case <-time.After(terminalEndWait * 8 / 10): // a hang guard below the end mark's wait
		t.Fatal("the run waited for an end mark the dead shell cannot write")
	}
	if r.ExitCode == nil || *r.ExitCode != 3 || r.Output != "bye\n" {
		t.Fatalf("exit 3: %+v", r)
	}
	if r := waitResult(t, runOn("pwd")); r.Output != dir+"\n" {
		t.Errorf("after the shell's exit pwd says %q, want %q", r.Output, dir)
	}
}

// TestScanEndSplits: the end mark is found wherever the terminal's reads
// split it (in two or three reads, some shorter than the mark), and a
// stream that only nearly holds it never ends the run.
func TestScanEndSplits(t *testing.T) {
	const nonce = "Nonce12345"
	mark := "\x1b]6973;" + nonce + "\a"
	text := []byte("abc\x1b]6973;Nonce1234\a" + mark + "after")
	near := []byte("abc\x1b]6973;Nonce1234\a\x1b]6973;" + nonce + "x\a")
	seen := func(v *TerminalView) bool {
		select {
		case <-v.endSeen:
			return true
		default:
			return false
		}
	}
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j++ {
			v := &TerminalView{}
			v.expectEnd(nonce)
			ch := v.endSeen
			v.scanEnd(text[:i])
			v.scanEnd(text[i:j])
			v.scanEnd(text[j:])
			select {
			case <-ch:
			default:
				t.Fatalf("cuts %d, %d: the mark was not found", i, j)
			}
			if j <= len(near) && i <= len(near) {
				w := &TerminalView{}
				w.expectEnd(nonce)
				w.scanEnd(near[:i])
				w.scanEnd(near[i:j])
				w.scanEnd(near[j:])
				if seen(w) {
					t.Fatalf("cuts %d, %d: a near mark ended the run", i, j)
				}
			}
		}
	}
}

// BenchmarkScanEnd: the reader's look for the end mark costs no
// allocation per read.
func BenchmarkScanEnd(b *testing.B) {
	v := &TerminalView{}
	v.expectEnd("Nonce12345")
	p := bytes.Repeat([]byte("y\n"), 1024)
	b.ReportAllocs()
	for b.Loop() {
		v.scanEnd(p)
	}
}

// TestTerminalJobKeepsItsLastOutput: a `!` command on the terminal that the
// user moved to the background while it waited at a prompt (the UI lets go
// of its screen) still has every byte it prints after the answer read
// before the job ends: the run waits for its end mark behind that output,
// not a short drain (at load 10 "got y" was lost).
func TestTerminalJobKeepsItsLastOutput(t *testing.T) {
	e := newTestExecutor(t)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	now := make(chan struct{})
	v := &TerminalView{Cols: 80, Rows: 24}
	done := make(chan BashResult, 1)
	go func() {
		r, err := e.Run(context.Background(), `read -p "Proceed? [y/N] " a; echo "got $a"; seq 1 3000`,
			RunOptions{Shell: ttyShell(t), Jobs: m, Terminal: v, SessionKey: "user", BackgroundNow: now})
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- r
	}()
	waitScreen(t, "the prompt", v.Screen, "Proceed?")
	close(now)
	res := waitResult(t, done)
	if res.Job == nil {
		t.Fatalf("the command did not become a job: %+v", res)
	}
	if _, err := res.Job.Write([]byte("y\r")); err != nil {
		t.Fatal(err)
	}
	got := jobText(t, res.Job)
	if !strings.Contains(got, "got y\n") || !strings.HasSuffix(got, "\n2999\n3000\n") {
		t.Errorf("the job's output lost its end: …%q", got[max(0, len(got)-200):])
	}
	if st := res.Job.Final(); st.Kind != jobs.Exited || st.Code != 0 {
		t.Errorf("job state %+v, want exit 0", st)
	}
}
