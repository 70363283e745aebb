package main

// End-to-end tests of print mode: the real binary (built by TestMain) talks
// to internal/fakemodel's server speaking OpenAI's streaming chat-completions
// SSE, scripted per request (fakemodel_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// runIn runs agentsh in the sandbox's work dir with stdin (nil: /dev/null).
func (s *sandbox) runIn(stdin io.Reader, extraEnv []string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := s.command(ctx, s.work, extraEnv, args...)
	cmd.Stdin = stdin
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		s.t.Fatalf("agentsh %q hung; stdout %q, stderr %q", args, clip(stdout.String()), clip(stderr.String()))
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: exitCode(s.t, err)}
}

func (s *sandbox) sessionFiles() []string {
	files, _ := filepath.Glob(filepath.Join(s.data, "agentsh", "sessions", "*", "*.jsonl"))
	return files
}

var toolNoticeRE = regexp.MustCompile(`\[Showing lines \d+-200000 of 200000 \(50\.0KB limit\)\. Full: artifact://0\]$`)

func TestPrintText(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, seqScript)
	r := s.runIn(nil, srv.env(), "-p", "count the lines", "--model", "openai/test")
	want(t, r, "There are 200000 lines.\n", "", 0)

	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if reqs[0]["model"] != "test" {
		t.Errorf("model %v, want test", reqs[0]["model"])
	}
	msgs := wire(reqs[1])
	last := msgs[len(msgs)-1]
	if !strings.HasPrefix(last, "tool: ") || !toolNoticeRE.MatchString(last) {
		t.Errorf("second request's last message is not the truncated tool result: %q", clip(last))
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "user: count the lines") {
		t.Errorf("prompt not sent: %q", msgs)
	}

	files := s.sessionFiles()
	if len(files) != 1 {
		t.Fatalf("session files %q, want one", files)
	}
	if got, wantDir := filepath.Base(filepath.Dir(files[0])), encodedCwd(s.work); got != wantDir {
		t.Errorf("session folder %q, want %q", got, wantDir)
	}
	art := strings.TrimSuffix(files[0], ".jsonl")
	if ents, err := os.ReadDir(art); err != nil || len(ents) == 0 {
		t.Errorf("artifact folder %s: %v, %d entries", art, err, len(ents))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	// The model the session starts with is its first entry, as the
	// reference's; its parent is null, and the user message's its id.
	if len(lines) != 6 || !strings.HasPrefix(lines[0], `{"type":"session"`) ||
		!strings.HasPrefix(lines[1], `{"type":"model_change","id":"`) || !strings.Contains(lines[1], `"parentId":null,`) ||
		!strings.Contains(lines[1], `"model":"openai/test"`) || !strings.HasPrefix(lines[2], `{"type":"message","id":"`) {
		t.Errorf("session file has %d lines (want header + model + user, assistant, tool result, assistant): %q", len(lines), clip(string(data)))
	}

	// --print is the long form; the model can also come from settings.
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"model":"openai/test"}`)
	r = s.runIn(nil, srv.env(), "--print", "again")
	want(t, r, "There are 200000 lines.\n", "", 0)
	// … or from AGENTSH_MODEL.
	os.Remove(filepath.Join(s.work, ".agentsh", "settings.json"))
	r = s.runIn(nil, append(srv.env(), "AGENTSH_MODEL=openai/test"), "-p", "again")
	want(t, r, "There are 200000 lines.\n", "", 0)
}

func TestPrintJSON(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, seqScript)
	r := s.runIn(nil, srv.env(), "--mode", "json", "--model", "openai/test", "count the lines")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%v", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var header map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &header); err != nil || header["type"] != "session" || header["id"] == "" || header["cwd"] == "" {
		t.Fatalf("first line %q is not the session header (%v)", lines[0], err)
	}
	if !strings.HasPrefix(lines[0], `{"type":"session"`) {
		t.Errorf("header %q does not start with type", lines[0])
	}
	seen := map[string]int{}
	var types []string
	for _, l := range lines[1:] {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", clip(l), err)
		}
		typ, _ := e["type"].(string)
		seen[typ]++
		types = append(types, typ)
	}
	for _, typ := range []string{"agent_start", "turn_start", "message_start", "message_update", "message_end",
		"tool_execution_start", "tool_execution_end", "turn_end", "agent_end"} {
		if seen[typ] == 0 {
			t.Errorf("no %s event in %q", typ, types)
		}
	}
	if types[0] != "agent_start" || types[len(types)-1] != "agent_end" {
		t.Errorf("events %q do not run from agent_start to agent_end", types)
	}
	if !strings.Contains(r.stdout, "There are 200000 lines.") {
		t.Errorf("answer missing from the events")
	}
	files := s.sessionFiles()
	if len(files) != 1 || !strings.Contains(files[0], header["id"].(string)) {
		t.Errorf("session files %q do not match header id %v", files, header["id"])
	}
}

func TestPrintPipedStdin(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer("ok") })

	r := s.runIn(strings.NewReader("line one\nline two\n"), srv.env(), "-p", "Summarize:", "--model", "openai/test")
	want(t, r, "ok\n", "", 0)
	// Without -p, piped stdin alone is print mode too.
	r = s.runIn(strings.NewReader("just stdin\n"), srv.env(), "--model", "openai/test")
	want(t, r, "ok\n", "", 0)

	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := wire(reqs[0]); got[len(got)-1] != "user: Summarize:\nline one\nline two" {
		t.Errorf("first prompt %q", got)
	}
	if got := wire(reqs[1]); got[len(got)-1] != "user: just stdin" {
		t.Errorf("second prompt %q", got)
	}
}

func TestPrintNoModel(t *testing.T) {
	s := newSandbox(t)
	r := s.runIn(nil, nil, "-p", "hello")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("%v", r)
	}
	for _, w := range []string{"no model configured", "--model provider/model", `"model"`, "AGENTSH_MODEL",
		"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q lacks %q", r.stderr, w)
		}
	}
	if files := s.sessionFiles(); len(files) != 0 {
		t.Errorf("session files without a model: %q", files)
	}
}

func TestPrintErrors(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) {
		w.Error(http.StatusBadRequest, `{"error":{"message":"model exploded","type":"invalid_request_error"}}`)
	})
	env := srv.env()
	r := s.runIn(nil, env, "-p", "hi", "--model", "openai/test")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "model exploded") {
		t.Errorf("model error: %v", r)
	}
	r = s.runIn(nil, nil, "-p", "hi", "--mode", "yaml")
	if r.code != 2 || !strings.Contains(r.stderr, "--mode must be text, json or rpc") {
		t.Errorf("bad mode: %v", r)
	}
	r = s.runIn(nil, nil, "-p", "--model", "openai/test")
	if r.code != 2 || !strings.Contains(r.stderr, "no prompt") {
		t.Errorf("no prompt: %v", r)
	}
	r = s.runIn(nil, env, "-p", "hi", "--model", "openai/test", "--resume", "nosuch")
	if r.code != 1 || !strings.Contains(r.stderr, `no session "nosuch"`) {
		t.Errorf("resume unknown: %v", r)
	}
}

func TestPrintContinueAndResume(t *testing.T) {
	s := newSandbox(t)
	srv := newSSEServer(t, func(n int, w sseWriter) { w.answer(fmt.Sprintf("answer %d", n)) })
	env := srv.env()

	want(t, s.runIn(nil, env, "-p", "first", "--model", "openai/test"), "answer 0\n", "", 0)
	want(t, s.runIn(nil, env, "--continue", "-p", "second", "--model", "openai/test"), "answer 1\n", "", 0)
	reqs := srv.requests()
	got := strings.Join(wire(reqs[1]), "|")
	if !strings.HasSuffix(got, "user: first|assistant: answer 0|user: second") {
		t.Errorf("--continue request %q lacks the earlier history", got)
	}
	files := s.sessionFiles()
	if len(files) != 1 {
		t.Fatalf("session files %q, want one (continued)", files)
	}

	// --no-session: nothing written, no history.
	want(t, s.runIn(nil, env, "--no-session", "-p", "third", "--model", "openai/test"), "answer 2\n", "", 0)
	if got := wire(srv.requests()[2]); len(got) != 2 || got[1] != "user: third" {
		t.Errorf("--no-session request %q", got)
	}
	if n := len(s.sessionFiles()); n != 1 {
		t.Errorf("%d session files after --no-session, want 1", n)
	}

	// --resume by path, with a corrupt line reported by number and skipped.
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{not json\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := s.runIn(nil, env, "--resume", files[0], "-p", "fourth", "--model", "openai/test")
	// Line 1 is the header, 2 the model, 3–6 the two exchanges.
	if r.code != 0 || r.stdout != "answer 3\n" || !strings.Contains(r.stderr, files[0]+":7:") {
		t.Errorf("resume with a corrupt line 7: %v", r)
	}
	got = strings.Join(wire(srv.requests()[3]), "|")
	if !strings.HasSuffix(got, "user: first|assistant: answer 0|user: second|assistant: answer 1|user: fourth") {
		t.Errorf("--resume request %q", got)
	}
}

// TestPrintSignalAborts: SIGINT/SIGTERM/SIGHUP while the model's bash call
// runs aborts the prompt (stderr, exit 1), kills the command, removes the
// folders and leaves a session whose tool call has a result.
func TestPrintSignalAborts(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			s := newSandbox(t)
			// A background job and a foreground command, both of which must die
			// with agentsh.
			script := `sleep 1000 & printf '%s\n' "$AGENTSH_SHELL_MARK" > ready.tmp && mv ready.tmp ready; sleep 1001`
			args, _ := json.Marshal(map[string]string{"command": script})
			srv := newSSEServer(t, func(n int, w sseWriter) { w.bash("call_1", string(args)) })
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			var stdout, stderr bytes.Buffer
			runtime, tmp, dirs := privateDirs(t)
			cmd := s.command(ctx, s.work, append(srv.env(), dirs...), "--mode", "json", "-p", "wait", "--model", "openai/test")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := false
			defer func() {
				if !waited {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}()
			var mark string
			waitFor(t, ctx, "the tool command to start", func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(s.work, "ready"))
				mark = strings.TrimSpace(string(b))
				return err == nil && mark != "", fmt.Sprintf("ready file %q, %v", b, err)
			})
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			waited = true
			if ctx.Err() != nil {
				t.Fatalf("agentsh hung after %v", sig)
			}
			r := result{stdout: stdout.String(), stderr: stderr.String(), code: exitCode(t, err)}
			if r.code != 1 || !strings.Contains(r.stderr, "aborted") {
				t.Errorf("after %v: %v", sig, r)
			}
			if !strings.Contains(r.stdout, `"type":"agent_end"`) || !strings.Contains(r.stdout, `"aborted":true`) {
				t.Errorf("no aborted agent_end event: %q", clip(r.stdout))
			}
			assertNoMarkedProcs(t, mark)
			if left := agentshFolders(runtime, tmp); len(left) > 0 {
				t.Errorf("folders left: %q", left)
			}
			files := s.sessionFiles()
			if len(files) != 1 {
				t.Fatalf("session files %q", files)
			}
			data, _ := os.ReadFile(files[0])
			if !strings.Contains(string(data), `"toolCallId":"call_1"`) {
				t.Errorf("the cancelled call has no result in the session: %q", clip(string(data)))
			}
		})
	}
}
