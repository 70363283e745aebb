package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/pty"
	"agentsh/internal/testkit"
)

// hangGuard bounds every wait of these tests: far above what any step
// takes, so only a hang trips it.
const hangGuard = 30 * time.Second

var bashPath = proctest.BashPath

// spec is a job running command in bash, with HOME in a temporary folder
// so no user profile slows the login shell.
func spec(t testing.TB, command string) Spec {
	return Spec{
		Command: command, Shell: bashPath(t), Cwd: t.TempDir(),
		Env: pty.BuildEnv(os.Environ(), map[string]string{"HOME": t.TempDir()}),
	}
}

func newManager(t testing.TB) *Manager {
	m := NewManager()
	t.Cleanup(m.Close)
	return m
}

func mustStart(t testing.TB, m *Manager, s Spec) *Job {
	t.Helper()
	j, err := m.Start(s)
	if err != nil {
		t.Fatalf("start %q: %v", s.Command, err)
	}
	return j
}

// waitState waits (within the hang guard) until the job is in state want.
func waitState(t testing.TB, j *Job, want string) {
	t.Helper()
	var st State
	testkit.Eventually(t, hangGuard, fmt.Sprintf("job %s (%q) to be %q", j.ID(), j.Command(), want), func() (bool, string) {
		// Wait returns at once for a job waiting or ended, else at its
		// next such state or after a moment.
		st = j.Wait(context.Background(), 50*time.Millisecond)
		return st.String() == want || st.Ended(), fmt.Sprintf("%q; screen:\n%s", st, strings.Join(j.Screen().Text(), "\n"))
	})
	if st.String() != want {
		t.Fatalf("job %s (%q) is %q, want %q; screen:\n%s", j.ID(), j.Command(), st, want, strings.Join(j.Screen().Text(), "\n"))
	}
}

// readUntil reads new output until it holds want (hang guard).
func readUntil(t testing.TB, j *Job, want string) string {
	t.Helper()
	var all strings.Builder
	testkit.Eventually(t, hangGuard, fmt.Sprintf("job output to show %q", want), func() (bool, string) {
		all.WriteString(j.ReadNew().Text)
		return strings.Contains(all.String(), want), fmt.Sprintf("output %q", all.String())
	})
	return all.String()
}

func TestStateWords(t *testing.T) {
	for st, want := range map[State]string{
		{Kind: Running}:          "running",
		{Kind: WaitingForInput}:  "waiting for input",
		{Kind: Exited, Code: 0}:  "exited 0",
		{Kind: Exited, Code: 42}: "exited 42",
		{Kind: Killed}:           "killed",
		{Kind: TimedOut}:         "timed out",
		{Kind: Failed}:           "failed",
	} {
		if st.String() != want {
			t.Errorf("%+v.String() = %q, want %q", st, st.String(), want)
		}
	}
}

func TestDecodeInput(t *testing.T) {
	for in, want := range map[string]string{
		`y\n`:         "y\r",
		"y\n":         "y\r",
		`a\tb`:        "a\tb",
		`\x03`:        "\x03",
		`\x04`:        "\x04",
		`\e[A`:        "\x1b[A",
		`\\n`:         `\n`,
		`\q \x4`:      `\q \x4`,
		`trailing\`:   `trailing\`,
		`\x7f\x1B\r`:  "\x7f\x1b\r",
		`plain text`:  "plain text",
		`:wq\n`:       ":wq\r",
		`ctrl-c:\x03`: "ctrl-c:\x03",
	} {
		if got := string(DecodeInput(in)); got != want {
			t.Errorf("DecodeInput(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPromptWaitsForInput: a `read -p` prompt is found waiting for input
// (from the kernel), shows on the screen, and the answer finishes it.
func TestPromptWaitsForInput(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `read -p "Proceed? [y/N] " a; echo "got $a"`))
	waitState(t, j, "waiting for input")
	if out := j.ReadNew().Text; !strings.Contains(out, "Proceed? [y/N]") {
		t.Errorf("output = %q, want the prompt", out)
	}
	if screen := strings.Join(j.Screen().Text(), "\n"); !strings.Contains(screen, "Proceed? [y/N]") {
		t.Errorf("screen = %q, want the prompt", screen)
	}
	if err := j.Input(`y\n`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 0")
	if out := j.ReadNew().Text; !strings.Contains(out, "got y") {
		t.Errorf("output after the answer = %q, want %q", out, "got y")
	}
}

// TestBusyJobIsNotWaiting: a job that computes or sleeps is running, not
// waiting for input, although it prints nothing.
func TestBusyJobIsNotWaiting(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `sleep 3; echo done`))
	if st := j.Wait(context.Background(), QuietForInput+5*pollEvery); st.String() != "running" {
		t.Fatalf("a sleeping job is %q, want running", st)
	}
	if st := j.Kill(); st.String() != "killed" {
		t.Fatalf("after Kill: %q, want killed", st)
	}
}

// TestCatThroughInput: a program reading lines gets them through Input and
// ends at ctrl+d.
func TestCatThroughInput(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `cat; echo "cat ended"`))
	waitState(t, j, "waiting for input")
	if err := j.Input("hello jobs\\n"); err != nil {
		t.Fatal(err)
	}
	readUntil(t, j, "hello jobs\nhello jobs") // the echo and cat's copy
	if err := j.Input(`\x04`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 0")
	readUntil(t, j, "cat ended")
}

// TestPythonREPL: a program that needs a terminal (python3's interactive
// interpreter) works through Input, and ctrl+d ends it.
func TestPythonREPL(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the REPL test needs it")
	}
	m := newManager(t)
	s := spec(t, py+" -q -i")
	s.Env = append(s.Env, "PYTHON_BASIC_REPL=1") // the line-reading REPL on every version
	j := mustStart(t, m, s)
	readUntil(t, j, ">>> ")
	if err := j.Input(`print(6*7)\n`); err != nil {
		t.Fatal(err)
	}
	readUntil(t, j, "42")
	if err := j.Input(`\x04`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 0")
}

// TestReadlineREPLWaits: python3's interpreter on a terminal waits in
// select (readline), not in read(2); it is waiting for input all the same,
// and answers through Input.
func TestReadlineREPLWaits(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the REPL test needs it")
	}
	m := newManager(t)
	j := mustStart(t, m, spec(t, py+" -q -i"))
	waitState(t, j, "waiting for input")
	if err := j.Input(`print(6*7)\n`); err != nil {
		t.Fatal(err)
	}
	readUntil(t, j, "42")
	waitState(t, j, "waiting for input")
	if err := j.Input(`exit()\n`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 0")
}

// TestVimThroughInput: a full-screen editor waits for input (in select or
// poll on the terminal), writes a file from keys sent with Input, and quits.
func TestVimThroughInput(t *testing.T) {
	vim, err := exec.LookPath("vim")
	if err != nil {
		t.Skip("vim not installed")
	}
	m := newManager(t)
	s := spec(t, vim+" -u NONE -N -n note.txt")
	j := mustStart(t, m, s)
	waitState(t, j, "waiting for input")
	if err := j.Input(`ihello from a job\e:wq\n`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 0")
	if b, err := os.ReadFile(s.Cwd + "/note.txt"); err != nil || string(b) != "hello from a job\n" {
		t.Errorf("note.txt = %q, %v", b, err)
	}
}

// TestCtrlC: \x03 interrupts the foreground program like ctrl+c.
func TestCtrlC(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `echo started; sleep 60`))
	readUntil(t, j, "started")
	if err := j.Input(`\x03`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 130")
}

// TestWaitReturnsAtEnd: Wait returns as soon as the job ends, with its
// output and exit code.
func TestWaitReturnsAtEnd(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `sleep 0.5; echo built`))
	if st := j.Wait(context.Background(), hangGuard); st.String() != "exited 0" {
		t.Fatalf("Wait = %q, want exited 0", st)
	}
	if out := j.ReadNew(); !strings.Contains(out.Text, "built") || out.Truncated {
		t.Fatalf("output = %+v, want built", out)
	}
	if out := j.ReadNew(); out.Text != "" || out.Bytes != 0 {
		t.Fatalf("second read = %+v, want nothing new", out)
	}
	if j.OutputBytes() != len("built\n") {
		t.Errorf("OutputBytes = %d, want %d", j.OutputBytes(), len("built\n"))
	}
	if rt := j.Runtime(); rt <= 0 || rt != j.Runtime() {
		t.Errorf("Runtime of an ended job = %v, then %v: want fixed and positive", rt, j.Runtime())
	}
	if st := j.Wait(context.Background(), hangGuard); st.String() != "exited 0" {
		t.Fatalf("Wait on an ended job = %q", st)
	}
}

// TestExitCodeAndTimeout: the exit code is the job's; an explicit timeout
// kills the job and says so.
func TestExitCodeAndTimeout(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `exit 7`))
	if st := j.Wait(context.Background(), hangGuard); st.String() != "exited 7" {
		t.Fatalf("Wait = %q, want exited 7", st)
	}
	tag := proctest.SleepTag()
	s := spec(t, "sleep "+tag)
	s.Timeout = 300 * time.Millisecond
	j = mustStart(t, m, s)
	if st := j.Wait(context.Background(), hangGuard); st.String() != "timed out" {
		t.Fatalf("Wait = %q, want timed out", st)
	}
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("processes left after the timeout: %v", left)
	}
}

// TestNewOutputIsBounded: a read of more than 50 KB of new output returns
// its last 50 KB and says so, with the artifact that holds all of it.
func TestNewOutputIsBounded(t *testing.T) {
	m := newManager(t)
	s := spec(t, `for i in $(seq 1 20000); do echo "line $i"; done`)
	s.ArtifactPath = t.TempDir() + "/out.txt"
	s.ArtifactID = "7"
	j := mustStart(t, m, s)
	if st := j.Wait(context.Background(), hangGuard); st.String() != "exited 0" {
		t.Fatalf("Wait = %q", st)
	}
	out := j.ReadNew()
	if !out.Truncated || len(out.Text) > 50*1024 || out.Bytes <= len(out.Text) || out.ArtifactID != "7" {
		t.Fatalf("read = truncated %v, %d bytes shown of %d, artifact %q; want the 50 KB tail and artifact 7",
			out.Truncated, len(out.Text), out.Bytes, out.ArtifactID)
	}
	if !strings.HasSuffix(out.Text, "line 20000\n") {
		t.Errorf("tail ends %q", out.Text[len(out.Text)-20:])
	}
	full, err := os.ReadFile(s.ArtifactPath)
	if err != nil || len(full) != out.TotalBytes {
		t.Fatalf("artifact: %d bytes, %v; want %d", len(full), err, out.TotalBytes)
	}
}

// TestKillLeavesNothing: Kill ends the whole tree, escapees that left the
// session or cleared their environment included.
func TestKillLeavesNothing(t *testing.T) {
	m := newManager(t)
	tag := proctest.SleepTag()
	j := mustStart(t, m, spec(t, fmt.Sprintf(
		"{ setsid -f sleep %[1]s; env -i setsid -f sleep %[1]s; } </dev/null >/dev/null 2>&1; sleep %[1]s", tag)))
	proctest.WaitWithArg(t, tag, 3)
	if st := j.Kill(); st.String() != "killed" {
		t.Fatalf("Kill = %q, want killed", st)
	}
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("processes left after Kill: %v", left)
	}
	if err := j.Input("x"); err == nil {
		t.Error("Input to a killed job succeeded")
	}
}

// TestMaxJobs: the start past the limit is refused with a sentence the
// model can act on; an ended job frees its place.
func TestMaxJobs(t *testing.T) {
	m := newManager(t)
	m.MaxJobs = 2
	a := mustStart(t, m, spec(t, "sleep 60"))
	mustStart(t, m, spec(t, "sleep 60"))
	_, err := m.Start(spec(t, "sleep 60"))
	var tooMany *TooManyError
	if !errors.As(err, &tooMany) || err.Error() != "Too many jobs (2 running): kill one with job_kill first." {
		t.Fatalf("third start: %v", err)
	}
	a.Kill()
	c := mustStart(t, m, spec(t, "sleep 60"))
	if c.ID() != "3" {
		t.Errorf("id of the third job = %q, want 3", c.ID())
	}
	if NewManager().MaxJobs != 16 {
		t.Errorf("default MaxJobs = %d, want 16", NewManager().MaxJobs)
	}
}

// TestGetAndList: ids are short, per manager, and found with blanks around.
func TestGetAndList(t *testing.T) {
	m := newManager(t)
	a := mustStart(t, m, spec(t, "true"))
	b := mustStart(t, m, spec(t, "true"))
	if a.ID() != "1" || b.ID() != "2" {
		t.Fatalf("ids %q, %q; want 1, 2", a.ID(), b.ID())
	}
	for _, id := range []string{"2", " 2 ", "\t2\n"} {
		if j, ok := m.Get(id); !ok || j != b {
			t.Errorf("Get(%q) = %v, %v", id, j, ok)
		}
	}
	if _, ok := m.Get("3"); ok {
		t.Error("Get(3) found a job")
	}
	if l := m.List(); len(l) != 2 || l[0] != a || l[1] != b {
		t.Errorf("List = %v", l)
	}
}

// TestCloseKillsEverything: closing the manager with three jobs running
// leaves no process, and later starts are refused.
func TestCloseKillsEverything(t *testing.T) {
	m := NewManager()
	tag := proctest.SleepTag()
	var js []*Job
	for range 3 {
		js = append(js, mustStart(t, m, spec(t, fmt.Sprintf("env -i setsid -f sleep %[1]s </dev/null >/dev/null 2>&1; sleep %[1]s", tag))))
	}
	proctest.WaitWithArg(t, tag, 6)
	m.Close()
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("processes left after Close: %v", left)
	}
	for _, j := range js {
		if st := j.State(); st.String() != "killed" {
			t.Errorf("job %s: %q, want killed", j.ID(), st)
		}
	}
	if _, err := m.Start(spec(t, "true")); !errors.Is(err, ErrClosed) {
		t.Errorf("start after Close: %v", err)
	}
}

// TestHTTPServerJob: a dev server runs as a job, serves requests, its log
// lines are read as they come, and Kill leaves nothing.
func TestHTTPServerJob(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the http.server test needs it")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	m := newManager(t)
	s := spec(t, fmt.Sprintf("%s -u -m http.server --bind 127.0.0.1 %d", py, port))
	mark := fmt.Sprintf("AGENTSH_JOBS_TEST=%s-%d", t.Name(), time.Now().UnixNano())
	s.Env = append(s.Env, mark)
	if err := os.WriteFile(s.Cwd+"/hello.txt", []byte("hello from the job\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := mustStart(t, m, s)
	readUntil(t, j, "Serving HTTP")
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/hello.txt", port))
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from the job\n" {
		t.Fatalf("body = %q", body)
	}
	readUntil(t, j, `"GET /hello.txt HTTP/1.1" 200`)
	if st := j.State(); st.String() != "running" {
		t.Errorf("a serving job is %q, want running", st)
	}
	if len(proctest.Marked(mark)) == 0 {
		t.Fatal("no process of the job carries its mark: the check below would prove nothing")
	}
	if st := j.Kill(); st.String() != "killed" {
		t.Fatalf("Kill = %q", st)
	}
	if left := proctest.Marked(mark); len(left) > 0 {
		t.Errorf("processes left after Kill: %v", left)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Error("the server still accepts connections after Kill")
	}
}

// TestPipelineReaderFound: the reader of the terminal need not lead the
// foreground group (here the shell leads it and cat reads); a pipeline
// stage reading a pipe, not the terminal, is not waiting for input.
func TestPipelineReaderFound(t *testing.T) {
	m := newManager(t)
	busy := mustStart(t, m, spec(t, `sleep 3 | cat`))
	j := mustStart(t, m, spec(t, `cat | tr a-z A-Z`))
	waitState(t, j, "waiting for input")
	if st := busy.State(); st.String() != "running" {
		t.Errorf("sleep 3 | cat is %q, want running", st)
	}
	if err := j.Input(`abc\n\x04`); err != nil {
		t.Fatal(err)
	}
	waitState(t, j, "exited 0")
	readUntil(t, j, "ABC")
}

// TestStartFailure: a shell that cannot start gives a failed job with the
// reason in its output, not a start error nor a hang.
func TestStartFailure(t *testing.T) {
	m := newManager(t)
	s := spec(t, "true")
	s.Shell = t.TempDir() + "/no-such-shell"
	j := mustStart(t, m, s)
	if st := j.Wait(context.Background(), hangGuard); st.String() != "failed" {
		t.Fatalf("Wait = %q, want failed", st)
	}
	if out := j.ReadNew().Text; !strings.Contains(out, "PTY error: ") {
		t.Errorf("output = %q, want the PTY error", out)
	}
}

// OnChange tells of a job's start, its wait for input, its return to
// running once typed into, and its end, in that order; a job that ends at
// once still gets a start before its end.
func TestOnChange(t *testing.T) {
	m := newManager(t)
	changes := make(chan Change, 100)
	m.OnChange(func(c Change) { changes <- c })
	next := func() Change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(hangGuard):
			t.Fatal("no change (hang guard)")
		}
		return Change{}
	}
	j := mustStart(t, m, spec(t, `read -p "Proceed? [y/N] " a; echo "got $a"`))
	if c := next(); c.Job != j || !c.Started || c.State.String() != "running" {
		t.Fatalf("first change %+v", c)
	}
	if c := next(); c.Started || c.State.String() != "waiting for input" {
		t.Fatalf("second change %+v", c)
	}
	if err := j.Input("y\n"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for c := next(); ; c = next() {
		got = append(got, c.State.String())
		if c.State.Ended() {
			break
		}
	}
	// The turn to running may merge into the end when the job ends first.
	if g := strings.Join(got, ", "); g != "running, exited 0" && g != "exited 0" {
		t.Fatalf("after input: %q", got)
	}

	quick := mustStart(t, m, spec(t, "exit 3"))
	if c := next(); c.Job != quick || !c.Started || c.State.Ended() {
		t.Fatalf("quick job's first change %+v", c)
	}
	if c := next(); c.Job != quick || c.State.String() != "exited 3" {
		t.Fatalf("quick job's end %+v", c)
	}
	select {
	case c := <-changes:
		t.Fatalf("a change after the end: %+v", c)
	default:
	}
}

// TestSettleReturnsWhenOutputSettles: a program that prints its
// ready line at once and runs on is returned by Settle once its output is
// quiet, long before the bound (here far above the hang guard: a Settle
// that waited for the bound would trip the guard); the job runs on.
func TestSettleReturnsWhenOutputSettles(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, "echo ready; exec sleep 1000"))
	got := make(chan State, 1)
	go func() { got <- j.Settle(context.Background(), time.Hour, 150*time.Millisecond) }()
	select {
	case st := <-got:
		if st.Kind != Running {
			t.Fatalf("state %s, want running", st)
		}
	case <-time.After(hangGuard):
		t.Fatalf("Settle did not return after the output settled (hang guard); state %s, output %q", j.State(), j.ReadNew().Text)
	}
	if out := j.ReadNew().Text; out != "ready\n" {
		t.Fatalf("output %q", out)
	}
	if st := j.State(); st.Kind != Running {
		t.Fatalf("the job did not run on: %s", st)
	}
}

// TestSettleWaitsThroughSilence: a program silent at first is waited for
// (up to the bound) until it prints, and one that ends is returned with
// its exit status, also when its end is slow to come.
func TestSettleWaitsThroughSilence(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, "sleep 0.3; echo late; exec sleep 1000"))
	st := j.Settle(context.Background(), hangGuard, 150*time.Millisecond)
	if out := j.ReadNew().Text; st.Kind != Running || out != "late\n" {
		t.Fatalf("state %s, output %q: Settle returned before the first output", st, out)
	}
	j = mustStart(t, m, spec(t, "echo bye; exit 3"))
	if st := j.Settle(context.Background(), hangGuard, hangGuard); st.Kind != Exited || st.Code != 3 {
		t.Fatalf("state %s, want exited 3", st)
	}
	// With the real quiet: on a loaded machine the session's end may
	// come later than the quiet after "built"; the program has exited, so
	// Settle waits for the end and reports the status.
	j = mustStart(t, m, spec(t, "echo built; exit 3"))
	if st := j.Settle(context.Background(), hangGuard, 150*time.Millisecond); st.Kind != Exited || st.Code != 3 {
		t.Fatalf("state %s, want exited 3; output %q", st, j.ReadNew().Text)
	}
}
