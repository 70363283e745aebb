package rpc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/sandbox"
)

// TestBashGetsNoModelState: a function, an alias and a PATH
// the model defined in its (confined) shell do not run in an RPC client's
// bash command, which gets the user's state only; the client's own export
// still reaches the model.
func TestBashGetsNoModelState(t *testing.T) {
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	var a *agent.AgentSession
	c := serve(t, Config{NewSession: func() (*agent.AgentSession, error) {
		s, err := agent.New(dir, nil, exec, bash.ShellConfig{})
		if err == nil && sandbox.Unavailable() == "" {
			s.SetSandbox(config.DefaultSandboxSettings()) // as the modes do
		}
		a = s
		return s, err
	}}, newTag(t))
	c.send(`{"id":"s","type":"get_state"}`)
	c.response("s")
	marks := filepath.Join(dir, "marks")
	model := func(cmd string) string {
		t.Helper()
		res, err := (&bash.Tool{Executor: exec}).Execute(context.Background(), bash.ToolParams{Command: cmd}, a.ToolContext(bash.ToolSettings{}), nil)
		return bash.Finalize(res, err).Content
	}
	def := `touch() { echo touch >> ` + marks + `; }; alias ls='echo ls >> ` + marks + `'; mkdir -p bin && printf '#!/bin/sh\necho id >> ` + marks + `\n' > bin/id && chmod +x bin/id && export PATH=` + dir + `/bin:$PATH MODEL_DATA=1 && echo defined`
	if got := model(def); got != "defined\n" {
		t.Fatalf("model: %q", got)
	}
	c.send(`{"id":"b","type":"bash","command":"touch made; ls made; id -u >/dev/null; echo ${MODEL_DATA-unset}; export CLIENT_DATA=c"}`)
	r := c.response("b")
	if d := r["data"].(map[string]any); d["output"] != "made\nunset\n" && d["output"] != "made\nunset" {
		t.Errorf("the client's bash: %v", d["output"])
	}
	if b, _ := os.ReadFile(marks); len(b) != 0 {
		t.Errorf("the model's definitions ran in the client's bash: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err != nil {
		t.Errorf("the real touch did not run: %v", err)
	}
	if got := model("echo $CLIENT_DATA $MODEL_DATA"); got != "c 1\n" {
		t.Errorf("the model after the client's bash: %q", got)
	}
}
