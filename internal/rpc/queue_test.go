package rpc

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/session"
)

// modelRig is a server on the fake model with the real bash tool and
// sessions saved in a temporary folder.
type modelRig struct {
	*client
	srv     *fakemodel.Server
	dir     string // the sessions folder
	work    string // the sessions' cwd
	mu      sync.Mutex
	current *agent.AgentSession
}

// startModel serves sessions whose model is the fake server answering with
// script.
func startModel(t *testing.T, script fakemodel.Script) *modelRig {
	t.Helper()
	srv := fakemodel.New(t, script)
	zero := 0
	p := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero})
	exec := bash.NewExecutor()
	exec.KillGrace = 200 * time.Millisecond
	t.Cleanup(exec.Close)
	r := &modelRig{srv: srv, dir: t.TempDir(), work: t.TempDir()}
	var stores []*session.Store
	t.Cleanup(func() {
		for _, s := range stores {
			s.Close()
		}
	})
	adopt := func(store *session.Store) (*agent.AgentSession, error) {
		a, err := agent.New(r.work, store, exec, bash.ShellConfig{})
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		stores = append(stores, store)
		r.current = a
		r.mu.Unlock()
		return a, nil
	}
	reg, err := agent.NewTools(agent.ToolsConfig{Executor: exec, Current: func() *agent.AgentSession {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.current
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			store, err := session.CreateIn(r.dir, r.work)
			if err != nil {
				return nil, err
			}
			return adopt(store)
		},
		OpenSession: func(path string) (*agent.AgentSession, error) {
			store, _, err := session.Open(path)
			if err != nil {
				return nil, err
			}
			return adopt(store)
		},
		Models: agent.ModelsOf(p, "gpt-test"),
		Tools:  reg,
	}
	r.client = serve(t, cfg, "")
	return r
}

// gate holds a script's answer until the test opens it, and tells the
// test when the request arrived (the run is at its model call).
type gate struct {
	ch      chan struct{}
	arrived chan struct{}
	once    sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{}), arrived: make(chan struct{}, 1)}
	t.Cleanup(g.open) // a failed test must not leave the server waiting
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate opens (or the request is gone).
func (g *gate) wait(w *fakemodel.Writer) {
	g.arrived <- struct{}{}
	select {
	case <-g.ch:
	case <-w.Context().Done():
	}
}

// reached waits until the held request arrived.
func (g *gate) reached(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(hangGuardRPC):
		t.Fatal("the model request never came")
	}
}

// ok sends line and fails unless its response (id) succeeded; it returns
// the response's data.
func (c *client) ok(id, line string) any {
	c.t.Helper()
	c.send(line)
	r := c.response(id)
	if r["success"] != true {
		c.t.Fatalf("%s: %v", line, r)
	}
	return r["data"]
}

// until reads lines until one of type typ and returns the lines read,
// starting with those response passed over.
func (c *client) until(typ string) []map[string]any {
	c.t.Helper()
	var got []map[string]any
	for {
		var l map[string]any
		if len(c.skipped) > 0 {
			l, c.skipped = c.skipped[0], c.skipped[1:]
		} else {
			l = c.next()
		}
		got = append(got, l)
		if l["type"] == typ {
			return got
		}
	}
}

// flow is the events of lines in a short form: agent_start, turn_start,
// user:<text> (a user message's message_start, + when marked steering),
// assistant (an assistant's message_start), tool, turn_end, agent_end.
func flow(lines []map[string]any) string {
	var out []string
	for _, l := range lines {
		switch l["type"] {
		case "agent_start", "agent_end", "turn_start", "turn_end":
			out = append(out, l["type"].(string))
		case "tool_execution_end":
			out = append(out, "tool")
		case "message_start":
			m := l["message"].(map[string]any)
			switch m["role"] {
			case "user":
				text := m["content"].([]any)[0].(map[string]any)["text"].(string)
				if m["steering"] == true {
					text += "+"
				}
				out = append(out, "user:"+text)
			case "assistant":
				out = append(out, "assistant")
			}
		}
	}
	return strings.Join(out, " ")
}

// lastUsers is the texts of the user messages at the end of request n,
// after its last non-user message.
func (r *modelRig) lastUsers(n int) []string {
	r.t.Helper()
	msgs := fakemodel.OpenAIMessages(r.srv.Request(r.t, n).Body)
	var out []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == "user"; i-- {
		out = append([]string{msgs[i].Content}, out...)
	}
	return out
}

// A steer sent while a tool runs reaches the model at its next call: after
// the tool result, before the next answer, marked steering; and the run
// goes on (one agent_start, one agent_end).
func TestSteerJoinsAtTheNextStep(t *testing.T) {
	g := newGate(t)
	r := startModel(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			g.wait(w)
			w.Bash("call_1", `{"command":"echo tool-ran"}`)
		default:
			w.Answer("done")
		}
	})
	r.ok("p", `{"id":"p","type":"prompt","message":"start"}`)
	g.reached(t)
	r.ok("s", `{"id":"s","type":"steer","message":"use python instead"}`)
	if d := r.ok("st", `{"id":"st","type":"get_state"}`).(map[string]any); d["queuedMessageCount"] != float64(1) || d["isStreaming"] != true {
		t.Errorf("state while queued: %v", d)
	}
	g.open()
	lines := r.until("agent_end")
	want := "agent_start turn_start user:start assistant tool turn_end turn_start user:use python instead+ assistant turn_end agent_end"
	if got := flow(lines); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	msgs := fakemodel.OpenAIMessages(r.srv.Request(t, 1).Body)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); !strings.HasSuffix(got, "user,assistant,tool,user") ||
		msgs[len(msgs)-1].Content != "use python instead" || !strings.Contains(msgs[len(msgs)-2].Content, "tool-ran") {
		t.Errorf("request 1: %+v", msgs)
	}
	for _, m := range fakemodel.OpenAIMessages(r.srv.Request(t, 0).Body) {
		if strings.Contains(m.Content, "python") {
			t.Errorf("the steer reached the first request: %+v", m)
		}
	}
	end := lines[len(lines)-1]["messages"].([]any)
	if len(end) != 5 { // prompt, call, result, steer, answer
		t.Errorf("agent_end has %d messages: %v", len(end), end)
	}
	d := r.ok("st2", `{"id":"st2","type":"get_state"}`).(map[string]any)
	if d["queuedMessageCount"] != float64(0) || d["messageCount"] != float64(5) {
		t.Errorf("state after: %v", d)
	}
}

// A follow-up waits until the agent would stop (not at the tool result),
// then the same run goes on with it.
func TestFollowUpAfterTheTurn(t *testing.T) {
	g := newGate(t)
	r := startModel(t, func(n int, w *fakemodel.Writer) {
		switch n {
		case 0:
			g.wait(w)
			w.Bash("call_1", `{"command":"echo tool-ran"}`)
		case 1:
			w.Answer("first done")
		default:
			w.Answer("second done")
		}
	})
	r.ok("p", `{"id":"p","type":"prompt","message":"start"}`)
	g.reached(t)
	r.ok("f", `{"id":"f","type":"follow_up","message":"and then this"}`)
	g.open()
	lines := r.until("agent_end")
	want := "agent_start turn_start user:start assistant tool turn_end turn_start assistant turn_end turn_start user:and then this assistant turn_end agent_end"
	if got := flow(lines); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if got := r.lastUsers(1); len(got) != 0 {
		t.Errorf("request 1 ends with user messages %q: the follow-up came before the turn ended", got)
	}
	if got := r.lastUsers(2); len(got) != 1 || got[0] != "and then this" {
		t.Errorf("request 2 ends with %q", got)
	}
	if n := len(r.srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// The queue modes: one-at-a-time gives the model one queued message per
// step, all gives them all at once; for steers and follow-ups alike.
func TestQueueModes(t *testing.T) {
	for _, tc := range []struct{ cmd, setMode, mode string }{
		{"steer", "set_steering_mode", "one-at-a-time"},
		{"steer", "set_steering_mode", "all"},
		{"follow_up", "set_follow_up_mode", "one-at-a-time"},
		{"follow_up", "set_follow_up_mode", "all"},
	} {
		t.Run(tc.cmd+"/"+tc.mode, func(t *testing.T) {
			g := newGate(t)
			r := startModel(t, func(n int, w *fakemodel.Writer) {
				if n == 0 {
					g.wait(w)
				}
				w.Answer(fmt.Sprintf("answer %d", n))
			})
			r.ok("m", fmt.Sprintf(`{"id":"m","type":%q,"mode":%q}`, tc.setMode, tc.mode))
			r.ok("p", `{"id":"p","type":"prompt","message":"start"}`)
			g.reached(t)
			r.ok("a", fmt.Sprintf(`{"id":"a","type":%q,"message":"A"}`, tc.cmd))
			r.ok("b", fmt.Sprintf(`{"id":"b","type":%q,"message":"B"}`, tc.cmd))
			d := r.ok("s", `{"id":"s","type":"get_state"}`).(map[string]any)
			key := map[string]string{"set_steering_mode": "steeringMode", "set_follow_up_mode": "followUpMode"}[tc.setMode]
			if d[key] != tc.mode || d["queuedMessageCount"] != float64(2) {
				t.Errorf("state: %v", d)
			}
			g.open()
			r.until("agent_end")
			var got []string
			for n := 1; n < len(r.srv.Requests()); n++ {
				got = append(got, strings.Join(r.lastUsers(n), "+"))
			}
			want := "A B"
			if tc.mode == "all" {
				want = "A+B"
			}
			if strings.Join(got, " ") != want {
				t.Errorf("the later requests end with %q, want %q", got, want)
			}
		})
	}
}

// prompt with streamingBehavior queues while a prompt runs; without it the
// reference's busy error comes; a bad mode is refused.
func TestPromptStreamingBehavior(t *testing.T) {
	g := newGate(t)
	r := startModel(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			g.wait(w)
		}
		w.Answer(fmt.Sprintf("answer %d", n))
	})
	r.ok("p", `{"id":"p","type":"prompt","message":"start"}`)
	g.reached(t)
	r.send(`{"id":"busy","type":"prompt","message":"more"}`)
	if l := r.response("busy"); l["success"] != false || l["error"] != "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion." {
		t.Errorf("busy: %v", l)
	}
	r.send(`{"id":"bad","type":"prompt","message":"more","streamingBehavior":"later"}`)
	if l := r.response("bad"); l["success"] != false {
		t.Errorf("bad streamingBehavior: %v", l)
	}
	r.send(`{"id":"m","type":"set_steering_mode","mode":"sometimes"}`)
	if l := r.response("m"); l["success"] != false || !strings.Contains(l["error"].(string), `"sometimes"`) {
		t.Errorf("bad mode: %v", l)
	}
	r.ok("f", `{"id":"f","type":"prompt","message":"FOLLOW","streamingBehavior":"followUp"}`)
	r.ok("s", `{"id":"s","type":"prompt","message":"STEER","streamingBehavior":"steer"}`)
	g.open()
	lines := r.until("agent_end")
	want := "agent_start turn_start user:start assistant turn_end turn_start user:STEER+ assistant turn_end turn_start user:FOLLOW assistant turn_end agent_end"
	if got := flow(lines); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

// A steer or follow-up sent while nothing runs starts a run on it.
func TestSteerWhileIdleStartsARun(t *testing.T) {
	r := startModel(t, func(n int, w *fakemodel.Writer) { w.Answer(fmt.Sprintf("answer %d", n)) })
	r.ok("s", `{"id":"s","type":"steer","message":"hello"}`)
	if got := flow(r.until("agent_end")); got != "agent_start turn_start user:hello+ assistant turn_end agent_end" {
		t.Errorf("steer: %s", got)
	}
	r.ok("f", `{"id":"f","type":"follow_up","message":"again"}`)
	if got := flow(r.until("agent_end")); got != "agent_start turn_start user:again assistant turn_end agent_end" {
		t.Errorf("follow_up: %s", got)
	}
	if got := r.lastUsers(1); len(got) != 1 || got[0] != "again" {
		t.Errorf("request 1 ends with %q", got)
	}
	r.send(`{"id":"e","type":"steer","message":"  "}`)
	if l := r.response("e"); l["success"] != false {
		t.Errorf("blank steer: %v", l)
	}
}

// abort_and_prompt stops the running prompt (its agent_end says aborted)
// and starts the new one; queued follow-ups survive the abort and go with
// the new run.
func TestAbortAndPrompt(t *testing.T) {
	g := newGate(t)
	r := startModel(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			g.wait(w) // until the abort cancels the request
			return
		}
		w.Answer(fmt.Sprintf("answer %d", n))
	})
	r.ok("p", `{"id":"p","type":"prompt","message":"slow"}`)
	g.reached(t)
	r.ok("f", `{"id":"f","type":"follow_up","message":"later"}`)
	r.send(`{"id":"ap","type":"abort_and_prompt","message":"instead"}`)
	lines := r.until("agent_end")
	if l := lines[len(lines)-1]; l["aborted"] != true {
		t.Errorf("first run's end: %v", l)
	}
	if l := r.next(); l["id"] != "ap" || l["success"] != true || l["command"] != "abort_and_prompt" {
		t.Fatalf("abort_and_prompt: %v", l)
	}
	want := "agent_start turn_start user:instead assistant turn_end turn_start user:later assistant turn_end agent_end"
	if got := flow(r.until("agent_end")); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	msgs := fakemodel.OpenAIMessages(r.srv.Request(t, 1).Body)
	if last := msgs[len(msgs)-1]; last.Role != "user" || last.Content != "instead" {
		t.Errorf("request 1: %+v", msgs)
	}
}

// get_messages_page pages a long conversation from its start with omp's
// cursors; a cursor of a conversation that changed meanwhile is stale.
func TestMessagesPage(t *testing.T) {
	r := startModel(t, func(n int, w *fakemodel.Writer) { w.Answer(fmt.Sprintf("answer %d", n)) })
	for i := range 6 {
		r.ok(fmt.Sprint("p", i), fmt.Sprintf(`{"id":"p%d","type":"prompt","message":"question %d"}`, i, i))
		r.until("agent_end")
	}
	var texts []string
	cursor := ""
	pages := 0
	for {
		line := `{"id":"g","type":"get_messages_page","limit":5}`
		if cursor != "" {
			line = fmt.Sprintf(`{"id":"g","type":"get_messages_page","limit":5,"cursor":%q}`, cursor)
		}
		d := r.ok("g", line).(map[string]any)
		pages++
		if d["totalMessages"] != float64(12) {
			t.Fatalf("page %d: %v", pages, d)
		}
		for _, m := range d["messages"].([]any) {
			c := m.(map[string]any)["content"].([]any)[0].(map[string]any)
			texts = append(texts, c["text"].(string))
		}
		next, ok := d["nextCursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	if pages != 3 || len(texts) != 12 || texts[0] != "question 0" || texts[11] != "answer 5" {
		t.Errorf("%d pages: %q", pages, texts)
	}
	d := r.ok("g1", `{"id":"g1","type":"get_messages_page","limit":5}`).(map[string]any)
	stale := d["nextCursor"].(string)
	r.ok("p9", `{"id":"p9","type":"prompt","message":"one more"}`)
	r.until("agent_end")
	r.send(fmt.Sprintf(`{"id":"g2","type":"get_messages_page","cursor":%q}`, stale))
	if l := r.response("g2"); l["success"] != false || l["error"] != "RPC message cursor is stale" || l["code"] != "stale_cursor" {
		t.Errorf("stale cursor: %v", l)
	}
	for _, bad := range []string{`"cursor":"!!"`, `"limit":0`, `"limit":257`, `"limit":1.5`} {
		r.send(`{"id":"b","type":"get_messages_page",` + bad + `}`)
		if l := r.response("b"); l["success"] != false {
			t.Errorf("%s: %v", bad, l)
		}
	}
	if d := r.ok("d", `{"id":"d","type":"get_messages_page"}`).(map[string]any); len(d["messages"].([]any)) != 14 || d["nextCursor"] != nil {
		t.Errorf("default page: %v", d)
	}
}

// get_session_stats counts the messages by role and sums the usage the
// provider reported; get_last_assistant_text is the last answer's text.
func TestSessionStatsAndLastText(t *testing.T) {
	r := startModel(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.ToolCall(0, "call_1", "bash", `{"command":"true"}`)
			w.FinishUsage("tool_calls", 100, 20)
			return
		}
		w.Text("  all done \n")
		w.FinishUsage("stop", 150, 7)
	})
	if d := r.ok("l0", `{"id":"l0","type":"get_last_assistant_text"}`).(map[string]any); d["text"] != nil || len(d) != 1 {
		t.Errorf("last text of an empty session: %v", d)
	}
	r.ok("p", `{"id":"p","type":"prompt","message":"go"}`)
	r.until("agent_end")
	raw, _ := json.Marshal(r.ok("st", `{"id":"st","type":"get_session_stats"}`))
	var st map[string]any
	_ = json.Unmarshal(raw, &st)
	want := map[string]any{"userMessages": 1.0, "assistantMessages": 2.0, "toolCalls": 1.0, "toolResults": 1.0,
		"totalMessages": 4.0, "premiumRequests": 0.0, "cost": 0.0,
		"tokens": map[string]any{"input": 250.0, "output": 27.0, "reasoning": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 277.0}}
	for k, v := range want {
		if fmt.Sprint(st[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, st[k], v)
		}
	}
	if f, _ := st["sessionFile"].(string); filepath.Dir(f) != r.dir || st["sessionId"] == "" {
		t.Errorf("stats: %s", raw)
	}
	if d := r.ok("l", `{"id":"l","type":"get_last_assistant_text"}`).(map[string]any); d["text"] != "all done" {
		t.Errorf("last text: %v", d)
	}
}

// set_session_name is saved in the session file (a title_change entry),
// comes back with the file, and refuses a blank name; new_session records
// its parent; switch_session loads a saved conversation, which the next
// request carries.
func TestSessionNameNewAndSwitch(t *testing.T) {
	r := startModel(t, func(n int, w *fakemodel.Writer) { w.Answer(fmt.Sprintf("answer %d", n)) })
	r.send(`{"id":"e","type":"set_session_name","name":"   "}`)
	if l := r.response("e"); l["success"] != false || l["error"] != "Session name cannot be empty" {
		t.Errorf("blank name: %v", l)
	}
	r.ok("p", `{"id":"p","type":"prompt","message":"remember the word kiwi"}`)
	r.until("agent_end")
	if d := r.ok("n", `{"id":"n","type":"set_session_name","name":"  fruit talk "}`); d != nil {
		t.Errorf("set_session_name data: %v", d)
	}
	first := r.ok("s", `{"id":"s","type":"get_state"}`).(map[string]any)
	firstFile := first["sessionFile"].(string)
	if first["sessionName"] != "fruit talk" {
		t.Errorf("state: %v", first)
	}
	loaded, _, err := session.Load(firstFile)
	if err != nil || loaded.Name != "fruit talk" || len(loaded.Messages) != 2 {
		t.Fatalf("file: %+v %v", loaded, err)
	}
	infos, err := session.ListIn(r.dir)
	if err != nil || len(infos) != 1 || infos[0].Name != "fruit talk" || infos[0].Messages != 2 {
		t.Errorf("list: %+v %v", infos, err)
	}

	r.ok("new", fmt.Sprintf(`{"id":"new","type":"new_session","parentSession":%q}`, firstFile))
	second := r.ok("s2", `{"id":"s2","type":"get_state"}`).(map[string]any)
	if second["sessionId"] == first["sessionId"] || second["messageCount"] != float64(0) || second["sessionName"] != nil {
		t.Errorf("new session state: %v", second)
	}
	r.ok("p2", `{"id":"p2","type":"prompt","message":"something else"}`)
	r.until("agent_end")
	h, _, err := session.Load(second["sessionFile"].(string))
	if err != nil || h.Header.ParentSession != firstFile {
		t.Errorf("new session's header: %+v %v", h, err)
	}

	r.send(`{"id":"bad","type":"switch_session","sessionPath":"/nonexistent/x.jsonl"}`)
	if l := r.response("bad"); l["success"] != false {
		t.Errorf("switch to a missing file: %v", l)
	}
	if d := r.ok("sw", fmt.Sprintf(`{"id":"sw","type":"switch_session","sessionPath":%q}`, firstFile)).(map[string]any); d["cancelled"] != false {
		t.Errorf("switch_session data: %v", d)
	}
	back := r.ok("s3", `{"id":"s3","type":"get_state"}`).(map[string]any)
	if back["sessionId"] != first["sessionId"] || back["sessionName"] != "fruit talk" || back["messageCount"] != float64(2) {
		t.Errorf("state after the switch: %v", back)
	}
	r.ok("p3", `{"id":"p3","type":"prompt","message":"which word?"}`)
	r.until("agent_end")
	var users []string
	for _, m := range fakemodel.OpenAIMessages(r.srv.Request(t, 2).Body) {
		if m.Role != "system" {
			users = append(users, m.Role+":"+m.Content)
		}
	}
	if got := strings.Join(users, "|"); got != "user:remember the word kiwi|assistant:answer 0|user:which word?" {
		t.Errorf("request after the switch: %s", got)
	}
	again, _, err := session.Load(firstFile)
	if err != nil || len(again.Messages) != 4 || again.Name != "fruit talk" {
		t.Errorf("the switched-to file after a prompt: %+v %v", again, err)
	}
}

// negotiate_protocol answers with version 1, the one agentsh speaks, and
// refuses the others as the reference does; get_available_commands lists
// the slash commands; get_state has the reference's fields.
func TestProtocolCommandsAndState(t *testing.T) {
	r := startModel(t, func(n int, w *fakemodel.Writer) { w.Answer("hi") })
	if d := r.ok("v", `{"id":"v","type":"negotiate_protocol","protocolVersion":1}`).(map[string]any); d["protocolVersion"] != float64(1) {
		t.Errorf("negotiate 1: %v", d)
	}
	r.send(`{"id":"v2","type":"negotiate_protocol","protocolVersion":2}`)
	if l := r.response("v2"); l["success"] != false || l["error"] != "Unsupported RPC protocol version: 2" {
		t.Errorf("negotiate 2: %v", l)
	}
	cmds := r.ok("c", `{"id":"c","type":"get_available_commands"}`).(map[string]any)["commands"].([]any)
	var names []string
	for _, c := range cmds {
		m := c.(map[string]any)
		if m["source"] != "builtin" || m["description"] == "" {
			t.Errorf("command %v", m)
		}
		names = append(names, m["name"].(string))
	}
	if got := strings.Join(names, ","); !strings.HasPrefix(got, "help,new,resume,") || !strings.Contains(got, ",exit") {
		t.Errorf("commands %s", got)
	}
	d := r.ok("s", `{"id":"s","type":"get_state"}`).(map[string]any)
	for k, want := range map[string]any{"thinkingLevel": "off", "isStreaming": false, "isCompacting": false,
		"steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time", "interruptMode": "immediate",
		"autoCompactionEnabled": true, "fastModeEnabled": false, "fastModeActive": false, "tokensPerSecond": nil,
		"messageCount": 0.0, "queuedMessageCount": 0.0, "todoPhases": []any{}, "isBashRunning": false} {
		if got, ok := d[k]; !ok || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if cu, _ := d["contextUsage"].(map[string]any); cu == nil || cu["tokens"].(float64) <= 0 || cu["contextWindow"] == nil || cu["percent"] == nil {
		t.Errorf("contextUsage = %v, want tokens counted (system prompt and tools at least)", d["contextUsage"])
	}
	if sp, _ := d["systemPrompt"].([]any); len(sp) != 1 || len(sp[0].(string)) < 50 {
		t.Errorf("systemPrompt = %.200v", d["systemPrompt"])
	}
	m := d["model"].(map[string]any)
	for _, k := range []string{"id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens"} {
		if _, ok := m[k]; !ok {
			t.Errorf("model has no %s: %v", k, m)
		}
	}
	if m["id"] != "gpt-test" || m["provider"] != "openai" || m["api"] != "openai-completions" {
		t.Errorf("model %v", m)
	}
	r.ok("i", `{"id":"i","type":"set_interrupt_mode","mode":"wait"}`)
	r.ok("f", `{"id":"f","type":"set_follow_up_mode","mode":"all"}`)
	r.ok("new", `{"id":"new","type":"new_session"}`)
	d = r.ok("s2", `{"id":"s2","type":"get_state"}`).(map[string]any)
	if d["interruptMode"] != "wait" || d["followUpMode"] != "all" || d["steeringMode"] != "one-at-a-time" {
		t.Errorf("modes (kept by new_session): %v", d)
	}
}
