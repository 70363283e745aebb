package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
)

func TestCompactAndAutoCompaction(t *testing.T) {
	entered, release := make(chan struct{}, 4), make(chan struct{})
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-w.Context().Done():
			return
		}
		w.Answer("RPC-SUMMARY of the earlier commands")
	})
	zero := 0
	p := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero})

	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"compaction":{"keepRecentTokens":1000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := config.WatchSettingsFrom(settings, filepath.Join(dir, "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	var sess *agent.AgentSession
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			a, err := agent.New(dir, nil, exec, bash.ShellConfig{})
			if err == nil {
				a.FollowSettings(live)
				sess = a
			}
			return a, err
		},
		Models: agent.ModelsOf(p, "fake-model"),
	}
	c := serve(t, cfg, newTag(t))

	// Too short: nothing to compact, and the model is not asked.
	c.send(`{"id":"c0","type":"compact"}`)
	if r := c.response("c0"); r["success"] != false || r["error"] != "Nothing to compact (session too small)" {
		t.Errorf("compact of an empty session: %v", r)
	}

	// Four commands of about 6000 characters each.
	for i := range 4 {
		id := "b" + string(rune('0'+i))
		c.send(`{"id":"` + id + `","type":"bash","command":"for i in $(seq 1 500); do echo cmd` + string(rune('0'+i)) + `-line$i; done"}`)
		if r := c.response(id); r["success"] != true {
			t.Fatalf("bash: %v", r)
		}
	}
	c.send(`{"id":"c1","type":"compact","customInstructions":"the command numbers"}`)
	select {
	case <-entered:
	case <-time.After(15 * time.Second):
		t.Fatal("the summary request never came")
	}
	c.send(`{"id":"s1","type":"get_state"}`)
	if d := c.response("s1")["data"].(map[string]any); d["isCompacting"] != true {
		t.Errorf("get_state while compacting: %v", d)
	}
	close(release)
	r := c.response("c1")
	d, _ := r["data"].(map[string]any)
	if r["success"] != true || d["summary"] != "RPC-SUMMARY of the earlier commands" || len(d["firstKeptEntryId"].(string)) != 8 ||
		d["tokensBefore"].(float64) < 5000 || d["tokensAfter"].(float64) >= d["tokensBefore"].(float64) {
		t.Fatalf("compact: %v", r)
	}
	body := srv.Request(t, 0).Body
	msgs := body["messages"].([]any)
	user := msgs[len(msgs)-1].(map[string]any)["content"]
	if _, ok := body["tools"]; ok || !strings.Contains(user.(string), "cmd0-line1\n") ||
		!strings.Contains(user.(string), "focus on: the command numbers") {
		t.Errorf("summary request %v", body)
	}
	c.send(`{"id":"s2","type":"get_state"}`)
	if d := c.response("s2")["data"].(map[string]any); d["isCompacting"] != false {
		t.Errorf("get_state after compacting: %v", d)
	}
	// get_messages is the compacted context, as the reference's.
	c.send(`{"id":"m","type":"get_messages"}`)
	ms := c.response("m")["data"].(map[string]any)["messages"].([]any)
	first := ms[0].(map[string]any)
	if first["role"] != "compactionSummary" || first["summary"] != "RPC-SUMMARY of the earlier commands" || len(ms) >= 5 {
		t.Errorf("messages after compaction: %d, first %v", len(ms), first)
	}

	// set_auto_compaction
	c.send(`{"id":"a0","type":"set_auto_compaction"}`)
	if r := c.response("a0"); r["success"] != false {
		t.Errorf("set_auto_compaction without enabled: %v", r)
	}
	if !sess.AutoCompactionEnabled() {
		t.Fatal("auto compaction is off by default")
	}
	c.send(`{"id":"a1","type":"set_auto_compaction","enabled":false}`)
	if r := c.response("a1"); r["success"] != true || r["command"] != "set_auto_compaction" {
		t.Errorf("set_auto_compaction: %v", r)
	}
	if sess.AutoCompactionEnabled() {
		t.Error("set_auto_compaction false left it on")
	}
	// The client's choice holds for the sessions after this one.
	c.send(`{"id":"n","type":"new_session"}`)
	c.response("n")
	c.send(`{"id":"st","type":"get_state"}`)
	if d, _ := c.response("st")["data"].(map[string]any); d["autoCompactionEnabled"] != false {
		t.Errorf("after new_session autoCompactionEnabled = %v, want false", d["autoCompactionEnabled"])
	}
}

// abort stops a compact that waits on the model: the compact answers
// "Compaction cancelled" (the reference's words), the conversation stays
// as it was, and nothing is left compacting.
func TestAbortStopsCompact(t *testing.T) {
	entered := make(chan struct{}, 1)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		entered <- struct{}{}
		<-w.Context().Done() // the summary never comes
	})
	zero := 0
	p := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test", MaxRetries: &zero})
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"compaction":{"keepRecentTokens":1000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := config.WatchSettingsFrom(settings, filepath.Join(dir, "none.json"))
	if err != nil {
		t.Fatal(err)
	}
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			a, err := agent.New(dir, nil, exec, bash.ShellConfig{})
			if err == nil {
				a.FollowSettings(live)
			}
			return a, err
		},
		Models: agent.ModelsOf(p, "fake-model"),
	}
	c := serve(t, cfg, newTag(t))
	for i := range 4 {
		id := "b" + string(rune('0'+i))
		c.send(`{"id":"` + id + `","type":"bash","command":"for i in $(seq 1 500); do echo cmd` + string(rune('0'+i)) + `-line$i; done"}`)
		if r := c.response(id); r["success"] != true {
			t.Fatalf("bash: %v", r)
		}
	}
	c.send(`{"id":"c","type":"compact"}`)
	select {
	case <-entered:
	case <-time.After(15 * time.Second):
		t.Fatal("the summary request never came")
	}
	c.send(`{"id":"a","type":"abort"}`)
	// abort answers once the compaction is over, so the compact's answer
	// comes first.
	if r := c.response("c"); r["success"] != false || r["error"] != "Compaction cancelled" {
		t.Errorf("the aborted compact answered %v", r)
	}
	if r := c.response("a"); r["success"] != true {
		t.Errorf("abort: %v", r)
	}
	c.send(`{"id":"s","type":"get_state"}`)
	if d := c.response("s")["data"].(map[string]any); d["isCompacting"] != false || d["messageCount"] != 4.0 {
		t.Errorf("after the abort: isCompacting %v, messageCount %v (want false, 4)", d["isCompacting"], d["messageCount"])
	}
}
