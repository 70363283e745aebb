package bash

import (
	"agentsh/internal/jobs"
	"agentsh/internal/proc"
	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hang guards: generous bounds so a hang fails instead of blocking CI.
const hangGuard = 30 * time.Second

func testShell(t testing.TB) ShellConfig {
	t.Helper()
	p, err := ResolveShell("")
	if err != nil {
		t.Fatal(err)
	}
	return ShellConfig{Path: p, TerminalStdin: os.Getenv("AGENTSH_TEST_TTY") == "1"}
}

func newTestExecutor(t testing.TB) *Executor {
	e := NewExecutor()
	t.Cleanup(e.Close)
	return e
}

// modeOpts gives opts a job manager when the suite runs on the modes'
// shells (AGENTSH_TEST_TTY=1: a terminal as stdin, and a manager for the
// commands that wait on it); a Prestart must get the same options as the
// run it serves.
func modeOpts(t testing.TB, opts RunOptions) RunOptions {
	if opts.Shell.TerminalStdin && opts.Jobs == nil && os.Getenv("AGENTSH_TEST_TTY") == "1" {
		m := jobs.NewManager()
		t.Cleanup(m.Close)
		opts.Jobs = m
	}
	return opts
}

// run executes a command with a hang guard and returns the result.
func run(t *testing.T, e *Executor, cmd string, opts RunOptions) BashResult {
	t.Helper()
	if opts.Shell.Path == "" {
		opts.Shell = testShell(t)
	}
	opts = modeOpts(t, opts)
	type out struct {
		r   BashResult
		err error
	}
	ch := make(chan out, 1)
	go func() {
		r, err := e.Run(context.Background(), cmd, opts)
		ch <- out{r, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("Run(%q): %v", short(cmd), o.err)
		}
		return o.r
	case <-time.After(hangGuard):
		t.Fatalf("Run(%q) hung", short(cmd))
	}
	return BashResult{}
}

// short keeps failure messages readable for huge commands.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func code(r BashResult) string {
	if r.ExitCode == nil {
		return "nil"
	}
	return strconv.Itoa(*r.ExitCode)
}

func expect(t *testing.T, r BashResult, output string, exit string) {
	t.Helper()
	if r.Output != output || code(r) != exit {
		t.Fatalf("got output %q exit %s; want %q exit %s", short(r.Output), code(r), short(output), exit)
	}
}

func TestReuseSameShell(t *testing.T) {
	e := newTestExecutor(t)
	a := run(t, e, "echo $$", RunOptions{})
	b := run(t, e, "echo $$", RunOptions{})
	if a.Output == "" || a.Output != b.Output {
		t.Fatalf("second run used another shell: %q vs %q", a.Output, b.Output)
	}
	c := run(t, e, "echo $$", RunOptions{SessionKey: "other"})
	if c.Output == a.Output {
		t.Fatalf("a different session key shared the shell %q", c.Output)
	}
}

func TestStatePersists(t *testing.T) {
	e := newTestExecutor(t)
	dir := t.TempDir()
	expect(t, run(t, e, "export FOO=bar; greet() { echo \"hi $1\"; }; LOCALV=1; cd /", RunOptions{Cwd: dir}), "", "0")
	expect(t, run(t, e, "echo $FOO; greet you; echo $LOCALV; pwd", RunOptions{Cwd: dir}), "bar\nhi you\n1\n"+dir+"\n", "0")
	// Without a cwd (bang commands), a cd carries over.
	expect(t, run(t, e, "cd /tmp", RunOptions{SessionKey: "bang"}), "", "0")
	expect(t, run(t, e, "pwd", RunOptions{SessionKey: "bang"}), "/tmp\n", "0")
}

func TestMergedStreamsAndExitCode(t *testing.T) {
	e := newTestExecutor(t)
	expect(t, run(t, e, "echo out; echo err >&2; echo out2; (exit 7)", RunOptions{}), "out\nerr\nout2\n", "7")
	expect(t, run(t, e, "false", RunOptions{}), "", "1")
	expect(t, run(t, e, "printf 'no newline'", RunOptions{}), "no newline", "0")
}

func TestStdinIsDevNull(t *testing.T) {
	if os.Getenv("AGENTSH_TEST_TTY") == "1" {
		t.Skip("stdin is a terminal in this run (see detach_test.go)")
	}
	e := newTestExecutor(t)
	expect(t, run(t, e, "cat", RunOptions{}), "", "0")
	expect(t, run(t, e, "read x; echo \"rc=$? x=$x\"", RunOptions{}), "rc=1 x=\n", "0")
	expect(t, run(t, e, "echo still here", RunOptions{}), "still here\n", "0")
}

func TestPitfalls(t *testing.T) {
	big := strings.Repeat(": "+strings.Repeat("a", 98)+"\n", 10500) + "echo big done"
	cases := []struct {
		name, cmd, out, exit string
	}{
		{"syntax error", "echo 'x", "bash: eval: line 1: unexpected EOF while looking for matching `''\n", "2"},
		{"exit 3", "echo before; exit 3", "before\n", "3"},
		{"exec true", "exec true", "", "0"},
		{"set -e false", "set -e; false; echo not reached", "", "1"},
		{"kill -9 self", "echo x; kill -9 $$", "x\n", "137"},
		{"trap exit", "trap 'echo bye' EXIT; echo hi", "hi\n", "0"},
		{"exec redirect", "exec >/dev/null; echo hidden", "", "0"},
		{"exec stdin", "exec </dev/null; echo fine", "fine\n", "0"},
		{"close fds", "exec 3>&- 9>&- 1>&-; echo gone >&2", "gone\n", "0"},
		{"1MB command", big, "big done\n", "0"},
		{"heredoc", "cat <<'EOF'\n  indented $HOME\n\ttab\nEOF", "  indented $HOME\n\ttab\n", "0"},
		{"unicode and NUL", `printf 'h\xc3\xa9llo\0w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x98\x80\n'`, "héllowörld ✓ 😀\n", "0"},
		{"alias in command", "alias hello='echo aliased'\nhello", "aliased\n", "0"},
		{"return at top level", "return 4", "", "1"},
		{"close the kept stdin fd", "exec 62<&-; echo ok", "ok\n", "0"},
		{"aliases off", "shopt -u expand_aliases; unalias -a; echo ok", "ok\n", "0"},
		{"digits in IFS", "IFS=1; (exit 12)", "", "12"},
		{"allexport and a big command", "set -a; /bin/true " + strings.Repeat("x ", 100000), "", "0"},
	}
	e := newTestExecutor(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, e, c.cmd, RunOptions{})
			if c.name == "syntax error" {
				// bash's wording of the location differs between versions.
				if !strings.Contains(r.Output, "unexpected EOF while looking for matching") || code(r) != c.exit {
					t.Fatalf("got %q exit %s", r.Output, code(r))
				}
			} else if c.name == "return at top level" {
				if !strings.Contains(r.Output, "return") || code(r) == "0" {
					t.Fatalf("got %q exit %s", r.Output, code(r))
				}
			} else {
				expect(t, r, c.out, c.exit)
			}
			// The next run on the same key works and sees nothing of this one.
			expect(t, run(t, e, "echo next", RunOptions{}), "next\n", "0")
		})
	}
}

func TestBackgroundJobHoldingOutputDoesNotHang(t *testing.T) {
	e := newTestExecutor(t)
	r := run(t, e, "sleep 100 & echo started", RunOptions{})
	expect(t, r, "started\n", "0")
	// The job keeps running in its session until eviction.
	r = run(t, e, "jobs -r | wc -l", RunOptions{})
	expect(t, r, "1\n", "0")
}

func TestBackgroundServerSurvivesBetweenRuns(t *testing.T) {
	// The folder first: cleanups run last-in first-out, so the executor's
	// (which ends the server) runs before the folder is removed.
	dir := t.TempDir()
	e := newTestExecutor(t)
	// A "server" that keeps logging to the first run's output after it ended.
	r := run(t, e, fmt.Sprintf("(while :; do date > %s/beat; echo log; sleep 0.05; done) & echo $!", dir), RunOptions{})
	// When it kept writing through the drain window (a loaded machine may
	// pause it longer than the drain's silence), the result says so first.
	// The server may print "log" before the shell prints its pid.
	pid := ""
	for _, f := range strings.Fields(strings.TrimPrefix(r.Output, "["+LingerNotice+"]\n")) {
		if _, err := strconv.Atoi(f); err == nil {
			pid = f
			break
		}
	}
	if pid == "" {
		t.Fatalf("no pid in %q", r.Output)
	}
	// It still runs after the run has ended: it writes its beat again.
	ended := time.Now()
	testkit.Eventually(t, hangGuard, "the server's beat after the run ended", func() (bool, string) {
		st, err := os.Stat(filepath.Join(dir, "beat"))
		if err != nil {
			return false, err.Error()
		}
		return st.ModTime().After(ended), "beat written at " + st.ModTime().Format(time.StampMicro) + ", run ended at " + ended.Format(time.StampMicro)
	})
	r = run(t, e, "kill -0 "+pid+" && echo alive", RunOptions{})
	expect(t, r, "alive\n", "0")
}

func TestNoOutputLeaksIntoLaterRuns(t *testing.T) {
	e := newTestExecutor(t)
	r := run(t, e, "(sleep 0.4; for i in $(seq 30); do echo LEAK; sleep 0.02; done) & echo first", RunOptions{})
	expect(t, r, "first\n", "0")
	r = run(t, e, "sleep 1; echo second", RunOptions{})
	expect(t, r, "second\n", "0")
}

func TestParallelRunsGetSeparateShells(t *testing.T) {
	e := newTestExecutor(t)
	dir := t.TempDir()
	flag, started := filepath.Join(dir, "go"), filepath.Join(dir, "started")
	// Warm one shell so the first call below reuses it.
	warm := run(t, e, "echo $$", RunOptions{})
	var wg sync.WaitGroup
	var a BashResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = run(t, e, fmt.Sprintf("touch %s; while [ ! -e %s ]; do sleep 0.01; done; echo $$", started, flag), RunOptions{})
	}()
	// The first call holds its shell before the second starts.
	testkit.Eventually(t, hangGuard, "the first call to start", func() (bool, string) {
		_, err := os.Stat(started)
		return err == nil, fmt.Sprint(err)
	})
	// If the second call queued behind the first, it would never finish
	// before the flag exists and the hang guard would fire.
	b := run(t, e, "echo $$", RunOptions{})
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if a.Output == b.Output {
		t.Fatalf("parallel runs shared shell %s", a.Output)
	}
	if a.Output != warm.Output && b.Output != warm.Output {
		t.Fatalf("warm shell %s not reused (%s, %s)", warm.Output, a.Output, b.Output)
	}
}

// markerProcs lists live processes whose environment carries entry kv.
func markerProcs(kv string) []int {
	var out []int
	for _, p := range proc.List() {
		if p.State != 'Z' && p.Pid != os.Getpid() && proc.EnvironHas(p.Pid, []byte(kv)) {
			out = append(out, p.Pid)
		}
	}
	return out
}

const escapees = `echo "mark=$` + markerVar + `"
(sleep 1000 &)
setsid sleep 1000 &
(setsid bash -c 'sleep 1000 & disown' &)
( ( (sleep 1000) & ) & )
bash -c 'trap "" TERM; while :; do sleep 0.05; done' &
nohup sleep 1000 >/dev/null 2>&1 &
echo ready
sleep 1000
`

func runCancellable(t *testing.T, e *Executor, opts RunOptions, cancelOn string) (BashResult, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen bytes.Buffer
	var cancelledAt time.Time
	opts.Shell = testShell(t)
	opts.OnChunk = func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen.Write(b)
		if cancelOn != "" && strings.Contains(seen.String(), cancelOn) && cancelledAt.IsZero() {
			// The escapees fork in the background: cancel once their five
			// sleeps run, so the cancel has them all to end.
			kv := markerVar + "=" + markIn(seen.String())
			if ok, state := testkit.Poll(hangGuard, func() (bool, string) {
				s := markedSleeps(kv)
				return len(s) >= 5, fmt.Sprintf("sleeps %v", s)
			}); !ok {
				t.Errorf("the escapees never all ran: %s", state)
			}
			cancelledAt = time.Now()
			cancel()
		}
	}
	done := make(chan BashResult, 1)
	go func() {
		r, err := e.Run(ctx, escapees, opts)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	select {
	case r := <-done:
		mu.Lock()
		defer mu.Unlock()
		mark := markIn(seen.String())
		var took time.Duration
		if !cancelledAt.IsZero() {
			took = time.Since(cancelledAt)
		}
		return r, mark, took
	case <-time.After(hangGuard):
		t.Fatal("cancelled run did not return")
	}
	return BashResult{}, "", 0
}

// markIn is the marker a run of escapees printed ("mark=…") in out.
func markIn(out string) string {
	mark := ""
	for _, l := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(l, "mark="); ok {
			mark = m
		}
	}
	return mark
}

// markedSleeps lists the live `sleep 1000` processes whose environment
// carries kv.
func markedSleeps(kv string) []int {
	var out []int
	for _, pid := range markerProcs(kv) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && string(b) == "sleep\x001000\x00" {
			out = append(out, pid)
		}
	}
	return out
}

func TestCancelKillsEverything(t *testing.T) {
	e := newTestExecutor(t)
	r, mark, _ := runCancellable(t, e, RunOptions{}, "ready")
	if mark == "" {
		t.Fatalf("no marker in output %q", r.Output)
	}
	if !r.Cancelled || r.ExitCode != nil || !strings.HasPrefix(r.Output, "[Command cancelled]\n") {
		t.Fatalf("result %+v", r)
	}
	if left := markerProcs(markerVar + "=" + mark); len(left) > 0 {
		t.Fatalf("processes survived the cancel: %v", left)
	}
	// The key still works afterwards, on a fresh shell.
	expect(t, run(t, e, "echo again", RunOptions{}), "again\n", "0")
}

func TestTimeoutKillsEverything(t *testing.T) {
	e := newTestExecutor(t)
	r, mark, _ := runCancellable(t, e, RunOptions{Timeout: time.Second}, "")
	if !r.Cancelled || r.ExitCode != nil || !strings.HasPrefix(r.Output, "[Command timed out after 1 seconds]\n") {
		t.Fatalf("result %+v", r)
	}
	if !strings.Contains(r.Output, "ready\n") {
		t.Fatalf("output before the timeout lost: %q", r.Output)
	}
	if left := markerProcs(markerVar + "=" + mark); len(left) > 0 {
		t.Fatalf("processes survived the timeout: %v", left)
	}
}

func TestAlreadyCancelled(t *testing.T) {
	e := newTestExecutor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := e.Run(ctx, "echo never", RunOptions{Shell: testShell(t)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != "[Command cancelled]\n" || !r.Cancelled || r.ExitCode != nil {
		t.Fatalf("%+v", r)
	}
}

func TestCloseKillsBackgroundJobs(t *testing.T) {
	e := NewExecutor()
	r := run(t, e, "sleep 1000 >/dev/null 2>&1 & echo $"+markerVar, RunOptions{})
	mark := strings.TrimSpace(r.Output)
	if len(markerProcs(markerVar+"="+mark)) == 0 {
		t.Fatal("background job not found before close")
	}
	e.Close()
	if left := markerProcs(markerVar + "=" + mark); len(left) > 0 {
		t.Fatalf("close left processes: %v", left)
	}
}

func TestPrefix(t *testing.T) {
	e := newTestExecutor(t)
	sh := testShell(t)
	sh.Prefix = "echo PREFIX"
	expect(t, run(t, e, "hello world", RunOptions{Shell: sh}), "PREFIX hello world\n", "0")
}

func TestShellEnvAndHardening(t *testing.T) {
	e := newTestExecutor(t)
	sh := testShell(t)
	sh.Env = map[string]string{"MY_SETTING": "yes"}
	expect(t, run(t, e, "echo $MY_SETTING $GIT_PAGER $GIT_TERMINAL_PROMPT", RunOptions{Shell: sh}), "yes cat 0\n", "0")
}

func TestMissingCwdAtRunTime(t *testing.T) {
	e := newTestExecutor(t)
	dir := filepath.Join(t.TempDir(), "gone")
	r := run(t, e, "echo should not run", RunOptions{Cwd: dir})
	if code(r) != "1" || strings.Contains(r.Output, "should not run") || !strings.Contains(r.Output, "No such file or directory") {
		t.Fatalf("%q exit %s", r.Output, code(r))
	}
}

func TestLargeOutputSpillsCompletely(t *testing.T) {
	e := newTestExecutor(t)
	art := filepath.Join(t.TempDir(), "0.bash.log")
	// 10 MB single line, then a short tail line.
	r := run(t, e, "head -c 10000000 /dev/zero | tr '\\0' x; echo; echo end", RunOptions{ArtifactPath: art, ArtifactID: "0"})
	if !r.Truncated || r.ArtifactID != "0" || r.TotalBytes != 10000005 || r.TotalLines != 2 {
		t.Fatalf("%+v", struct {
			T  bool
			ID string
			B  int
			L  int
		}{r.Truncated, r.ArtifactID, r.TotalBytes, r.TotalLines})
	}
	if !strings.HasSuffix(r.Output, "x\nend\n") || len(r.Output) > 51200 {
		t.Fatalf("tail wrong: len %d", len(r.Output))
	}
	b, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 10000005 || !bytes.Equal(b[:10], []byte("xxxxxxxxxx")) || string(b[len(b)-5:]) != "\nend\n" {
		t.Fatalf("artifact has %d bytes", len(b))
	}
}

func TestStopAfterLinesEndsEndlessProducer(t *testing.T) {
	e := newTestExecutor(t)
	r := run(t, e, "yes", RunOptions{StopAfterLines: 5})
	if code(r) != "0" || r.Output != "y\ny\ny\ny\ny\n" || r.Truncated {
		t.Fatalf("exit %s output %q", code(r), short(r.Output))
	}
	// A loop in the shell itself dies of the SIGPIPE too; the key recovers.
	r = run(t, e, "for i in $(seq 100000); do echo $i; done", RunOptions{StopAfterLines: 3})
	if r.Output != "1\n2\n3\n" || code(r) != "0" {
		t.Fatalf("exit %s output %q", code(r), short(r.Output))
	}
	expect(t, run(t, e, "echo after", RunOptions{}), "after\n", "0")
	// A fast producer fills a whole read buffer at once; only N lines count.
	for i := 0; i < 5; i++ {
		expect(t, run(t, e, "seq 1 100000", RunOptions{StopAfterLines: 3}), "1\n2\n3\n", "0")
	}
}

func TestProtocolSurvivesUserChanges(t *testing.T) {
	e := newTestExecutor(t)
	pid := run(t, e, "echo $$", RunOptions{}).Output
	for _, c := range []string{"exec 62<&-", "exec 62>/dev/null", "shopt -u expand_aliases", "unalias -a", "IFS=0123456789", "set -a"} {
		run(t, e, c, RunOptions{})
		// Same shell (no 5 s watchdog and eviction), and it still works.
		expect(t, run(t, e, `echo "$$"; false`, RunOptions{}), pid, "1")
	}
}

func TestExecedProgramHonoursTimeoutAndCancel(t *testing.T) {
	e := newTestExecutor(t)
	r := run(t, e, "echo before; exec sleep 30", RunOptions{Timeout: time.Second})
	if !r.Cancelled || !strings.HasPrefix(r.Output, "[Command timed out after 1 seconds]\nbefore\n") {
		t.Fatalf("%+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tag := proctest.SleepTag()
	done := make(chan BashResult, 1)
	go func() {
		r, _ := e.Run(ctx, "exec sleep "+tag, RunOptions{Shell: testShell(t)})
		done <- r
	}()
	// Cancel once the program runs in place of the shell.
	proctest.WaitWithArg(t, tag, 1)
	cancel()
	select {
	case r := <-done:
		if !r.Cancelled || r.Output != "[Command cancelled]\n" {
			t.Fatalf("%+v", r)
		}
	case <-time.After(hangGuard):
		t.Fatal("cancel of an exec'd program hung")
	}
	// And an exec'd program that ends on its own gives its exit status.
	expect(t, run(t, e, "exec bash -c 'echo inner; exit 5'", RunOptions{}), "inner\n", "5")
}

func TestShellDeathWhileSubshellHoldsStatusPipe(t *testing.T) {
	e := newTestExecutor(t)
	expect(t, run(t, e, "{ sleep 30; :; } >/dev/null 2>&1 & echo started", RunOptions{}), "started\n", "0")
	// The background subshell still holds the shell's own stdout (the status
	// pipe); the death of the shell must still end the run with its code.
	r := run(t, e, "exit 3", RunOptions{Timeout: 20 * time.Second})
	if r.Cancelled || code(r) != "3" {
		t.Fatalf("%+v", r)
	}
}
