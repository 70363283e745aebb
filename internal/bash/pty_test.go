package bash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentsh/internal/pty"
)

// fakeUI stands in for the TUI: it reports a size and records the
// sessions the tool attaches, optionally acting on them like a user.
type fakeUI struct {
	cols, rows int
	onAttach   func(s *pty.Session)

	mu       sync.Mutex
	attached []string
}

func (f *fakeUI) PTYSize() (int, int) { return f.cols, f.rows }

func (f *fakeUI) AttachPTY(s *pty.Session, command string) {
	f.mu.Lock()
	f.attached = append(f.attached, command)
	f.mu.Unlock()
	if f.onAttach != nil {
		go f.onAttach(s)
	}
}

func (f *fakeUI) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.attached...)
}

// ptyToolEnv is a tool context with a UI and the virtual terminal on; HOME
// points at an empty folder so the login shell reads no user profile.
func ptyToolEnv(t *testing.T, ui *fakeUI) *toolEnv {
	te := newToolEnv(t)
	te.tc.HasUI = true
	te.tc.Terminal = ui
	te.tc.Settings.VirtualTerminal = "on"
	te.tc.Settings.Shell.Env = map[string]string{"HOME": t.TempDir()}
	return te
}

const ttyProbe = `if test -t 1; then echo "tty $(stty size)"; else echo pipe; fi`

func TestToolTakesPTYPathOnlyUnderSpecConditions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vt     string
		hasUI  bool
		noPTY  string
		piNoPT string
		want   string
	}{
		{"on with UI", "on", true, "", "", "tty 30 100\n"},
		{"off", "off", true, "", "", "pipe\n"},
		{"no UI", "on", false, "", "", "pipe\n"},
		{"AGENTSH_NO_PTY", "on", true, "1", "", "pipe\n"},
		{"PI_NO_PTY", "on", true, "", "1", "pipe\n"},
		{"AGENTSH_NO_PTY=0", "on", true, "0", "", "tty 30 100\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTSH_NO_PTY", tc.noPTY)
			t.Setenv("PI_NO_PTY", tc.piNoPT)
			ui := &fakeUI{cols: 100, rows: 30}
			te := ptyToolEnv(t, ui)
			te.tc.HasUI = tc.hasUI
			te.tc.Settings.VirtualTerminal = tc.vt
			r := te.exec(t, ToolParams{Command: ttyProbe})
			if r.IsError || r.Content != tc.want {
				t.Fatalf("result %+v, want %q", r, tc.want)
			}
			// A plain command streams; the overlay opens only for a
			// program that takes the screen or waits for input.
			if got := ui.commands(); len(got) != 0 {
				t.Fatalf("attached sessions: %q", got)
			}
		})
	}
}

func TestToolPTYResultShaping(t *testing.T) {
	te := ptyToolEnv(t, &fakeUI{cols: 80, rows: 24})
	r := te.exec(t, ToolParams{Command: "printf 'a\\nb\\n'; exit 4"})
	if !r.IsError || r.Content != "a\nb\n\n\nCommand exited with code 4" {
		t.Fatalf("non-zero exit: %+v", r)
	}
	r = te.exec(t, ToolParams{Command: "seq 1 10 | tail -n 3"})
	if r.IsError || r.Content != "8\n9\n10\n" {
		t.Fatalf("tail: %+v", r)
	}
	r = te.exec(t, ToolParams{Command: "seq 1 10 | head -n 2"})
	if r.IsError || r.Content != "1\n2\n" {
		t.Fatalf("head: %+v", r)
	}
	// The same rule as on the engine (spec §1.1): the stage is taken off, the
	// command runs without it (a PTY cannot close its output early) and the
	// limit cuts the whole output; the exit status is the command's own.
	for cmd, want := range map[string]string{
		"false | head -n 1":             "(no output)\n\nCommand exited with code 1",
		"/bin/false | head -n 1":        "(no output)\n\nCommand exited with code 1",
		"echo x; seq 1 100 | head -n 3": "x\n1\n2\n",
		"seq 1 100 | head -n 5":         "1\n2\n3\n4\n5\n",
	} {
		if r := te.exec(t, ToolParams{Command: cmd}); r.Content != want {
			t.Errorf("%q: %q", cmd, r.Content)
		}
	}
	if r := te.exec(t, ToolParams{Command: "seq 1 100 | head -n 5", Head: iptr(7)}); r.Content != "1\n2\n3\n4\n5\n6\n7\n" {
		t.Errorf("explicit head over the extracted one: %q", r.Content)
	}
	r = te.exec(t, ToolParams{Command: "true"})
	if r.IsError || r.Content != "(no output)" {
		t.Fatalf("empty: %+v", r)
	}
	// The PTY keeps no first lines aside: the head argument on a truncated
	// output reads them from the artifact, and the notice says so.
	r = te.exec(t, ToolParams{Command: "seq 1 200000", Head: iptr(2)})
	if tr := r.Details.Meta.Truncation; r.IsError || tr == nil ||
		r.Content != "1\n2\n\n\n[Showing lines 1-2 of 200000. Full: artifact://"+tr.ArtifactID+"]" {
		t.Fatalf("head on a truncated PTY output: %q", short(r.Content))
	}
}

func TestToolPTYTimeoutIsExplicit(t *testing.T) {
	te := ptyToolEnv(t, &fakeUI{cols: 80, rows: 24})
	r := te.exec(t, ToolParams{Command: "echo started; sleep 100", Timeout: fptr(1)})
	if !r.IsError || r.Aborted || !r.Details.TimedOut || r.Details.Cancelled {
		t.Fatalf("timeout result: %+v", r)
	}
	if r.Content != "[Command timed out after 1 seconds]\nstarted\n" {
		t.Fatalf("content = %q", r.Content)
	}
}

// TestToolPTYEscKill: the user kills the program from the overlay; the model
// gets an error result with what was printed, not an abort.
func TestToolPTYEscKill(t *testing.T) {
	ui := &fakeUI{cols: 80, rows: 24}
	ui.onAttach = func(s *pty.Session) {
		for !strings.Contains(strings.Join(s.Screen().Text(), "\n"), "started") {
			select {
			case <-s.Screen().Changed():
			case <-s.Done():
				return
			}
		}
		s.Kill()
	}
	te := ptyToolEnv(t, ui)
	r := te.exec(t, ToolParams{Command: "echo started; read x"})
	if !r.IsError || r.Aborted || !r.Details.Cancelled {
		t.Fatalf("killed result: %+v", r)
	}
	if r.Content != "[Command cancelled]\nstarted\n" {
		t.Fatalf("content = %q", r.Content)
	}
}

func TestToolPTYAbort(t *testing.T) {
	ui := &fakeUI{cols: 80, rows: 24}
	ctx, cancel := context.WithCancel(context.Background())
	ui.onAttach = func(s *pty.Session) { cancel() }
	te := ptyToolEnv(t, ui)
	r := te.execCtx(t, ctx, ToolParams{Command: "read x"}, nil)
	if !r.IsError || !r.Aborted {
		t.Fatalf("aborted result: %+v", r)
	}
}

// TestToolPTYStartError: when the PTY cannot start the shell, the model
// reads "PTY error: …" and "missing exit status" (spec §3, §1.6).
func TestToolPTYStartError(t *testing.T) {
	te := ptyToolEnv(t, &fakeUI{cols: 80, rows: 24})
	// Executable, so the shell resolves, but no program the kernel can run.
	bad := filepath.Join(t.TempDir(), "notashell")
	if err := os.WriteFile(bad, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	te.tc.Settings.Shell.Path = bad
	r := te.exec(t, ToolParams{Command: "echo hi"})
	if !r.IsError || !strings.HasPrefix(r.Content, "PTY error: ") ||
		!strings.HasSuffix(r.Content, "\n\nCommand failed: missing exit status") {
		t.Fatalf("result: %+v", r)
	}
}

// TestToolPTYTakeover: on the PTY path the overlay opens only when the
// program takes the screen (the alternate screen) or waits for input;
// plain output streams to onUpdate instead. A full-screen program's result
// is its last screen.
func TestToolPTYTakeover(t *testing.T) {
	ui := &fakeUI{cols: 80, rows: 24}
	ui.onAttach = func(s *pty.Session) {
		for !strings.Contains(strings.Join(s.Screen().Text(), "\n"), "name?") {
			select {
			case <-s.Screen().Changed():
			case <-s.Done():
				return
			}
		}
		_, _ = s.Write([]byte("bob\r"))
	}
	te := ptyToolEnv(t, ui)
	var updates []string
	var mu sync.Mutex
	r := te.execCtx(t, context.Background(), ToolParams{Command: "for i in 1 2 3; do echo line $i; done"}, func(u string) {
		mu.Lock()
		updates = append(updates, u)
		mu.Unlock()
	})
	mu.Lock()
	if r.Content != "line 1\nline 2\nline 3\n" || len(updates) == 0 || updates[len(updates)-1] != "line 1\nline 2\nline 3\n" {
		t.Errorf("plain: %+v, updates %q", r, updates)
	}
	mu.Unlock()
	if got := ui.commands(); len(got) != 0 {
		t.Fatalf("a plain command opened the overlay: %q", got)
	}
	r = te.exec(t, ToolParams{Command: `read -p "name? " n; echo "hi $n"`})
	if r.IsError || !strings.HasSuffix(r.Content, "hi bob\n") {
		t.Errorf("prompt: %+v", r)
	}
	if got := ui.commands(); len(got) != 1 {
		t.Fatalf("a prompt did not open the overlay: %q", got)
	}
	ui.onAttach = func(s *pty.Session) {
		for !strings.Contains(strings.Join(s.Screen().Text(), "\n"), "FULL") {
			select {
			case <-s.Screen().Changed():
			case <-s.Done():
				return
			}
		}
		_, _ = s.Write([]byte("q"))
	}
	// Echo goes off before FULL shows: a key typed before `read -s`
	// would be echoed onto the screen, as in a terminal.
	r = te.exec(t, ToolParams{Command: `stty -echo; printf '\e[?1049h\e[HFULL SCREEN\n'; read -rsn1 k; printf '\e[?1049l'; echo after`})
	if got := ui.commands(); len(got) != 2 {
		t.Fatalf("the alternate screen did not open the overlay: %q", got)
	}
	if r.IsError || r.Content != "FULL SCREEN\n" {
		t.Errorf("full screen result: %+v", r)
	}
}
