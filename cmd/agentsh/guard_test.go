package main

// End-to-end tests of process containment: signals and a dying agentsh leave no
// process and no folder behind. Every test gives agentsh a private
// XDG_RUNTIME_DIR (its engine folder: the shells' runtime folders and the
// rc snapshot) and TMPDIR, so what is left there is this run's.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/testkit"
)

// privateDirs returns a private runtime and temp dir and the environment
// entries that point agentsh at them.
func privateDirs(t testing.TB) (runtime, tmp string, env []string) {
	runtime, tmp = t.TempDir(), t.TempDir()
	return runtime, tmp, []string{"XDG_RUNTIME_DIR=" + runtime, "TMPDIR=" + tmp}
}

// agentshFolders lists the engine folders of agentsh processes in a
// runtime dir (runtime/agentsh/p-*), with the runtime folders and
// snapshots in them, and whatever agentsh left in the temp dir.
func agentshFolders(runtime, tmp string) []string {
	var out []string
	for _, pat := range []string{"agentsh/p-*", "agentsh/p-*/sh-*", "agentsh/p-*/snapshot-*"} {
		m, _ := filepath.Glob(filepath.Join(runtime, pat))
		out = append(out, m...)
	}
	m, _ := filepath.Glob(filepath.Join(tmp, "agentsh-*"))
	return append(out, m...)
}

var sleepSeq atomic.Int64

// sleepArgs returns n sleep durations ("1000.<unique>", "1001.<unique>", …)
// that no other process uses, so a /proc scan finds exactly this test's
// sleeps, even those that cleared their environment.
func sleepArgs(n int) []string {
	u := fmt.Sprintf("%d%04d", os.Getpid(), sleepSeq.Add(1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%d.%s", 1000+i, u)
	}
	return out
}

// sleepsRun is the condition that exactly n `sleep ARG` processes run for
// the given args.
func sleepsRun(args []string, n int) testkit.Cond {
	return func() (bool, string) {
		k := sleepsAlive(args)
		return k == n, fmt.Sprintf("%d sleeps run", k)
	}
}

// sleepsAlive counts live `sleep ARG` processes for the given args.
func sleepsAlive(args []string) int {
	n := 0
	for _, a := range args {
		n += len(procsWithCmdline("sleep", a))
	}
	return n
}

// rpcProc is a running `agentsh --mode rpc`.
type rpcProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *strings.Builder
	lines  chan rpcLine
	ctx    context.Context
}

func startRPC(t *testing.T, s *sandbox, ctx context.Context, env []string) *rpcProc {
	t.Helper()
	r := &rpcProc{cmd: s.command(ctx, s.work, env, "--mode", "rpc"), lines: make(chan rpcLine, 64), ctx: ctx,
		stderr: &strings.Builder{}}
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if r.out, err = r.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); _ = r.cmd.Wait() })
	go func() {
		defer close(r.lines)
		br := bufio.NewReader(r.out)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				var l rpcLine
				_ = json.Unmarshal(b, &l)
				r.lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	if l := r.next(t, "ready"); l.Type != "ready" {
		t.Fatalf("first line %+v", l)
	}
	return r
}

func (r *rpcProc) next(t *testing.T, what string) rpcLine {
	t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			t.Fatalf("stdout closed while waiting for %s", what)
		}
		return l
	case <-r.ctx.Done():
		t.Fatalf("no %s (hang guard)", what)
	}
	return rpcLine{}
}

func (r *rpcProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// wait waits for agentsh to exit and returns its exit status; death by a
// signal fails the test (exitCode).
func (r *rpcProc) wait(t *testing.T) int {
	t.Helper()
	err := r.cmd.Wait()
	if r.ctx.Err() != nil {
		t.Fatal("agentsh did not exit (hang guard)")
	}
	return exitCode(t, err)
}

// TestRPCSIGHUPEndsEverything: SIGHUP (the terminal or ssh session that ran
// agentsh closed) ends RPC mode like SIGTERM: the running command and its
// background job are killed, the folders removed, and agentsh exits 0.
func TestRPCSIGHUPEndsEverything(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	runtime, tmp, env := privateDirs(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	r := startRPC(t, s, ctx, env)
	sl := sleepArgs(2)
	r.send(t, fmt.Sprintf(`{"id":"b","type":"bash","command":"sleep %s & sleep %s"}`, sl[0], sl[1]))
	waitFor(t, ctx, "both sleeps", sleepsRun(sl, 2))
	if len(agentshFolders(runtime, tmp)) != 4 {
		t.Fatalf("expected an engine folder with a runtime folder and a snapshot (the user's and the model's), found %q", agentshFolders(runtime, tmp))
	}
	if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t); code != 0 {
		t.Errorf("exit status %d after SIGHUP, want 0; stderr %q", code, r.stderr)
	}
	if n := sleepsAlive(sl); n != 0 {
		t.Errorf("%d sleeps survived SIGHUP", n)
	}
	if left := agentshFolders(runtime, tmp); len(left) > 0 {
		t.Errorf("folders left: %q", left)
	}
}

// TestRPCClosedStdoutEndsEverything: a client that closes its end of
// agentsh's stdout makes the next write fail; agentsh then shuts down as on
// stdin EOF (background job and running command killed, folders removed)
// and exits 1 with the write error, instead of dying of SIGPIPE.
func TestRPCClosedStdoutEndsEverything(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	runtime, tmp, env := privateDirs(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	r := startRPC(t, s, ctx, env)
	sl := sleepArgs(2)
	r.send(t, fmt.Sprintf(`{"id":"bg","type":"bash","command":"sleep %s >/dev/null 2>&1 & echo started"}`, sl[0]))
	if l := r.next(t, "bash response"); l.ID != "bg" || !l.Success {
		t.Fatalf("bash: %+v", l)
	}
	r.send(t, fmt.Sprintf(`{"id":"fg","type":"bash","command":"sleep %s"}`, sl[1]))
	waitFor(t, ctx, "both sleeps", sleepsRun(sl, 2))
	r.out.Close()
	r.send(t, `{"id":"s","type":"get_state"}`)
	if code := r.wait(t); code != 1 || !strings.Contains(r.stderr.String(), "broken pipe") {
		t.Errorf("exit status %d, stderr %q; want 1 and the write error", code, r.stderr)
	}
	if n := sleepsAlive(sl); n != 0 {
		t.Errorf("%d sleeps survived", n)
	}
	if left := agentshFolders(runtime, tmp); len(left) > 0 {
		t.Errorf("folders left: %q", left)
	}
}

// killExecCommand leaves a background job and one with an empty
// environment in a session of its own, and waits in a third sleep.
const killExecCommand = "sleep %s & env -i setsid -f sleep %s; sleep %s"

// killExec starts `agentsh exec` on command (killExecCommand with three
// sleep durations), waits for its three sleeps, SIGKILLs agentsh and returns
// when every sleep is gone, with the time that took.
func killExec(tb testing.TB, s *sandbox, env []string, command string) (sleeps []string, took time.Duration) {
	sl := sleepArgs(3)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := s.command(ctx, s.work, env, "exec", "--", fmt.Sprintf(command, sl[0], sl[1], sl[2]))
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	testkit.Eventually(tb, hangGuard, "the three sleeps", func() (bool, string) {
		n := sleepsAlive(sl)
		return n >= 3, fmt.Sprintf("%d sleeps run", n)
	})
	if err := cmd.Process.Kill(); err != nil {
		tb.Fatal(err)
	}
	killed := time.Now()
	// A poll of its own, every millisecond: the time it takes is measured.
	for sleepsAlive(sl) > 0 {
		if ctx.Err() != nil {
			tb.Fatalf("%d sleeps outlived agentsh's SIGKILL (hang guard)", sleepsAlive(sl))
		}
		time.Sleep(time.Millisecond)
	}
	return sl, time.Since(killed)
}

// TestExecSIGKILLLeavesNothing: SIGKILL of agentsh (or the OOM killer) ends
// every process its shell started, through the shell's guardian, which also
// removes the runtime folder. The engine folder (with the snapshot) has no
// guardian: the next start removes it (and any engine folder whose owner is
// dead), but not the folders of a living agentsh.
func TestExecSIGKILLLeavesNothing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	runtime, tmp, env := privateDirs(t)
	_, took := killExec(t, s, env, killExecCommand)
	t.Logf("every sleep was gone %v after the SIGKILL", took.Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	waitFor(t, ctx, "the runtime folder to go", func() (bool, string) {
		m, _ := filepath.Glob(filepath.Join(runtime, "agentsh", "p-*", "sh-*"))
		return len(m) == 0, fmt.Sprintf("left %q", m)
	})
	engines, _ := filepath.Glob(filepath.Join(runtime, "agentsh", "p-*"))
	snaps, _ := filepath.Glob(filepath.Join(runtime, "agentsh", "p-*", "snapshot-*"))
	if len(engines) != 1 || len(snaps) != 2 { // the user's snapshot and the model's
		t.Fatalf("engine folders %q and snapshots %q after the SIGKILL", engines, snaps)
	}

	// A folder of a dead owner (as a SIGKILLed older build of this naming
	// would leave) and one of a living owner (this test process).
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	staleRuntime := filepath.Join(runtime, "agentsh", fmt.Sprintf("p-%d-1-1", dead.Process.Pid))
	st, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	alive := filepath.Join(runtime, "agentsh", fmt.Sprintf("p-%d-%s-2", os.Getpid(), fields[19]))
	for _, d := range []string{staleRuntime, alive} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(d, "c"), "the last command")
	}
	r := s.runEnv(s.work, env, "exec", "--", "echo next")
	want(t, r, "next\n", "", 0)
	if left := agentshFolders(runtime, tmp); len(left) != 1 || left[0] != alive {
		t.Errorf("after the next start: %q, want only the living owner's %s", left, alive)
	}
}

// BenchmarkExecSIGKILLCleanup is the time from SIGKILL of `agentsh exec`
// (whose command left `sleep &` and `env -i setsid -f sleep` behind and
// waits in a third sleep) until none of the three sleeps is alive. Goal:
// within 2 s.
func BenchmarkExecSIGKILLCleanup(b *testing.B) {
	benchKillExec(b, killExecCommand)
}

// BenchmarkExecSIGKILLCleanupIgnoresTerm is the same with a background job
// that ignores SIGTERM: it is SIGKILLed after the grace (400 ms).
func BenchmarkExecSIGKILLCleanupIgnoresTerm(b *testing.B) {
	benchKillExec(b, `bash -c 'trap "" TERM; sleep %s' & env -i setsid -f sleep %s; sleep %s`)
}

func benchKillExec(b *testing.B, command string) {
	needBash(b)
	s := benchSandbox(b)
	_, _, env := privateDirs(b)
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		_, took := killExec(b, s, env, command)
		total += took
		worst = max(worst, took)
		n++
	}
	b.ReportMetric(0, "ns/op") // the iteration includes agentsh's start; only the clean-up matters
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "ms-to-clean")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms")
}
