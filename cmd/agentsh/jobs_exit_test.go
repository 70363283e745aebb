package main

// Exit and signals with 3 jobs running, in every mode: no process
// survives. Each test starts one agentsh per way of ending at once (a
// background start holds its call for the settle time, so starting them
// one after the other would cost that many times over), then ends them one
// by one and scans /proc for the jobs' sleeps.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// jobEnding is one way agentsh ends while jobs run: the mode's own end
// (sig 0) or a signal.
type jobEnding struct {
	name string
	sig  syscall.Signal
}

// jobEndings are the signals agentsh catches, its normal end, and SIGKILL,
// after which only the jobs' guardians are left to end them.
var jobEndings = []jobEnding{
	{"exit", 0},
	{"SIGTERM", syscall.SIGTERM},
	{"SIGHUP", syscall.SIGHUP},
	{"SIGINT", syscall.SIGINT},
	{"SIGKILL", syscall.SIGKILL},
}

// sleepTags returns n SleepTags.
func sleepTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = proctest.SleepTag()
	}
	return out
}

// tagged lists live processes that carry one of tags as an argument.
func tagged(tags []string) []int {
	var out []int
	for _, tag := range tags {
		out = append(out, proctest.WithArg(tag)...)
	}
	return out
}

// waitTagged waits until n processes carry tags (hang guard).
func waitTagged(t *testing.T, ctx context.Context, tags []string, n int) {
	t.Helper()
	waitFor(t, ctx, fmt.Sprintf("%d tagged sleeps", n), func() (bool, string) {
		pids := tagged(tags)
		return len(pids) == n, fmt.Sprintf("tagged processes %v", pids)
	})
}

// assertNoneTagged fails unless every process carrying tags is gone; the
// guardians of a SIGKILLed agentsh end them a moment after it died, hence
// the poll (a hang guard, not a timing assertion).
func assertNoneTagged(t *testing.T, tags []string) {
	t.Helper()
	testkit.Eventually(t, 0, "the processes of the jobs to end with agentsh", func() (bool, string) {
		left := tagged(tags)
		return len(left) == 0, fmt.Sprintf("processes left %v", left)
	})
}

// killedBy reports whether err is the exit of a process killed by sig.
func killedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// stopping is what the modes with a stderr say when they stop three jobs.
const stopping = "agentsh: stopping 3 running job(s) at exit\n"

// TestPrintModesJobsDieWithAgentsh: in print mode (text and json) the
// model starts three background jobs; then the turn ends, or a signal
// aborts the model's next (foreground) command, or agentsh is SIGKILLed.
// Every time no process of the jobs is left, and agentsh says it stopped
// them unless it was killed outright.
func TestPrintModesJobsDieWithAgentsh(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	type run struct {
		mode           string
		e              jobEnding
		tags           []string // three jobs, then the foreground command
		srv            *sseServer
		cmd            *exec.Cmd
		stdout, stderr bytes.Buffer
		aliveAtEnd     atomic.Int32 // the jobs' sleeps seen as the turn ended
	}
	var runs []*run
	for _, mode := range []string{modeText, modeJSON} {
		for _, e := range jobEndings {
			r := &run{mode: mode, e: e, tags: sleepTags(4)}
			s := newSandbox(t)
			r.srv = newSSEServer(t, func(n int, w sseWriter) {
				switch {
				case n < 3:
					args, _ := json.Marshal(map[string]any{"command": "sleep " + r.tags[n], "background": true})
					w.bash(fmt.Sprintf("call_%d", n), string(args))
				case n == 3 && e.sig != 0:
					w.bash("call_fg", `{"command":"sleep `+r.tags[3]+`"}`)
				default:
					r.aliveAtEnd.Store(int32(len(tagged(r.tags[:3]))))
					w.answer("done")
				}
			})
			_, _, dirs := privateDirs(t)
			r.cmd = s.command(ctx, s.work, append(r.srv.env(), dirs...),
				"--mode", mode, "-p", "start three servers", "--model", "openai/test")
			r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
			if err := r.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.cmd.Process.Kill(); _ = r.cmd.Wait() })
			runs = append(runs, r)
		}
	}
	for _, r := range runs {
		t.Run(r.mode+"/"+r.e.name, func(t *testing.T) {
			if r.e.sig != 0 {
				// The three jobs and the foreground command run.
				waitTagged(t, ctx, r.tags, 4)
				if err := r.cmd.Process.Signal(r.e.sig); err != nil {
					t.Fatal(err)
				}
			}
			err := r.cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("agentsh hung; stderr %q", r.stderr.String())
			}
			out, errOut := r.stdout.String(), r.stderr.String()
			switch {
			case r.e.sig == syscall.SIGKILL:
				if !killedBy(err, syscall.SIGKILL) {
					t.Errorf("agentsh was not killed: %v", err)
				}
			case r.e.sig != 0:
				if code := exitCode(t, err); code != 1 || !strings.Contains(errOut, "agentsh: Request aborted\n"+stopping) {
					t.Errorf("after %v: exit %d, stderr %q", r.e.sig, code, errOut)
				}
			default:
				if code := exitCode(t, err); code != 0 || errOut != stopping {
					t.Errorf("exit %d, stderr %q", code, errOut)
				}
				if n := r.aliveAtEnd.Load(); n != 3 {
					t.Errorf("%d of the 3 jobs ran when the turn ended", n)
				}
				if r.mode == modeText && out != "done\n" {
					t.Errorf("stdout %q", out)
				}
			}
			if r.mode == modeJSON && r.e.sig != syscall.SIGKILL && !strings.Contains(out, `"type":"agent_end"`) {
				t.Errorf("no agent_end event: %q", clip(out))
			}
			if reqs := r.srv.requests(); len(reqs) < 4 || !strings.HasPrefix(lastToolResult(reqs[3]), "Started job 3: sleep "+r.tags[2]+"\n") {
				t.Fatalf("the third job did not start: %d requests", len(reqs))
			}
			assertNoneTagged(t, r.tags)
		})
	}
}

// TestRPCJobsDieWithAgentsh: an RPC client starts three jobs with bash
// background: true; then it closes stdin, or agentsh gets a signal or is
// SIGKILLed. Every time no process of the jobs is left, and agentsh (exit
// 0) says it stopped them unless it was killed outright.
func TestRPCJobsDieWithAgentsh(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	type run struct {
		e    jobEnding
		tags []string
		rpc  *rpcProc
	}
	var runs []*run
	for _, e := range jobEndings {
		s := newSandbox(t)
		_, _, dirs := privateDirs(t)
		runs = append(runs, &run{e: e, tags: sleepTags(3), rpc: startRPC(t, s, ctx, dirs)})
	}
	for i := range 3 {
		for _, r := range runs {
			b, _ := json.Marshal(map[string]any{"id": "b" + strconv.Itoa(i), "type": "bash", "background": true, "command": "sleep " + r.tags[i]})
			r.rpc.send(t, string(b))
		}
	}
	for _, r := range runs {
		for got := 0; got < 3; {
			l := r.rpc.next(t, "the bash responses")
			if l.Type != "response" {
				continue
			}
			var d struct{ State string }
			if err := json.Unmarshal(l.Data, &d); err != nil || !l.Success || d.State != "running" {
				t.Fatalf("%s: bash background: %+v", r.e.name, l)
			}
			got++
		}
	}
	for _, r := range runs {
		t.Run(r.e.name, func(t *testing.T) {
			waitTagged(t, ctx, r.tags, 3)
			p := r.rpc
			if r.e.sig == 0 {
				p.in.Close()
			} else if err := p.cmd.Process.Signal(r.e.sig); err != nil {
				t.Fatal(err)
			}
			for range p.lines { // until agentsh closes stdout
			}
			err := p.cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("agentsh hung; stderr %q", p.stderr.String())
			}
			if r.e.sig == syscall.SIGKILL {
				if !killedBy(err, syscall.SIGKILL) {
					t.Errorf("agentsh was not killed: %v", err)
				}
			} else if code := exitCode(t, err); code != 0 || !strings.Contains(p.stderr.String(), stopping) {
				t.Errorf("exit %d, stderr %q", code, p.stderr.String())
			}
			assertNoneTagged(t, r.tags)
		})
	}
}

// TestTUIJobsDieWithAgentsh: in the TUI the model starts three background
// jobs; then the user quits (and confirms), or agentsh gets a signal or is
// SIGKILLed. Every time no process of the jobs is left.
func TestTUIJobsDieWithAgentsh(t *testing.T) {
	type run struct {
		e    jobEnding
		tags []string
		tt   *tmuxTUI
	}
	var runs []*run
	for _, e := range jobEndings {
		r := &run{e: e, tags: sleepTags(3)}
		srv := newSSEServer(t, func(n int, w sseWriter) {
			if n < 3 {
				args, _ := json.Marshal(map[string]any{"command": "sleep " + r.tags[n], "background": true})
				w.bash(fmt.Sprintf("call_%d", n), string(args))
				return
			}
			w.answer("Three started.")
		})
		s := newSandbox(t)
		_, _, dirs := privateDirs(t)
		r.tt = startTUI(t, s, append(append(srv.env(), dirs...), "AGENTSH_MODEL=openai/test-model")...)
		r.tt.typeLine("start three servers")
		runs = append(runs, r)
	}
	for _, r := range runs {
		r.tt.waitText("Three started.")
		r.tt.waitText("3 jobs")
	}
	for _, r := range runs {
		t.Run(r.e.name, func(t *testing.T) {
			tt := r.tt
			tt.t = t // its failures are this subtest's
			if n := len(tagged(r.tags)); n != 3 {
				t.Fatalf("%d of the 3 jobs run", n)
			}
			if r.e.sig == 0 {
				tt.keys("C-d")
				tt.waitText("3 jobs running — quit and stop them? y/n")
				tt.keys("y")
			} else {
				pid, err := strconv.Atoi(strings.TrimSpace(tt.tmux("display-message", "-p", "#{pane_pid}")))
				if err != nil {
					t.Fatal(err)
				}
				if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != agentshBin {
					t.Fatalf("the pane runs %q, not agentsh", exe)
				}
				if err := syscall.Kill(pid, r.e.sig); err != nil {
					t.Fatal(err)
				}
			}
			tt.waitExit()
			assertNoneTagged(t, r.tags)
		})
	}
}
