package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/sandbox"
	"agentsh/internal/tools"
)

// answering is an Approver that answers from a script and records the
// questions: the user of these tests.
type answering struct {
	mu      sync.Mutex
	answers []ApprovalAnswer
	asked   []ApprovalQuestion
}

func (a *answering) Approve(_ context.Context, q ApprovalQuestion) ApprovalAnswer {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if len(a.answers) == 0 {
		return Decline
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans
}

// approvalTools is a registry over a fresh session with rules and
// approvals, whose bash tool runs the model's commands under a sandbox
// policy for the session's working directory.
func approvalTools(t *testing.T, rules []bash.PatternRule, ap Approvals) (*tools.Registry, *AgentSession) {
	t.Helper()
	a, _ := newAgent(t)
	return gatedTools(t, a, rules, ap), a
}

// gatedTools is the bash tool as NewTools wires it, with the policy set on
// each call's context whatever the session's own sandbox is.
func gatedTools(t *testing.T, a *AgentSession, rules []bash.PatternRule, ap Approvals) *tools.Registry {
	t.Helper()
	policy := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: a.Cwd()}
	bt := tools.NewGatedBash(&bash.Tool{Executor: a.exec}, func() bash.ToolContext {
		tc := a.ToolContext(bash.ToolSettings{Patterns: rules})
		tc.Settings.Shell.Sandbox = policy
		return tc
	}, ap.gate(a.StartDir, nil))
	reg, err := tools.NewRegistry(bt)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestApprovalsPatterns: deny refuses with the rule's text, ask refuses
// without anyone to ask, runs with --allow-ask or an approving user, and
// is refused when the user declines; the command never ran when refused.
func TestApprovalsPatterns(t *testing.T) {
	rules := []bash.PatternRule{{Action: bash.PatternDeny, Pattern: "rm -rf"}, {Action: bash.PatternAsk, Pattern: "touch"}}
	for _, c := range []struct {
		name    string
		ap      Approvals
		answers []ApprovalAnswer
		want    string
		ran     bool
	}{
		{"no one to ask", Approvals{}, nil, `Refused by bash.patterns rule {"ask": "touch"}: it asks the user first, and no one can answer here (agentsh --allow-ask runs such commands without asking): touch made`, false},
		{"allow-ask", Approvals{AllowAsk: true}, nil, "ok\n", true},
		{"yolo", Approvals{Yolo: true}, nil, "ok\n", true},
		{"user says yes", Approvals{}, []ApprovalAnswer{Once}, "ok\n", true},
		{"user says no", Approvals{}, []ApprovalAnswer{Decline}, `Refused: the user declined to run this command (bash.patterns rule {"ask": "touch"}): touch made`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var user *answering
			if c.answers != nil {
				user = &answering{answers: c.answers}
				c.ap.Approver = user
			}
			reg, a := approvalTools(t, rules, c.ap)
			r := call(t, reg, tools.BashName, map[string]any{"command": "echo ok && touch made"})
			if r.Content != c.want {
				t.Errorf("result %q, want %q", r.Content, c.want)
			}
			if r.IsError == c.ran {
				t.Errorf("IsError %v", r.IsError)
			}
			if _, err := os.Stat(filepath.Join(a.Cwd(), "made")); (err == nil) != c.ran {
				t.Errorf("the command ran: %v, want %v", err == nil, c.ran)
			}
			if user != nil && (len(user.asked) != 1 || user.asked[0].Kind != AskRule || user.asked[0].Rule != rules[1]) {
				t.Errorf("asked %+v", user.asked)
			}
			r = call(t, reg, tools.BashName, map[string]any{"command": "ls | rm -rf sub"})
			if want := `Refused by bash.patterns rule {"deny": "rm -rf"}: rm -rf sub`; !r.IsError || r.Content != want {
				t.Errorf("deny: %+v, want %q", r, want)
			}
		})
	}
}

// denialCommand fails the first time like a sandboxed write (bash: a
// script it may not execute, outside the project, that this process could
// write: what the sandbox's EACCES looks like) after changing the session
// state; run again it succeeds and shows the state and which shell ran it.
func denialCommand(t *testing.T) (cmd, script string) {
	t.Helper()
	dir := t.TempDir()
	script = filepath.Join(dir, "blocked.sh")
	if err := os.WriteFile(script, []byte("true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = fmt.Sprintf(`if [ -e first ]; then echo "again X=$APPROVAL_X shell=$([ "$(cat first)" = $$ ] && echo same || echo other)"; `+
		`else echo $$ > first; export APPROVAL_X=kept; echo tried; %s; fi`, script)
	return cmd, script
}

// TestApprovalsSandboxDenial: a failure the sandbox caused asks once; Once
// runs it again in another shell (a fresh unconfined one, with the user's
// state but not the model's export) and gives the model the re-run's result; Decline
// gives the original failure with a note; without an Approver the note
// says no one can approve; Always saves {"allow": prefix} in the project
// settings, after which the command matches an allow rule.
func TestApprovalsSandboxDenial(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer []ApprovalAnswer
	}{{"once", []ApprovalAnswer{Once}}, {"always", []ApprovalAnswer{Always}}, {"no", []ApprovalAnswer{Decline}}, {"headless", nil}} {
		t.Run(c.name, func(t *testing.T) {
			cmd, script := denialCommand(t)
			var ap Approvals
			user := &answering{answers: c.answer}
			if c.answer != nil {
				ap.Approver = user
			}
			reg, a := approvalTools(t, nil, ap)
			r := call(t, reg, tools.BashName, map[string]any{"command": cmd})
			reason := "writing " + script + " (outside the sandbox's writable paths)"
			failed := func(note string) bool {
				return r.IsError && strings.HasPrefix(r.Content, "tried\n") &&
					strings.Contains(r.Content, script+": Permission denied\n") &&
					strings.HasSuffix(r.Content, "Command exited with code 126\n\n"+note)
			}
			switch c.name {
			case "once", "always":
				// The model's export stays in its layer: the re-run has
				// the user's state only.
				want := "again X= shell=other\n\n[agentsh: the sandbox refused " + reason +
					"; the user approved, and this is the result of running the command again outside the sandbox]"
				if r.IsError || r.Content != want {
					t.Errorf("result %+v, want %q", r, want)
				}
			case "no":
				want := "[agentsh: the sandbox refused " + reason + "; the user declined to run the command outside the sandbox]"
				if !failed(want) {
					t.Errorf("result %q, want the failure and %q", r.Content, want)
				}
			case "headless":
				want := "[agentsh: the sandbox refused " + reason + "; no one can approve running it outside the sandbox here]"
				if !failed(want) {
					t.Errorf("result %q, want the failure and %q", r.Content, want)
				}
			}
			if c.answer != nil {
				if len(user.asked) != 1 || user.asked[0].Kind != SandboxDenial || user.asked[0].Reason != reason ||
					user.asked[0].Prefix != "" || user.asked[0].Command != cmd {
					t.Errorf("asked %+v", user.asked)
				}
			}
			rules, err := config.ProjectPatternRules(config.ProjectSettingsPath(a.StartDir()))
			if err != nil {
				t.Fatal(err)
			}
			if len(rules) != 0 {
				t.Errorf("rules saved for a command without a prefix: %v", rules)
			}
		})
	}
}

// TestApprovalsAlwaysSavesPrefix: Always on `./tool sub …` saves
// "./tool sub" among the folder's "always outside" commands in the user's
// own config (not in the project's file, which the model may write); the
// next such command runs outside the sandbox (the unconfined twin shell)
// without asking, and no longer once the rule is removed.
func TestApprovalsAlwaysSavesPrefix(t *testing.T) {
	isolateConfig(t)
	_, script := denialCommand(t)
	user := &answering{answers: []ApprovalAnswer{Always}}
	reg, a := approvalTools(t, nil, Approvals{Approver: user})
	// $2 is the pid of the shell that runs the command: which shell ran it.
	tool := "if [ -e first ]; then echo \"again shell=$([ \"$(cat first)\" = \"$2\" ] && echo same || echo other)\"; " +
		"else echo \"$2\" > first; echo tried; " + script + "; fi\n"
	if err := os.WriteFile(filepath.Join(a.Cwd(), "approvaltool"), []byte(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := "./approvaltool run $$"
	r := call(t, reg, tools.BashName, map[string]any{"command": cmd})
	if r.IsError || !strings.HasPrefix(r.Content, "again shell=other\n\n[agentsh: the sandbox refused writing "+script) {
		t.Fatalf("result %+v", r)
	}
	if len(user.asked) != 1 || user.asked[0].Prefix != "./approvaltool run" {
		t.Fatalf("asked %+v", user.asked)
	}
	want := bash.PatternRule{Action: bash.PatternAllow, Pattern: "./approvaltool run"}
	if rules := config.OutsideRules(a.StartDir()); len(rules) != 1 || rules[0] != want {
		t.Fatalf("saved %v, want %v", rules, want)
	}
	if _, err := os.Stat(config.ProjectSettingsPath(a.StartDir())); err == nil {
		t.Errorf("the project's settings file was written")
	}
	data, _ := os.ReadFile(config.TrustedFoldersPath())
	if !strings.Contains(string(data), `"outside": [`) || !strings.Contains(string(data), `"./approvaltool run"`) {
		t.Errorf("%s:\n%s", config.TrustedFoldersPath(), data)
	}

	// The next call runs outside without a question.
	os.Remove(filepath.Join(a.Cwd(), "first"))
	call(t, reg, tools.BashName, map[string]any{"command": "echo $$ > first"})
	if r := call(t, reg, tools.BashName, map[string]any{"command": cmd}); r.IsError || r.Content != "again shell=other\n" {
		t.Errorf("next call %+v, want it outside the sandbox", r)
	}
	if len(user.asked) != 1 {
		t.Errorf("asked again: %+v", user.asked)
	}

	// Saving twice keeps one rule; removing it empties the list, and the
	// command is confined again (and asks).
	if err := config.SaveOutsideRule(a.StartDir(), want.Pattern); err != nil {
		t.Fatal(err)
	}
	if rules := config.OutsideRules(a.StartDir()); len(rules) != 1 {
		t.Errorf("rules after a second save: %v", rules)
	}
	if err := config.RemoveOutsideRule(a.StartDir(), "x"); err == nil {
		t.Error("removed a rule that is not there")
	}
	if err := config.RemoveOutsideRule(a.StartDir(), want.Pattern); err != nil {
		t.Fatal(err)
	}
	if rules := config.OutsideRules(a.StartDir()); len(rules) != 0 {
		t.Errorf("rules after removal: %v", rules)
	}
	os.Remove(filepath.Join(a.Cwd(), "first"))
	r = call(t, reg, tools.BashName, map[string]any{"command": cmd})
	if len(user.asked) != 2 || !strings.Contains(r.Content, "the user declined to run the command outside the sandbox") {
		t.Errorf("after removal: %+v, asked %d", r, len(user.asked))
	}
}

// TestApprovalsFollowSessionYolo: the session's yolo (the settings,
// --yolo, an RPC client's set_sandbox) is read on each call: an ask rule
// with no one to ask is refused, and runs once the session turns yolo.
func TestApprovalsFollowSessionYolo(t *testing.T) {
	a, _ := newAgent(t)
	reg, err := NewTools(ToolsConfig{Current: func() *AgentSession { return a }, Executor: a.exec,
		Settings: bash.ToolSettings{Patterns: []bash.PatternRule{{Action: bash.PatternAsk, Pattern: "echo"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, reg, tools.BashName, map[string]any{"command": "echo hi"}); !r.IsError || !strings.Contains(r.Content, "no one can answer here") {
		t.Fatalf("without yolo: %+v", r)
	}
	a.SetSandbox(config.SandboxSettings{Yolo: true})
	if r := call(t, reg, tools.BashName, map[string]any{"command": "echo hi"}); r.IsError || !strings.Contains(r.Content, "hi") {
		t.Fatalf("under the session's yolo: %+v", r)
	}
}

// TestApprovalRerunRunsNoModelFunction: the model's touch
// function and ls alias, defined in its confined shell, do not run when
// the user approves a re-run outside the sandbox: the real touch does, and
// the question says the model's touch is not there.
func TestApprovalRerunRunsNoModelFunction(t *testing.T) {
	_, script := denialCommand(t)
	user := &answering{answers: []ApprovalAnswer{Once}}
	reg, a := approvalTools(t, nil, Approvals{Approver: user})
	marks := filepath.Join(a.Cwd(), "marks")
	def := fmt.Sprintf(`touch() { echo "touch $1" >> %[1]s; }; alias ls='echo ls >> %[1]s'`, marks)
	if r := call(t, reg, tools.BashName, map[string]any{"command": def}); r.IsError {
		t.Fatalf("define: %+v", r)
	}
	cmd := "touch made; ls made; [ -e first ] || { : > first; " + script + "; }"
	r := call(t, reg, tools.BashName, map[string]any{"command": cmd})
	if r.IsError || !strings.HasPrefix(r.Content, "made\n\n[agentsh: the sandbox refused") {
		t.Fatalf("result %+v", r)
	}
	// The confined attempt ran the model's own (as the model meant); the
	// re-run outside ran the real touch and ls.
	if b, _ := os.ReadFile(marks); string(b) != "touch made\nls made\n" {
		t.Errorf("marks %q: the model's function or alias ran outside", b)
	}
	if _, err := os.Stat(filepath.Join(a.Cwd(), "made")); err != nil {
		t.Errorf("the real touch did not run: %v", err)
	}
	if len(user.asked) != 1 || strings.Join(user.asked[0].ModelDefined, " ") != "touch ls" {
		t.Fatalf("asked %+v", user.asked)
	}
	want := "It runs in a fresh shell with your shell state only: nothing the model defined in its shells (functions, aliases, variables) is there. " +
		"The model's own touch, ls (functions or aliases it defined) are not there: touch, ls run as in your shell."
	if got := user.asked[0].OutsideNote(); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

// TestApprovalsOutsideRuleNotStretched: with "always outside" saved for
// `touch`, a line that makes `touch` the model's own program
// (PATH=./bin touch …) stays in the sandbox: the model's program cannot
// write outside; a plain `touch` of the same file
// still runs outside without a question.
func TestApprovalsOutsideRuleNotStretched(t *testing.T) {
	isolateConfig(t)
	user := &answering{}
	reg, a := approvalTools(t, nil, Approvals{Approver: user})
	if err := config.SaveOutsideRule(a.StartDir(), "touch"); err != nil {
		t.Fatal(err)
	}
	// .agentsh/ is read-only to the model in every mode: a file there is
	// written only from outside the sandbox.
	if err := os.MkdirAll(filepath.Join(a.Cwd(), ".agentsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(a.Cwd(), ".agentsh", "mark")
	bin := filepath.Join(a.Cwd(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	evil := "#!/bin/sh\necho model > " + outside + "\n"
	if err := os.WriteFile(filepath.Join(bin, "touch"), []byte(evil), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"PATH=$PWD/bin:$PATH touch " + outside,
		"export PATH=$PWD/bin:$PATH; touch " + outside,
		"printf -v PATH %s \"$PWD/bin:$PATH\"; touch " + outside,
	} {
		r := call(t, reg, tools.BashName, map[string]any{"command": cmd})
		if data, err := os.ReadFile(outside); err == nil {
			t.Fatalf("%s: the model's touch ran outside the sandbox and wrote %q (result %q)", cmd, data, r.Content)
		}
		if !strings.Contains(r.Content, "Read-only file system") {
			t.Errorf("%s: result %q, want the sandbox's refusal", cmd, r.Content)
		}
	}
	if r := call(t, reg, tools.BashName, map[string]any{"command": "touch " + outside}); r.IsError {
		t.Errorf("plain touch: %+v", r)
	}
	if st, err := os.Stat(outside); err != nil || st.Size() != 0 {
		t.Errorf("plain touch outside: %v %v", st, err)
	}
	if len(user.asked) != 0 {
		t.Errorf("asked: %+v", user.asked)
	}
}

// TestApprovalsQuestionNamesFolder: the model's call may name its folder
// (cwd), where the re-run runs too; the question says so (the same
// command means another thing elsewhere), and says nothing of a folder
// when it is the session's own.
func TestApprovalsQuestionNamesFolder(t *testing.T) {
	isolateConfig(t)
	cmd, _ := denialCommand(t)
	user := &answering{}
	reg, a := approvalTools(t, nil, Approvals{Approver: user})
	call(t, reg, tools.BashName, map[string]any{"command": cmd})
	sub := filepath.Join(a.Cwd(), "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	call(t, reg, tools.BashName, map[string]any{"command": cmd, "cwd": "sub"})
	if len(user.asked) != 2 {
		t.Fatalf("asked %+v", user.asked)
	}
	if q := user.asked[0]; q.Dir != "" || strings.Contains(q.OutsideNote(), "the folder the model chose") {
		t.Errorf("first question names a folder: %q, %q", q.Dir, q.OutsideNote())
	}
	q := user.asked[1]
	if want := "It runs in " + sub + ", the folder the model chose."; q.Dir != sub || !strings.Contains(q.OutsideNote(), want) {
		t.Errorf("question in sub: dir %q, note %q, want %q", q.Dir, q.OutsideNote(), want)
	}
}

// readOnlyTools is approvalTools with the sandbox in read-only mode: the
// session's folder itself is refused, so a relative path is refused
// wherever the test's temporary folder is.
func readOnlyTools(t *testing.T, ap Approvals) (*tools.Registry, *AgentSession) {
	t.Helper()
	a, _ := newAgent(t)
	policy := &sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: a.Cwd()}
	bt := tools.NewGatedBash(&bash.Tool{Executor: a.exec}, func() bash.ToolContext {
		tc := a.ToolContext(bash.ToolSettings{})
		tc.Settings.Shell.Sandbox = policy
		return tc
	}, ap.gate(a.StartDir, nil))
	reg, err := tools.NewRegistry(bt)
	if err != nil {
		t.Fatal(err)
	}
	return reg, a
}

// TestApprovalsRelativeRefusal: a refusal on a relative path
// raises the question like an absolute one, with the path resolved from
// where the command was when it printed it (after its cd), and "always"
// offers the command that was refused: rm, not cd or mkdir; a
// redirection offers no "always" (no saved rule lets one out).
func TestApprovalsRelativeRefusal(t *testing.T) {
	isolateConfig(t)
	user := &answering{}
	reg, a := readOnlyTools(t, Approvals{Approver: user})
	ws := a.Cwd()
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd, path, prefix, matched, line string
	}{
		{"echo x > f", "f", "", "", ": f: "},
		{"cd sub && echo x > ../g", "g", "", "", ": ../g: "},
		{"cd sub && rm ../f", "f", "rm", "rm ../f", "rm: cannot remove '../f': "},
		{"cd sub && touch ok 2>/dev/null; cd .. && touch f", "f", "touch", "", "touch: cannot touch 'f': "},
		{"ls >/dev/null; mkdir -p /proc/self 2>/dev/null; touch h", "h", "touch", "touch h", "touch: cannot touch 'h': "},
	} {
		n := len(user.asked)
		r := call(t, reg, tools.BashName, map[string]any{"command": c.cmd})
		if len(user.asked) != n+1 {
			t.Errorf("%s: no question (result %q)", c.cmd, r.Content)
			continue
		}
		q := user.asked[n]
		reason := "writing " + filepath.Join(ws, c.path) + " (outside the sandbox's writable paths)"
		// The mount view refuses with EROFS, Landlock alone with EACCES.
		lineOK := strings.HasSuffix(q.Line, c.line+"Read-only file system") || strings.HasSuffix(q.Line, c.line+"Permission denied")
		if q.Kind != SandboxDenial || q.Reason != reason || q.Prefix != c.prefix || q.Matched != c.matched || !lineOK {
			t.Errorf("%s: asked %+v\nwant reason %q, prefix %q, matched %q, line …%q", c.cmd, q, reason, c.prefix, c.matched, c.line)
		}
		if !strings.Contains(r.Content, "the user declined to run the command outside the sandbox") {
			t.Errorf("%s: result %q", c.cmd, r.Content)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "f")); err != nil || string(b) != "keep" {
		t.Errorf("f: %q %v", b, err)
	}
}

// TestApprovalsAlwaysSavesRefusedCommand: "always" saves the
// command whose error showed the refusal, not the line's first: after
// `cd sub && mkdir -p out && rm ../f` is refused and always approved,
// the saved rule is rm, and the re-run outside removed the file.
func TestApprovalsAlwaysSavesRefusedCommand(t *testing.T) {
	isolateConfig(t)
	user := &answering{answers: []ApprovalAnswer{Always}}
	reg, a := readOnlyTools(t, Approvals{Approver: user})
	ws := a.Cwd()
	if err := os.MkdirAll(filepath.Join(ws, "sub", "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := call(t, reg, tools.BashName, map[string]any{"command": "cd sub && mkdir -p out && rm ../f"})
	if r.IsError || !strings.Contains(r.Content, "the user approved") {
		t.Fatalf("result %+v", r)
	}
	if len(user.asked) != 1 || user.asked[0].Prefix != "rm" || user.asked[0].Matched != "rm ../f" {
		t.Fatalf("asked %+v", user.asked)
	}
	want := bash.PatternRule{Action: bash.PatternAllow, Pattern: "rm"}
	if rules := config.OutsideRules(a.StartDir()); len(rules) != 1 || rules[0] != want {
		t.Errorf("saved %v, want %v", rules, want)
	}
	if _, err := os.Stat(filepath.Join(ws, "f")); !os.IsNotExist(err) {
		t.Errorf("f after the re-run outside: %v", err)
	}
}

// TestApprovalsAskNamesMatchedCommand: the ask question says which part
// of the line the rule matched (here one hidden behind a wrapper).
func TestApprovalsAskNamesMatchedCommand(t *testing.T) {
	rules := []bash.PatternRule{{Action: bash.PatternAsk, Pattern: "touch"}}
	user := &answering{}
	reg, a := approvalTools(t, rules, Approvals{Approver: user})
	r := call(t, reg, tools.BashName, map[string]any{"command": "echo ok && timeout 5 /usr/bin/env touch made"})
	if len(user.asked) != 1 || user.asked[0].Kind != AskRule || user.asked[0].Matched != "touch made" {
		t.Fatalf("asked %+v", user.asked)
	}
	want := `Refused: the user declined to run this command (bash.patterns rule {"ask": "touch"}): touch made`
	if !r.IsError || r.Content != want {
		t.Errorf("result %q, want %q", r.Content, want)
	}
	if _, err := os.Stat(filepath.Join(a.Cwd(), "made")); err == nil {
		t.Error("the command ran")
	}
}

// TestApprovalsUnknownCommandFailsClosed: a command whose name
// is not known before it runs matches every deny and ask rule; the model
// reads why, and the question says the match is not by name.
func TestApprovalsUnknownCommandFailsClosed(t *testing.T) {
	rules := []bash.PatternRule{{Action: bash.PatternAsk, Pattern: "touch"}, {Action: bash.PatternDeny, Pattern: "rm"}}
	user := &answering{}
	reg, a := approvalTools(t, rules, Approvals{Approver: user})
	keep := filepath.Join(a.Cwd(), "keep")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := call(t, reg, tools.BashName, map[string]any{"command": "echo start; $(printf rm) keep"})
	want := `Refused by bash.patterns rule {"deny": "rm"}: $(printf rm) keep (what this runs is not known before it runs, ` +
		`so it counts as matching every deny and ask rule: name the command literally)`
	if !r.IsError || r.Content != want {
		t.Errorf("result %q, want %q", r.Content, want)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the command ran: %v", err)
	}
	// With only the ask rule, the user is asked, told the match is not by name.
	reg, a = approvalTools(t, rules[:1], Approvals{Approver: user})
	r = call(t, reg, tools.BashName, map[string]any{"command": "cmd=touch; \"$cmd\" made"})
	if len(user.asked) != 1 || !user.asked[0].Unknown || user.asked[0].Matched != `"$cmd" made` {
		t.Fatalf("asked %+v", user.asked)
	}
	if !r.IsError || !strings.HasSuffix(r.Content, `"$cmd" made (what this runs is not known before it runs, `+
		`so it counts as matching every deny and ask rule: name the command literally)`) {
		t.Errorf("result %q", r.Content)
	}
	if _, err := os.Stat(filepath.Join(a.Cwd(), "made")); err == nil {
		t.Error("the declined command ran")
	}
}
