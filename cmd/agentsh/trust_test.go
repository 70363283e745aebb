package main

// Project trust: a project's .agentsh/settings.json that
// loosens the user's settings is refused where no one can be asked, unless
// --trust-project; the TUI asks; `agentsh exec --cwd DIR` confines to DIR.

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// looseProject writes a project file that gives the model the API key and
// allows `env`.
func looseProject(t *testing.T, s *sandbox) string {
	t.Helper()
	path := filepath.Join(s.work, ".agentsh", "settings.json")
	writeFile(t, path, `{"shell": {"scrubEnv": []}, "bash": {"patterns": [{"allow": "env"}]}}`)
	return path
}

// refusal is what print, json, RPC and exec say about looseProject's file.
func refusal(s *sandbox, path string) string {
	return "agentsh: " + path + ` loosens your own settings (bash.patterns: {"allow": "env"}; shell.scrubEnv: []) ` +
		"and this folder is not trusted: start agentsh in " + s.work +
		" to answer its trust question, or pass --trust-project to apply it for this run\n"
}

// TestPrintTrustProject: print mode refuses an untrusted loosening project
// file before anything runs; with --trust-project it applies (the model's
// `env` shows the API key the empty scrubEnv lets through).
func TestPrintTrustProject(t *testing.T) {
	s := newSandbox(t)
	path := looseProject(t, s)
	srv := newSSEServer(t, modelScript("env"))
	r := s.runIn(nil, srv.env(), "-p", "go", "--model", "openai/test")
	want(t, r, "", refusal(s, path), 1)
	if n := len(srv.requests()); n != 0 {
		t.Errorf("%d model requests before the refusal", n)
	}
	for _, mode := range []string{"json", "rpc"} {
		r := s.runIn(nil, srv.env(), "--mode", mode, "-p", "go", "--model", "openai/test")
		if mode == "rpc" {
			r = s.runIn(nil, srv.env(), "--mode", "rpc", "--model", "openai/test")
		}
		want(t, r, "", refusal(s, path), 1)
	}
	r = s.runEnv(s.work, nil, "exec", "--", "true")
	want(t, r, "", refusal(s, path), 1)

	r = s.runIn(nil, srv.env(), "-p", "go", "--model", "openai/test", "--trust-project")
	want(t, r, "Done.\n", "", 0)
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !strings.Contains(got, "OPENAI_API_KEY=") {
		t.Errorf("--trust-project: scrubEnv [] did not apply: %.300q", got)
	}
	if _, err := os.Stat(filepath.Join(s.config, "agentsh", "trusted-folders.json")); err == nil {
		t.Error("--trust-project recorded the trust")
	}
}

// TestRPCTrustProjectChange: an RPC run trusted with --trust-project does
// not apply a change of the project file made during the run (as the
// model could): the next command still has the API key scrubbed, and
// stderr says why.
func TestRPCTrustProjectChange(t *testing.T) {
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"shell": {"env": {"TRUSTED_AT_START": "1"}}}`)
	srv := newSSEServer(t, modelScript("env"))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := s.command(ctx, s.work, srv.env(), "--mode", "rpc", "--model", "openai/test", "--trust-project")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	prompt := func() {
		if _, err := in.Write([]byte(`{"type":"prompt","message":"go"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() && !strings.Contains(sc.Text(), `"type":"agent_end"`) {
		}
	}
	prompt()
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"shell": {"env": {"TRUSTED_AT_START": "1"}, "scrubEnv": []}}`)
	prompt()
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	reqs := srv.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := lastToolResult(reqs[1]); !strings.Contains(got, "TRUSTED_AT_START=1") {
		t.Errorf("--trust-project: the start's values did not apply: %.300q", got)
	}
	if got := lastToolResult(reqs[3]); strings.Contains(got, "OPENAI_API_KEY=") || strings.Contains(got, "TRUSTED_AT_START") {
		t.Errorf("the change during the run applied: %.300q", got)
	}
	path := filepath.Join(s.work, ".agentsh", "settings.json")
	if w := "agentsh: " + path + " changed to loosen shell.env.TRUSTED_AT_START, shell.scrubEnv, which this folder is not trusted for: ignored\n"; stderr.String() != w {
		t.Errorf("stderr %q, want %q", stderr.String(), w)
	}
}

// TestExecCwdIsTheWritableRoot: `agentsh exec --cwd DIR` runs in DIR with
// DIR writable, and the caller's directory is not: `touch x` lands in DIR,
// a write into the caller's directory is refused.
func TestExecCwdIsTheWritableRoot(t *testing.T) {
	s := newSandbox(t)
	caller := outsideDir(t)
	sandboxProbe(t, s, caller)
	r := s.runEnv(caller, nil, "exec", "--cwd", s.work, "--", "touch x && pwd")
	want(t, r, s.work+"\n", "", 0)
	if _, err := os.Stat(filepath.Join(s.work, "x")); err != nil {
		t.Errorf("touch x did not land in DIR: %v", err)
	}
	if _, err := os.Stat(filepath.Join(caller, "x")); err == nil {
		t.Error("touch x landed in the caller's directory")
	}
	// Refused by the mount view (read-only file system), or by Landlock
	// where the kernel gives no view.
	target := filepath.Join(caller, "y")
	r = s.runEnv(caller, nil, "exec", "--cwd", s.work, "--", "touch "+shellQuote(target))
	if r.code == 0 || !strings.Contains(r.stdout, "touch: cannot touch '"+target+"': Read-only file system") && !strings.Contains(r.stdout, "touch: cannot touch '"+target+"': Permission denied") {
		t.Errorf("a write into the caller's directory: %v", r)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the command wrote into the caller's directory")
	}
}

// TestTUITrustQuestion: the TUI asks before it starts; 1 trusts (kept in
// the user's config: the next start does not ask) and the values apply to
// the user's `!` commands; changed values ask again, and 2 ignores them
// with a notice.
func TestTUITrustQuestion(t *testing.T) {
	s := newSandbox(t)
	path := filepath.Join(s.work, ".agentsh", "settings.json")
	writeFile(t, path, `{"shell": {"env": {"TRUST_MARK": "yes"}}}`)
	tt := startTUI(t, s)
	scr := tt.waitText("Do you trust this folder?")
	for _, w := range []string{s.work, path + " loosens your own settings:", `  shell.env.TRUST_MARK: "yes"`,
		"   1. Yes, trust this folder", " > 2. No, don't trust it (ignore these settings)"} {
		if !strings.Contains(scr, w) {
			t.Errorf("the question lacks %q:\n%s", w, scr)
		}
	}
	tt.keys("1")
	tt.waitText("/help for keys")
	tt.waitText("Trusted " + s.work)
	tt.typeLine("!echo mark=$TRUST_MARK")
	tt.waitText("mark=yes")
	tt.keys("C-d")
	tt.waitExit()
	data, err := os.ReadFile(filepath.Join(s.config, "agentsh", "trusted-folders.json"))
	if err != nil || !strings.Contains(string(data), `"`+s.work+`": {`) {
		t.Errorf("trusted folders: %s %v", data, err)
	}

	// Trusted for these values: no question.
	tt = startTUI(t, s)
	if scr := tt.screen(); strings.Contains(scr, "Do you trust") {
		t.Errorf("asked again for the same values:\n%s", scr)
	}
	tt.keys("C-d")
	tt.waitExit()

	// Other values: asked again; 2 ignores them, the rest applies.
	writeFile(t, path, `{"shell": {"env": {"TRUST_MARK": "changed"}}, "bash": {"patterns": [{"deny": "rm"}]}}`)
	tt = startTUI(t, s)
	tt.waitText(`shell.env.TRUST_MARK: "changed"`)
	tt.keys("2")
	tt.waitText("Folder not trusted: ignoring shell.env.TRUST_MARK")
	tt.typeLine("!echo mark=[$TRUST_MARK]")
	tt.waitText("mark=[]")
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// TestExecAppliesPatterns: `agentsh exec` follows the model's
// path, bash.patterns included: a deny rule refuses with the model's text,
// an ask rule is refused (no one to ask) unless --allow-ask.
func TestExecAppliesPatterns(t *testing.T) {
	s := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(s.config, "agentsh"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFileTB(t, filepath.Join(s.config, "agentsh", "settings.json"),
		`{"bash": {"patterns": [{"deny": "rm"}, {"ask": "touch"}]}}`+"\n")
	victim := filepath.Join(s.work, "keep")
	writeFileTB(t, victim, "x\n")
	r := s.run("exec", "--sandbox", "off", "--", "echo ok && rm "+shellQuote(victim))
	want(t, r, `Refused by bash.patterns rule {"deny": "rm"}: rm `+shellQuote(victim)+"\n", "", 1)
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	r = s.run("exec", "--sandbox", "off", "--", "touch made")
	want(t, r, `Refused by bash.patterns rule {"ask": "touch"}: it asks the user first, and no one can answer here (agentsh --allow-ask runs such commands without asking): touch made`+"\n", "", 1)
	if _, err := os.Stat(filepath.Join(s.work, "made")); err == nil {
		t.Error("the ask rule's command ran without --allow-ask")
	}
	r = s.run("exec", "--sandbox", "off", "--allow-ask", "--", "touch made && echo made")
	want(t, r, "made\n", "", 0)
}
