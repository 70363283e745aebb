package agent

import (
	"agentsh/internal/proctest"
	"agentsh/internal/session"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/bash"
)

func newAgent(t *testing.T) (*AgentSession, *session.Store) {
	t.Helper()
	isolateData(t)
	cwd := t.TempDir()
	s, err := session.Create(cwd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := bash.NewExecutor()
	t.Cleanup(e.Close)
	a, err := New(cwd, s, e, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != s.ID() {
		t.Fatalf("session id %s, store id %s", a.ID(), s.ID())
	}
	return a, s
}

func mustBash(t *testing.T, a *AgentSession, command string, opts BashOptions) bash.BashResult {
	t.Helper()
	res, err := a.ExecuteBash(context.Background(), command, nil, opts)
	if err != nil {
		t.Fatalf("ExecuteBash(%q): %v", command, err)
	}
	return res
}

func loadMessages(t *testing.T, path string) []session.Message {
	t.Helper()
	sess, errs, err := session.Load(path)
	if err != nil || len(errs) != 0 {
		t.Fatalf("Load: %v %v", errs, err)
	}
	return sess.Messages
}

func TestExecuteBashCdPersistsAndRecords(t *testing.T) {
	a, s := newAgent(t)
	dir := t.TempDir()
	var streamed bytes.Buffer
	var mu sync.Mutex
	res, err := a.ExecuteBash(context.Background(), "cd "+dir+" && export BANG_X=42 && echo moved",
		func(b []byte) { mu.Lock(); streamed.Write(b); mu.Unlock() }, BashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "moved\n" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("first run: %+v", res)
	}
	mu.Lock()
	if !strings.Contains(streamed.String(), "moved") {
		t.Errorf("onChunk saw %q", streamed.String())
	}
	mu.Unlock()
	res = mustBash(t, a, "pwd; echo $BANG_X", BashOptions{})
	if want := dir + "\n42\n"; res.Output != want {
		t.Errorf("second run output %q, want %q (cd/export did not carry over)", res.Output, want)
	}
	res = mustBash(t, a, "echo oops; exit 3", BashOptions{})
	if res.ExitCode == nil || *res.ExitCode != 3 {
		t.Errorf("exit 3: %+v", res)
	}

	msgs := a.Messages()
	if len(msgs) != 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	first := msgs[0].(*session.BashExecutionMessage)
	if first.Command != "cd "+dir+" && export BANG_X=42 && echo moved" || first.Output != "moved\n" ||
		*first.ExitCode != 0 || first.Cancelled || first.Truncated || first.Meta != nil || first.ExcludeFromContext {
		t.Errorf("recorded %+v", first)
	}
	if d := time.Since(time.UnixMilli(first.Timestamp)); d < 0 || d > time.Minute {
		t.Errorf("timestamp %d", first.Timestamp)
	}
	if got := loadMessages(t, s.Path()); !reflect.DeepEqual(got, msgs) {
		t.Errorf("file holds %#v, memory %#v", got, msgs)
	}
	ctx := a.ContextMessages()
	if got := ctx[2].(*session.UserMessage).Text; got != "Ran `echo oops; exit 3`\n```\noops\n```\n\nCommand exited with code 3" {
		t.Errorf("context text %q", got)
	}
}

func TestExecuteBashExcludedFromContext(t *testing.T) {
	a, s := newAgent(t)
	if err := a.Append(&session.UserMessage{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	mustBash(t, a, "echo visible", BashOptions{})
	mustBash(t, a, "echo secret", BashOptions{ExcludeFromContext: true})

	msgs := a.Messages()
	if len(msgs) != 3 || !msgs[2].(*session.BashExecutionMessage).ExcludeFromContext || msgs[2].(*session.BashExecutionMessage).Output != "secret\n" {
		t.Fatalf("messages %#v", msgs)
	}
	want := []session.Message{&session.UserMessage{Text: "hi"}, &session.UserMessage{Text: "Ran `echo visible`\n```\nvisible\n```", Timestamp: msgs[1].(*session.BashExecutionMessage).Timestamp}}
	if got := a.ContextMessages(); !reflect.DeepEqual(got, want) {
		t.Errorf("ContextMessages = %#v", got)
	}
	for _, m := range a.ContextMessages() {
		if strings.Contains(m.(*session.UserMessage).Text, "secret") {
			t.Errorf("!! output reached the context: %q", m.(*session.UserMessage).Text)
		}
	}
	file := loadMessages(t, s.Path())
	if !reflect.DeepEqual(file, msgs) {
		t.Errorf("file %#v", file)
	}
	raw, _ := os.ReadFile(s.Path())
	if !strings.Contains(string(raw), `"excludeFromContext":true`) {
		t.Errorf("file lacks the flag:\n%s", raw)
	}

	// Resuming the file brings the flag back and keeps it out of context.
	s2, errs, err := session.Open(s.Path())
	if err != nil || len(errs) != 0 {
		t.Fatal(errs, err)
	}
	defer s2.Close()
	b, err := New(a.Cwd(), s2, bash.NewExecutor(), bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID() != a.ID() || !reflect.DeepEqual(b.Messages(), msgs) || !reflect.DeepEqual(b.ContextMessages(), want) {
		t.Errorf("resumed session: %s %#v", b.ID(), b.ContextMessages())
	}
}

// waitFor polls until cond holds or the hang guard fires.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startSleep runs `sleep 30` as a bang command in the background, after
// printing the shell's marker; it returns once the output arrived.
func startSleep(t *testing.T, a *AgentSession) (mark string, done chan bash.BashResult) {
	t.Helper()
	var mu sync.Mutex
	var seen bytes.Buffer
	done = make(chan bash.BashResult, 1)
	go func() {
		res, err := a.ExecuteBash(context.Background(), `echo "mark=$AGENTSH_SHELL_MARK"; sleep 30`, func(b []byte) {
			mu.Lock()
			seen.Write(b)
			mu.Unlock()
		}, BashOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitFor(t, "the marker line", 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		s := seen.String()
		if i := strings.Index(s, "mark="); i >= 0 && strings.Contains(s[i:], "\n") {
			mark = strings.TrimSpace(strings.SplitN(s[i+len("mark="):], "\n", 2)[0])
			return true
		}
		return false
	})
	if mark == "" {
		t.Fatal("empty marker")
	}
	return mark, done
}

func TestExecuteBashConcurrentRefusedAndAbort(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	a, s := newAgent(t)
	mark, done := startSleep(t, a)
	kv := "AGENTSH_SHELL_MARK=" + mark
	if len(proctest.Marked(kv)) == 0 {
		t.Fatalf("no process carries %s while the command runs", kv)
	}
	if !a.IsBashRunning() {
		t.Error("IsBashRunning false while running")
	}

	_, err := a.ExecuteBash(context.Background(), "echo second", nil, BashOptions{})
	if err == nil || err.Error() != "A bash command is already running. Press Esc to cancel it first." {
		t.Fatalf("second call: %v", err)
	}

	start := time.Now()
	a.AbortBash()
	var res bash.BashResult
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("AbortBash did not stop sleep 30 within 5s")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("abort took %v", d)
	}
	if !res.Cancelled || res.ExitCode != nil || !strings.Contains(res.Output, "[Command cancelled]") {
		t.Errorf("result %+v", res)
	}
	waitFor(t, "the run's processes to go", 2*time.Second, func() bool { return len(proctest.Marked(kv)) == 0 })
	if a.IsBashRunning() {
		t.Error("IsBashRunning true after the run")
	}

	msgs := loadMessages(t, s.Path())
	if len(msgs) != 1 || !msgs[0].(*session.BashExecutionMessage).Cancelled {
		t.Fatalf("recorded %#v", msgs)
	}
	if got := a.ContextMessages()[0].(*session.UserMessage).Text; !strings.HasSuffix(got, "\n```\n\n(command cancelled)") {
		t.Errorf("context text %q", got)
	}

	// The next bang command runs (on a fresh shell) and AbortBash with
	// nothing running is harmless.
	a.AbortBash()
	if res := mustBash(t, a, "echo again", BashOptions{}); res.Output != "again\n" {
		t.Errorf("after abort: %+v", res)
	}
}

func TestExecuteBashCallerContextCancels(t *testing.T) {
	a, _ := newAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := a.ExecuteBash(ctx, "sleep 30", nil, BashOptions{})
	if err != nil || !res.Cancelled || time.Since(start) > 5*time.Second {
		t.Fatalf("res %+v err %v after %v", res, err, time.Since(start))
	}
	if _, err := a.ExecuteBash(context.Background(), "  ", nil, BashOptions{}); err == nil {
		t.Error("empty command accepted")
	}
}

func TestExecuteBashQueuedWhileStreaming(t *testing.T) {
	a, s := newAgent(t)
	if err := a.Append(&session.UserMessage{Text: "prompt"}); err != nil {
		t.Fatal(err)
	}
	a.SetStreaming(true)
	mustBash(t, a, "echo one", BashOptions{})
	mustBash(t, a, "echo two", BashOptions{ExcludeFromContext: true})
	// The turn goes on meanwhile: a tool call and its result stay together.
	call := &session.AssistantMessage{ToolCalls: []session.ToolCall{{ID: "c1", Name: "bash", Arguments: []byte(`{"command":"ls"}`)}},
		StopReason: session.StopReasonToolUse, Usage: &session.Usage{}}
	result := &session.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: "x"}
	for _, m := range []session.Message{call, result} {
		if err := a.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(a.Messages()); n != 3 {
		t.Fatalf("%d messages while streaming, want 3 (bang results queued)", n)
	}
	if q := a.QueuedMessages(); len(q) != 2 || q[0].(*session.BashExecutionMessage).Output != "one\n" || q[1].(*session.BashExecutionMessage).Output != "two\n" {
		t.Fatalf("queued %#v", q)
	}
	if n := len(loadMessages(t, s.Path())); n != 3 {
		t.Fatalf("%d messages in the file while streaming", n)
	}

	a.SetStreaming(false)
	if err := a.FlushQueued(); err != nil {
		t.Fatal(err)
	}
	if len(a.QueuedMessages()) != 0 {
		t.Error("queue not emptied")
	}
	msgs := a.Messages()
	var got []string
	for _, m := range msgs {
		switch v := m.(type) {
		case *session.BashExecutionMessage:
			got = append(got, "bash:"+strings.TrimSpace(v.Output))
		default:
			got = append(got, m.Role())
		}
	}
	if want := []string{"user", "assistant", "toolResult", "bash:one", "bash:two"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if file := loadMessages(t, s.Path()); !reflect.DeepEqual(file, msgs) {
		for i := range file {
			if !reflect.DeepEqual(file[i], msgs[i]) {
				t.Errorf("file message %d: %#v, in memory %#v", i, file[i], msgs[i])
			}
		}
	}
	ctx := a.ContextMessages()
	if len(ctx) != 4 || ctx[3].(*session.UserMessage).Text != "Ran `echo one`\n```\none\n```" {
		t.Errorf("context %#v", ctx)
	}
	if err := a.FlushQueued(); err != nil || len(a.Messages()) != 5 {
		t.Error("empty flush changed something")
	}
}

func TestExecuteBashTruncatedHasArtifact(t *testing.T) {
	a, s := newAgent(t)
	res := mustBash(t, a, "seq 1 100000", BashOptions{})
	if !res.Truncated || res.ArtifactID == "" || res.TotalLines != 100000 {
		t.Fatalf("result %+v", res)
	}
	m := a.Messages()[0].(*session.BashExecutionMessage)
	if !m.Truncated || m.Meta == nil || m.Meta.Truncation == nil {
		t.Fatalf("message %+v", m)
	}
	tr := m.Meta.Truncation
	if tr.ArtifactID != res.ArtifactID || tr.TotalLines != 100000 || tr.ShownRange.End != 100000 ||
		tr.ShownRange.Start != 100000-tr.OutputLines+1 || tr.Direction != "tail" || tr.TruncatedBy != "bytes" {
		t.Errorf("meta %+v", tr)
	}
	p, err := session.NewArtifactManager(s.ArtifactsDir()).Resolve("artifact://" + tr.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != s.ArtifactsDir() {
		t.Errorf("artifact %s outside %s", p, s.ArtifactsDir())
	}
	full, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(full), "\n"), "\n")
	if len(lines) != 100000 || lines[0] != "1" || lines[99999] != "100000" {
		t.Errorf("artifact holds %d lines", len(lines))
	}
	text := a.ContextMessages()[0].(*session.UserMessage).Text
	if !strings.HasSuffix(text, "100000\n```\n\n["+bash.TruncationNotice(tr)+"]") ||
		!strings.Contains(text, "(50.0KB limit). Full: artifact://"+tr.ArtifactID+"]") {
		t.Errorf("context text ends %q", text[max(0, len(text)-200):])
	}
	if file := loadMessages(t, s.Path()); !reflect.DeepEqual(file[0], m) {
		t.Errorf("file meta %#v", file[0])
	}

	// A short run after it releases its reservation: no empty file is left.
	mustBash(t, a, "echo short", BashOptions{})
	ids, err := a.Artifacts().List()
	if err != nil || len(ids) != 1 {
		t.Errorf("artifact ids %v %v, want only the spilled one", ids, err)
	}
}

func TestAgentSessionWithoutStore(t *testing.T) {
	e := bash.NewExecutor()
	t.Cleanup(e.Close)
	a, err := New(t.TempDir(), nil, e, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ID()) != 16 || a.Store() != nil || a.Artifacts() != nil {
		t.Fatalf("id %q store %v artifacts %v", a.ID(), a.Store(), a.Artifacts())
	}
	res := mustBash(t, a, "seq 1 100000", BashOptions{})
	if !res.Truncated || res.ArtifactID != "" {
		t.Errorf("without a folder: %+v", res)
	}
	m := a.Messages()[0].(*session.BashExecutionMessage)
	if text := session.BashExecutionToText(m); !strings.HasSuffix(text, "(50.0KB limit)]") {
		t.Errorf("notice without artifact: %q", text[len(text)-80:])
	}
}
