package rpc

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/disktest"
	"agentsh/internal/session"
)

// On a full disk the bash command's response still carries what the
// command printed and its exit status, with saveError (the session file
// could not take it) and artifactError (the full output could not be
// saved) added; every field of the usual response is still there.
func TestBashOnFullDiskKeepsTheOutput(t *testing.T) {
	dir := disktest.Mount(t, 256<<10)
	exec := bash.NewExecutor()
	exec.KillGrace = 200 * time.Millisecond
	t.Cleanup(exec.Close)
	cwd := t.TempDir()
	var store *session.Store
	c := serve(t, Config{NewSession: func() (*agent.AgentSession, error) {
		s, err := session.CreateIn(dir, cwd)
		if err != nil {
			return nil, err
		}
		store = s
		t.Cleanup(func() { s.Close() })
		return agent.New(cwd, s, exec, bash.ShellConfig{})
	}}, "")
	filler := disktest.Fill(t, dir, 0)

	// More than the page the session file's header sits in has left.
	zeros := strings.Repeat("0", 8000) + "\n"
	c.send(`{"id":"b1","type":"bash","command":"printf '%08000d\\n' 0; exit 3"}`)
	r := c.response("b1")
	d, _ := r["data"].(map[string]any)
	if r["success"] != true || d == nil {
		t.Fatalf("response %v, want success with the result", r)
	}
	if d["output"] != zeros || d["exitCode"] != float64(3) || d["cancelled"] != false || d["truncated"] != false {
		t.Errorf("data %v", d)
	}
	if e, _ := d["saveError"].(string); !strings.HasPrefix(e, "record bash command: session: append: ") ||
		!strings.HasSuffix(e, ": no space left on device") {
		t.Errorf("saveError %q", d["saveError"])
	}
	var keys []string
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if want := []string{"cancelled", "exitCode", "output", "outputBytes", "outputLines", "saveError", "totalBytes", "totalLines", "truncated", "workingDir"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("data keys %q, want %q", keys, want)
	}

	c.send(`{"id":"b2","type":"bash","command":"seq 1 100000"}`)
	d, _ = c.response("b2")["data"].(map[string]any)
	if out, _ := d["output"].(string); d["exitCode"] != float64(0) || d["truncated"] != true || !strings.HasSuffix(out, "\n99999\n100000\n") {
		t.Errorf("data %.300v", d)
	}
	if _, has := d["artifactId"]; has || d["artifactError"] != "no space left on device" {
		t.Errorf("artifactId %v, artifactError %v", d["artifactId"], d["artifactError"])
	}

	// With room again, the next command is saved and nothing else is in
	// the file: no fragment of the failed ones.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.send(`{"id":"b3","type":"bash","command":"echo saved"}`)
	if d, _ := c.response("b3")["data"].(map[string]any); d["output"] != "saved\n" || d["saveError"] != nil {
		t.Errorf("data %v", d)
	}
	sess, errs, err := session.Load(store.Path())
	if err != nil || len(errs) != 0 || len(sess.Messages) != 1 {
		t.Fatalf("session file: %v %v %v", sess, errs, err)
	}
	if m := sess.Messages[0].(*session.BashExecutionMessage); m.Output != "saved\n" {
		t.Errorf("saved message %+v", m)
	}
	// The conversation in memory has all three.
	c.send(`{"id":"m","type":"get_messages"}`)
	if msgs := c.response("m")["data"].(map[string]any)["messages"].([]any); len(msgs) != 3 {
		t.Errorf("%d messages in memory, want 3", len(msgs))
	}
}
