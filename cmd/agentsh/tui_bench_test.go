package main

// Whole-process benchmarks of the TUI (its performance targets, reported
// in docs/BENCHMARKS.md §C): the real binary (built by TestMain)
// runs with a private HOME in a pseudo-terminal of a fixed size, and every
// byte it writes goes through internal/pty's x/vt screen, so a figure is
// "until the user could see it", emulator included.
//
//   - BenchmarkTUIKeyLatency: a key press until the typed character is on
//     the screen, every 100 ms for 10 s while `!yes` streams (and, for
//     comparison, with nothing running, and under `!seq`, whose lines all
//     differ); agentsh's RSS sampled every 100 ms; then esc until the block
//     shows "Command cancelled", and no `yes` may be left.
//   - BenchmarkTUIColdStart: process start until the first frame shows the
//     editor, against `agentsh --help` (Go start-up and package init only)
//     and the shell snapshot agentsh takes before the TUI starts.
//
// AGENTSH_TUI_BENCH_BIN=/path/to/agentsh runs them on another build.
//
// Budgets are checked by reading the figures, not by the benchmarks: they
// fail only when the TUI does not behave (a wait times out, a process is
// left over), and then print the screen.

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	cpty "github.com/creack/pty"
	"golang.org/x/sys/unix"

	"agentsh/internal/bash"
	"agentsh/internal/proctest"
	"agentsh/internal/pty"
	"agentsh/internal/testkit"
)

const (
	benchCols, benchRows = 120, 40
	keyInterval          = 100 * time.Millisecond
	benchMarkVar         = "AGENTSH_TUI_BENCH_MARK"
	// editorPlaceholder is the empty editor's text: on the first frame.
	editorPlaceholder = "Message the agent"
)

// ptyTUI is agentsh running in a pseudo-terminal that this process reads
// into an emulated screen.
type ptyTUI struct {
	tb     testing.TB
	cmd    *exec.Cmd
	master *os.File
	scr    *pty.Screen
	mark   string // "NAME=value" carried by agentsh and everything it starts

	wmu      sync.Mutex // keys and the emulator's replies
	changed  chan struct{}
	readEnd  chan struct{}
	exited   chan struct{}
	started  time.Time
	first    atomic.Int64 // ns after started of the first output byte; 0 = none yet
	lastRead atomic.Int64 // UnixNano when the last batch was read, before it was fed
	outBytes atomic.Int64 // read from the terminal so far
	cleanup  sync.Once
}

// benchSandbox is newSandbox for a benchmark: a private HOME, data, config
// and work directory.
func benchSandbox(tb testing.TB) *sandbox {
	tb.Helper()
	root := tb.TempDir()
	s := &sandbox{root: root,
		home: filepath.Join(root, "home"), data: filepath.Join(root, "data"),
		config: filepath.Join(root, "config"), work: filepath.Join(root, "work")}
	for _, d := range []string{s.home, s.data, s.config, s.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

func needBash(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		tb.Skip("bash not installed")
	}
}

// benchBinary is the agentsh under test: TestMain's build of this tree, or
// $AGENTSH_TUI_BENCH_BIN to measure another build (an older commit) with the
// same harness.
func benchBinary() string {
	if p := os.Getenv("AGENTSH_TUI_BENCH_BIN"); p != "" {
		return p
	}
	return agentshBin
}

// masterWriter hands the emulator's replies (DA1, DECRQM, colour queries
// that Bubble Tea sends at start) back to agentsh.
type masterWriter struct{ t *ptyTUI }

func (w masterWriter) Write(p []byte) (int, error) {
	w.t.wmu.Lock()
	defer w.t.wmu.Unlock()
	return w.t.master.Write(p)
}

// startPTYTUI runs agentsh with no arguments in s.work, in a cols×rows
// terminal. It returns once the process is started; see waitScreen.
func startPTYTUI(tb testing.TB, s *sandbox, cols, rows int) *ptyTUI {
	tb.Helper()
	master, tty, err := cpty.Open()
	if err != nil {
		tb.Skipf("no pty: %v", err)
	}
	// As internal/pty does: size and non-blocking mode through SyscallConn,
	// so the master stays on the netpoller and Close interrupts a Read.
	rc, err := master.SyscallConn()
	if err != nil {
		tb.Fatal(err)
	}
	var ctlErr error
	if err := rc.Control(func(fd uintptr) {
		ctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
		if ctlErr == nil {
			ctlErr = unix.SetNonblock(int(fd), true)
		}
	}); err != nil || ctlErr != nil {
		tb.Fatalf("set up pty: %v %v", err, ctlErr)
	}
	t := &ptyTUI{tb: tb, master: master, mark: benchMarkVar + "=" + strconv.FormatInt(time.Now().UnixNano(), 36),
		changed: make(chan struct{}, 1), readEnd: make(chan struct{}), exited: make(chan struct{})}
	t.scr = pty.NewScreen(cols, rows, masterWriter{t})
	cmd := exec.Command(benchBinary())
	cmd.Dir = s.work
	cmd.Env = s.env(s.work, t.mark, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	t.cmd = cmd
	t.started = time.Now()
	go t.read()
	if err := cmd.Start(); err != nil {
		tty.Close()
		master.Close()
		t.scr.Close()
		tb.Fatalf("start agentsh: %v", err)
	}
	tty.Close()
	go func() {
		_ = cmd.Wait()
		close(t.exited)
	}()
	tb.Cleanup(t.close)
	return t
}

// read feeds everything agentsh writes to the screen, batch by batch as the
// kernel hands it out.
func (t *ptyTUI) read() {
	defer close(t.readEnd)
	buf := make([]byte, 64<<10)
	for {
		n, err := t.master.Read(buf)
		if n > 0 {
			t.lastRead.Store(time.Now().UnixNano())
			t.first.CompareAndSwap(0, int64(time.Since(t.started)))
			t.outBytes.Add(int64(n))
			t.scr.Feed(buf[:n])
			select {
			case t.changed <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

func (t *ptyTUI) pid() int { return t.cmd.Process.Pid }

// write types p (keys as a terminal sends them).
func (t *ptyTUI) write(p string) {
	t.tb.Helper()
	t.wmu.Lock()
	_, err := t.master.Write([]byte(p))
	t.wmu.Unlock()
	if err != nil {
		t.tb.Fatalf("write %q: %v", p, err)
	}
}

// rows is the screen as plain text rows.
func (t *ptyTUI) rows() []string { return t.scr.Text() }

func (t *ptyTUI) screen() string { return strings.Join(t.rows(), "\n") }

// waitScreen returns the time at which cond first held for the screen,
// checking after every batch of output; it fails with the screen after
// timeout.
func (t *ptyTUI) waitScreen(what string, timeout time.Duration, cond func(rows []string) bool) time.Time {
	t.tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(50 * time.Millisecond) // Resize or a missed signal
	defer poll.Stop()
	for {
		if cond(t.rows()) {
			return time.Now()
		}
		select {
		case <-t.changed:
		case <-poll.C:
		case <-t.exited:
			if cond(t.rows()) {
				return time.Now()
			}
			t.tb.Fatalf("agentsh exited (%v) while waiting for %s; screen:\n%s", t.cmd.ProcessState, what, t.screen())
		case <-deadline.C:
			t.tb.Fatalf("timed out after %v waiting for %s; screen:\n%s", timeout, what, t.screen())
		}
	}
}

func (t *ptyTUI) waitText(text string, timeout time.Duration) time.Time {
	t.tb.Helper()
	return t.waitScreen(fmt.Sprintf("%q", text), timeout, func(rows []string) bool {
		return slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, text) })
	})
}

// waitExit waits for agentsh to end by itself.
func (t *ptyTUI) waitExit(timeout time.Duration) {
	t.tb.Helper()
	select {
	case <-t.exited:
	case <-time.After(timeout):
		t.tb.Fatalf("agentsh did not exit within %v; screen:\n%s", timeout, t.screen())
	}
}

// quit is ctrl+c twice (the first clears the editor and arms the quit).
func (t *ptyTUI) quit() {
	t.tb.Helper()
	t.write("\x03")
	t.waitText("press ctrl+c again to quit", 10*time.Second)
	t.write("\x03")
	t.waitExit(20 * time.Second)
}

// close ends agentsh if it still runs, and fails if anything it started
// survives it.
func (t *ptyTUI) close() {
	t.cleanup.Do(func() {
		select {
		case <-t.exited:
		default:
			_ = t.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-t.exited:
			case <-time.After(10 * time.Second):
				_ = t.cmd.Process.Kill()
				<-t.exited
			}
		}
		testkit.Poll(0, markedGone(t.mark))
		if pids := proctest.Marked(t.mark); len(pids) > 0 {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.tb.Errorf("processes left after agentsh exited: %v", pids)
		}
		t.master.Close()
		<-t.readEnd
		t.scr.Close()
	})
}

// editorText is the text inside the editor box: the rows between the last
// "╭" and "╰" borders, without the side borders.
func editorText(rows []string) string {
	bottom := -1
	for i := len(rows) - 1; i >= 0; i-- {
		if strings.HasPrefix(rows[i], "╰") {
			bottom = i
			break
		}
	}
	top := -1
	for i := bottom - 1; i >= 0; i-- {
		if strings.HasPrefix(rows[i], "╭") {
			top = i
			break
		}
	}
	if top < 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range rows[top+1 : bottom] {
		b.WriteString(strings.TrimSpace(strings.Trim(strings.TrimSpace(r), "│")))
	}
	return b.String()
}

// procStatusKB reads a "kB" field of /proc/<pid>/status (VmRSS, VmHWM).
func procStatusKB(pid int, field string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// procCPU is the user+system time of pid so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
	st, _ := strconv.ParseInt(string(f[12]), 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// runqWait is how long the threads of pid have waited for a CPU while
// runnable, summed (the second field of /proc/<pid>/task/*/schedstat).
func runqWait(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, _ := os.ReadDir(dir)
	var sum time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sum += time.Duration(n)
		}
	}
	return sum
}

// loadAvg is the 1-minute load average, for the log.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// markedNamed lists the live processes carrying mark whose comm is name.
func markedNamed(mark, name string) []int {
	var out []int
	for _, p := range proctest.Marked(mark) {
		if comm, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); err == nil && strings.TrimSpace(string(comm)) == name {
			out = append(out, p)
		}
	}
	return out
}

// dirSize is the total size of the regular files under dir, and the
// biggest one.
func dirSize(dir string) (total int64, biggest string) {
	var max int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			total += info.Size()
			if info.Size() > max {
				max, biggest = info.Size(), p
			}
		}
		return nil
	})
	return total, biggest
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mb(kb int64) float64 { return float64(kb) * 1024 / 1e6 }

// keyLatencyCase is one BenchmarkTUIKeyLatency variant: command runs as
// `!command` (none: idle) while a key is typed every keyInterval for dur.
type keyLatencyCase struct {
	name    string
	command string
	isLine  func(string) bool // a row of the command's output
	dur     time.Duration
}

// BenchmarkTUIKeyLatency measures key press → character on the screen
// while a bang command floods the TUI, the memory of agentsh meanwhile,
// and esc → "Command cancelled". Metrics:
//   - p50/p99/max-ms: key latency; emu-p99-ms is the part of it spent in
//     this process (from the read of the batch that showed the key to the
//     check), the rest is agentsh and the kernel;
//   - rss-*-MB: VmRSS of agentsh when idle, at the start of the typing, its
//     max over the 100 ms samples and the last sample; hwm-MB is VmHWM at
//     the end; anon-*-MB the same for RssAnon (VmRSS minus the pages of the
//     binary and other files);
//   - cpu-%: agentsh's CPU time over the typing phase's wall time;
//     runq-ms/s: how long agentsh's threads waited for a CPU while runnable,
//     per second of it (summed over threads: the machine's share of the
//     latency);
//   - tty-KB/s: what agentsh wrote to the terminal during the typing;
//   - esc-ms: esc until the block shows "Command cancelled";
//   - artifact-MB(/s): what the command's output spilled to disk.
func BenchmarkTUIKeyLatency(b *testing.B) {
	needBash(b)
	for _, c := range []keyLatencyCase{
		{name: "idle", dur: 5 * time.Second},
		{name: "yes", command: "yes", isLine: func(r string) bool { return r == "y" }, dur: 10 * time.Second},
		{name: "seq", command: "seq 1 1000000000", isLine: func(r string) bool {
			_, err := strconv.Atoi(r)
			return err == nil && len(r) >= 4
		}, dur: 10 * time.Second},
	} {
		b.Run(c.name, func(b *testing.B) { benchKeyLatency(b, c) })
	}
}

// memSample is one reading of /proc/<pid>/status, in kB.
type memSample struct{ rss, anon int64 }

func readMem(pid int) (memSample, bool) {
	rss, ok1 := procStatusKB(pid, "VmRSS")
	anon, ok2 := procStatusKB(pid, "RssAnon")
	return memSample{rss, anon}, ok1 && ok2
}

func benchKeyLatency(b *testing.B, c keyLatencyCase) {
	var lat, emu, escs []time.Duration
	var idle, first, last memSample
	var rssMax, anonMax, hwm int64
	var cpuFrac, runq, ttyRate, artMB, artRate float64
	for i := 0; i < b.N; i++ {
		s := benchSandbox(b)
		t := startPTYTUI(b, s, benchCols, benchRows)
		t.waitText(editorPlaceholder, 20*time.Second)
		pid := t.pid()
		time.Sleep(200 * time.Millisecond) // the start-up's garbage collected or not, as a user finds it
		idle, _ = readMem(pid)

		var cmdStart time.Time
		if c.command != "" {
			t.write("!" + c.command)
			t.waitScreen("the command in the editor", 10*time.Second, func(rows []string) bool {
				return editorText(rows) == "!"+c.command
			})
			t.write("\r")
			cmdStart = time.Now()
			t.waitScreen("the output to stream", 20*time.Second, func(rows []string) bool {
				n := 0
				for _, r := range rows {
					if c.isLine(r) {
						n++
					}
				}
				return n >= 10 && slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "· esc to cancel") })
			})
			// Let the flood reach its steady state (pipes full, artifact
			// growing) before measuring.
			time.Sleep(500 * time.Millisecond)
		}

		// Memory sampler, every 100 ms until stopped.
		var samples []memSample
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			tk := time.NewTicker(100 * time.Millisecond)
			defer tk.Stop()
			for {
				if m, ok := readMem(pid); ok {
					samples = append(samples, m)
				}
				select {
				case <-stop:
					return
				case <-tk.C:
				}
			}
		}()
		cpu0, rq0, out0, wall0 := procCPU(pid), runqWait(pid), t.outBytes.Load(), time.Now()
		load0 := loadAvg()

		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
		typed := ""
		keys := int(c.dur / keyInterval)
		if keys > benchCols-editorWidthMargin {
			b.Fatalf("%d keys do not fit on one editor row", keys)
		}
		begin := time.Now()
		for k := 0; k < keys; k++ {
			if d := time.Until(begin.Add(time.Duration(k) * keyInterval)); d > 0 {
				time.Sleep(d)
			}
			ch := string(alphabet[k%len(alphabet)])
			want := typed + ch
			t0 := time.Now()
			t.write(ch)
			at := t.waitScreen(fmt.Sprintf("key %d (%q) in the editor", k, ch), 10*time.Second, func(rows []string) bool {
				return strings.HasSuffix(editorText(rows), want)
			})
			lat = append(lat, at.Sub(t0))
			if r := time.Unix(0, t.lastRead.Load()); r.After(t0) {
				emu = append(emu, at.Sub(r))
			}
			typed = want
		}
		cpu1, rq1, out1, wall1 := procCPU(pid), runqWait(pid), t.outBytes.Load(), time.Now()
		b.Logf("%s: load average %s at the start of the typing, %s at the end", c.name, load0, loadAvg())
		close(stop)
		<-sampled
		if len(samples) > 0 {
			first, last = samples[0], samples[len(samples)-1]
			for _, m := range samples {
				rssMax, anonMax = max(rssMax, m.rss), max(anonMax, m.anon)
			}
		}
		hwm, _ = procStatusKB(pid, "VmHWM")
		cpuFrac = float64(cpu1-cpu0) / float64(wall1.Sub(wall0))
		runq = ms(rq1-rq0) / wall1.Sub(wall0).Seconds()
		ttyRate = float64(out1-out0) / 1e3 / wall1.Sub(wall0).Seconds()

		if c.command != "" {
			time.Sleep(keyInterval) // esc alone, not as alt+<the last key>
			t0 := time.Now()
			t.write("\x1b")
			at := t.waitText("Command cancelled", 10*time.Second)
			escs = append(escs, at.Sub(t0))
			name := strings.Fields(c.command)[0]
			left := markedNamed(t.mark, name)
			deadline := time.Now().Add(5 * time.Second)
			for len(left) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				left = markedNamed(t.mark, name)
			}
			if len(left) > 0 {
				b.Errorf("%s still runs 5 s after the screen showed (cancelled): pids %v", name, left)
			}
			total, biggest := dirSize(s.data)
			artMB = float64(total) / 1e6
			artRate = artMB / at.Sub(cmdStart).Seconds()
			if i == 0 {
				b.Logf("%s: %d MB written under XDG_DATA_HOME in %.1f s, biggest file %s", c.name, total/1e6,
					at.Sub(cmdStart).Seconds(), strings.TrimPrefix(biggest, s.root))
			}
		}
		t.quit()
		t.close()
	}
	slices.Sort(lat)
	slices.Sort(emu)
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(ms(percentile(emu, 99)), "emu-p99-ms")
	b.ReportMetric(mb(idle.rss), "rss-idle-MB")
	b.ReportMetric(mb(first.rss), "rss-start-MB")
	b.ReportMetric(mb(rssMax), "rss-max-MB")
	b.ReportMetric(mb(last.rss), "rss-end-MB")
	b.ReportMetric(mb(hwm), "hwm-MB")
	b.ReportMetric(mb(idle.anon), "anon-idle-MB")
	b.ReportMetric(mb(anonMax), "anon-max-MB")
	b.ReportMetric(100*cpuFrac, "cpu-%")
	b.ReportMetric(runq, "runq-ms/s")
	b.ReportMetric(ttyRate, "tty-KB/s")
	if len(escs) > 0 {
		slices.Sort(escs)
		b.ReportMetric(ms(escs[len(escs)-1]), "esc-ms")
		b.ReportMetric(artMB, "artifact-MB")
		b.ReportMetric(artRate, "artifact-MB/s")
	}
}

// editorWidthMargin is the editor's border and padding (4) plus room for
// the cursor: a typed line must stay on one row.
const editorWidthMargin = 6

// BenchmarkTUIColdStart measures process start → the first frame (the
// editor's placeholder on the screen), in one sandbox (binary and libraries
// in the page cache: "cold" is the process, not the disk). Metrics:
// p50/p90/max-ms to the first frame; first-byte-p50-ms to the first output
// byte (Bubble Tea's terminal queries); help-p50-ms is `agentsh --help` to a
// pipe, i.e. Go start-up and package init without the TUI; snapshot-p50-ms
// is bash.GetOrCreateSnapshot in this process (the `bash -i` run that
// captures the user's rc, which agentsh takes before the TUI starts).
//
// empty-home has no ~/.bashrc; bashrc-300ms has one that sleeps 0.3 s, as a
// stand-in for a heavy rc (nvm, conda, …).
func BenchmarkTUIColdStart(b *testing.B) {
	needBash(b)
	b.Run("empty-home", func(b *testing.B) { benchColdStart(b, "", 20) })
	b.Run("bashrc-300ms", func(b *testing.B) { benchColdStart(b, "sleep 0.3\n", 5) })
}

func benchColdStart(b *testing.B, bashrc string, runs int) {
	shell, err := bash.ResolveShell("")
	if err != nil {
		b.Skipf("no shell: %v", err)
	}
	b.Cleanup(bash.RemoveSnapshots) // the folder GetOrCreateSnapshot made below
	var frames, firsts, helps, snaps []time.Duration
	for i := 0; i < b.N; i++ {
		s := benchSandbox(b)
		if bashrc != "" {
			writeFileTB(b, filepath.Join(s.home, ".bashrc"), bashrc)
		}
		for r := 0; r < runs; r++ {
			t := startPTYTUI(b, s, benchCols, benchRows)
			at := t.waitText(editorPlaceholder, 20*time.Second)
			frames = append(frames, at.Sub(t.started))
			firsts = append(firsts, time.Duration(t.first.Load()))
			t.write("\x04") // ctrl+d on the empty editor quits
			t.waitExit(20 * time.Second)
			t.close()

			cmd := exec.CommandContext(b.Context(), benchBinary(), "--help")
			cmd.Dir, cmd.Env, cmd.Stdout = s.work, s.env(s.work), io.Discard
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("agentsh --help: %v", err)
			}
			helps = append(helps, time.Since(t0))

			// A new env each time: the snapshot cache is per shell and env.
			t0 = time.Now()
			p := bash.GetOrCreateSnapshot(shell, map[string]string{"HOME": s.home, "AGENTSH_BENCH_RUN": strconv.Itoa(r)})
			snaps = append(snaps, time.Since(t0))
			if p == "" {
				b.Fatal("no shell snapshot")
			}
			os.Remove(p)
		}
	}
	for _, d := range [][]time.Duration{frames, firsts, helps, snaps} {
		slices.Sort(d)
	}
	b.ReportMetric(ms(percentile(frames, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(frames, 90)), "p90-ms")
	b.ReportMetric(ms(frames[len(frames)-1]), "max-ms")
	b.ReportMetric(ms(percentile(firsts, 50)), "first-byte-p50-ms")
	b.ReportMetric(ms(percentile(helps, 50)), "help-p50-ms")
	b.ReportMetric(ms(percentile(snaps, 50)), "snapshot-p50-ms")
}

func writeFileTB(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
