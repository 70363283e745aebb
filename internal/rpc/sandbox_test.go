package rpc

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/sandbox"
)

// TestSetSandbox: get_state shows the sandbox the session started with
// (as the flags set it) and that the client's bash commands are unconfined;
// set_sandbox changes the model's mode, yolo and the bash mode, refuses
// bad values whole, and new_session keeps the client's choice.
func TestSetSandbox(t *testing.T) {
	if sandbox.Unavailable() != "" {
		t.Skip(sandbox.Unavailable())
	}
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	var mu sync.Mutex
	var sessions []*agent.AgentSession
	current := func() *agent.AgentSession {
		mu.Lock()
		defer mu.Unlock()
		return sessions[len(sessions)-1]
	}
	c := serve(t, Config{NewSession: func() (*agent.AgentSession, error) {
		a, err := agent.New(dir, nil, exec, bash.ShellConfig{})
		if err == nil {
			a.SetSandbox(config.DefaultSandboxSettings()) // as the modes do
			mu.Lock()
			sessions = append(sessions, a)
			mu.Unlock()
		}
		return a, err
	}}, newTag(t))

	state := func(id string) Sandbox {
		t.Helper()
		c.send(`{"id":"` + id + `","type":"get_state"}`)
		r := c.response(id)
		b, _ := json.Marshal(r["data"].(map[string]any)["sandbox"])
		var sb Sandbox
		if err := json.Unmarshal(b, &sb); err != nil {
			t.Fatal(err)
		}
		return sb
	}
	answer := func(id, line string) map[string]any {
		t.Helper()
		c.send(line)
		return c.response(id)
	}
	model := func() *sandbox.Policy { return current().ToolContext(bash.ToolSettings{}).Settings.Shell.Sandbox }

	want := Sandbox{Mode: sandbox.WorkspaceWrite, Bash: sandbox.Off, Status: sandbox.Describe(sandbox.WorkspaceWrite, false, false)}
	if got := state("s1"); got != want {
		t.Fatalf("start: %+v, want %+v", got, want)
	}
	if p := model(); p == nil || p.Mode != sandbox.WorkspaceWrite || p.Workdir != dir {
		t.Fatalf("the model's policy at start: %+v", p)
	}

	r := answer("m", `{"id":"m","type":"set_sandbox","mode":"read-only","bash":"workspace-write"}`)
	if r["success"] != true {
		t.Fatalf("set_sandbox: %v", r)
	}
	want = Sandbox{Mode: sandbox.ReadOnly, Bash: sandbox.WorkspaceWrite, Status: sandbox.Describe(sandbox.ReadOnly, false, false)}
	if got := state("s2"); got != want {
		t.Fatalf("after set_sandbox: %+v, want %+v", got, want)
	}
	if p := model(); p == nil || p.Mode != sandbox.ReadOnly {
		t.Fatalf("the model's policy after set_sandbox: %+v", p)
	}

	for _, bad := range []struct{ line, err string }{
		{`{"id":"b","type":"set_sandbox","mode":"strict","bash":"off"}`, `unknown sandbox mode "strict" (want workspace-write, read-only or off)`},
		{`{"id":"b","type":"set_sandbox","bash":"x"}`, `bash: unknown sandbox mode "x" (want workspace-write, read-only or off)`},
		{`{"id":"b","type":"set_sandbox","mode":"off","yolo":true}`, `"yolo": true and "mode" cannot be combined`},
	} {
		if r := answer("b", bad.line); r["success"] != false || r["error"] != bad.err {
			t.Errorf("%s: %v, want the error %q", bad.line, r, bad.err)
		}
	}
	if got := state("s3"); got != want {
		t.Fatalf("a refused set_sandbox changed the state: %+v", got)
	}

	if r := answer("y", `{"id":"y","type":"set_sandbox","yolo":true}`); r["success"] != true {
		t.Fatalf("yolo: %v", r)
	}
	want = Sandbox{Mode: sandbox.Off, Yolo: true, Bash: sandbox.WorkspaceWrite, Status: "YOLO"}
	if got := state("s4"); got != want {
		t.Fatalf("yolo: %+v, want %+v", got, want)
	}
	if p := model(); p != nil {
		t.Fatalf("yolo: the model's policy is %+v", p)
	}

	if r := answer("n", `{"id":"n","type":"new_session"}`); r["success"] != true {
		t.Fatalf("new_session: %v", r)
	}
	mu.Lock()
	first := sessions[0]
	mu.Unlock()
	if got := current(); got == first || !reflect.DeepEqual(got.Sandbox(), first.Sandbox()) || !got.Sandbox().Yolo {
		t.Fatalf("new_session did not keep the client's sandbox: %+v", got.Sandbox())
	}
	if r := answer("u", `{"id":"u","type":"set_sandbox","yolo":false}`); r["success"] != true {
		t.Fatalf("yolo false: %v", r)
	}
	if p := model(); p == nil || p.Mode != sandbox.ReadOnly {
		t.Fatalf("after yolo false the model's policy is %+v, want read-only again", p)
	}
}

// TestBashPolicy: the client's bash commands run unconfined until it sets
// a bash mode, then in that mode for the session's directory, with the
// paths and network of the settings, whatever the model's yolo.
func TestBashPolicy(t *testing.T) {
	if sandbox.Unavailable() != "" {
		t.Skip(sandbox.Unavailable())
	}
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	sess, err := agent.New(dir, nil, exec, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ch := sandboxChoice{model: config.SandboxSettings{Mode: sandbox.ReadOnly, Network: true, Yolo: true}, bash: sandbox.Off}
	if p := ch.bashPolicy(sess); p != nil {
		t.Fatalf("default bash policy %+v, want none", p)
	}
	ch.bash = sandbox.WorkspaceWrite
	if p := ch.bashPolicy(sess); p == nil || p.Mode != sandbox.WorkspaceWrite || p.Workdir != dir || !p.Network {
		t.Fatalf("bash policy %+v", p)
	}
}
