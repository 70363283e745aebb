package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/testkit"
)

// rpcLine is one line agentsh writes in RPC mode.
type rpcLine struct {
	Type    string          `json:"type"`
	ID      any             `json:"id"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Error   string          `json:"error"`
	Data    json.RawMessage `json:"data"`
}

// startRPC starts `agentsh --mode rpc` in the sandbox's work folder with
// extraEnv, after setup (may be nil) has adjusted the command, and returns
// it with its stdin and stdout.
func (s *sandbox) startRPC(ctx context.Context, extraEnv []string, setup func(*exec.Cmd)) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	s.t.Helper()
	cmd := s.command(ctx, s.work, extraEnv, "--mode", "rpc")
	if setup != nil {
		setup(cmd)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	return cmd, in, out
}

// TestRPCModeEndToEnd drives a real `agentsh --mode rpc` process over its
// stdin and stdout: ready line, ids echoed, a running bash interrupted by
// abort_bash, errors for bad lines, and a clean exit on stdin EOF with no
// process of the run left.
func TestRPCModeEndToEnd(t *testing.T) {
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd, in, outPipe := s.startRPC(ctx, nil, nil)
	lines := make(chan rpcLine, 64)
	go func() {
		defer close(lines)
		r := bufio.NewReader(outPipe)
		for {
			b, err := r.ReadBytes('\n')
			if len(b) > 0 {
				var l rpcLine
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
	next := func(what string) rpcLine {
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
		return rpcLine{}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	if l := next("ready"); l.Type != "ready" {
		t.Fatalf("first line %+v", l)
	}
	send(`{"id":"b1","type":"bash","command":"echo hi"}`)
	l := next("bash response")
	var res struct {
		Output    string `json:"output"`
		ExitCode  *int   `json:"exitCode"`
		Cancelled bool   `json:"cancelled"`
	}
	if json.Unmarshal(l.Data, &res) != nil || l.ID != "b1" || !l.Success || l.Command != "bash" || res.Output != "hi\n" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("bash: %+v %+v", l, res)
	}

	send(`{"id":7,"type":"bash","command":"echo \"mark=$AGENTSH_SHELL_MARK\"; : > running; sleep 30"}`)
	waitNonEmptyFile(t, filepath.Join(s.work, "running"), false)
	send(`{"id":8,"type":"abort_bash"}`)
	var bashResp rpcLine
	for bashResp.Command != "bash" {
		if l := next("aborted bash response"); l.Type == "response" && l.Command == "bash" {
			bashResp = l
		}
	}
	res.Output, res.Cancelled = "", false
	if json.Unmarshal(bashResp.Data, &res) != nil || bashResp.ID != float64(7) || !res.Cancelled {
		t.Fatalf("abort_bash did not cancel: %+v %+v", bashResp, res)
	}
	mark := ""
	for _, line := range strings.Split(res.Output, "\n") {
		if m, ok := strings.CutPrefix(line, "mark="); ok {
			mark = m
		}
	}
	assertNoMarkedProcs(t, mark)

	send(`not json`)
	for l = next("parse error"); l.Command != "parse"; l = next("parse error") {
	}
	if l.Success || !strings.HasPrefix(l.Error, "Failed to parse command: ") {
		t.Fatalf("parse: %+v", l)
	}
	send(`{"id":9,"type":"frobnicate"}`)
	if l = next("unknown"); l.Success || l.Error != "Unknown command: frobnicate" {
		t.Fatalf("unknown: %+v", l)
	}
	send(`{"id":10,"type":"prompt","message":"hello"}`)
	if l = next("prompt"); l.Success || l.ID != float64(10) || !strings.Contains(l.Error, "no model configured") {
		t.Fatalf("prompt without a model: %+v", l)
	}

	// A running command, then stdin EOF: agentsh ends it and exits 0.
	send(`{"id":11,"type":"bash","command":"echo \"mark=$AGENTSH_SHELL_MARK\" > started; sleep 30"}`)
	waitNonEmptyFile(t, filepath.Join(s.work, "started"), true)
	in.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after stdin EOF: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(s.work, "started"))
	if err != nil {
		t.Fatalf("the last command never started: %v", err)
	}
	assertNoMarkedProcs(t, strings.TrimPrefix(strings.TrimSpace(string(b)), "mark="))
}

// waitNonEmptyFile waits until a command has made path (with content when
// nonEmpty), failing after a hang guard: the command is running, not queued.
func waitNonEmptyFile(t *testing.T, path string, nonEmpty bool) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, "the command to make "+path, func() (bool, string) {
		st, err := os.Stat(path)
		if err != nil {
			return false, err.Error()
		}
		return !nonEmpty || st.Size() > 0, fmt.Sprintf("%d bytes", st.Size())
	})
}

// startRPCLines starts cmd (an `agentsh --mode rpc`) with pipes: in writes
// commands, next reads the next output line as JSON (failing the test on
// a read error or a line that is not JSON).
func startRPCLines(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, io.WriteCloser, func() map[string]any) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(outPipe)
	next := func() map[string]any {
		t.Helper()
		b, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read: %v (%q)", err, b)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %q", b)
		}
		return m
	}
	return cmd, in, next
}

// TestRPCPromptEndToEnd: a prompt over RPC against a local server speaking
// OpenAI's streaming wire format is acknowledged at once, streams events
// (the bash tool call included) and ends with agent_end; get_messages then
// holds the whole turn.
func TestRPCPromptEndToEnd(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, seqScript)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd, in, next := startRPCLines(t, s.command(ctx, s.work, srv.env(), "--mode", "rpc", "--model", "openai/test"))
	if l := next(); l["type"] != "ready" {
		t.Fatalf("first line %v", l)
	}
	if _, err := io.WriteString(in, `{"id":"p1","type":"prompt","message":"count the lines"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if l := next(); l["type"] != "response" || l["id"] != "p1" || l["success"] != true {
		t.Fatalf("prompt not acknowledged first: %v", l)
	}
	var types []string
	for {
		l := next()
		types = append(types, l["type"].(string))
		if l["type"] == "agent_end" {
			break
		}
	}
	joined := strings.Join(types, " ")
	for _, want := range []string{"agent_start", "tool_execution_start", "tool_execution_end", "message_end"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("no %s in %s", want, joined)
		}
	}
	if _, err := io.WriteString(in, `{"id":"m","type":"get_messages"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	l := next()
	data, _ := l["data"].(map[string]any)
	msgs, _ := data["messages"].([]any)
	if l["id"] != "m" || len(msgs) != 4 {
		t.Fatalf("messages: %v", l)
	}
	reqs := srv.requests()
	if len(reqs) != 2 || !strings.Contains(strings.Join(wire(reqs[1]), "\n"), "of 200000 (50.0KB limit). Full: artifact://0]") {
		t.Fatalf("second request lacks the tool result notice: %v", reqs)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
