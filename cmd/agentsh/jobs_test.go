package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"agentsh/internal/proctest"
)

// TestPrintModeBackgroundJob: in print mode the model's bash call with
// background: true returns at once as a job, the model can read it with
// job_output, and the jobs still running at exit are stopped, with a word
// on stderr and no process left.
func TestPrintModeBackgroundJob(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tag := proctest.SleepTag()
	cmd, _ := json.Marshal(map[string]any{"command": "echo started; sleep " + tag, "background": true})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n % 3 {
		case 0:
			w.bash("call_bg", string(cmd))
		case 1:
			w.tool("call_out", "job_output", `{"id": 1}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, []string{"OPENAI_API_KEY=test", "OPENAI_BASE_URL=" + srv.URL + "/v1"},
		"-p", "start a server", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" || !strings.Contains(r.stderr, "stopping 1 running job(s) at exit") {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !strings.HasPrefix(got, "Started job 1: echo started; sleep "+tag+"\nstarted") {
		t.Errorf("background result %q", got)
	}
	if got := lastToolResult(reqs[2]); !strings.HasPrefix(got, "Job 1 is running.") {
		t.Errorf("job_output result %q", got)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("the job's sleep survived agentsh: %v", left)
	}
}

// TestPrintModeMaxJobsSetting: bash.maxJobs from the settings bounds the
// jobs of the mode's manager: with 2, the model's third background start
// is refused with the engine's sentence, and both jobs are stopped at exit.
func TestPrintModeMaxJobsSetting(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"bash": {"maxJobs": 2}}`)
	tag := proctest.SleepTag()
	cmd, _ := json.Marshal(map[string]any{"command": "sleep " + tag, "background": true})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n < 3 {
			w.bash(fmt.Sprintf("call_%d", n), string(cmd))
			return
		}
		w.answer("done")
	})
	r := s.runIn(nil, srv.env(), "-p", "start three servers", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" || !strings.Contains(r.stderr, "agentsh: stopping 2 running job(s) at exit\n") {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if got := lastToolResult(reqs[2]); !strings.HasPrefix(got, "Started job 2: sleep "+tag) {
		t.Errorf("second start %q", got)
	}
	if got, want := lastToolResult(reqs[3]), "Too many jobs (2 running): kill one with job_kill first."; got != want {
		t.Errorf("third start %q, want %q", got, want)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("a job's sleep survived agentsh: %v", left)
	}
}

// TestPrintModeJobEndNotice: in print mode a background job that ends while
// the model works is told to it at a later step, once, with its id, exit
// status, command and output.
func TestPrintModeJobEndNotice(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	gate := filepath.Join(t.TempDir(), "gate")
	job := "while [ ! -e " + gate + " ]; do sleep 0.05; done; echo built"
	start, _ := json.Marshal(map[string]any{"command": job, "background": true})
	open, _ := json.Marshal(map[string]any{"command": "touch " + gate + "; sleep 0.2"})
	const notice = "[Job 1 exited with code 0: "
	var server atomic.Pointer[sseServer]
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch {
		case n == 0:
			w.bash("call_bg", string(start))
		case n == 1:
			w.bash("call_open", string(open))
		default:
			// Keep working until the notice arrives (a hang guard bounds it).
			body := server.Load().requests()[n]
			if strings.Contains(strings.Join(wire(body), "\n"), notice) || n > 40 {
				w.answer("done")
				return
			}
			w.bash(fmt.Sprintf("call_%d", n), `{"command":"sleep 0.2"}`)
		}
	})
	server.Store(srv)
	r := s.runIn(nil, srv.env(), "-p", "build", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	msgs := wire(reqs[len(reqs)-1])
	var notes []string
	for _, m := range msgs {
		if strings.Contains(m, notice) {
			notes = append(notes, m)
		}
	}
	if want := "user: " + notice + job + "]\nbuilt"; len(notes) != 1 || notes[0] != want {
		t.Fatalf("notices %q, want once %q", notes, want)
	}
}

// TestPrintModeWaitsOnlyWhenAsked: -p waits for a job only when the model
// asks to (job_output with wait_seconds) and stops the rest at exit, saying
// so. The build job waits for a gate the model opens as it asks,
// so it is still running when job_output starts waiting.
func TestPrintModeWaitsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	gate := filepath.Join(t.TempDir(), "gate")
	build := "while [ ! -e " + gate + " ]; do sleep 0.05; done; sleep 1; echo built"
	tag := proctest.SleepTag()
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			args, _ := json.Marshal(map[string]any{"command": build, "background": true})
			w.bash("call_build", string(args))
		case 1:
			args, _ := json.Marshal(map[string]any{"command": "sleep " + tag, "background": true})
			w.bash("call_server", string(args))
		case 2:
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Errorf("open the gate: %v", err)
			}
			w.tool("call_wait", "job_output", `{"id": 1, "wait_seconds": 10}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, srv.env(), "-p", "build it", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" || r.stderr != "agentsh: stopping 1 running job(s) at exit\n" {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !strings.HasPrefix(got, "Started job 1: "+build+"\n\nJob 1 is running. ") {
		t.Errorf("build start %q", got)
	}
	if got := lastToolResult(reqs[2]); !strings.HasPrefix(got, "Started job 2: sleep "+tag+"\n\nJob 2 is running. ") {
		t.Errorf("server start %q", got)
	}
	if got, want := lastToolResult(reqs[3]), "Job 1 exited with code 0.\nbuilt"; got != want {
		t.Errorf("job_output with wait_seconds: %q, want %q", got, want)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("the job still running at exit survived agentsh: %v", left)
	}
}

// TestPrintModeAutoBackground: with bash.autoBackgroundSeconds 2, the
// model's foreground `sleep 5; echo built` becomes job 1 instead of holding
// the turn, and job_output with wait_seconds returns when it ends.
func TestPrintModeAutoBackground(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"bash": {"autoBackgroundSeconds": 2}}`)
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_build", `{"command": "sleep 5; echo built"}`)
		case 1:
			w.tool("call_wait", "job_output", `{"id": "1", "wait_seconds": 10}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, srv.env(), "-p", "build it", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got, want := lastToolResult(reqs[1]),
		"The command is still running after 2.0s, so it became job 1 instead of holding the turn. Job 1 is running. "; !strings.HasPrefix(got, want) {
		t.Errorf("foreground result %q, want it to start with %q", got, want)
	}
	if got, want := lastToolResult(reqs[2]), "Job 1 exited with code 0.\nbuilt"; got != want {
		t.Errorf("job_output with wait_seconds: %q, want %q", got, want)
	}
}

// TestPrintModeForegroundWaitsForInput: the model's foreground command that
// asks a question returns as job 1 waiting for input, with the prompt; the
// model answers with job_input and sees the rest.
func TestPrintModeForegroundWaitsForInput(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	call, _ := json.Marshal(map[string]any{"command": `read -p "Proceed? [y/N] " a; echo "got $a"`})
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_ask", string(call))
		case 1:
			w.tool("call_input", "job_input", `{"id": "1", "text": "y\n"}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, srv.env(), "-p", "install it", "--model", "openai/test")
	if r.code != 0 || r.stdout != "done\n" || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	got := lastToolResult(reqs[1])
	if want := "Proceed? [y/N] \n\nThe command is waiting for input, so it became job 1. Job 1 is waiting for input. "; !strings.HasPrefix(got, want) {
		t.Errorf("foreground result %q, want it to start with %q", got, want)
	}
	// The terminal's echo of the answer, then the program's.
	if got, want := lastToolResult(reqs[2]), "Job 1 exited with code 0.\ny\ngot y"; got != want {
		t.Errorf("job_input result %q, want %q", got, want)
	}
}
