package rpc

import (
	"agentsh/internal/agent"
	"agentsh/internal/proctest"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/llm"
	"agentsh/internal/testkit"
)

// client drives Serve over io.Pipe.
type client struct {
	t     *testing.T
	in    *io.PipeWriter
	out   *io.PipeReader
	lines chan map[string]any
	// skipped holds the lines response passed over, for until (queue_test.go).
	skipped []map[string]any
	done    chan error
	tag     string // env value carried by every shell of this server
}

func newTag(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func start(t *testing.T, provider llm.Provider) *client {
	t.Helper()
	tag := newTag(t)
	exec := bash.NewExecutor()
	exec.KillGrace = 200 * time.Millisecond
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			return agent.New(dir, nil, exec, bash.ShellConfig{Env: map[string]string{"RPCTEST_TAG": tag}})
		},
		Models: agent.ModelsOf(provider, "fake-model"),
	}
	return serve(t, cfg, tag)
}

// serve runs Serve with cfg behind a client; tag is the client's tag.
func serve(t *testing.T, cfg Config, tag string) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, out: outR, lines: make(chan map[string]any, 1000), done: make(chan error, 1), tag: tag}
	go func() {
		err := Serve(context.Background(), inR, outW, cfg)
		outW.Close()
		c.done <- err
	}()
	go func() {
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					t.Errorf("output line is not JSON: %q: %v", line, jerr)
				} else {
					c.lines <- m
				}
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after stdin closed")
		}
	})
	if l := c.next(); l["type"] != "ready" || l["protocolVersion"] != float64(1) || len(l) != 5 {
		t.Fatalf("first line %v, want the ready line", l)
	}
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatal("output closed")
		}
		return l
	case <-time.After(15 * time.Second):
		c.t.Fatal("no output line within 15s")
	}
	return nil
}

// response waits for the response with the given id, skipping events.
func (c *client) response(id string) map[string]any {
	c.t.Helper()
	for {
		l := c.next()
		if l["type"] == "response" && l["id"] == id {
			return l
		}
		c.skipped = append(c.skipped, l)
	}
}

func TestIDsEchoedAndState(t *testing.T) {
	c := start(t, nil)
	c.send(`{"id":"req_1","type":"get_state"}`)
	r := c.response("req_1")
	if r["command"] != "get_state" || r["success"] != true {
		t.Fatalf("response %v", r)
	}
	d := r["data"].(map[string]any)
	if d["sessionId"] == "" || d["isStreaming"] != false || d["messageCount"] != float64(0) || d["model"] != nil {
		t.Errorf("state %v", d)
	}
	c.send(`{"id":7,"type":"get_messages"}`)
	l := c.next()
	if l["id"] != float64(7) || l["command"] != "get_messages" || l["success"] != true {
		t.Fatalf("response %v", l)
	}
	c.send(`{"type":"abort"}`)
	l = c.next()
	if _, has := l["id"]; has || l["command"] != "abort" || l["success"] != true {
		t.Errorf("abort without id: %v", l)
	}
}

func TestMalformedAndUnknown(t *testing.T) {
	c := start(t, nil)
	c.send(`{not json`)
	l := c.next()
	if _, has := l["id"]; has || l["type"] != "response" || l["command"] != "parse" || l["success"] != false ||
		!strings.HasPrefix(l["error"].(string), "Failed to parse command: ") {
		t.Errorf("malformed: %v", l)
	}
	c.send(`{"id":"x","type":"frobnicate"}`)
	l = c.next()
	if l["id"] != "x" || l["command"] != "frobnicate" || l["success"] != false || l["error"] != "Unknown command: frobnicate" {
		t.Errorf("unknown: %v", l)
	}
	c.send(`   `) // blank lines are ignored
	c.send(`{"id":"s","type":"get_state"}`)
	if l := c.next(); l["id"] != "s" {
		t.Errorf("after blank line: %v", l)
	}
}

func TestBashAndMessages(t *testing.T) {
	c := start(t, nil)
	c.send(`{"id":"b1","type":"bash","command":"echo hello; exit 3"}`)
	r := c.response("b1")
	if r["success"] != true || r["command"] != "bash" {
		t.Fatalf("bash: %v", r)
	}
	d := r["data"].(map[string]any)
	if d["output"] != "hello\n" && d["output"] != "hello" {
		t.Errorf("output %q", d["output"])
	}
	if d["exitCode"] != float64(3) || d["cancelled"] != false || d["truncated"] != false {
		t.Errorf("data %v", d)
	}
	for _, k := range []string{"totalLines", "totalBytes", "outputLines", "outputBytes"} {
		if _, ok := d[k]; !ok {
			t.Errorf("bash data lacks %s: %v", k, d)
		}
	}
	c.send(`{"id":"m","type":"get_messages"}`)
	r = c.response("m")
	msgs := r["data"].(map[string]any)["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages %v", msgs)
	}
	m := msgs[0].(map[string]any)
	if m["role"] != "bashExecution" || m["command"] != "echo hello; exit 3" {
		t.Errorf("message %v", m)
	}
	c.send(`{"id":"e","type":"bash","command":"  "}`)
	if r := c.response("e"); r["success"] != false || r["error"] == "" {
		t.Errorf("empty command: %v", r)
	}
	c.send(`{"id":"n","type":"new_session"}`)
	r = c.response("n")
	if r["success"] != true || r["data"].(map[string]any)["cancelled"] != false {
		t.Errorf("new_session %v", r)
	}
	c.send(`{"id":"s","type":"get_state"}`)
	if n := c.response("s")["data"].(map[string]any)["messageCount"]; n != float64(0) {
		t.Errorf("messageCount after new_session = %v", n)
	}
}

func TestAbortBashCancelsRunningBash(t *testing.T) {
	needProc(t)
	c := start(t, nil)
	c.send(`{"id":"b","type":"bash","command":"echo \"mark=$AGENTSH_SHELL_MARK\"; sleep 30"}`)
	mark := c.waitSleep()
	sent := time.Now()
	c.send(`{"id":"a","type":"abort_bash"}`)
	var bashResp, abortResp map[string]any
	for bashResp == nil || abortResp == nil {
		l := c.next()
		switch l["id"] {
		case "a":
			abortResp = l
		case "b":
			bashResp = l
		}
	}
	if d := time.Since(sent); d > 5*time.Second {
		t.Errorf("bash answered %v after abort_bash", d)
	}
	if abortResp["success"] != true || abortResp["command"] != "abort_bash" {
		t.Errorf("abort_bash: %v", abortResp)
	}
	if _, has := abortResp["data"]; has {
		t.Errorf("abort_bash has data: %v", abortResp)
	}
	d := bashResp["data"].(map[string]any)
	if bashResp["success"] != true || d["cancelled"] != true {
		t.Fatalf("bash: %v", bashResp)
	}
	if !strings.Contains(d["output"].(string), "mark="+mark) {
		t.Errorf("output %q lacks the marker", d["output"])
	}
	testkit.Eventually(t, 0, "the run's processes to go", func() (bool, string) {
		pids := proctest.Marked("AGENTSH_SHELL_MARK=" + mark)
		return len(pids) == 0, fmt.Sprintf("processes %v", pids)
	})
}

func TestEOFKillsRunningBash(t *testing.T) {
	needProc(t)
	c := start(t, nil)
	c.send(`{"id":"b","type":"bash","command":"sleep 30"}`)
	mark := c.waitSleep()
	c.in.Close()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		c.done <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return within 5s of stdin EOF")
	}
	if n := proctest.Marked("AGENTSH_SHELL_MARK=" + mark); len(n) != 0 {
		t.Errorf("processes left after Serve returned: %v", n)
	}
}

// TestClosedOutputShutsDown: when the client stops reading (closes its end
// of the output), the next write fails and Serve shuts down as on stdin EOF:
// the running command is cancelled and its processes are gone when it
// returns the write error.
func TestClosedOutputShutsDown(t *testing.T) {
	needProc(t)
	c := start(t, nil)
	c.send(`{"id":"b","type":"bash","command":"sleep 30"}`)
	mark := c.waitSleep()
	c.out.Close()
	c.send(`{"id":"s","type":"get_state"}`)
	select {
	case err := <-c.done:
		if err != io.ErrClosedPipe {
			t.Errorf("Serve: %v, want the failed write's error", err)
		}
		c.done <- err // for the cleanup
	case <-time.After(hangGuardRPC):
		t.Fatal("Serve did not return after its output was closed (hang guard)")
	}
	if n := proctest.Marked("AGENTSH_SHELL_MARK=" + mark); len(n) != 0 {
		t.Errorf("processes left after Serve returned: %v", n)
	}
}

// hangGuardRPC bounds waits that only a hang would exceed.
const hangGuardRPC = 20 * time.Second

func TestPromptWithoutModel(t *testing.T) {
	c := start(t, nil)
	c.send(`{"id":"p1","type":"prompt","message":"hi"}`)
	r := c.next()
	if r["id"] != "p1" || r["command"] != "prompt" || r["success"] != false ||
		!strings.Contains(r["error"].(string), "no model configured") {
		t.Errorf("prompt: %v", r)
	}
	// bash still works
	c.send(`{"id":"b","type":"bash","command":"echo ok"}`)
	if r := c.response("b"); r["success"] != true {
		t.Errorf("bash: %v", r)
	}
}

// fakeProvider answers with fixed text, or blocks until cancelled.
type fakeProvider struct{ block bool }

func (fakeProvider) Name() string { return "fake" }

func (f fakeProvider) Stream(ctx context.Context, _ llm.Request, emit func(llm.Event)) (llm.Message, string, error) {
	if f.block {
		<-ctx.Done()
		return llm.Message{Role: llm.RoleAssistant}, llm.StopAborted, ctx.Err()
	}
	emit(llm.Event{Kind: llm.TextDelta, Text: "hel"})
	emit(llm.Event{Kind: llm.TextDelta, Text: "lo"})
	return llm.Message{Role: llm.RoleAssistant, Text: "hello"}, llm.StopEnd, nil
}

func TestPromptStreamsEvents(t *testing.T) {
	c := start(t, fakeProvider{})
	c.send(`{"id":"p","type":"prompt","message":"say hello"}`)
	r := c.next()
	if r["id"] != "p" || r["type"] != "response" || r["success"] != true {
		t.Fatalf("ack %v", r)
	}
	var types []string
	for {
		l := c.next()
		types = append(types, l["type"].(string))
		if l["type"] == "agent_end" {
			if l["error"] != nil || l["aborted"] != nil {
				t.Errorf("agent_end %v", l)
			}
			break
		}
	}
	got := strings.Join(types, ",")
	if !strings.HasPrefix(got, "agent_start,") || !strings.Contains(got, "message_update") || !strings.Contains(got, "turn_end") {
		t.Errorf("events %s", got)
	}
	c.send(`{"id":"s","type":"get_state"}`)
	d := c.response("s")["data"].(map[string]any)
	if d["messageCount"] != float64(2) || d["model"].(map[string]any)["provider"] != "fake" {
		t.Errorf("state %v", d)
	}
}

func TestAbortStopsPrompt(t *testing.T) {
	c := start(t, fakeProvider{block: true})
	c.send(`{"id":"p","type":"prompt","message":"wait"}`)
	if r := c.next(); r["id"] != "p" || r["success"] != true {
		t.Fatalf("ack %v", r)
	}
	c.send(`{"id":"s","type":"get_state"}`)
	if d := c.response("s")["data"].(map[string]any); d["isStreaming"] != true {
		t.Errorf("isStreaming %v", d)
	}
	c.send(`{"id":"p2","type":"prompt","message":"again"}`)
	if r := c.response("p2"); r["success"] != false {
		t.Errorf("second prompt: %v", r)
	}
	c.send(`{"id":"a","type":"abort"}`)
	sawEnd := false
	for {
		l := c.next()
		if l["type"] == "agent_end" {
			sawEnd = l["aborted"] == true
		}
		if l["id"] == "p" {
			t.Errorf("aborted prompt got a response: %v", l)
		}
		if l["id"] == "a" {
			break
		}
	}
	if !sawEnd {
		t.Error("no aborted agent_end before the abort response")
	}
}

func TestLongLine(t *testing.T) {
	c := start(t, nil)
	long := strings.Repeat("x", 300*1024)
	c.send(`{"id":"b","type":"bash","command":": ` + long + `; echo done"}`)
	r := c.response("b")
	if r["success"] != true || !strings.Contains(r["data"].(map[string]any)["output"].(string), "done") {
		t.Errorf("long line: %v", r["success"])
	}
}

// waitSleep waits for the server's `sleep 30` and returns the marker of the
// shell running it.
func (c *client) waitSleep() string {
	c.t.Helper()
	var mark string
	testkit.Eventually(c.t, 0, "sleep 30 to start", func() (bool, string) {
		pids := proctest.Marked("RPCTEST_TAG=" + c.tag)
		for _, pid := range pids {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if !bytes.HasPrefix(cmdline, []byte("sleep\x0030")) {
				continue
			}
			env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			for _, v := range bytes.Split(env, []byte{0}) {
				if m, ok := strings.CutPrefix(string(v), "AGENTSH_SHELL_MARK="); ok {
					mark = m
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("the server's processes %v", pids)
	})
	if mark == "" {
		c.t.Fatal("empty marker")
	}
	return mark
}

func needProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
}

func TestContextCancelEndsServe(t *testing.T) {
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	cfg := Config{NewSession: func() (*agent.AgentSession, error) {
		return agent.New(dir, nil, exec, bash.ShellConfig{})
	}}
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, inR, &out, cfg) }()
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after ctx was cancelled")
	}
	if got := out.String(); got != readyText {
		t.Errorf("output %q", got)
	}
}

func TestNewSessionRequired(t *testing.T) {
	if err := Serve(context.Background(), strings.NewReader(""), io.Discard, Config{}); err == nil {
		t.Error("Serve without NewSession succeeded")
	}
}

// readyText is the whole ready line: protocol 1, no frame limit.
const readyText = `{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1],"maxFrameBytes":9007199254740991,"maxReassembledFrameBytes":9007199254740991}` + "\n"
