package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps its failures instead of ending the
// test, so the helpers' own failures can be checked.
type recorder struct {
	testing.TB
	fatal, errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestEventuallyReturnsWhenDone(t *testing.T) {
	var calls atomic.Int32
	r := &recorder{TB: t}
	Eventually(r, time.Minute, "the third call", func() (bool, string) {
		n := calls.Add(1)
		return n == 3, fmt.Sprint(n)
	})
	if len(r.fatal) > 0 || calls.Load() != 3 {
		t.Fatalf("calls %d, failures %q", calls.Load(), r.fatal)
	}
}

// TestEventuallySaysWhatAndTheLastState: when the bound fires, the failure
// names what was awaited and the last state the condition reported.
func TestEventuallySaysWhatAndTheLastState(t *testing.T) {
	t.Setenv(ScaleEnv, "")
	var calls atomic.Int32
	r := &recorder{TB: t}
	Eventually(r, 30*time.Millisecond, "the sky to fall", func() (bool, string) {
		return false, fmt.Sprintf("call %d: still up", calls.Add(1))
	})
	if len(r.fatal) != 1 {
		t.Fatalf("failures %q", r.fatal)
	}
	last := fmt.Sprintf("call %d: still up", calls.Load())
	if msg := r.fatal[0]; !strings.Contains(msg, "the sky to fall") || !strings.HasSuffix(msg, "\n"+last) {
		t.Errorf("failure %q, want the wait and %q", msg, last)
	}
	if calls.Load() < 2 {
		t.Errorf("the condition was called %d times", calls.Load())
	}
}

func TestPoll(t *testing.T) {
	if ok, state := Poll(time.Minute, func() (bool, string) { return true, "at once" }); !ok || state != "at once" {
		t.Errorf("Poll = %v, %q", ok, state)
	}
	if ok, state := Poll(time.Millisecond, func() (bool, string) { return false, "never" }); ok || state != "never" {
		t.Errorf("Poll = %v, %q", ok, state)
	}
}

func TestScale(t *testing.T) {
	for _, c := range []struct {
		env  string
		want time.Duration
	}{{"", time.Second}, {"2", 2 * time.Second}, {"0.5", time.Second / 2}, {"0", time.Second}, {"-1", time.Second}, {"x", time.Second}} {
		t.Setenv(ScaleEnv, c.env)
		if got := Scale(time.Second); got != c.want {
			t.Errorf("%s=%q: Scale(1s) = %v, want %v", ScaleEnv, c.env, got, c.want)
		}
	}
}

func TestGolden(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "a.golden"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Golden(r, "a.golden", "one\ntwo\nthree\n")
	if len(r.errs)+len(r.fatal) > 0 {
		t.Fatalf("equal content failed: %q %q", r.errs, r.fatal)
	}
	Golden(r, "a.golden", "one\n2\nthree\n")
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "-two\n+2\n") || !strings.Contains(r.errs[0], "-update") {
		t.Errorf("a difference reported as %q", r.errs)
	}
	Golden(r, "missing.golden", "x")
	if len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "-update") {
		t.Errorf("a missing golden reported as %q", r.fatal)
	}

	*update = true
	defer func() { *update = false }()
	Golden(t, "sub/new.golden", "fresh\n")
	if b, err := os.ReadFile(filepath.Join("testdata", "sub", "new.golden")); err != nil || string(b) != "fresh\n" {
		t.Errorf("-update wrote %q, %v", b, err)
	}
}

func TestDiff(t *testing.T) {
	if d := Diff("a\nb\n", "a\nb\n"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	var want, got []string
	for i := 1; i <= 20; i++ {
		want = append(want, fmt.Sprint(i))
		got = append(got, fmt.Sprint(i))
	}
	got[9] = "ten"
	got = append(got[:15], append([]string{"new"}, got[15:]...)...)
	d := Diff(strings.Join(want, "\n"), strings.Join(got, "\n"))
	wantDiff := "@@ line 7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n 14\n 15\n+new\n 16\n 17\n 18\n@@ … @@\n"
	if d != wantDiff {
		t.Errorf("diff:\n%s\nwant:\n%s", d, wantDiff)
	}
}

// TestEventuallyEvery: the costly condition's wait fails like Eventually's,
// with its last state.
func TestEventuallyEvery(t *testing.T) {
	t.Setenv(ScaleEnv, "")
	r := &recorder{TB: t}
	EventuallyEvery(r, 20*time.Millisecond, 5*time.Millisecond, "a pane", func() (bool, string) { return false, "blank" })
	if len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "a pane") || !strings.HasSuffix(r.fatal[0], "\nblank") {
		t.Errorf("failures %q", r.fatal)
	}
	r = &recorder{TB: t}
	EventuallyEvery(r, time.Minute, 5*time.Millisecond, "a pane", func() (bool, string) { return true, "" })
	if len(r.fatal) != 0 {
		t.Errorf("failures %q", r.fatal)
	}
}
