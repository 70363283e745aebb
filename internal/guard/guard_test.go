package guard

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/proc"
	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// hangGuard bounds every wait: a hang fails the test instead of blocking.
const hangGuard = 20 * time.Second

var bashPath = proctest.BashPath

var newTag = proctest.SleepTag

// escapees leaves behind every kind of process that tries to outlive its
// shell, each with the argument tag: a subshell's job, setsid -f, setsid -f
// with an empty environment, a double fork, nohup, and a process that
// ignores SIGTERM. It then prints "ready" and waits in the foreground.
func escapees(tag string) (script string, count int) {
	return `(sleep ` + tag + ` &)
setsid -f sleep ` + tag + `
env -i setsid -f sleep ` + tag + `
(unset AGENTSH_GUARD_TEST_MARK; setsid -f sleep ` + tag + `)
( ( (sleep ` + tag + `) & ) & )
nohup sleep ` + tag + ` >/dev/null 2>&1 &
bash -c 'trap "" TERM; while :; do sleep 0.05; done' ` + tag + ` &
echo ready
sleep ` + tag + `
`, 8
}

// tagged is the condition that the processes holding tag as an argument
// are as many as ok accepts; its state lists them.
func tagged(tag string, ok func(n int) bool) testkit.Cond {
	return func() (bool, string) {
		pids := proctest.WithArg(tag)
		return ok(len(pids)), fmt.Sprintf("tagged processes %v", pids)
	}
}

func start(t testing.TB, c Cmd) *Process {
	t.Helper()
	p, err := Start(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func exitOf(t testing.TB, p *Process) (int, bool) {
	t.Helper()
	select {
	case <-p.Exited():
		return p.ExitCode()
	case <-time.After(hangGuard):
		t.Fatal("the program never exited (hang guard)")
	}
	return 0, false
}

// TestFilesReachTheProgram: Files become exactly the program's descriptors
// 0..n-1 (nil is /dev/null), nothing else of agentsh's or the guardian's
// reaches it, and the guardian keeps no copy: readers see EOF when the
// program exits.
func TestFilesReachTheProgram(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	fd3R, fd3W, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer fd3R.Close()
	tag := newTag()
	script := `read -r x; echo "stdin=${x:-EOF}"; echo three >&3; exec sleep ` + tag
	p := start(t, Cmd{Path: "bash", Args: []string{"bash", "-c", script}, Files: []*os.File{nil, outW, nil, fd3W}})
	outW.Close()
	fd3W.Close()
	line, _ := bufio.NewReader(outR).ReadString('\n')
	if line != "stdin=EOF\n" {
		t.Errorf("stdout = %q", line)
	}
	testkit.Eventually(t, hangGuard, "the exec'd sleep", tagged(tag, func(k int) bool { return k == 1 }))
	fdDir := fmt.Sprintf("/proc/%d/fd", p.Pid())
	// Descriptors this test inherited without close-on-exec reach any
	// child, as with exec.Cmd; a plain child of this process shows which.
	ref := exec.Command("sleep", newTag())
	if err := ref.Start(); err != nil {
		t.Fatal(err)
	}
	inherited := fdNames(t, fmt.Sprintf("/proc/%d/fd", ref.Process.Pid))
	_ = ref.Process.Kill()
	_ = ref.Wait()
	want := map[string]bool{"0": true, "1": true, "2": true, "3": true}
	for fd := range inherited {
		want[fd] = true
	}
	got := fdNames(t, fdDir)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the program holds descriptors %v, want %v", got, want)
	}
	for fd, want := range map[string]*os.File{"1": outR, "3": fd3R} {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(want.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.Readlink(fdDir + "/" + fd); got != fmt.Sprintf("pipe:[%d]", st.Ino) {
			t.Errorf("fd %s is %s, not the pipe given", fd, got)
		}
	}
	if got, _ := os.Readlink(fdDir + "/0"); got != os.DevNull {
		t.Errorf("fd 0 is %s, want /dev/null", got)
	}
	p.Stop()
	done := make(chan string, 1)
	go func() { b, _ := io.ReadAll(fd3R); done <- string(b) }()
	select {
	case got := <-done:
		if got != "three\n" {
			t.Errorf("fd 3 carried %q", got)
		}
	case <-time.After(hangGuard):
		t.Fatal("no EOF on fd 3: someone else still holds its write end")
	}
	if code, known := exitOf(t, p); code != 128+15 || !known {
		t.Errorf("exit = %d known=%v, want 143 (the sweep's SIGTERM)", code, known)
	}
}

func fdNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fds := map[string]bool{}
	for _, e := range ents {
		fds[e.Name()] = true
	}
	return fds
}

func TestExitStatus(t *testing.T) {
	p := start(t, Cmd{Path: "bash", Args: []string{"bash", "-c", "exit 7"}})
	if code, known := exitOf(t, p); code != 7 || !known {
		t.Fatalf("exit = %d known=%v, want 7", code, known)
	}
}

func TestExitStatusBySignal(t *testing.T) {
	p := start(t, Cmd{Path: "bash", Args: []string{"bash", "-c", "kill -SEGV $$"}})
	if code, known := exitOf(t, p); code != 128+11 || !known {
		t.Fatalf("exit = %d known=%v, want 139", code, known)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(Cmd{Path: "/nonexistent/prog", Args: []string{"prog"}}); err == nil ||
		err.Error() != "fork/exec /nonexistent/prog: no such file or directory" {
		t.Errorf("missing program: %v", err)
	}
	if _, err := Start(Cmd{Path: "no-such-program-agentsh", Args: []string{"x"}}); err == nil ||
		!strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("not in PATH: %v", err)
	}
	if _, err := Start(Cmd{Path: "bash", Args: []string{"bash"}, Dir: "/nonexistent/dir"}); err == nil ||
		!strings.Contains(err.Error(), "chdir /nonexistent/dir") {
		t.Errorf("missing dir: %v", err)
	}
}

// TestStopEndsEverything: Stop ends the program and everything it left,
// including processes that left the session, cleared the environment or
// ignore SIGTERM, and removes the cleanup paths; Run-like callers rely on
// nothing being left when it returns.
func TestStopEndsEverything(t *testing.T) {
	tag := newTag()
	script, n := escapees(tag)
	dir := t.TempDir()
	cleanup := filepath.Join(dir, "runtime")
	if err := os.Mkdir(cleanup, 0o700); err != nil {
		t.Fatal(err)
	}
	p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", script}, Setsid: true,
		Env: append(os.Environ(), "AGENTSH_GUARD_TEST_MARK=1"), Grace: 100 * time.Millisecond, Cleanup: []string{cleanup}})
	testkit.Eventually(t, hangGuard, fmt.Sprintf("%d tagged processes", n), tagged(tag, func(k int) bool { return k >= n }))
	p.Stop()
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("survivors after Stop: %v", left)
	}
	if _, err := os.Stat(cleanup); !os.IsNotExist(err) {
		t.Fatalf("cleanup path still there: %v", err)
	}
	if proc.Alive(p.GuardianPid()) {
		t.Fatal("the guardian outlived Stop")
	}
}

// TestKillZeroSparesGuardian: a program without a session of its own still
// gets a process group of its own, so its `kill 0` cannot take the guardian
// (and with it the containment) down.
func TestKillZeroSparesGuardian(t *testing.T) {
	tag := newTag()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", "env -i setsid -f sleep " + tag + "; read -r _; kill -TERM 0"},
		Files: []*os.File{inR}})
	inR.Close()
	// The escapee must have left the group before the kill.
	testkit.Eventually(t, hangGuard, "the escaped sleep", tagged(tag, func(k int) bool { return k == 1 }))
	if _, err := inW.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	if code, _ := exitOf(t, p); code != 128+15 {
		t.Fatalf("exit = %d, want 143", code)
	}
	if !proc.Alive(p.GuardianPid()) {
		t.Fatal("kill 0 reached the guardian")
	}
	p.Stop()
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("survivors after Stop: %v", left)
	}
}

// TestGuardianKilledFallsBack: when a command kills its guardian, the
// program is reported gone and Stop still ends what is left of its session.
func TestGuardianKilledFallsBack(t *testing.T) {
	tag := newTag()
	mark := "AGENTSH_GUARD_TEST_MARK=" + tag
	p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", "sleep " + tag + " & setsid -f sleep " + tag + "; echo ready; sleep " + tag},
		Env: append(os.Environ(), mark), Setsid: true, Marker: []byte(mark), Grace: 100 * time.Millisecond})
	testkit.Eventually(t, hangGuard, "three sleeps", tagged(tag, func(k int) bool { return k == 3 }))
	if err := syscall.Kill(p.GuardianPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code, known := exitOf(t, p); known || code != 128+9 {
		t.Fatalf("exit = %d known=%v, want the guardian's 137, unknown", code, known)
	}
	p.Stop()
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("survivors after the fallback sweep: %v", left)
	}
}

// TestTermSignalSweeps: SIGTERM to the guardian (systemd stopping a unit,
// `kill $PPID` from a command) ends the tree like a closed lifeline.
func TestTermSignalSweeps(t *testing.T) {
	tag := newTag()
	p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", "env -i setsid -f sleep " + tag + "; kill -TERM $PPID; sleep " + tag}})
	code, known := exitOf(t, p)
	if !known || code != 128+15 {
		t.Fatalf("exit = %d known=%v, want 143 from the sweep", code, known)
	}
	testkit.Eventually(t, hangGuard, "the guardian to exit", func() (bool, string) {
		return !proc.Alive(p.GuardianPid()), fmt.Sprintf("guardian %d alive", p.GuardianPid())
	})
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("survivors: %v", left)
	}
}

// The owner-death test runs this test binary as a helper process: it starts
// a program under a guardian, reports, and waits to be SIGKILLed.
const helperEnv = "AGENTSH_GUARD_TEST_HELPER"

func TestHelperOwner(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper process for TestOwnerDeathEndsEverything")
	}
	script, _ := escapees(os.Getenv(helperEnv))
	p, err := Start(Cmd{Path: "bash", Args: []string{"bash", "-c", script}, Setsid: true,
		Grace: 100 * time.Millisecond, Cleanup: []string{os.Getenv("AGENTSH_GUARD_TEST_DIR")}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("started", p.GuardianPid())
	select {}
}

// TestOwnerDeathEndsEverything: SIGKILL of the process that started the
// guardian (agentsh, OOM-killed or killed -9) still ends every process of
// the program within a bound, and removes its runtime folder.
func TestOwnerDeathEndsEverything(t *testing.T) {
	tag := newTag()
	_, n := escapees(tag)
	dir := filepath.Join(t.TempDir(), "runtime")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := exec.Command(os.Args[0], "-test.run=^TestHelperOwner$")
	h.Env = append(os.Environ(), helperEnv+"="+tag, "AGENTSH_GUARD_TEST_DIR="+dir)
	out, err := h.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Process.Kill(); _ = h.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	gpid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "started ")))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	testkit.Eventually(t, hangGuard, fmt.Sprintf("%d tagged processes", n), tagged(tag, func(k int) bool { return k >= n }))
	if err := h.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	testkit.Eventually(t, hangGuard, "every process of the dead owner to end", func() (bool, string) {
		pids, alive := proctest.WithArg(tag), proc.Alive(gpid)
		return len(pids) == 0 && !alive, fmt.Sprintf("tagged processes %v, guardian %d alive: %v", pids, gpid, alive)
	})
	t.Logf("%d processes gone %v after the owner's SIGKILL", n, time.Since(killed).Round(time.Millisecond))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("runtime folder left: %v", err)
	}
}
