package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/export/exporttest"
	"agentsh/internal/session"
)

// export_html writes the transcript where asked, or under the reference's
// default name in the session's directory, and answers with the path; a
// path that cannot be written is an error response carrying the id.
func TestExportHTML(t *testing.T) {
	exec := bash.NewExecutor()
	exec.KillGrace = 200 * time.Millisecond
	t.Cleanup(exec.Close)
	cwd := t.TempDir()
	sessions := t.TempDir()
	c := serve(t, Config{NewSession: func() (*agent.AgentSession, error) {
		s, err := session.CreateIn(sessions, cwd)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { s.Close() })
		return agent.New(cwd, s, exec, bash.ShellConfig{})
	}}, "")

	// The shell starts in the process's directory: go to the session's.
	c.send(`{"id":"b1","type":"bash","command":"cd '` + cwd + `' && echo '<b>exported</b>'"}`)
	if r := c.response("b1"); r["success"] != true {
		t.Fatalf("bash: %v", r)
	}
	c.send(`{"id":"s","type":"get_state"}`)
	sessionFile, _ := c.response("s")["data"].(map[string]any)["sessionFile"].(string)
	if sessionFile == "" {
		t.Fatal("no session file")
	}

	check := func(id, line, want string) {
		t.Helper()
		c.send(line)
		r := c.response(id)
		d, _ := r["data"].(map[string]any)
		if r["command"] != "export_html" || r["success"] != true || d == nil || d["path"] != want || len(d) != 1 {
			t.Fatalf("response %v, want data {path: %q}", r, want)
		}
		doc, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := exporttest.Check(doc); err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		for _, s := range []string{"$ cd ", "&lt;b&gt;exported&lt;/b&gt;"} {
			if !strings.Contains(string(doc), s) {
				t.Errorf("%s lacks %q", want, s)
			}
		}
	}
	base := strings.TrimSuffix(filepath.Base(sessionFile), ".jsonl")
	check("e1", `{"id":"e1","type":"export_html"}`, filepath.Join(cwd, "agentsh-session-"+base+".html"))
	check("e2", `{"id":"e2","type":"export_html","outputPath":"out/x.html"}`, filepath.Join(cwd, "out", "x.html"))
	abs := filepath.Join(t.TempDir(), "abs.html")
	check("e3", `{"id":"e3","type":"export_html","outputPath":"`+abs+`"}`, abs)

	if err := os.WriteFile(filepath.Join(cwd, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.send(`{"id":"e4","type":"export_html","outputPath":"file/x.html"}`)
	r := c.response("e4")
	if e, _ := r["error"].(string); r["success"] != false || r["command"] != "export_html" ||
		!strings.HasPrefix(e, "export html: ") || !strings.Contains(e, "not a directory") {
		t.Fatalf("unwritable path: %v", r)
	}
}
