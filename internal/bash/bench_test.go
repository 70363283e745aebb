package bash

// Benchmarks for the engine's speed goals (see docs/BENCHMARKS.md). All of them
// run real bash and real processes. The 1 GB benchmarks are skipped unless
// AGENTSH_BENCH_GB=1, so that a plain `go test -bench .` stays quick;
// scripts/bench-process.sh sets it.

import (
	"agentsh/internal/proctest"
	"agentsh/internal/sink"

	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/jobs"
	"agentsh/internal/sandbox"
)

const (
	gbCommand = "yes 0123456789abcdef | head -c 1000000000"
	gbBytes   = 1_000_000_000
	// benchGuard bounds every wait so a broken engine fails the benchmark
	// instead of hanging it.
	benchGuard = 60 * time.Second
)

func benchShellConfig(b *testing.B) ShellConfig {
	b.Helper()
	p, err := ResolveShell("")
	if err != nil {
		b.Fatal(err)
	}
	return ShellConfig{Path: p}
}

// warmExecutor returns an executor whose session for cfg has already run
// once, so the timed loop measures warm round trips only, and the pid of
// that session's bash (the cache hands the same idle shell out again).
func warmExecutor(b *testing.B) (*Executor, ShellConfig, int) {
	b.Helper()
	return warmExecutorWith(b, RunOptions{Shell: benchShellConfig(b)})
}

// modesOptions are the run options the modes give since jobs came: a terminal
// as stdin, a job manager, the default auto-background threshold and a
// ctrl+b channel, so a command may become a job.
func modesOptions(b *testing.B) RunOptions {
	cfg := benchShellConfig(b)
	cfg.TerminalStdin = true
	m := jobs.NewManager()
	b.Cleanup(m.Close)
	return RunOptions{Shell: cfg, Jobs: m, AutoBackground: time.Minute, BackgroundNow: make(chan struct{})}
}

// warmExecutorWith is warmExecutor for the shell of opts.
func warmExecutorWith(b *testing.B, opts RunOptions) (*Executor, ShellConfig, int) {
	b.Helper()
	e := NewExecutor()
	b.Cleanup(e.Close)
	cfg := opts.Shell
	r, err := e.Run(context.Background(), "echo $$", opts)
	mustExit0(b, r, err)
	pid, err := strconv.Atoi(strings.TrimSpace(r.Output))
	if err != nil {
		b.Fatalf("warm-up run: %q", r.Output)
	}
	return e, cfg, pid
}

// CPU accounting. Wall-clock throughput on a shared 2-core machine mostly
// measures the neighbours, so the benchmarks also report the CPU time spent
// per op by everything involved: this process plus the session shell and
// the children it has waited for (yes, head), or the baseline bash -c and
// its children as reported by wait4.

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// shellCPU is utime+stime+cutime+cstime of pid from /proc (USER_HZ = 100
// ticks per second on Linux), i.e. the shell and its reaped children.
func shellCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatalf("session shell %d gone: %v", pid, err)
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // fields 14-17 of proc(5)
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func execCPU(c *exec.Cmd) time.Duration {
	return c.ProcessState.UserTime() + c.ProcessState.SystemTime()
}

func reportCPU(b *testing.B, total time.Duration, n int, unit string, scale time.Duration) {
	b.ReportMetric(float64(total)/float64(scale)/float64(n), unit)
}

func mustExit0(b *testing.B, r BashResult, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
	if r.ExitCode == nil || *r.ExitCode != 0 || r.Cancelled {
		b.Fatalf("run failed: exit %v cancelled %v output %.200q", r.ExitCode, r.Cancelled, r.Output)
	}
}

// BenchmarkWarmTrueExecutor is the warm round trip of `true` through
// Executor.Run on a cached session. Goal: <= 0.3 ms and <= 0.3x
// BenchmarkFreshBashTrue.
func BenchmarkWarmTrueExecutor(b *testing.B) {
	benchWarmTrue(b, RunOptions{})
}

// BenchmarkWarmTrueExecutorModes: the same with the modes' options (a
// terminal as stdin, jobs, auto-background, ctrl+b): what the job machinery
// costs a command that ends at once.
func BenchmarkWarmTrueExecutorModes(b *testing.B) {
	benchWarmTrue(b, modesOptions(b))
}

// benchWarmTrue times b.N runs of `true` with opts (the default shell
// unless opts has one) on a warm session, reporting the CPU of agentsh and
// the shell per run.
func benchWarmTrue(b *testing.B, opts RunOptions) { benchWarm(b, "true", opts) }

// benchWarm times command on a warm shell.
func benchWarm(b *testing.B, command string, opts RunOptions) {
	if opts.Shell.Path == "" {
		opts.Shell = benchShellConfig(b)
	}
	e, cfg, pid := warmExecutorWith(b, opts)
	ctx := context.Background()
	opts.Shell = cfg
	b.ReportAllocs()
	cpu0 := selfCPU() + shellCPU(b, pid)
	n := 0
	for b.Loop() {
		r, err := e.Run(ctx, command, opts)
		mustExit0(b, r, err)
		n++
	}
	reportCPU(b, selfCPU()+shellCPU(b, pid)-cpu0, n, "cpu-us/op", time.Microsecond)
}

// BenchmarkFreshBashTrue is the baseline: a fresh `bash -c true` from Go.
func BenchmarkFreshBashTrue(b *testing.B) {
	cfg := benchShellConfig(b)
	b.ReportAllocs()
	var cpu time.Duration
	cpu0 := selfCPU()
	n := 0
	for b.Loop() {
		c := exec.Command(cfg.Path, "-c", "true")
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		cpu += execCPU(c)
		n++
	}
	reportCPU(b, cpu+selfCPU()-cpu0, n, "cpu-us/op", time.Microsecond)
}

func skipUnlessGB(b *testing.B) {
	b.Helper()
	if os.Getenv("AGENTSH_BENCH_GB") != "1" {
		b.Skip("1 GB benchmark: set AGENTSH_BENCH_GB=1 (scripts/bench-process.sh does)")
	}
}

// removeUntimed deletes a 1 GB output file outside the timed region; both
// sides of a comparison start every iteration without an existing file.
func removeUntimed(b *testing.B, path string) {
	b.StopTimer()
	_ = os.Remove(path)
	b.StartTimer()
}

// BenchmarkGigabyteSpill: 1 GB through executor + sink, spilling the whole
// sanitized stream to an artifact. Goal: >= 0.8x BenchmarkGigabyteBashToFile.
// As on the tool path, the artifact file exists (empty) before the run:
// session.ArtifactManager claims each id with O_EXCL.
func BenchmarkGigabyteSpill(b *testing.B) {
	benchGigabyteSpill(b, 0, func(r BashResult, size int64) bool { return size == gbBytes })
}

// BenchmarkGigabyteSpillCapped: BenchmarkGigabyteSpill with a 256 MiB
// artifact cap, so the ring wraps and is put in order at the end; the
// artifact must come out at the cap (plus the marker line).
func BenchmarkGigabyteSpillCapped(b *testing.B) {
	const capMax = 256 << 20
	benchGigabyteSpill(b, capMax, func(r BashResult, size int64) bool {
		return r.ArtifactDroppedBytes >= gbBytes-capMax && size <= capMax+int64(len(sink.DroppedMarker(r.ArtifactDroppedBytes)))
	})
}

// benchGigabyteSpill runs the 1 GB command with an artifact (capped at
// maxBytes, 0 = the default) and checks each run's artifact with ok.
func benchGigabyteSpill(b *testing.B, maxBytes int, ok func(r BashResult, size int64) bool) {
	benchGigabyteSpillWith(b, RunOptions{Shell: benchShellConfig(b)}, maxBytes, ok)
}

// BenchmarkGigabyteSpillModes: BenchmarkGigabyteSpill with the modes'
// options.
func BenchmarkGigabyteSpillModes(b *testing.B) {
	benchGigabyteSpillWith(b, modesOptions(b), 0, func(r BashResult, size int64) bool { return size == gbBytes })
}

func benchGigabyteSpillWith(b *testing.B, opts RunOptions, maxBytes int, ok func(r BashResult, size int64) bool) {
	skipUnlessGB(b)
	e, _, pid := warmExecutorWith(b, opts)
	art := filepath.Join(b.TempDir(), "1.bash.log")
	opts.ArtifactPath, opts.ArtifactID, opts.ArtifactMaxBytes, opts.Timeout = art, "1", maxBytes, 10*time.Minute
	b.SetBytes(gbBytes)
	var cpu time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		f, err := os.OpenFile(art, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
		b.StartTimer()
		cpu0 := selfCPU() + shellCPU(b, pid)
		r, err := e.Run(context.Background(), gbCommand, opts)
		cpu += selfCPU() + shellCPU(b, pid) - cpu0
		n++
		mustExit0(b, r, err)
		b.StopTimer()
		st, serr := os.Stat(art)
		if r.TotalBytes != gbBytes || r.ArtifactID != "1" || serr != nil || !ok(r, st.Size()) {
			b.Fatalf("total %d artifact %q dropped %d stat %v, %v", r.TotalBytes, r.ArtifactID, r.ArtifactDroppedBytes, st, serr)
		}
		b.StartTimer()
		removeUntimed(b, art)
	}
	reportCPU(b, cpu, n, "cpu-s/op", time.Second)
}

// BenchmarkGigabyteBashToFile is the baseline for the spill: the same
// command with its output redirected to a file by bash.
func BenchmarkGigabyteBashToFile(b *testing.B) {
	skipUnlessGB(b)
	cfg := benchShellConfig(b)
	out := filepath.Join(b.TempDir(), "out")
	b.SetBytes(gbBytes)
	var cpu time.Duration
	n := 0
	for b.Loop() {
		cpu0 := selfCPU()
		c := exec.Command(cfg.Path, "-c", gbCommand+` >"$1"`, "bench", out)
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		cpu += execCPU(c) + selfCPU() - cpu0
		n++
		b.StopTimer()
		if st, err := os.Stat(out); err != nil || st.Size() != gbBytes {
			b.Fatalf("stat %v, %v", st, err)
		}
		b.StartTimer()
		removeUntimed(b, out)
	}
	reportCPU(b, cpu, n, "cpu-s/op", time.Second)
}

// BenchmarkGigabyteNoSpill: 1 GB through executor + sink without an
// artifact (only the 50 KiB tail is kept). Goal: >= 0.5x
// BenchmarkGigabyteBashCatDevNull.
func BenchmarkGigabyteNoSpill(b *testing.B) {
	benchGigabyteNoSpill(b, RunOptions{Shell: benchShellConfig(b)})
}

// BenchmarkGigabyteNoSpillModes: BenchmarkGigabyteNoSpill with the modes'
// options (the output shared with the terminal's reader).
func BenchmarkGigabyteNoSpillModes(b *testing.B) {
	benchGigabyteNoSpill(b, modesOptions(b))
}

// BenchmarkGigabyteNoSpillStyled: BenchmarkGigabyteNoSpill for a UI that
// shows colours (the TUI's `!yes`): the second, SGR-keeping sanitizer and
// the coloured tail run too; the plain path does not pay for them.
func BenchmarkGigabyteNoSpillStyled(b *testing.B) {
	benchGigabyteNoSpill(b, RunOptions{Shell: benchShellConfig(b), OnStyledChunk: func([]byte) {}})
}

// BenchmarkGigabyteSpillStyled: BenchmarkGigabyteSpill for a UI that shows
// colours (the styles file stays empty: the output has none).
func BenchmarkGigabyteSpillStyled(b *testing.B) {
	benchGigabyteSpillWith(b, RunOptions{Shell: benchShellConfig(b), OnStyledChunk: func([]byte) {}}, 0,
		func(r BashResult, size int64) bool { return size == gbBytes })
}

func benchGigabyteNoSpill(b *testing.B, opts RunOptions) {
	skipUnlessGB(b)
	e, _, pid := warmExecutorWith(b, opts)
	opts.Timeout = 10 * time.Minute
	b.SetBytes(gbBytes)
	var cpu time.Duration
	n := 0
	for b.Loop() {
		cpu0 := selfCPU() + shellCPU(b, pid)
		r, err := e.Run(context.Background(), gbCommand, opts)
		cpu += selfCPU() + shellCPU(b, pid) - cpu0
		n++
		mustExit0(b, r, err)
		if r.TotalBytes != gbBytes || !r.Truncated || r.ArtifactID != "" {
			b.Fatalf("total %d truncated %v artifact %q", r.TotalBytes, r.Truncated, r.ArtifactID)
		}
	}
	reportCPU(b, cpu, n, "cpu-s/op", time.Second)
}

// BenchmarkGigabyteBashCatDevNull is the baseline for the no-spill case:
// the output crosses one more pipe into a reader that discards it.
func BenchmarkGigabyteBashCatDevNull(b *testing.B) {
	skipUnlessGB(b)
	cfg := benchShellConfig(b)
	b.SetBytes(gbBytes)
	var cpu time.Duration
	n := 0
	for b.Loop() {
		cpu0 := selfCPU()
		c := exec.Command(cfg.Path, "-c", gbCommand+" | cat >/dev/null")
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		cpu += execCPU(c) + selfCPU() - cpu0
		n++
	}
	reportCPU(b, cpu, n, "cpu-s/op", time.Second)
}

// benchProc is one live process as seen by the benchmark's own /proc scan,
// independent of the engine's kill logic.
type benchProc struct {
	pid    int
	comm   string
	sid    int
	sigIgn uint64
}

// benchScan lists live (non-zombie) processes that carry the environment
// entry kv or belong to session sid (when sid > 0).
func benchScan(kv string, sid int) []benchProc {
	names, _ := filepath.Glob("/proc/[0-9]*")
	var out []benchProc
	for _, dir := range names {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue
		}
		lp, rp := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if lp < 0 || rp < lp {
			continue
		}
		f := strings.Fields(string(stat[rp+1:]))
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		p := benchProc{pid: pid, comm: string(stat[lp+1 : rp])}
		p.sid, _ = strconv.Atoi(f[3])
		env, _ := os.ReadFile(dir + "/environ")
		marked := false
		for e := range bytes.SplitSeq(env, []byte{0}) {
			if string(e) == kv {
				marked = true
				break
			}
		}
		if !marked && (sid <= 0 || p.sid != sid) {
			continue
		}
		if st, err := os.ReadFile(dir + "/status"); err == nil {
			for l := range strings.Lines(string(st)) {
				if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
					p.sigIgn, _ = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				}
			}
		}
		out = append(out, p)
	}
	return out
}

const sigtermBit = 1 << (15 - 1) // SIGTERM in a /proc SigIgn mask

// benchCancel times ctx cancel → Run returning for body. Setup (outside the
// measured interval): a fresh session starts body, which prints "ready"; the
// benchmark then scans /proc until ready(procs) holds for the processes that
// carry this iteration's marker. After Run returns, a second scan must find
// none of them and nothing in the shell's session: Run returns only after
// the kill sweep.
func benchCancel(b *testing.B, body string, ready func([]benchProc) bool) {
	e := NewExecutor()
	b.Cleanup(e.Close)
	cfg := benchShellConfig(b)
	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		kv := fmt.Sprintf("AGENTSH_BENCH_RUN=%s-%d", hex.EncodeToString(nonce), n)
		n++
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var seen strings.Builder
		shellPid := make(chan int, 1)
		opts := RunOptions{Shell: cfg, OnChunk: func(c []byte) {
			mu.Lock()
			defer mu.Unlock()
			before := strings.Contains(seen.String(), "\n")
			seen.Write(c)
			if s := seen.String(); !before && strings.Contains(s, "\n") {
				pid, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(s[:strings.IndexByte(s, '\n')]), "ready "))
				shellPid <- pid
			}
		}}
		type result struct {
			r   BashResult
			err error
		}
		done := make(chan result, 1)
		go func() {
			r, err := e.Run(ctx, "export "+kv+"\necho ready $$\n"+body, opts)
			done <- result{r, err}
		}()
		var sid int
		select {
		case sid = <-shellPid:
		case r := <-done:
			b.Fatalf("run ended before it was cancelled: %+v, %v", r.r, r.err)
		case <-time.After(benchGuard):
			b.Fatal("command did not start")
		}
		for start := time.Now(); !ready(benchScan(kv, 0)); time.Sleep(time.Millisecond) {
			if time.Since(start) > benchGuard {
				b.Fatalf("processes never appeared: %+v", benchScan(kv, 0))
			}
		}

		t0 := time.Now()
		cancel()
		var res result
		select {
		case res = <-done:
		case <-time.After(benchGuard):
			b.Fatal("cancelled run did not return")
		}
		lat := time.Since(t0)

		if left := benchScan(kv, sid); len(left) > 0 {
			b.Fatalf("processes survived Run's return: %+v", left)
		}
		if res.err != nil || !res.r.Cancelled || res.r.ExitCode != nil {
			b.Fatalf("result %+v, %v", res.r, res.err)
		}
		total += lat
		worst = max(worst, lat)
	}
	b.ReportMetric(0, "ns/op") // the iteration includes the shell start; only the latency matters
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "ms/op")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms")
}

func countComm(procs []benchProc, comm string, ignoringTerm bool) int {
	c := 0
	for _, p := range procs {
		if p.comm == comm && (!ignoringTerm || p.sigIgn&sigtermBit != 0) {
			c++
		}
	}
	return c
}

// BenchmarkCancelHonoursTerm: a foreground `sleep 1000` and an escaped
// `(sleep 1000 &)`, both dying of SIGTERM. Goal: <= 50 ms.
func BenchmarkCancelHonoursTerm(b *testing.B) {
	benchCancel(b, "(sleep 1000 &)\nsleep 1000\n", func(p []benchProc) bool {
		return countComm(p, "sleep", false) == 2
	})
}

// BenchmarkCancelIgnoresTerm: a process that ignores SIGTERM and must be
// SIGKILLed after the grace period. Goal: <= 600 ms.
func BenchmarkCancelIgnoresTerm(b *testing.B) {
	benchCancel(b, `bash -c 'trap "" TERM; sleep 1000'`+"\n", func(p []benchProc) bool {
		return countComm(p, "sleep", true) == 1
	})
}

// BenchmarkBrokenShellReturns: how long a command that breaks the shell's
// epilogue holds its call (the goal: within 1 s of its last process
// ending; it used to sit out the whole timeout). Each iteration runs on a
// shell the previous one did not break.
func BenchmarkBrokenShellReturns(b *testing.B) {
	for _, poison := range []string{"set -n", "enable -n printf", "builtin() { :; }", "unset -f __agentsh_e", "kill -STOP $$", "shopt -s extdebug; trap false DEBUG"} {
		b.Run(strings.ReplaceAll(poison, " ", "_"), func(b *testing.B) {
			e := NewExecutor()
			defer e.Close()
			sh := benchShellConfig(b)
			if _, err := e.Run(context.Background(), "true", RunOptions{Shell: sh}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := e.Run(context.Background(), poison, RunOptions{Shell: sh, Timeout: 60 * time.Second})
				if err != nil || !strings.HasPrefix(r.Output, "["+ResetNotice+"]") {
					b.Fatalf("%q %v", r.Output, err)
				}
				b.StopTimer()
				if _, err := e.Run(context.Background(), "true", RunOptions{Shell: sh}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkTrailingHead is one tool call with a trailing `| head -n 5`
// (spec §1.1: the stage taken off, its upstream in a subshell, the output
// closed after 5 lines) next to Executor.Run of the same text, where bash's
// own head runs: what the extraction costs or saves per call.
func BenchmarkTrailingHead(b *testing.B) {
	for _, cmd := range []string{"seq 1 100 | head -n 5", "yes | head -n 5", "echo x; seq 1 100000 | head -n 5"} {
		b.Run("tool/"+cmd, func(b *testing.B) {
			e, cfg, _ := warmExecutor(b)
			tl := &Tool{Executor: e}
			tc := ToolContext{Cwd: b.TempDir(), Settings: ToolSettings{Shell: cfg}}
			for b.Loop() {
				res, err := tl.Execute(context.Background(), ToolParams{Command: cmd}, tc, nil)
				if err != nil || strings.Count(res.Text, "\n") != 5 {
					b.Fatalf("%q: %v %+v", cmd, err, res)
				}
			}
		})
		b.Run("bash-pipeline/"+cmd, func(b *testing.B) {
			e, cfg, _ := warmExecutor(b)
			for b.Loop() {
				r, err := e.Run(context.Background(), cmd, RunOptions{Shell: cfg})
				mustExit0(b, r, err)
			}
		})
	}
}

// BenchmarkColdStart is the first run on a new executor: start a session
// (and whatever process containment comes with it), run `true`, return.
// Closing the executor is outside the timed region.
func BenchmarkColdStart(b *testing.B) { benchColdStart(b, benchShellConfig(b)) }

// benchColdStart times b.N first runs of `true`, each on a new executor
// with cfg.
func benchColdStart(b *testing.B, cfg ShellConfig) {
	ctx := context.Background()
	for b.Loop() {
		e := NewExecutor()
		r, err := e.Run(ctx, "true", RunOptions{Shell: cfg})
		mustExit0(b, r, err)
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
}

// BenchmarkWarmTrueStateCapture is the warm round trip of a bang command
// (or an RPC client's bash): `true` asked with CaptureAll, against
// BenchmarkWarmTrueExecutor. It skips the dump, as `true`
// cannot change the state (MayChangeState); BenchmarkWarmCdStateCapture
// is one that dumps.
func BenchmarkWarmTrueStateCapture(b *testing.B) {
	benchWarmTrue(b, RunOptions{State: NewSessionState(b.TempDir()), Capture: CaptureAll})
}

// BenchmarkWarmCdStateCapture is a bang command that may change the state
// (`cd .`): the session state is dumped after it and recorded.
func BenchmarkWarmCdStateCapture(b *testing.B) {
	benchWarm(b, "cd .", RunOptions{State: NewSessionState(b.TempDir()), Capture: CaptureAll})
}

// BenchmarkWarmTrueModelCapture is BenchmarkWarmTrueStateCapture for a
// model's shell: the capture goes to the model's layer, a diff against the
// user's layer that shell applied, which keeps the model's definitions
// out of the user's shells.
func BenchmarkWarmTrueModelCapture(b *testing.B) {
	st := NewSessionState(b.TempDir())
	e := NewExecutor()
	b.Cleanup(e.Close)
	cfg := benchShellConfig(b)
	if _, err := e.Run(context.Background(), "export AGENTSH_BENCH_USER=1", RunOptions{Shell: cfg, SessionKey: "user", State: st, Capture: CaptureAll}); err != nil {
		b.Fatal(err)
	}
	benchWarmTrue(b, RunOptions{State: st, View: ModelView, Capture: CaptureShell})
}

// BenchmarkForegroundInputWaitToJob: a foreground `read -p` with the modes'
// options, from the call to its return as a job waiting for input. It
// includes jobs.QuietForInput (1 s) by design; detect-ms is what the
// detection adds on top of it (the prompt is printed within a millisecond).
func BenchmarkForegroundInputWaitToJob(b *testing.B) {
	opts := modesOptions(b)
	e, _, _ := warmExecutorWith(b, opts)
	var extra time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := e.Run(context.Background(), `read -p "Proceed? [y/N] " a`, opts)
		if err != nil || r.Job == nil || r.JobReason != DetachInput {
			b.Fatalf("not a job waiting for input: %+v, %v", r, err)
		}
		extra += time.Since(start) - jobs.QuietForInput
		b.StopTimer()
		r.Job.Kill()
		b.StartTimer()
	}
	b.ReportMetric(float64(extra.Microseconds())/1000/float64(b.N), "detect-ms")
}

// BenchmarkBackgroundNowToJob: from the user's ctrl+b (BackgroundNow
// closed) to the call's return as a job.
func BenchmarkBackgroundNowToJob(b *testing.B) {
	opts := modesOptions(b)
	e, _, _ := warmExecutorWith(b, opts)
	var took time.Duration
	for b.Loop() {
		now := make(chan struct{})
		opts.BackgroundNow = now
		done := make(chan BashResult, 1)
		tag := proctest.SleepTag()
		go func() {
			r, _ := e.Run(context.Background(), "echo up; sleep "+tag, opts)
			done <- r
		}()
		proctest.WaitWithArg(b, tag, 1) // ctrl+b on a running command
		start := time.Now()
		close(now)
		r := <-done
		took += time.Since(start)
		if r.Job == nil {
			b.Fatalf("not a job: %+v", r)
		}
		b.StopTimer()
		r.Job.Kill()
		b.StartTimer()
	}
	b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "ms/job")
}

// Sandbox benchmarks (docs/BENCHMARKS.md §G). Each runs the same
// work outside and inside a workspace-write sandbox side by side, the order
// alternating per iteration so that load from the neighbours falls on both,
// and reports both times and their ratio (goal: ≤ 1.1× warm, ≤ 1.05× for a
// build). The policy denies the default folders of the real HOME,
// so the ruleset walk costs what it costs this user.

func benchSandboxPolicy(b *testing.B, work string) *sandbox.Policy {
	b.Helper()
	if sandbox.Detect().Landlock == 0 {
		b.Skip("no Landlock in this kernel")
	}
	home, _ := os.UserHomeDir()
	var deny []string
	for _, d := range []string{".ssh", ".gnupg", ".aws", ".config/gcloud", ".config/agentsh", ".local/share/agentsh"} {
		deny = append(deny, filepath.Join(home, d))
	}
	return &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work, DenyRead: deny}
}

// sideBySide times out and in alternately b.N times and reports each
// side's mean in unit and the ratio inside/outside.
func sideBySide(b *testing.B, unit string, scale time.Duration, out, in func()) {
	var tOut, tIn time.Duration
	n := 0
	for b.Loop() {
		first, second, t1, t2 := out, in, &tOut, &tIn
		if n%2 == 1 {
			first, second, t1, t2 = in, out, &tIn, &tOut
		}
		s := time.Now()
		first()
		*t1 += time.Since(s)
		s = time.Now()
		second()
		*t2 += time.Since(s)
		n++
	}
	b.ReportMetric(float64(tOut)/float64(scale)/float64(n), "outside-"+unit)
	b.ReportMetric(float64(tIn)/float64(scale)/float64(n), "inside-"+unit)
	b.ReportMetric(float64(tIn)/float64(tOut), "inside/outside")
}

// BenchmarkSandboxWarmTrue is BenchmarkWarmTrueExecutor inside the sandbox
// against outside: Landlock checks happen at open(2), so the warm path,
// whose descriptors are open already, should not notice.
func BenchmarkSandboxWarmTrue(b *testing.B) {
	cfg := benchShellConfig(b)
	work := b.TempDir()
	inCfg := cfg
	inCfg.Sandbox = benchSandboxPolicy(b, work)
	eOut, _, _ := warmExecutorWith(b, RunOptions{Shell: cfg, Cwd: work})
	eIn, _, _ := warmExecutorWith(b, RunOptions{Shell: inCfg, Cwd: work})
	ctx := context.Background()
	sideBySide(b, "us/op", time.Microsecond, func() {
		r, err := eOut.Run(ctx, "true", RunOptions{Shell: cfg})
		mustExit0(b, r, err)
	}, func() {
		r, err := eIn.Run(ctx, "true", RunOptions{Shell: inCfg})
		mustExit0(b, r, err)
	})
}

// BenchmarkSandboxColdStart is BenchmarkColdStart inside against outside:
// the ruleset (the deny walk), the user and network namespaces and the
// confinement of the forking thread are paid once per shell.
func BenchmarkSandboxColdStart(b *testing.B) {
	cfg := benchShellConfig(b)
	work := b.TempDir()
	inCfg := cfg
	inCfg.Sandbox = benchSandboxPolicy(b, work)
	ctx := context.Background()
	cold := func(c ShellConfig) func() {
		return func() {
			e := NewExecutor()
			r, err := e.Run(ctx, "true", RunOptions{Shell: c, Cwd: work})
			mustExit0(b, r, err)
			b.StopTimer()
			e.Close()
			b.StartTimer()
		}
	}
	sideBySide(b, "ms/op", time.Millisecond, cold(cfg), cold(inCfg))
}

// BenchmarkSandboxGoBuild: an incremental `go build` of a small real module
// (a copy of internal/proc and a main using it) after touching a source
// file, in the same warm shell, inside against outside. GOCACHE is the
// user's, writable inside.
func BenchmarkSandboxGoBuild(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go")
	}
	cfg := benchShellConfig(b)
	inCfg := cfg
	mod := func() string {
		dir := b.TempDir()
		src, err := filepath.Abs("../proc")
		if err != nil {
			b.Fatal(err)
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "proc"), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				data, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "proc", e.Name()), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		files := map[string]string{
			"go.mod":  "module sbxbench\n\ngo 1.22\n",
			"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"sbxbench/proc\"\n)\n\nfunc main() { fmt.Println(proc.Alive(1)) }\n",
		}
		for n, body := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		return dir
	}
	outDir, inDir := mod(), mod()
	inCfg.Sandbox = benchSandboxPolicy(b, inDir)
	eOut, _, _ := warmExecutorWith(b, RunOptions{Shell: cfg, Cwd: outDir})
	eIn, _, _ := warmExecutorWith(b, RunOptions{Shell: inCfg, Cwd: inDir})
	ctx := context.Background()
	// Each build recompiles the package and relinks: a new constant
	// changes the package's export data.
	build := `echo "const benchN$RANDOM$RANDOM = 1" >> proc/touch.go && go build -o prog . && ./prog >/dev/null`
	for _, d := range []string{outDir, inDir} {
		if err := os.WriteFile(filepath.Join(d, "proc", "touch.go"), []byte("package proc\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	timeout := 5 * time.Minute
	for _, c := range []struct {
		e   *Executor
		cfg ShellConfig
		dir string
	}{{eOut, cfg, outDir}, {eIn, inCfg, inDir}} {
		r, err := c.e.Run(ctx, build, RunOptions{Shell: c.cfg, Cwd: c.dir, Timeout: timeout}) // fills the cache
		mustExit0(b, r, err)
	}
	sideBySide(b, "ms/op", time.Millisecond, func() {
		r, err := eOut.Run(ctx, build, RunOptions{Shell: cfg, Cwd: outDir, Timeout: timeout})
		mustExit0(b, r, err)
	}, func() {
		r, err := eIn.Run(ctx, build, RunOptions{Shell: inCfg, Cwd: inDir, Timeout: timeout})
		mustExit0(b, r, err)
	})
}

// BenchmarkSandboxGitStatus: `git status` on a 10,000-file repository in a
// warm shell, inside against outside (goal: ≤ 1.1× against the
// commit before the mount view). git stats every tracked file, so this is
// what the view's mounts cost path lookups.
func BenchmarkSandboxGitStatus(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	cfg := benchShellConfig(b)
	repo := func() string {
		dir := b.TempDir()
		for d := range 100 {
			sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
			if err := os.Mkdir(sub, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range 100 {
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), []byte(sub+"\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		git := exec.Command("bash", "-c", `git init -q . && git add -A && git -c user.name=b -c user.email=b@b commit -qm init`)
		git.Dir = dir
		if out, err := git.CombinedOutput(); err != nil {
			b.Fatalf("make the repository: %v\n%s", err, out)
		}
		return dir
	}
	outDir, inDir := repo(), repo()
	inCfg := cfg
	inCfg.Sandbox = benchSandboxPolicy(b, inDir)
	eOut, _, _ := warmExecutorWith(b, RunOptions{Shell: cfg, Cwd: outDir})
	eIn, _, _ := warmExecutorWith(b, RunOptions{Shell: inCfg, Cwd: inDir})
	ctx := context.Background()
	status := "git status --porcelain >/dev/null"
	sideBySide(b, "ms/op", time.Millisecond, func() {
		r, err := eOut.Run(ctx, status, RunOptions{Shell: cfg, Cwd: outDir})
		mustExit0(b, r, err)
	}, func() {
		r, err := eIn.Run(ctx, status, RunOptions{Shell: inCfg, Cwd: inDir})
		mustExit0(b, r, err)
	})
}

// BenchmarkColdStartSnapshot is BenchmarkColdStart with the user's rc
// snapshot sourced: what checking it and copying it into the shell's own
// folder costs a start: the price of a snapshot no confined command can
// rewrite.
func BenchmarkColdStartSnapshot(b *testing.B) {
	cfg := benchShellConfig(b)
	cfg.SnapshotPath = GetOrCreateSnapshot(cfg.Path, nil)
	if cfg.SnapshotPath == "" {
		b.Skip("no snapshot of the user's rc")
	}
	b.Cleanup(RemoveSnapshots)
	benchColdStart(b, cfg)
}
