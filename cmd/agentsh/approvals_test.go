package main

// Approvals: bash.patterns rules in print mode and in the TUI,
// and /permissions, with the real binary and the fake model.

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sbx "agentsh/internal/sandbox"
)

// patternSettings writes the project settings with bash.patterns rules.
func patternSettings(t *testing.T, s *sandbox, rules string) string {
	t.Helper()
	path := filepath.Join(s.work, ".agentsh", "settings.json")
	writeFile(t, path, `{"bash": {"patterns": `+rules+`}}`)
	return path
}

// TestPrintApprovals: in print mode an ask rule refuses the command (no one
// to ask) unless --allow-ask; a deny rule refuses it with the rule named.
// The model gets the refusal as the tool's error; the command never ran.
func TestPrintApprovals(t *testing.T) {
	s := newSandbox(t)
	patternSettings(t, s, `[{"ask": "touch"}, {"deny": "/^rm -rf /"}]`)
	for _, c := range []struct {
		command, flag, result string
		ran                   bool
	}{
		{"echo start && touch asked", "", `Refused by bash.patterns rule {"ask": "touch"}: it asks the user first, ` +
			`and no one can answer here (agentsh --allow-ask runs such commands without asking): touch asked`, false},
		{"echo start && touch asked", "--allow-ask", "start\n", true},
		{"ls | rm -rf /tmp/none-of-agentsh", "--allow-ask", `Refused by bash.patterns rule {"deny": "/^rm -rf /"}: rm -rf /tmp/none-of-agentsh`, false},
	} {
		os.Remove(filepath.Join(s.work, "asked"))
		srv := newSSEServer(t, modelScript(c.command))
		args := []string{"-p", "go", "--model", "openai/test"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		r := s.runIn(nil, srv.env(), args...)
		want(t, r, "Done.\n", "", 0)
		reqs := srv.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		if got := lastToolResult(reqs[1]); got != c.result {
			t.Errorf("%s %s: the model got %q, want %q", c.command, c.flag, got, c.result)
		}
		if _, err := os.Stat(filepath.Join(s.work, "asked")); (err == nil) != c.ran {
			t.Errorf("%s %s: ran %v, want %v", c.command, c.flag, err == nil, c.ran)
		}
	}
}

// TestTUIApprovals: an ask rule's question in the TUI: what is typed as
// it opens lands in the editor and answers nothing; once the typing
// pauses, 1 runs the command; a deny rule refuses with its text;
// /permissions lists the project's rules and removes one with d. (The
// project's allow rule loosens: the folder is trusted first.)
func TestTUIApprovals(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", `{"command":"touch approved-file && echo made-it"}`)
		case 2:
			w.bash("call_2", `{"command":"git push --force origin"}`)
		default:
			w.answer("Done " + string(rune('0'+n)) + ".")
		}
	})
	s := newSandbox(t)
	path := patternSettings(t, s, `[{"ask": "touch"}, {"deny": "git push --force"}, {"allow": "git status"}]`)
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.waitText(`bash.patterns: {"allow": "git status"}`)
	tt.keys("1")
	tt.waitText("openai/test-model")

	tt.typeLine("make the file")
	tt.waitText("Run this command? Its part `touch approved-file` matches the bash.patterns rule {\"ask\":")
	// Typed as the question opens (the y of "you", the a of "and"): the
	// editor's, however late the keys come, since letters never answer.
	tt.tmux("send-keys", "-l", "you and why")
	scr := tt.waitText("│ you and why")
	for _, want := range []string{"touch approved-file && echo made-it", "❯ 2. No, and tell the model what to do differently",
		"Waiting for your answer…", "waiting for your answer"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the question lacks %q:\n%s", want, scr)
		}
	}
	tt.waitText("enter answer") // the typing paused: the question takes keys
	if _, err := os.Stat(filepath.Join(s.work, "approved-file")); err == nil {
		t.Error("the command ran before the answer")
	}
	// Text in the editor: digits are the editor's; ↑ and, once the
	// highlight has rested, enter answer.
	tt.keys("Up")
	tt.waitText("❯ 1. Yes, run it")
	tt.waitText("enter answer · ")
	tt.keys("Enter")
	scr = tt.waitText("Done 1.")
	if _, err := os.Stat(filepath.Join(s.work, "approved-file")); err != nil {
		t.Errorf("1 did not run the command: %v", err)
	}
	if !strings.Contains(scr, "│ you and why") {
		t.Errorf("the editor lost the typed text:\n%s", scr)
	}
	tt.keys("C-u")
	tt.waitScreen("the editor cleared", func(s string) bool { return !strings.Contains(s, "you and why") })
	if got := lastToolResult(srv.requests()[1]); got != "made-it\n" {
		t.Errorf("the model got %q", got)
	}

	tt.typeLine("push it")
	tt.waitText("Done 3.")
	denied := `Refused by bash.patterns rule {"deny": "git push --force"}: git push --force origin`
	if got := lastToolResult(srv.requests()[3]); got != denied {
		t.Errorf("the model got %q, want %q", got, denied)
	}

	tt.typeLine("/permissions")
	tt.waitText("bash.patterns in " + path + ":")
	scr = tt.waitText("> ask    touch")
	for _, want := range []string{"  deny   git push --force", "  allow  git status", "d removes the rule"} {
		if !strings.Contains(scr, want) {
			t.Errorf("/permissions lacks %q:\n%s", want, scr)
		}
	}
	tt.keys("Down")
	tt.keys("d")
	tt.waitText(`removed {"deny": "git push --force"}`)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "--force") || !strings.Contains(string(data), `"ask": "touch"`) {
		t.Errorf("settings after the removal:\n%s", data)
	}
	tt.keys("Escape")
	tt.waitScreen("the conversation back", func(s string) bool { return !strings.Contains(s, "Permissions ·") })
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// TestTUIApprovalEscStopsTheTurn: esc at an ask rule's question (once the
// typing paused) declines and stops the turn: nothing is removed, the
// model is asked nothing more, the call's block shows the refusal, and
// the editor keeps what was typed.
func TestTUIApprovalEscStopsTheTurn(t *testing.T) {
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			w.bash("call_0", `{"command":"rm -rf keep-me"}`)
			return
		}
		w.answer("Done " + string(rune('0'+n)) + ".")
	})
	s := newSandbox(t)
	patternSettings(t, s, `[{"ask": "rm"}]`)
	keep := filepath.Join(s.work, "keep-me", "file")
	writeFile(t, keep, "mine\n")
	tt := startTUI(t, s, append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.waitText("openai/test-model")
	tt.typeLine("clean up")
	tt.waitText(`Run this command? It matches the bash.patterns rule {"ask": "rm"}.`)
	tt.tmux("send-keys", "-l", "do not")
	tt.waitText("│ do not")
	tt.waitText("enter answer")
	tt.keys("Escape")
	tt.waitText("You said no, and the turn stopped")
	// The call's block ends when the refusal reaches it, a moment later.
	scr := tt.waitText("✗ $ rm -rf keep-me")
	for _, want := range []string{`Refused: the user declined to run this command (bash.patterns rule {"ask": "rm"})`,
		"│ do not"} {
		if !strings.Contains(scr, want) {
			t.Errorf("after esc the screen lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "Waiting for your answer") || strings.Contains(scr, "waiting for your answer") {
		t.Errorf("the call still waits:\n%s", scr)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the declined rm ran: %v", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("the model was asked %d times, want 1", n)
	}
	tt.keys("C-u")
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// outsideDir is a folder outside every path the sandbox lets the model
// write (the working directory, the temp directories, the caches): in
// /var/tmp, removed after the test.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "agentsh-approvals-")
	if err != nil {
		t.Skipf("no folder outside the sandbox's writable paths: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// sandboxProbe skips the test unless `agentsh exec --sandbox
// workspace-write` refuses a write in outside, so the test runs only
// where the kernel can enforce the sandbox.
func sandboxProbe(t *testing.T, s *sandbox, outside string) {
	t.Helper()
	probe := filepath.Join(outside, "probe")
	r := s.runEnv(s.work, nil, "exec", "--sandbox", "workspace-write", "--", "touch "+shellQuote(probe))
	if out := r.stdout + r.stderr; r.code == 0 || !strings.Contains(out, "Permission denied") && !strings.Contains(out, "Read-only file system") {
		os.Remove(probe)
		if sbx.Detect().Landlock == 0 {
			t.Skipf("no Landlock in this kernel: the sandbox cannot refuse a write (agentsh exec --sandbox: %v)", r)
		}
		t.Fatalf("the sandbox did not refuse a write outside the project (agentsh exec --sandbox: %v)", r)
	}
}

// TestTUISandboxDenialApproval: a write the sandbox refused asks whether to
// run the command again outside; "always" (↑ from the highlighted No,
// enter) runs it outside, saves "touch"
// among the folder's outside commands in the user's own config (not in
// the project's file), and the next touch runs outside without asking;
// /permissions lists the saved choice.
func TestTUISandboxDenialApproval(t *testing.T) {
	s := newSandbox(t)
	outside := outsideDir(t)
	sandboxProbe(t, s, outside)
	first, second := filepath.Join(outside, "first"), filepath.Join(outside, "second")
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch n {
		case 0:
			w.bash("call_0", `{"command":"touch `+first+` && echo wrote-first"}`)
		case 2:
			w.bash("call_2", `{"command":"touch `+second+` && echo wrote-second"}`)
		default:
			w.answer("Done " + string(rune('0'+n)) + ".")
		}
	})
	tt := startTUIArgs(t, s, []string{"--sandbox", "workspace-write"},
		append(srv.env(), "AGENTSH_MODEL=openai/test-model")...)
	tt.waitText("openai/test-model")
	tt.typeLine("write outside")
	tt.waitText("The sandbox refused writing " + first)
	tt.waitText(`2. Yes, and from now on run commands starting with "touch"`)
	tt.waitText("enter answer")
	tt.keys("Up")
	tt.waitText("❯ 2. Yes, and from now on")
	tt.waitText("enter answer · ") // the highlight rested on Always
	tt.keys("Enter")
	tt.waitText("Done 1.")
	if _, err := os.Stat(first); err != nil {
		t.Errorf("always did not run the command outside: %v", err)
	}
	if got := lastToolResult(srv.requests()[1]); !strings.HasPrefix(got, "wrote-first\n\n[agentsh: the sandbox refused writing "+first) {
		t.Errorf("the model got %q", got)
	}
	tt.typeLine("again")
	tt.waitText("Done 3.")
	if _, err := os.Stat(second); err != nil {
		t.Errorf("the saved rule did not run the next touch outside: %v", err)
	}
	if got := lastToolResult(srv.requests()[3]); got != "wrote-second\n" {
		t.Errorf("the model got %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.work, ".agentsh", "settings.json")); err == nil {
		t.Error("always wrote the project's settings file")
	}
	tt.typeLine("/permissions")
	tt.waitText("> outside touch")
	tt.keys("Escape")
	tt.waitScreen("the conversation back", func(s string) bool { return !strings.Contains(s, "Permissions ·") })
	tt.keys("C-d")
	tt.waitExit()
	tt.assertNoProcesses()
}

// TestRPCApprovals: in RPC mode an ask rule refuses the model's command
// unless agentsh runs with --allow-ask.
func TestRPCApprovals(t *testing.T) {
	for _, allow := range []bool{false, true} {
		s := newSandbox(t)
		patternSettings(t, s, `[{"ask": "touch"}]`)
		srv := newSSEServer(t, modelScript("touch asked && echo made"))
		args := []string{"--mode", "rpc", "--model", "openai/test"}
		if allow {
			args = append(args, "--allow-ask")
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		cmd := s.command(ctx, s.work, srv.env(), args...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(in, `{"id":"p1","type":"prompt","message":"go"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for sc.Scan() && !strings.Contains(sc.Text(), `"type":"agent_end"`) {
		}
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit: %v", err)
		}
		cancel()
		reqs := srv.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		want := `Refused by bash.patterns rule {"ask": "touch"}: it asks the user first, and no one can answer here ` +
			`(agentsh --allow-ask runs such commands without asking): touch asked`
		if allow {
			want = "made\n"
		}
		if got := lastToolResult(reqs[1]); got != want {
			t.Errorf("--allow-ask %v: the model got %q, want %q", allow, got, want)
		}
		if _, err := os.Stat(filepath.Join(s.work, "asked")); (err == nil) != allow {
			t.Errorf("--allow-ask %v: ran %v", allow, err == nil)
		}
	}
}
