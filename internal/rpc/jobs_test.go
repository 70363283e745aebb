package rpc

import (
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/proctest"
)

// startJobs is start with a job manager; dir is the session's cwd.
func startJobs(t *testing.T) (*client, string) {
	t.Helper()
	tag := newTag(t)
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	dir := t.TempDir()
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			return agent.New(dir, nil, exec, bash.ShellConfig{Env: map[string]string{"RPCTEST_TAG": tag}})
		},
		Jobs: m,
	}
	return serve(t, cfg, tag), dir
}

// started waits for the response with the given id to a bash background
// command and for the job_start event, which come in either order.
func (c *client) started(id string) (resp, start map[string]any) {
	c.t.Helper()
	for resp == nil || start == nil {
		switch l := c.next(); {
		case l["type"] == "job_start":
			start = l
		case l["type"] == "response" && l["id"] == id:
			resp = l
		}
	}
	return resp, start
}

// event waits for the next job event of the given type, skipping other lines.
func (c *client) event(typ string) map[string]any {
	c.t.Helper()
	for {
		if l := c.next(); l["type"] == typ {
			return l
		}
	}
}

// A prompt run as a user job: job_start, job_update to waiting for input,
// job_input answers it, job_end with exit 0 and the answer; the job sees
// the session's cwd and the shell's env; jobs lists it.
func TestBackgroundJobPrompt(t *testing.T) {
	c, dir := startJobs(t)
	c.send(`{"id":"b","type":"bash","background":true,"command":"pwd; echo \"tag=$RPCTEST_TAG\"; read -p \"Proceed? [y/N] \" a; echo \"got $a\""}`)
	r, e := c.started("b")
	d, _ := r["data"].(map[string]any)
	if r["success"] != true || d["id"] != "1" || !strings.HasPrefix(d["command"].(string), "pwd; ") {
		t.Fatalf("bash background: %v", r)
	}
	if j := e["job"].(map[string]any); j["id"] != "1" || j["command"] != d["command"] {
		t.Fatalf("job_start %v", e)
	}
	e = c.event("job_update")
	if j := e["job"].(map[string]any); j["state"] != "waitingForInput" || j["stateText"] != "waiting for input" {
		t.Fatalf("job_update %v", e)
	}
	c.send(`{"id":"o","type":"job_output","jobId":1}`)
	r = c.response("o")
	d, _ = r["data"].(map[string]any)
	wantDir, _ := filepath.EvalSymlinks(dir)
	if out, _ := d["output"].(string); r["success"] != true || d["state"] != "waitingForInput" ||
		!strings.Contains(out, wantDir+"\n") || !strings.Contains(out, "tag="+c.tag) || !strings.HasSuffix(out, "Proceed? [y/N] ") {
		t.Fatalf("job_output: %v", r)
	}

	c.send(`{"id":"i","type":"job_input","jobId":"1","text":"y\n"}`)
	// The response and the events come in either order.
	var end map[string]any
	r = nil
	for end == nil || r == nil {
		switch l := c.next(); {
		case l["type"] == "job_end":
			end = l
		case l["id"] == "i":
			r = l
		case l["type"] == "job_update" && l["job"].(map[string]any)["state"] != "running":
			t.Fatalf("update after input: %v", l)
		}
	}
	j := end["job"].(map[string]any)
	if j["state"] != "exited" || j["exitCode"] != float64(0) || !strings.Contains(end["output"].(string), "got y") {
		t.Fatalf("job_end %v", end)
	}
	d, _ = r["data"].(map[string]any)
	if r["success"] != true || d["state"] != "exited" || !strings.Contains(d["output"].(string), "got y") {
		t.Fatalf("job_input: %v", r)
	}

	c.send(`{"id":"i2","type":"job_input","jobId":"1","text":"n\n"}`)
	if r = c.response("i2"); r["success"] != false || r["error"] != "Job 1 exited with code 0. It takes no more input." {
		t.Fatalf("input to an ended job: %v", r)
	}
	c.send(`{"id":"l","type":"jobs"}`)
	r = c.response("l")
	list := r["data"].(map[string]any)["jobs"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["exitCode"] != float64(0) || list[0].(map[string]any)["stateText"] != "exited 0" {
		t.Fatalf("jobs: %v", r)
	}
}

// job_kill ends a job's whole tree; jobs lists it killed; unknown ids and
// a missing id are refused in the tools' words.
func TestJobKillAndErrors(t *testing.T) {
	needProc(t)
	c, _ := startJobs(t)
	c.send(`{"id":"l0","type":"jobs"}`)
	if r := c.response("l0"); len(r["data"].(map[string]any)["jobs"].([]any)) != 0 {
		t.Fatalf("jobs before any: %v", r)
	}
	c.send(`{"id":"k0","type":"job_kill","jobId":"1"}`)
	if r := c.response("k0"); r["success"] != false || r["error"] != "No job 1: no job has been started." {
		t.Fatalf("kill of no job: %v", r)
	}
	tag := proctest.SleepTag()
	c.send(`{"id":"b","type":"bash","background":true,"command":"sleep ` + tag + ` & sleep ` + tag + `; echo never"}`)
	if r, _ := c.started("b"); r["success"] != true {
		t.Fatalf("bash background: %v", r)
	}
	proctest.WaitWithArg(t, tag, 2)
	c.send(`{"id":"l","type":"jobs"}`)
	r := c.response("l")
	if j := r["data"].(map[string]any)["jobs"].([]any)[0].(map[string]any); j["state"] != "running" || j["id"] != "1" {
		t.Fatalf("jobs: %v", r)
	}
	c.send(`{"id":"k","type":"job_kill","jobId":"1"}`)
	r = c.response("k")
	if d := r["data"].(map[string]any); r["success"] != true || d["state"] != "killed" || d["exitCode"] != nil {
		t.Fatalf("job_kill: %v", r)
	}
	if left := proctest.WithArg(tag); len(left) != 0 {
		t.Fatalf("processes left after job_kill: %v", left)
	}
	c.send(`{"id":"k2","type":"job_kill","jobId":1}`)
	if r = c.response("k2"); r["data"].(map[string]any)["alreadyEnded"] != true {
		t.Fatalf("second kill: %v", r)
	}
	c.send(`{"id":"o","type":"job_output","jobId":"7"}`)
	if r = c.response("o"); r["error"] != "No job 7. Jobs: 1." {
		t.Fatalf("unknown job: %v", r)
	}
	c.send(`{"id":"o2","type":"job_output"}`)
	if r = c.response("o2"); !strings.HasPrefix(r["error"].(string), "Missing jobId") {
		t.Fatalf("missing id: %v", r)
	}
}

// Without a job manager the job commands and background bash are refused.
func TestNoJobManager(t *testing.T) {
	c := start(t, nil)
	for _, line := range []string{`{"id":"x","type":"jobs"}`, `{"id":"x","type":"bash","background":true,"command":"true"}`} {
		c.send(line)
		if r := c.response("x"); r["success"] != false || r["error"] != bash.NoJobsMessage {
			t.Fatalf("%s: %v", line, r)
		}
	}
}
