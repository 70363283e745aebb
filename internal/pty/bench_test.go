package pty

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The seq benchmarks compare a PTY session with tmux on the same work:
// `seq 1 1000000` in a 200×50 terminal, from start until the program has
// exited and its output is on the screen. BENCHMARKS.md reports the ratio.

const seqFlood = "seq 1 1000000"

func BenchmarkSeqMillionPTY(b *testing.B) {
	sh := bashPath(b)
	env := testEnv(b)
	dir := b.TempDir()
	var last *Session
	for b.Loop() {
		s := Start(context.Background(), Options{Shell: sh, Command: seqFlood, Cwd: dir, Env: env, Cols: 200, Rows: 50})
		r := s.Wait()
		if r.ExitCode == nil || *r.ExitCode != 0 || r.TotalLines != 1000000 {
			b.Fatalf("run: exit=%v lines=%d", r.ExitCode, r.TotalLines)
		}
		last = s
	}
	b.StopTimer()
	if rows := normRows(last.Screen().Text()); len(rows) != 49 || rows[48] != "1000000" {
		b.Fatalf("final screen ends %q", rows[len(rows)-1])
	}
	b.ReportMetric(float64(last.Screen().SkippedBytes()), "skipped-bytes")
}

func BenchmarkSeqMillionTmux(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux not installed")
	}
	sock := fmt.Sprintf("agentsh-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	defer func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() }()
	tmux("new-session", "-d", "-s", "bench", "-x", "200", "-y", "50", "sleep 100000")
	tmux("set-option", "-g", "status", "off")
	tmux("resize-window", "-t", "bench", "-x", "200", "-y", "50")
	// The same login shell as a PTY session. The pane signals when seq has
	// ended; tmux parses output asynchronously, so the run ends only when
	// the screen shows this iteration's end marker too.
	env := "HOME=" + b.TempDir()
	i := 0
	for b.Loop() {
		i++
		marker := fmt.Sprintf("end-%d", i)
		tmux("respawn-pane", "-k", "-t", "bench", fmt.Sprintf(
			"env %s TERM=xterm-256color %s -lc '%s; echo %s; tmux -L %s wait-for -S seqdone; exec sleep 100000'",
			env, bashPath(b), seqFlood, marker, sock))
		tmux("wait-for", "seqdone")
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(tmux("capture-pane", "-p", "-t", "bench"), "1000000\n"+marker+"\n") {
			if time.Now().After(deadline) {
				b.Fatal("tmux never showed the last line")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// BenchmarkSessionWrite is the key-to-byte path of Write: normalization
// and the hand-off to the writer, per key.
func BenchmarkSessionWrite(b *testing.B) {
	s := Start(context.Background(), Options{Shell: bashPath(b), Command: "stty raw -echo; cat >/dev/null", Env: testEnv(b), Cols: 80, Rows: 24})
	defer s.Close()
	ks := [][]byte{[]byte("a"), []byte("\x1b[A"), []byte("\x1b[97;5u"), []byte("\x1b[1;3C"), []byte("\r")}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Write(ks[i%len(ks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSessionTrue is a whole PTY session of `true`: start, exit, drain,
// sweep and result.
func BenchmarkSessionTrue(b *testing.B) {
	sh := bashPath(b)
	env := testEnv(b)
	dir := b.TempDir()
	for b.Loop() {
		r := Start(context.Background(), Options{Shell: sh, Command: "true", Cwd: dir, Env: env, Cols: 80, Rows: 24}).Wait()
		if r.ExitCode == nil || *r.ExitCode != 0 {
			b.Fatalf("run: exit=%v output=%q", r.ExitCode, r.Output)
		}
	}
}
