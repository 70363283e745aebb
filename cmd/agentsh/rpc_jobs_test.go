package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"agentsh/internal/proctest"
)

// TestRPCJobs drives a real `agentsh --mode rpc` through a user job's life:
// bash with background: true answers with the job and a
// job_start event; the job, run with agentsh's whole environment (the
// secret-looking names the model's shells lose included), waits at a
// prompt (job_update), takes job_input and ends (job_end, exit 0, its
// answer); job_kill of a sleep leaves no process; jobs lists both; a job
// still running at stdin EOF is stopped, with a word on stderr.
func TestRPCJobs(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var stderr bytes.Buffer
	cmd, in, outPipe := s.startRPC(ctx, secretsEnv(), func(cmd *exec.Cmd) { cmd.Stderr = &stderr })
	lines := make(chan map[string]any, 64)
	go func() {
		defer close(lines)
		r := bufio.NewReader(outPipe)
		for {
			b, err := r.ReadBytes('\n')
			if len(b) > 0 {
				var l map[string]any
				if json.Unmarshal(b, &l) != nil {
					t.Errorf("not JSON: %q", b)
				}
				lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stdout closed while waiting for %s", what)
			}
			return l
		case <-ctx.Done():
			t.Fatalf("no %s (hang guard)", what)
		}
		return nil
	}
	send := func(v map[string]any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if _, err := io.WriteString(in, string(b)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// await collects lines until every key has come: "type:X" for an
	// event, "id:X" for a response; in any order, others skipped.
	await := func(keys ...string) map[string]map[string]any {
		t.Helper()
		got := map[string]map[string]any{}
		for len(got) < len(keys) {
			l := next(strings.Join(keys, ", "))
			for _, k := range keys {
				if kind, v, _ := strings.Cut(k, ":"); l[kind] == v && (kind == "type" || l["type"] == "response") {
					got[k] = l
				}
			}
		}
		return got
	}
	data := func(l map[string]any) map[string]any {
		d, _ := l["data"].(map[string]any)
		return d
	}
	if l := next("ready"); l["type"] != "ready" {
		t.Fatalf("first line %v", l)
	}

	send(map[string]any{"id": "b1", "type": "bash", "background": true,
		"command": `env | grep -c '^FOO_TOKEN=tok-e2e$'; read -p "Proceed? [y/N] " a; echo "got $a"`})
	got := await("id:b1", "type:job_start")
	if d := data(got["id:b1"]); got["id:b1"]["success"] != true || d["id"] != "1" || d["state"] != "running" {
		t.Fatalf("bash background: %v", got["id:b1"])
	}
	if j := got["type:job_start"]["job"].(map[string]any); j["id"] != "1" {
		t.Fatalf("job_start %v", got["type:job_start"])
	}
	if l := await("type:job_update")["type:job_update"]; l["job"].(map[string]any)["state"] != "waitingForInput" {
		t.Fatalf("job_update %v", l)
	}
	send(map[string]any{"id": "i1", "type": "job_input", "jobId": "1", "text": "y\n"})
	got = await("id:i1", "type:job_end")
	end := got["type:job_end"]
	if j := end["job"].(map[string]any); j["state"] != "exited" || j["exitCode"] != float64(0) ||
		end["output"] != "1\nProceed? [y/N] y\ngot y\n" {
		t.Fatalf("job_end %v", end)
	}
	if d := data(got["id:i1"]); d["state"] != "exited" || !strings.HasSuffix(d["output"].(string), "got y\n") {
		t.Fatalf("job_input %v", got["id:i1"])
	}

	tag := proctest.SleepTag()
	send(map[string]any{"id": "b2", "type": "bash", "background": true, "command": "sleep " + tag})
	await("id:b2", "type:job_start")
	send(map[string]any{"id": "k2", "type": "job_kill", "jobId": 2})
	got = await("id:k2", "type:job_end")
	if d := data(got["id:k2"]); d["state"] != "killed" || got["type:job_end"]["job"].(map[string]any)["state"] != "killed" {
		t.Fatalf("job_kill %v / %v", got["id:k2"], got["type:job_end"])
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("job_kill left %v", left)
	}

	last := proctest.SleepTag()
	send(map[string]any{"id": "b3", "type": "bash", "background": true, "command": "sleep " + last})
	await("id:b3", "type:job_start")
	send(map[string]any{"id": "l", "type": "jobs"})
	list := data(await("id:l")["id:l"])["jobs"].([]any)
	var states []string
	for _, j := range list {
		states = append(states, j.(map[string]any)["id"].(string)+" "+j.(map[string]any)["stateText"].(string))
	}
	if strings.Join(states, ", ") != "1 exited 0, 2 killed, 3 running" {
		t.Fatalf("jobs: %v", list)
	}

	// A plain bash whose command waits at a prompt answers as job 4
	// after a second with the prompt, instead of holding the call.
	send(map[string]any{"id": "f1", "type": "bash", "command": `read -p "Continue? " a; echo "fg $a"`})
	got = await("id:f1", "type:job_start")
	if d := data(got["id:f1"]); got["id:f1"]["success"] != true || d["jobId"] != "4" || d["exitCode"] != nil ||
		d["output"] != "Continue? \n\n[The command is waiting for input, so it became job 4.]" {
		t.Fatalf("foreground prompt: %v", got["id:f1"])
	}
	send(map[string]any{"id": "i4", "type": "job_input", "jobId": "4", "text": "y\n"})
	got = await("id:i4", "type:job_end")
	if j := got["type:job_end"]["job"].(map[string]any); j["id"] != "4" || j["state"] != "exited" || j["exitCode"] != float64(0) ||
		!strings.HasSuffix(got["type:job_end"]["output"].(string), "fg y\n") {
		t.Fatalf("job_end of the prompt: %v", got["type:job_end"])
	}

	in.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v (%s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping 1 running job(s) at exit") {
		t.Errorf("stderr %q", stderr.String())
	}
	if left := proctest.WithArg(last); len(left) != 0 {
		t.Fatalf("a job survived agentsh: %v", left)
	}
}
