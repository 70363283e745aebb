// Package proctest finds processes by an environment entry, so tests can
// prove that no process of a run survived. It reads /proc on its own rather
// than reusing the engine's sweep, so a bug there cannot hide in both.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"agentsh/internal/testkit"
)

// Marked lists live processes (zombies excluded) other than this one whose
// initial environment holds the exact entry kv ("NAME=value").
func Marked(kv string) []int { return withEntry("environ", kv) }

// WithArg lists live processes (zombies excluded) other than this one whose
// command line holds arg as one whole argument. Processes that cleared their
// environment carry no marker; a unique argument still finds them.
func WithArg(arg string) []int { return withEntry("cmdline", arg) }

// withEntry lists live processes other than this one whose NUL-separated
// /proc/<pid>/<file> holds entry as one whole element.
func withEntry(file, entry string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/" + file)
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(data, []byte{0}) {
			if string(v) == entry {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

var tagSeq atomic.Int64

// SleepTag is a sleep duration no other process on the machine uses, so
// WithArg finds a test's sleeps even when they cleared their environment
// (and with it a session's marker).
func SleepTag() string {
	return fmt.Sprintf("1000.%d%05d", os.Getpid(), tagSeq.Add(1))
}

// BashPath is bash's path for tests that run it; the test is skipped when
// there is none.
func BashPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	return p
}

// OutsideDir makes a folder (removed after the test) that no sandbox
// makes writable: beside the calling package's sources, or in /var/tmp
// when those lie in a temp directory (a clone under /tmp), which every
// workspace-write sandbox may write.
func OutsideDir(t testing.TB, pattern string) string {
	t.Helper()
	base, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	for _, tmp := range []string{os.TempDir(), "/tmp", "/dev/shm"} {
		if r, err := filepath.EvalSymlinks(tmp); err == nil && (base == r || strings.HasPrefix(base, r+"/")) {
			base = "/var/tmp"
			break
		}
	}
	d, err := os.MkdirTemp(base, pattern)
	if err != nil {
		t.Skipf("no folder outside the temp directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// WaitWithArg waits (a hang guard of testkit.DefaultBound) until at least n
// live processes hold arg as an argument, and returns them.
func WaitWithArg(t testing.TB, arg string, n int) []int {
	t.Helper()
	var pids []int
	testkit.Eventually(t, 0, fmt.Sprintf("%d processes with argument %s", n, arg), func() (bool, string) {
		pids = WithArg(arg)
		return len(pids) >= n, fmt.Sprintf("processes %v", pids)
	})
	return pids
}

// WaitNoneWithArg waits (a hang guard) until no live process holds arg as
// an argument: processes a kill ended may take a moment to be reaped.
func WaitNoneWithArg(t testing.TB, arg string) {
	t.Helper()
	testkit.Eventually(t, 0, "no process left with argument "+arg, func() (bool, string) {
		pids := WithArg(arg)
		return len(pids) == 0, fmt.Sprintf("processes left %v", pids)
	})
}
