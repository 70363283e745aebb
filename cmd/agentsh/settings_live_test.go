package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A settings.json edit between two commands applies from the next one,
// without a restart (spec §2.2): the model's bash tool in print
// mode sees the new shell.env and the newly enabled interceptor. (The
// user's own file: a project's looser env would wait for the user's trust.)
func TestSettingsEditAppliesToNextToolCall(t *testing.T) {
	s := newSandbox(t)
	global := filepath.Join(s.config, "agentsh", "settings.json")
	writeFile(t, global, `{"shell": {"env": {"AGSH_LIVE": "one"}}}`)
	writeFile(t, filepath.Join(s.work, "notes.txt"), "content\n")
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", `{"command":"echo v=$AGSH_LIVE; cat notes.txt"}`)
		case 1:
			// The first command has run; the user edits the settings.
			if err := os.WriteFile(global, []byte(`{"shell.env.AGSH_LIVE": "two", "bashInterceptor": {"enabled": true}}`), 0o600); err != nil {
				t.Error(err)
			}
			w.bash("call_1", `{"command":"echo v=$AGSH_LIVE"}`)
		case 2:
			w.bash("call_2", `{"command":"cat notes.txt"}`)
		default:
			w.answer("done")
		}
	})
	r := s.runIn(nil, srv.env(), "-p", "--model", "openai/test", "go")
	want(t, r, "done\n", "", 0)
	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, w := range []string{
		"v=one\ncontent\n",
		"v=two\n",
		"Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files.\n\nOriginal command: cat notes.txt",
	} {
		if got := lastToolResult(reqs[i+1]); got != w {
			t.Errorf("call_%d: %q, want %q", i, got, w)
		}
	}
}

// The same through RPC bash commands (the user's bang path): the new env
// from the next command on; a broken file does not stop the user's
// commands: they run with the last settings that loaded, and
// the response carries the located error; fixing it applies the new env.
func TestSettingsEditAppliesToNextRPCBash(t *testing.T) {
	s := newSandbox(t)
	global := filepath.Join(s.config, "agentsh", "settings.json")
	writeFile(t, global, `{"shell": {"env": {"AGSH_LIVE": "one"}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd, in, out := s.startRPC(ctx, nil, nil)
	defer func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("agentsh: %v", err)
		}
	}()
	lines := bufio.NewScanner(out)
	next := func() rpcLine {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("stdout closed: %v", lines.Err())
		}
		var l rpcLine
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			t.Fatalf("not JSON: %q", lines.Bytes())
		}
		return l
	}
	// bashRun is the output, the error and the settings' error of a bash
	// command.
	bashRun := func(command string) (string, string, string) {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"type": "bash", "command": command})
		if _, err := io.WriteString(in, string(b)+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			l := next()
			if l.Type != "response" || l.Command != "bash" {
				continue
			}
			var res struct{ Output, SettingsError string }
			_ = json.Unmarshal(l.Data, &res)
			return res.Output, l.Error, res.SettingsError
		}
	}
	bashOutput := func(command string) (string, string) {
		t.Helper()
		out, e, se := bashRun(command)
		if se != "" {
			t.Errorf("%s: settingsError %q", command, se)
		}
		return out, e
	}
	if l := next(); l.Type != "ready" {
		t.Fatalf("first line %+v", l)
	}
	if got, e := bashOutput("echo v=$AGSH_LIVE"); got != "v=one\n" || e != "" {
		t.Fatalf("before: %q %q", got, e)
	}
	writeFile(t, global, `{"shell": {"env": {"AGSH_LIVE": "two"}}}`)
	if got, e := bashOutput("echo v=$AGSH_LIVE"); got != "v=two\n" || e != "" {
		t.Fatalf("after the edit: %q %q", got, e)
	}
	writeFile(t, global, `{"shell": {"env": {"AGSH_LIVE": 3}}}`)
	if got, e, se := bashRun("echo v=$AGSH_LIVE"); got != "v=two\n" || e != "" ||
		se != "settings: "+global+":1:33: shell.env.AGSH_LIVE: expected string, got number" {
		t.Fatalf("broken: %q %q %q", got, e, se)
	}
	writeFile(t, global, `{"shell": {"env": {"AGSH_LIVE": "four"}}}`)
	if got, e := bashOutput("echo v=$AGSH_LIVE"); got != "v=four\n" || e != "" {
		t.Fatalf("fixed: %q %q", got, e)
	}
}
