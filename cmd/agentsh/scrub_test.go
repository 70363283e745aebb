package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// secrets is agentsh's environment in TestSecretsScrubbed: a provider key
// (the one the fake model is reached with), one name per default pattern,
// and one plain variable that must get through.
var secrets = map[string]string{
	"OPENAI_API_KEY":  "test",
	"FOO_TOKEN":       "tok-e2e",
	"MY_SECRET_X":     "sec-e2e",
	"DB_PASSWORD":     "pw-e2e",
	"PLAIN_SCRUB_VAR": "plain",
}

func secretsEnv(extra ...string) []string {
	out := append([]string(nil), extra...)
	for k, v := range secrets {
		out = append(out, k+"="+v)
	}
	return out
}

// secretNames lists which of secrets appear in env output.
func secretNames(out string) string {
	var seen []string
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && v != "" && secrets[k] == v {
			seen = append(seen, k)
		}
	}
	sort.Strings(seen)
	return strings.Join(seen, " ")
}

// rpcBashOutput runs one RPC bash command in a real `agentsh --mode rpc`
// and returns its output, keeping stdin open until the response arrived
// (EOF would cancel it).
func (s *sandbox) rpcBashOutput(extraEnv []string, command string) string {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd, in, out := s.startRPC(ctx, extraEnv, nil)
	defer func() { _ = cmd.Wait() }()
	defer in.Close()
	b, _ := json.Marshal(map[string]string{"id": "b", "type": "bash", "command": command})
	if _, err := io.WriteString(in, string(b)+"\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		var l struct {
			ID   string `json:"id"`
			Data struct {
				Output string `json:"output"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &l) == nil && l.ID == "b" {
			return l.Data.Output
		}
		if err != nil {
			t.Fatalf("no response to the bash command: %v", err)
		}
	}
}

// The model's commands (print mode's bash tool and exec, which is the same
// path) do not see agentsh's provider key or the secret-looking names;
// the user's own RPC bash command sees them all; the settings key changes
// the list.
func TestSecretsScrubbed(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const all = "DB_PASSWORD FOO_TOKEN MY_SECRET_X OPENAI_API_KEY PLAIN_SCRUB_VAR"

	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n%2 == 0 {
			w.bash("call_env", `{"command":"env"}`)
			return
		}
		w.answer("done")
	})
	env := secretsEnv("OPENAI_BASE_URL=" + srv.URL + "/v1")
	r := s.runIn(nil, env, "-p", "show the environment", "--model", "openai/test")
	want(t, r, "done\n", "", 0)
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := secretNames(lastToolResult(reqs[1])); got != "PLAIN_SCRUB_VAR" {
		t.Errorf("the model's env showed %q, want only PLAIN_SCRUB_VAR", got)
	}

	r = s.runEnv(s.work, env, "exec", "--", "env")
	if got := secretNames(r.stdout); r.code != 0 || got != "PLAIN_SCRUB_VAR" {
		t.Errorf("exec env showed %q (%v), want only PLAIN_SCRUB_VAR", got, r)
	}

	if got := secretNames(s.rpcBashOutput(env, "env")); got != all {
		t.Errorf("the user's RPC bash env showed %q, want %q", got, all)
	}

	// Fewer names than the default loosen: the project needs trust.
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"shell": {"scrubEnv": ["*_TOKEN"]}}`)
	r = s.runEnv(s.work, env, "exec", "--trust-project", "--", "env")
	if got := secretNames(r.stdout); r.code != 0 || got != "DB_PASSWORD MY_SECRET_X OPENAI_API_KEY PLAIN_SCRUB_VAR" {
		t.Errorf("with scrubEnv [*_TOKEN], exec env showed %q (%v)", got, r)
	}
}
