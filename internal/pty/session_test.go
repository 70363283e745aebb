package pty

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// hangGuard bounds any single wait in these tests: a run that would hang
// fails instead.
const hangGuard = 20 * time.Second

var bashPath = proctest.BashPath

// testMark returns an environment entry unique to the test, so a /proc scan
// can prove that nothing of the run survived.
func testMark(t testing.TB) string {
	return fmt.Sprintf("AGENTSH_PTY_TEST=%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
}

// testEnv is the hardened environment with HOME in a temporary folder: the
// login shell then reads no user profile, whose cost (pyenv, nvm…) would
// dominate every run.
func testEnv(t testing.TB, extra ...string) []string {
	m := map[string]string{"HOME": t.TempDir()}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return BuildEnv(os.Environ(), m)
}

func startBash(t testing.TB, ctx context.Context, command string, mod func(*Options)) (*Session, string) {
	t.Helper()
	mark := testMark(t)
	opts := Options{
		Shell: bashPath(t), Command: command, Cwd: t.TempDir(),
		Env:  testEnv(t, mark),
		Cols: 80, Rows: 24,
	}
	if mod != nil {
		mod(&opts)
	}
	return Start(ctx, opts), mark
}

func wait(t testing.TB, s *Session) Result {
	t.Helper()
	select {
	case <-s.Done():
		return s.Wait()
	case <-time.After(hangGuard):
		s.Kill()
		t.Fatalf("session did not end within %v", hangGuard)
		return Result{}
	}
}

// waitScreen polls until the screen text satisfies ok.
func waitScreen(t testing.TB, s *Session, what string, ok func(string) bool) {
	t.Helper()
	testkit.Eventually(t, hangGuard, "the screen to show "+what, func() (bool, string) {
		text := strings.Join(s.Screen().Text(), "\n")
		return ok(text), "screen:\n" + text
	})
}

func noSurvivors(t testing.TB, mark string) {
	t.Helper()
	if pids := proctest.Marked(mark); len(pids) > 0 {
		t.Fatalf("processes of the run survived: %v", pids)
	}
}

func TestExitCodeOutputAndScreen(t *testing.T) {
	s, mark := startBash(t, context.Background(), `printf 'hello\nworld\n'; exit 3`, nil)
	r := wait(t, s)
	if r.ExitCode == nil || *r.ExitCode != 3 {
		t.Fatalf("exit code = %v, want 3", r.ExitCode)
	}
	if r.Cancelled || r.TimedOut {
		t.Fatalf("flags: %+v", r)
	}
	if r.Output != "hello\nworld\n" {
		t.Fatalf("output = %q", r.Output)
	}
	if got := s.Screen().Text(); len(got) < 2 || got[0] != "hello" || got[1] != "world" {
		t.Fatalf("screen = %q", got)
	}
	noSurvivors(t, mark)
	if _, err := s.Write([]byte("x")); err != ErrNotRunning {
		t.Fatalf("Write after the end: %v, want ErrNotRunning", err)
	}
}

func TestTerminalEnvironment(t *testing.T) {
	s, _ := startBash(t, context.Background(),
		`test -t 0 && test -t 1 && echo TTY; echo "term=$TERM pager=$PAGER editor=$GIT_EDITOR ci=$CI"; stty size; pwd`,
		func(o *Options) { o.Cols, o.Rows = 1000, 2 })
	r := wait(t, s)
	want := "TTY\nterm=xterm-256color pager=cat editor=true ci=1\n5 400\n"
	if !strings.HasPrefix(r.Output, want) {
		t.Fatalf("output = %q, want prefix %q", r.Output, want)
	}
	if c, rows := s.Screen().Size(); c != 400 || rows != 5 {
		t.Fatalf("screen size %dx%d, want 400x5", c, rows)
	}
}

// TestNotALoginShellAndCwd: the program runs in cwd from a
// shell that is not a login shell: no profile runs at each start (it
// would reset PATH and repeat its work).
func TestNotALoginShellAndCwd(t *testing.T) {
	dir := t.TempDir()
	s, _ := startBash(t, context.Background(), `shopt -q login_shell && echo login; pwd`,
		func(o *Options) { o.Cwd = dir })
	r := wait(t, s)
	real, _ := filepath.EvalSymlinks(dir)
	if r.Output != real+"\n" && r.Output != dir+"\n" {
		t.Fatalf("output = %q", r.Output)
	}
}

func TestInputReachesProgram(t *testing.T) {
	s, _ := startBash(t, context.Background(), `echo ready; read -r line; echo "got:$line"`, nil)
	waitScreen(t, s, "ready", func(x string) bool { return strings.Contains(x, "ready") })
	if _, err := s.Write([]byte("abc\r")); err != nil {
		t.Fatal(err)
	}
	r := wait(t, s)
	if !strings.Contains(r.Output, "got:abc\n") {
		t.Fatalf("output = %q", r.Output)
	}
}

// TestArrowFollowsDECCKM checks the bytes a program receives for an arrow
// key, with and without application cursor mode.
func TestArrowFollowsDECCKM(t *testing.T) {
	for _, tc := range []struct {
		name, setup, want string
	}{
		{"normal", `printf '\e[?1l'`, `\E[A`},
		{"application", `printf '\e[?1h'`, `\EOA`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := startBash(t, context.Background(),
				tc.setup+`; stty raw -echo; echo; echo ready; k=$(dd bs=1 count=3 2>/dev/null); stty sane; printf '%q\n' "$k"`, nil)
			waitScreen(t, s, "ready", func(x string) bool { return strings.Contains(x, "ready") })
			// Kitty's form of a plain up arrow; the legacy form must work too.
			if _, err := s.Write([]byte("\x1b[1;1A")); err != nil {
				t.Fatal(err)
			}
			r := wait(t, s)
			if !strings.Contains(r.Output, "$'"+tc.want+"'") {
				t.Fatalf("output = %q, want %s", r.Output, tc.want)
			}
		})
	}
}

// TestQueriesAnswered: a program asking the terminal for its attributes
// and cursor position gets replies, and nothing blocks.
func TestQueriesAnswered(t *testing.T) {
	s, _ := startBash(t, context.Background(),
		`stty -echo -icanon; printf 'ab\e[c'; IFS= read -r -d c -t 5 da; printf '\e[6n'; IFS= read -r -d R -t 5 cpr; stty sane; printf '\nda=%q cpr=%q\n' "$da" "$cpr"`, nil)
	r := wait(t, s)
	if !strings.Contains(r.Output, `da=$'\E[?`) || !strings.Contains(r.Output, `cpr=$'\E[1;3'`) {
		t.Fatalf("output = %q", r.Output)
	}
}

func TestResizeReachesProgram(t *testing.T) {
	s, _ := startBash(t, context.Background(),
		// Polled rather than trapped: bash drops a SIGWINCH that arrives
		// while its WINCH trap still runs.
		`echo ready; last=; for i in $(seq 400); do s=$(stty size); [ "$s" != "$last" ] && echo "size $s"; last=$s; sleep 0.05; done`, nil)
	defer s.Close()
	waitScreen(t, s, "ready", func(x string) bool { return strings.Contains(x, "ready") })
	s.Resize(100, 30)
	waitScreen(t, s, "the new size", func(x string) bool { return strings.Contains(x, "size 30 100") })
	s.Resize(5, 1000)
	waitScreen(t, s, "the clamped size", func(x string) bool { return strings.Contains(x, "size 200 20") })
	if c, r := s.Screen().Size(); c != 20 || r != 200 {
		t.Fatalf("screen %dx%d, want 20x200", c, r)
	}
}

// TestKillLeavesNothing: esc kills the foreground program, background jobs
// that ignore SIGHUP and SIGTERM, and a process that left the session.
func TestKillLeavesNothing(t *testing.T) {
	s, mark := startBash(t, context.Background(),
		`(trap '' HUP TERM; sleep 1000) & setsid sleep 1000 & sh -c 'trap "" HUP; sleep 1000' & echo ready; sleep 1000`, nil)
	waitScreen(t, s, "ready", func(x string) bool { return strings.Contains(x, "ready") })
	// bash, its sleep, the subshell (or the sleep it execs), the setsid
	// sleep and sh (or its sleep): wait until they have all been forked.
	testkit.Eventually(t, hangGuard, "the run's 5 processes", func() (bool, string) {
		pids := proctest.Marked(mark)
		return len(pids) >= 5, fmt.Sprintf("processes %v", pids)
	})
	s.Kill()
	r := wait(t, s)
	if !r.Cancelled || r.TimedOut || r.ExitCode != nil {
		t.Fatalf("result flags: cancelled=%v timedOut=%v exit=%v", r.Cancelled, r.TimedOut, r.ExitCode)
	}
	if !strings.HasPrefix(r.Output, "[Command cancelled]\n") || !strings.Contains(r.Output, "ready") {
		t.Fatalf("output = %q", r.Output)
	}
	noSurvivors(t, mark)
}

func TestTimeout(t *testing.T) {
	s, mark := startBash(t, context.Background(), `echo started; sleep 1000`,
		func(o *Options) { o.Timeout = time.Second })
	r := wait(t, s)
	if !r.TimedOut || r.Cancelled || r.ExitCode != nil {
		t.Fatalf("flags: %+v", r)
	}
	if r.Output != "[Command timed out after 1 seconds]\nstarted\n" {
		t.Fatalf("output = %q", r.Output)
	}
	noSurvivors(t, mark)
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, mark := startBash(t, ctx, `echo started; sleep 1000`, nil)
	waitScreen(t, s, "started", func(x string) bool { return strings.Contains(x, "started") })
	cancel()
	r := wait(t, s)
	if !r.Cancelled || r.ExitCode != nil {
		t.Fatalf("flags: %+v", r)
	}
	noSurvivors(t, mark)
}

// TestDetachedHolderDoesNotHang: a descendant that ignores SIGHUP keeps the
// slave open after the shell exits; completion must not wait for it, and it
// must not outlive the session.
func TestDetachedHolderDoesNotHang(t *testing.T) {
	s, mark := startBash(t, context.Background(), `(trap '' HUP; sleep 1000; echo late) & echo done`, nil)
	r := wait(t, s)
	if r.ExitCode == nil || *r.ExitCode != 0 || r.Output != "done\n" {
		t.Fatalf("result: exit=%v output=%q", r.ExitCode, r.Output)
	}
	noSurvivors(t, mark)
}

func TestSignalDeathExitCode(t *testing.T) {
	s, _ := startBash(t, context.Background(), `kill -SEGV $$`, nil)
	r := wait(t, s)
	if r.ExitCode == nil || *r.ExitCode != 128+11 {
		t.Fatalf("exit code = %v, want 139", r.ExitCode)
	}
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
	}{
		{"missing shell", func(o *Options) { o.Shell = "/nonexistent/shell" }},
		{"missing cwd", func(o *Options) { o.Cwd = "/nonexistent/dir" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := startBash(t, context.Background(), `echo hi`, tc.mod)
			r := wait(t, s)
			if r.ExitCode != nil || r.Cancelled || r.TimedOut {
				t.Fatalf("flags: %+v", r)
			}
			if !strings.HasPrefix(r.Output, "PTY error: ") {
				t.Fatalf("output = %q", r.Output)
			}
			if _, err := s.Write([]byte("x")); err != ErrNotRunning {
				t.Fatalf("Write: %v", err)
			}
		})
	}
}

// TestFloodEveryByteKept: the sink gets every byte of a flood (artifact
// sha256), CRLF normalized, while the screen ends on the last lines.
func TestFloodEveryByteKept(t *testing.T) {
	art := filepath.Join(t.TempDir(), "0.bash.log")
	s, _ := startBash(t, context.Background(), `seq 1 200000`, func(o *Options) {
		o.ArtifactPath, o.ArtifactID = art, "0"
	})
	r := wait(t, s)
	want, err := exec.Command("seq", "1", "200000").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.ArtifactID != "0" || r.TotalLines != 200000 || r.TotalBytes != len(want) {
		t.Fatalf("summary: %+v", r.Summary)
	}
	got, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(want) {
		t.Fatalf("artifact differs from seq's output (%d vs %d bytes)", len(got), len(want))
	}
	if !bytes.HasSuffix(want, []byte(r.Output)) {
		t.Fatal("the tail is not the end of the output")
	}
	rows := s.Screen().Text()
	if len(rows) != 24 || rows[22] != "200000" || rows[0] != "199978" {
		t.Fatalf("screen rows: first %q, row 22 %q (of %d)", rows[0], rows[len(rows)-2], len(rows))
	}
	if x, y, _ := s.Screen().Cursor(); x != 0 || y != 23 {
		t.Fatalf("cursor at %d,%d, want 0,23", x, y)
	}
}

// TestNoLeaks starts and ends many sessions and checks that no descriptor
// and no goroutine is left behind.
func TestNoLeaks(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	sh := bashPath(t)
	dir := t.TempDir()
	env := testEnv(t)
	one := func(i int) {
		s := Start(context.Background(), Options{Shell: sh, Command: "echo $((" + fmt.Sprint(i) + "+1))", Cwd: dir, Env: env, Cols: 40, Rows: 10})
		if i%2 == 1 {
			s.Kill()
		}
		r := wait(t, s)
		if i%2 == 0 && (r.ExitCode == nil || r.Output != fmt.Sprint(i+1)+"\n") {
			t.Fatalf("run %d: exit=%v output=%q", i, r.ExitCode, r.Output)
		}
	}
	one(0) // warm up lazily started runtime goroutines and descriptors
	fds0, g0 := countFDs(t), runtime.NumGoroutine()
	for i := 1; i <= n; i++ {
		one(i)
	}
	testkit.Eventually(t, hangGuard, fmt.Sprintf("the descriptors and goroutines of %d sessions to go", n), func() (bool, string) {
		fds, g := countFDs(t), runtime.NumGoroutine()
		return fds <= fds0 && g <= g0, fmt.Sprintf("fds %d → %d, goroutines %d → %d", fds0, fds, g0, g)
	})
}

func countFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestKillDuringDrainKeepsExitCode: esc pressed after the program ended by
// itself (while a leftover holder keeps the drain going) must not turn its
// exit code into a cancel.
func TestKillDuringDrainKeepsExitCode(t *testing.T) {
	s, mark := startBash(t, context.Background(), `(trap '' HUP; exec sleep 1000) & echo bye; exit 7`, nil)
	// Once the drain began, the session has seen the exit; the drain then
	// waits 300 ms for the holder, well after the Kill below.
	testkit.Eventually(t, hangGuard, "the drain after the shell's exit", func() (bool, string) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", s.Pid()))
		return s.drainFrom.Load() != 0, fmt.Sprintf("not draining yet; the shell's /proc entry: %v", err)
	})
	s.Kill()
	r := wait(t, s)
	if r.Cancelled || r.ExitCode == nil || *r.ExitCode != 7 || r.Output != "bye\n" {
		t.Fatalf("result: cancelled=%v exit=%v output=%q", r.Cancelled, r.ExitCode, r.Output)
	}
	noSurvivors(t, mark)
}
