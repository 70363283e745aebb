package pty

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fidelity tests run one program at one size both in a PTY session and
// in tmux (the reference terminal), send both the same keys, and require
// the same screen: the text of every row and the cursor position.

// key is one input step: the bytes our session gets and the tmux send-keys
// arguments that type the same thing.
type key struct {
	ours []byte
	tmux []string
}

func lit(s string) key        { return key{[]byte(s), []string{"-l", s}} }
func named(n, seq string) key { return key{[]byte(seq), []string{n}} }
func enter() key              { return named("Enter", "\r") }
func up() key                 { return named("Up", "\x1b[A") }
func down() key               { return named("Down", "\x1b[B") }
func right() key              { return named("Right", "\x1b[C") }
func left() key               { return named("Left", "\x1b[D") }
func times(n int, k key) []key {
	out := make([]key, n)
	for i := range out {
		out[i] = k
	}
	return out
}
func keys(groups ...[]key) []key {
	var out []key
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// step waits until both screens show until (and have settled), then
// compares them if check is set, then types keys.
type step struct {
	until string
	check bool
	keys  []key
}

type fidelityCase struct {
	name       string
	cmd        string
	cols, rows int
	files      map[string]string // created in the working directory
	needs      []string          // programs that must be installed
	final      string            // text the final screen shows ("" = any)
	steps      []step
}

// screenState is what is compared.
type screenState struct {
	rows   []string
	cx, cy int
}

func (s screenState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cursor %d,%d\n", s.cx, s.cy)
	for i, r := range s.rows {
		fmt.Fprintf(&b, "%3d|%s\n", i, r)
	}
	return b.String()
}

func normRows(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.TrimRight(r, " ")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func (s screenState) equal(o screenState) bool {
	if s.cx != o.cx || s.cy != o.cy || len(s.rows) != len(o.rows) {
		return false
	}
	for i := range s.rows {
		if s.rows[i] != o.rows[i] {
			return false
		}
	}
	return true
}

// tmuxPane is the reference terminal: a private tmux server with one pane.
type tmuxPane struct {
	t    *testing.T
	sock string
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *tmuxPane) state() screenState {
	text := p.run("capture-pane", "-p", "-t", "fid")
	var x, y int
	fmt.Sscanf(p.run("display-message", "-p", "-t", "fid", "#{cursor_x} #{cursor_y}"), "%d %d", &x, &y)
	return screenState{rows: normRows(strings.Split(strings.TrimSuffix(text, "\n"), "\n")), cx: x, cy: y}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// startTmux starts the program in a tmux pane of exactly cols×rows with
// the same environment our session gets.
func startTmux(t *testing.T, dir string, env []string, shell, cmd string, cols, rows int) *tmuxPane {
	p := &tmuxPane{t: t, sock: fmt.Sprintf("agentsh-fid-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.sock, "kill-server").Run() })
	script := filepath.Join(t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("cd " + shellQuote(dir) + " || exit 1\nexec env -i")
	for _, kv := range env {
		b.WriteString(" " + shellQuote(kv))
	}
	// The shell stays after the program: when a pane's process exits, tmux
	// may drop output it has not parsed yet and writes "Pane is dead" into
	// the screen, so the program's final screen is read from a live pane.
	b.WriteString(" TERM=xterm-256color " + shellQuote(shell) + " -lc " + shellQuote(cmd+"\nexec sleep 100000") + "\n")
	if err := os.WriteFile(script, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	// A placeholder first, so the status line is off and the pane has its
	// final size before the program starts.
	p.run("new-session", "-d", "-s", "fid", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "sleep 1000")
	p.run("set-option", "-g", "status", "off")
	p.run("resize-window", "-t", "fid", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
	p.run("respawn-pane", "-k", "-t", "fid", "/bin/sh "+script)
	return p
}

func ourState(s *Session) screenState {
	x, y, _ := s.Screen().Cursor()
	return screenState{rows: normRows(s.Screen().Text()), cx: x, cy: y}
}

// settle waits until both screens contain want and neither changed for a
// while, and returns the two states.
func settle(t *testing.T, s *Session, p *tmuxPane, want string) (screenState, screenState) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	var a0, b0 screenState
	stable := 0
	for time.Now().Before(deadline) {
		a, b := ourState(s), p.state()
		ok := strings.Contains(strings.Join(a.rows, "\n"), want) && strings.Contains(strings.Join(b.rows, "\n"), want)
		if ok && a.equal(a0) && b.equal(b0) {
			if stable++; stable >= 3 {
				return a, b
			}
		} else {
			stable = 0
		}
		a0, b0 = a, b
		// The pause is part of what settled means: unchanged over three
		// looks this far apart.
		time.Sleep(60 * time.Millisecond)
	}
	t.Fatalf("screens never settled showing %q\nours:\n%v\ntmux:\n%v", want, a0, b0)
	return a0, b0
}

func runFidelity(t *testing.T, fc fidelityCase) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	for _, n := range fc.needs {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed", n)
		}
	}
	dir := t.TempDir()
	for name, body := range fc.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := testEnv(t)
	clean := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX") && !strings.HasPrefix(kv, "TERM=") {
			clean = append(clean, kv)
		}
	}
	env = clean
	shell := bashPath(t)
	s := Start(context.Background(), Options{Shell: shell, Command: fc.cmd, Cwd: dir, Env: env, Cols: fc.cols, Rows: fc.rows})
	defer s.Close()
	p := startTmux(t, dir, env, shell, fc.cmd, fc.cols, fc.rows)

	for i, st := range fc.steps {
		a, b := settle(t, s, p, st.until)
		if st.check && !a.equal(b) {
			t.Fatalf("step %d (%q): screens differ\nours:\n%v\ntmux:\n%v", i, st.until, a, b)
		}
		for _, k := range st.keys {
			if _, err := s.Write(k.ours); err != nil {
				t.Fatalf("step %d: write: %v", i, err)
			}
			p.run(append([]string{"send-keys", "-t", "fid"}, k.tmux...)...)
			time.Sleep(15 * time.Millisecond) // one key at a time, as typed
		}
	}
	// The program must end; then the final screens must match.
	select {
	case <-s.Done():
	case <-time.After(hangGuard):
		t.Fatal("our session did not end")
	}
	if a, b := settle(t, s, p, fc.final); !a.equal(b) {
		t.Fatalf("final screens differ\nours:\n%v\ntmux:\n%v", a, b)
	}
}

func TestFidelityVimCJK(t *testing.T) {
	var body strings.Builder
	body.WriteString("plain ascii line\n日本語のテキスト with CJK\nemoji 👍 and 🎉 mixed\n中文字符 tab\there\n")
	for i := 5; i <= 60; i++ {
		fmt.Fprintf(&body, "line %d 漢字 %d\n", i, i*i)
	}
	runFidelity(t, fidelityCase{
		name: "vim", cmd: "vim -u NONE -i NONE -N -n notes.txt", cols: 80, rows: 24,
		needs: []string{"vim"},
		files: map[string]string{"notes.txt": body.String()},
		steps: []step{
			{until: "plain ascii line", check: true, keys: keys(times(2, down()), times(5, right()))},
			{until: "emoji", check: true, keys: keys(times(30, down()), times(3, up()), times(4, left()))},
			{until: "line 30", check: true, keys: []key{lit(":q!"), enter()}},
		},
	})
}

func TestFidelityLess(t *testing.T) {
	var body strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&body, "%04d the quick brown fox jumps over the lazy dog %s\n", i, strings.Repeat("=", i%50))
	}
	runFidelity(t, fidelityCase{
		name: "less", cmd: "less long.txt", cols: 100, rows: 30,
		needs: []string{"less"},
		files: map[string]string{"long.txt": body.String()},
		steps: []step{
			{until: "0001 the", check: true, keys: []key{lit(" ")}},
			{until: "0058 the", check: true, keys: []key{lit(" "), lit("j"), lit("j")}},
			{until: "0089 the", check: true, keys: []key{lit("b")}},
			{until: "0032 the", check: true, keys: []key{lit("G")}},
			{until: "0500 the", check: true, keys: []key{lit("q")}},
		},
		final: "0500 the", // LESS=FRX: no alternate screen, the last page stays
	})
}

func TestFidelityPythonREPL(t *testing.T) {
	runFidelity(t, fidelityCase{
		name: "python3", cmd: "python3 -q", cols: 80, rows: 20,
		needs: []string{"python3"},
		steps: []step{
			{until: ">>>", check: true, keys: keys([]key{lit("print(1+2)")}, times(3, left()), []key{lit("*10")}, []key{enter()})},
			{until: "10", check: true, keys: keys([]key{lit("x = 'héllo 世界'")}, []key{enter(), lit("x")}, []key{enter()}, []key{up(), up(), enter()})},
			{until: "'héllo 世界'", check: true, keys: []key{lit("exit()"), enter()}},
		},
		final: "exit()",
	})
}

func TestFidelityColorsAndWide(t *testing.T) {
	cmd := `for i in 0 1 9 46 196 231 255; do printf '\e[38;5;%dmcolor%d\e[0m ' $i $i; done; echo
printf '\e[38;2;255;100;0mtrue\e[48;2;0;0;200mcolor\e[0m\n'
printf '\e[1mbold\e[22m \e[3mitalic\e[23m \e[4munder\e[24m \e[7mrev\e[27m\n'
printf '日本語|X\n👍|X\ne\xcc\x81|X\n'
printf 'wide at the edge: %74s日本\n' ''
printf 'tab\tstop\tnext\n'`
	runFidelity(t, fidelityCase{name: "colors", cmd: cmd, cols: 80, rows: 12, final: "tab", steps: []step{{until: "color0"}}})
}

func TestFidelityProgressBar(t *testing.T) {
	cmd := `for i in $(seq 0 5 100); do printf '\rprogress [%-20s] %3d%%' "$(printf '%*s' $((i/5)) '' | tr ' ' '#')" $i; sleep 0.01; done; echo; echo done`
	runFidelity(t, fidelityCase{name: "progress", cmd: cmd, cols: 60, rows: 8, final: "done", steps: []step{{until: "progress"}}})
}

func TestFidelitySeqFlood(t *testing.T) {
	runFidelity(t, fidelityCase{name: "seq", cmd: "seq 1 100000", cols: 80, rows: 24, final: "100000", steps: []step{{until: ""}}})
}
