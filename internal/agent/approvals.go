package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/confinedfs"
	"agentsh/internal/sandbox"
	"agentsh/internal/tools"
)

// ApprovalKind is what an approval question is about.
type ApprovalKind int

// The questions.
const (
	// AskRule: a bash.patterns ask rule matched; the answers are Once
	// (run it) and Decline.
	AskRule ApprovalKind = iota
	// SandboxDenial: the command failed because of the sandbox; Once runs
	// it again outside, Always also saves Prefix among the folder's
	// "always outside" commands in the user's own config
	// (SaveOutsideRule), Decline keeps the failure.
	SandboxDenial
)

// ApprovalQuestion is what the user is asked about a model's command.
type ApprovalQuestion struct {
	Kind    ApprovalKind
	Command string
	Rule    bash.PatternRule // AskRule: the rule that asks
	Reason  string           // SandboxDenial: what the sandbox refused (sandbox.Denial.Reason)
	Prefix  string           // SandboxDenial: what Always allows; "" = Always is not offered
	// Matched is the part of Command the question is about: (AskRule)
	// the simple command the rule matched, (SandboxDenial) the one whose
	// error showed the refusal (bash.RefusedCommand); "" when not known.
	Matched string
	// Line (SandboxDenial) is the output line that showed the refusal.
	Line string
	// Unknown (AskRule): Matched is not known before it runs (a command
	// word that is not a literal, eval "$x", curl … | sh), so it matched
	// the rule without naming it.
	Unknown bool
	// ModelDefined (SandboxDenial) are the commands of Command that the
	// model defined as functions or aliases in its shells: the re-run
	// runs in a fresh shell with the user's state only, where they are
	// not defined, so Command runs the programs of those names.
	ModelDefined []string
	// Dir is the folder the command (SandboxDenial: the re-run) runs in
	// when the model chose it (the call's cwd), "" when it is the
	// session's: the same command means another thing elsewhere.
	Dir string
}

// OutsideNote says how a command the user lets run outside the sandbox
// runs: what the approval question shows below the command.
func (q ApprovalQuestion) OutsideNote() string {
	s := "It runs in a fresh shell with your shell state only: nothing the model defined in its shells (functions, aliases, variables) is there."
	if n := len(q.ModelDefined); n > 0 {
		names := strings.Join(q.ModelDefined, ", ")
		what, is, runs := "a function or alias", "is", "runs"
		if n > 1 {
			what, is, runs = "functions or aliases", "are", "run"
		}
		s += " The model's own " + names + " (" + what + " it defined) " + is + " not there: " + names + " " + runs + " as in your shell."
	}
	if q.Dir != "" {
		s += " It runs in " + config.Printable(q.Dir) + ", the folder the model chose."
	}
	return s
}

// ApprovalAnswer is the user's answer.
type ApprovalAnswer int

// The answers.
const (
	Decline ApprovalAnswer = iota
	Once
	Always
)

// Approver asks the user (the TUI). Approve blocks until the user answers
// or ctx ends (then: Decline). It is called from the tool's goroutine.
type Approver interface {
	Approve(ctx context.Context, q ApprovalQuestion) ApprovalAnswer
}

// Approvals is how a mode treats the model's commands that rules or the
// sandbox stop.
type Approvals struct {
	// Approver asks the user; nil in print, json and RPC modes, where an
	// ask rule refuses the command (unless AllowAsk) and a sandbox denial
	// stays a failure.
	Approver Approver
	// AllowAsk runs the commands of ask rules without asking when there is
	// no Approver (flag --allow-ask).
	AllowAsk bool
	// Yolo never asks and never sandboxes (--yolo): ask rules run, shells
	// get no sandbox. Deny rules still refuse.
	Yolo bool
}

// The texts the model reads (README "Approvals").
const (
	// denyText: "Refused by bash.patterns rule {"deny": "git push"}: git push origin main"
	denyText = "Refused by bash.patterns rule %s: %s"
	// askRefusedText: no one to ask.
	askRefusedText = "Refused by bash.patterns rule %s: it asks the user first, and no one can answer here " +
		"(agentsh --allow-ask runs such commands without asking): %s"
	// userDeclinedText: the user said no to an ask rule.
	userDeclinedText = "Refused: the user declined to run this command (bash.patterns rule %s): %s"
	// unknownNote ends the texts above when the command matched because
	// what it runs is not known before it runs.
	unknownNote = " (what this runs is not known before it runs, so it counts as matching every deny and ask rule: name the command literally)"
	// sandboxNoOneNote, sandboxDeclinedNote and sandboxRerunNote end the
	// result of a command the sandbox stopped.
	sandboxNoOneNote    = "[agentsh: the sandbox refused %s; no one can approve running it outside the sandbox here]"
	sandboxDeclinedNote = "[agentsh: the sandbox refused %s; the user declined to run the command outside the sandbox]"
	sandboxRerunNote    = "[agentsh: the sandbox refused %s; the user approved, and this is the result of running the command again outside the sandbox]"
	sandboxSaveNote     = " [agentsh: the rule was not saved: %v]"
	// fileNoOneNote, fileDeclinedNote and fileRerunNote are the same notes
	// for a file tool call (read, write, edit, grep, find) the sandbox
	// stopped; the verb is the tool's name.
	fileNoOneNote    = "[agentsh: the sandbox refused %s; no one can approve running the %s call outside the sandbox here]"
	fileDeclinedNote = "[agentsh: the sandbox refused %s; the user declined to run the %s call outside the sandbox]"
	fileRerunNote    = "[agentsh: the sandbox refused %s; the user approved, and this is the result of running the %s call again outside the sandbox]"
)

// gate is the bash tool's BashGate for a; folder is the session's start
// folder, whose "always outside" commands (OutsideRules) run outside the
// sandbox and where "always" saves one; yolo reports the session's yolo
// (the settings, --yolo, or an RPC client's set_sandbox), read on each
// call.
//
// An allow rule only spares the asking: the command still runs in the
// sandbox: a rule says which commands need no question, never that one may
// leave the sandbox. Only the user's own word runs one outside: yolo,
// --sandbox off, an answer to the sandbox question, or an "always"
// answer of before.
func (a Approvals) gate(folder func() string, yolo func() bool) tools.BashGate {
	return func(ctx context.Context, p bash.ToolParams, tc bash.ToolContext,
		run func(bash.ToolContext) (*bash.ToolResult, error)) (res *bash.ToolResult, err error) {
		if tc.SettingsError != nil {
			return run(tc) // refused by the tool with the settings' error
		}
		a := a
		a.Yolo = a.Yolo || (yolo != nil && yolo())
		if a.Yolo {
			tc.Settings.Shell.Sandbox = nil
		}
		m := bash.CheckPatterns(p.Command, tc.Settings.Patterns)
		switch m.Action {
		case bash.PatternDeny:
			return nil, &bash.ToolError{Message: fmt.Sprintf(denyText, m.Rule, m.Command) + unknownOf(m)}
		case bash.PatternAsk:
			switch {
			case a.Yolo, a.Approver == nil && a.AllowAsk:
			case a.Approver == nil:
				return nil, &bash.ToolError{Message: fmt.Sprintf(askRefusedText, m.Rule, m.Command) + unknownOf(m)}
			default:
				q := ApprovalQuestion{Kind: AskRule, Command: p.Command, Rule: m.Rule, Dir: chosenDir(tc, p),
					Matched: m.Command, Unknown: m.Unknown}
				if a.Approver.Approve(ctx, q) == Decline {
					return nil, &bash.ToolError{Message: fmt.Sprintf(userDeclinedText, m.Rule, m.Command) + unknownOf(m)}
				}
			}
		}
		if tc.Settings.Shell.Sandbox.Enabled() && (m.Action == "" || m.Action == bash.PatternAllow) {
			if o := bash.CheckOutside(p.Command, config.OutsideRules(folder())); o.Action == bash.PatternAllow {
				if n := sandbox.DisarmedNote(tc.Settings.Shell.Sandbox.DisarmGit()); n != "" {
					defer func() { res, err = noted(res, err, n) }()
				}
				tc.Settings.Shell.Sandbox = nil
				tc.View = bash.UserView // outside: nothing of the model's state
			}
		}
		res, err = run(tc)
		policy := tc.Settings.Shell.Sandbox
		if p.Background || !policy.Enabled() || ctx.Err() != nil {
			return res, err
		}
		var te *bash.ToolError
		if !errors.As(err, &te) || te.Details.ExitCode == nil || *te.Details.ExitCode == 0 {
			return res, err
		}
		cwd := tc.Cwd
		if tc.State != nil && tc.State.Cwd() != "" {
			cwd = tc.State.Cwd()
		}
		// The call's own cwd, when the model gave one, is where it ran
		// and where the re-run runs.
		dir := cwd
		if d, err := bash.ResolveCwd(cwd, p.Cwd); err == nil {
			dir = d
		}
		// A relative path in the refusal is the command's: from where its
		// cd steps took it, or where it started.
		d, ok := sandbox.DetectDenialIn(te.Message, bash.CommandDirs(p.Command, dir), policy)
		if !ok {
			return res, err
		}
		if a.Approver == nil {
			te.Message = withNote(te.Message, fmt.Sprintf(sandboxNoOneNote, d.Reason()))
			return res, err
		}
		// Always saves the command that was refused, not the line's first.
		prefix, matched := bash.RefusedCommand(p.Command, d.Line)
		q := ApprovalQuestion{Kind: SandboxDenial, Command: p.Command, Reason: d.Reason(), Prefix: prefix,
			Matched: matched, Line: d.Line}
		if tc.State != nil {
			q.ModelDefined = tc.State.ModelDefined(bash.CommandNames(p.Command))
		}
		if dir != cwd {
			q.Dir = dir
		}
		ans := a.Approver.Approve(ctx, q)
		if ans == Decline || ctx.Err() != nil {
			te.Message = withNote(te.Message, fmt.Sprintf(sandboxDeclinedNote, d.Reason()))
			return res, err
		}
		note := fmt.Sprintf(sandboxRerunNote, d.Reason())
		if ans == Always && prefix != "" {
			if serr := config.SaveOutsideRule(folder(), prefix); serr != nil {
				note += fmt.Sprintf(sandboxSaveNote, serr)
			}
		}
		// A fresh shell with the user's state only: the model's functions,
		// aliases and variables stay inside.
		if n := sandbox.DisarmedNote(policy.DisarmGit()); n != "" {
			note += "\n" + n
		}
		tc.Settings.Shell.Sandbox, tc.View = nil, bash.UserView
		res, err = run(tc)
		return noted(res, err, note)
	}
}

// chosenDir is the folder call p runs in when the model chose one (its
// cwd), "" when it runs in the session's.
func chosenDir(tc bash.ToolContext, p bash.ToolParams) string {
	if p.Cwd == "" {
		return ""
	}
	cwd := tc.Cwd
	if tc.State != nil && tc.State.Cwd() != "" {
		cwd = tc.State.Cwd()
	}
	if d, err := bash.ResolveCwd(cwd, p.Cwd); err == nil && d != cwd {
		return d
	}
	return ""
}

// RefuseUnattended is what a mode with no one to ask (agentsh exec) does
// with bash.patterns before a command runs: a deny rule refuses it, an ask
// rule refuses it unless allowAsk; nil runs it. The texts are the ones the
// model reads.
func RefuseUnattended(command string, rules []bash.PatternRule, allowAsk bool) *bash.ToolError {
	m := bash.CheckPatterns(command, rules)
	switch {
	case m.Action == bash.PatternDeny:
		return &bash.ToolError{Message: fmt.Sprintf(denyText, m.Rule, m.Command) + unknownOf(m)}
	case m.Action == bash.PatternAsk && !allowAsk:
		return &bash.ToolError{Message: fmt.Sprintf(askRefusedText, m.Rule, m.Command) + unknownOf(m)}
	}
	return nil
}

// unknownOf is the note that says why a command matched a rule it does
// not name; "" for one that names it.
func unknownOf(m bash.PatternMatch) string {
	if m.Unknown {
		return unknownNote
	}
	return ""
}

// noted ends a bash call's result, a failure's or a success's, with note.
func noted(res *bash.ToolResult, err error, note string) (*bash.ToolResult, error) {
	var te *bash.ToolError
	switch {
	case errors.As(err, &te):
		te.Message = withNote(te.Message, note)
	case err == nil && res != nil:
		res.Text = withNote(res.Text, note)
	}
	return res, err
}

// withNote ends a result's text with agentsh's note, one blank line apart.
func withNote(text, note string) string {
	if text = strings.TrimRight(text, "\n"); text == "" {
		return note
	}
	return text + "\n\n" + note
}

// fileGate is the file tools' FileGate for a: a call runs in the
// sandbox's view (fsOf, the session's FileSystem); when it fails because
// the sandbox refused a path this process could reach, the user is asked,
// as for a command, whether to run it again outside (on the host's file
// system). There is no "always": a bash.patterns rule is about commands.
// yolo reports the session's yolo, read on each call.
func (a Approvals) fileGate(fsOf func() tools.FS, yolo func() bool) tools.FileGate {
	return func(ctx context.Context, call tools.FileCall, run func(context.Context) tools.Result) tools.Result {
		if a.Yolo || (yolo != nil && yolo()) {
			return run(tools.WithFS(ctx, tools.HostFS))
		}
		cfs, ok := fsOf().(*confinedfs.FS)
		if !ok || cfs == nil {
			return run(tools.WithFS(ctx, tools.HostFS))
		}
		var (
			mu      sync.Mutex
			refused *confinedfs.Refusal
		)
		res := run(tools.WithFS(ctx, cfs.Watch(func(r *confinedfs.Refusal) {
			mu.Lock()
			if refused == nil {
				refused = r
			}
			mu.Unlock()
		})))
		mu.Lock()
		r := refused
		mu.Unlock()
		if !res.IsError || res.Aborted || r == nil || ctx.Err() != nil {
			return res
		}
		reason := r.Denial.Reason()
		if a.Approver == nil {
			res.Content = withNote(res.Content, fmt.Sprintf(fileNoOneNote, reason, call.Tool))
			return res
		}
		ans := a.Approver.Approve(ctx, ApprovalQuestion{Kind: SandboxDenial, Command: call.Summary, Reason: reason})
		if ans == Decline || ctx.Err() != nil {
			res.Content = withNote(res.Content, fmt.Sprintf(fileDeclinedNote, reason, call.Tool))
			return res
		}
		res = run(tools.WithFS(ctx, tools.HostFS))
		res.Content = withNote(res.Content, fmt.Sprintf(fileRerunNote, reason, call.Tool))
		return res
	}
}
