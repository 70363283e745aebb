package bash

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

var sleepTag = proctest.SleepTag

// escapeCases are commands that leave processes behind that try to outlive
// the run; %[1]s is a tag every one of them carries as an argument, count is
// how many such processes run once the command is in its last sleep.
var escapeCases = []struct {
	name   string
	script string
	count  int
}{
	{"env -i setsid -f", "env -i setsid -f sleep %[1]s; sleep %[1]s", 2},
	{"unset marker, setsid -f", "unset " + markerVar + "; setsid -f sleep %[1]s; sleep %[1]s", 2},
	// The cases of escapees (executor_test.go), all of them in one run.
	{"every escapee", `(sleep %[1]s &)
setsid sleep %[1]s &
(setsid bash -c 'sleep %[1]s & disown' &)
( ( (sleep %[1]s) & ) & )
bash -c 'trap "" TERM; while :; do sleep 0.05; done' %[1]s &
nohup sleep %[1]s >/dev/null 2>&1 &
env -i setsid -f sleep %[1]s
(unset ` + markerVar + `; setsid -f sleep %[1]s)
sleep %[1]s`, 9},
}

// runUntilCancelled runs script (with a fresh tag) and cancels it once all
// count tagged processes run, or, with timeout set, lets it time out. It
// returns the result and the tag.
func runUntilCancelled(t *testing.T, e *Executor, script string, count int, timeout time.Duration) (BashResult, string) {
	t.Helper()
	tag := sleepTag()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		r   BashResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := e.Run(ctx, fmt.Sprintf(script, tag), RunOptions{Shell: testShell(t), Timeout: timeout})
		done <- out{r, err}
	}()
	if timeout == 0 {
		// done has room for the result: a run that ended early stops the
		// wait, and fails below.
		testkit.Eventually(t, hangGuard, fmt.Sprintf("%d tagged processes", count), func() (bool, string) {
			pids := proctest.WithArg(tag)
			return len(pids) >= count || len(done) > 0, fmt.Sprintf("tagged processes %v", pids)
		})
		if len(done) > 0 {
			o := <-done
			t.Fatalf("the run ended before it was cancelled: %+v, %v", o.r, o.err)
		}
		cancel()
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		return o.r, tag
	case <-time.After(hangGuard):
		t.Fatal("the cancelled run did not return (hang guard)")
	}
	return BashResult{}, ""
}

// TestCancelLeavesNoEscapees: a cancelled or timed-out run ends processes
// that left the session and cleared (or unset) the environment marker: they
// stay descendants of the shell's guardian. 50 cancels of each case, and a
// timeout; nothing may survive Run's return.
func TestCancelLeavesNoEscapees(t *testing.T) {
	runs := 50
	if testing.Short() {
		runs = 5
	}
	for _, c := range escapeCases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestExecutor(t)
			e.KillGrace = 20 * time.Millisecond // the SIGTERM-proof one is SIGKILLed sooner
			for i := 0; i < runs; i++ {
				r, tag := runUntilCancelled(t, e, c.script, c.count, 0)
				if !r.Cancelled || r.ExitCode != nil {
					t.Fatalf("run %d: %+v", i, r)
				}
				if left := proctest.WithArg(tag); len(left) > 0 {
					t.Fatalf("run %d: %d processes survived the cancel: %v", i, len(left), left)
				}
			}
			r, tag := runUntilCancelled(t, e, c.script, c.count, time.Second)
			if !r.Cancelled || !strings.HasPrefix(r.Output, "[Command timed out after 1 seconds]") {
				t.Fatalf("timeout: %+v", r)
			}
			if left := proctest.WithArg(tag); len(left) > 0 {
				t.Fatalf("%d processes survived the timeout: %v", len(left), left)
			}
		})
	}
}

// TestCloseLeavesNoEscapees: closing the executor (agentsh's exit) ends the
// background jobs of finished runs, also those without the marker.
func TestCloseLeavesNoEscapees(t *testing.T) {
	e := NewExecutor()
	defer e.Close()
	tag := sleepTag()
	r := run(t, e, fmt.Sprintf("env -i setsid -f sleep %[1]s; (unset %[2]s; setsid -f sleep %[1]s); echo ok", tag, markerVar), RunOptions{})
	expect(t, r, "ok\n", "0")
	proctest.WaitWithArg(t, tag, 2)
	e.Close()
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("close left processes: %v", left)
	}
}
