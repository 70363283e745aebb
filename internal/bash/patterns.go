package bash

import (
	"encoding/json"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// PatternAction is what a bash.patterns rule does with a command it matches
// (issue 14's approvals).
type PatternAction string

// The actions, strongest first: when rules of several actions match one
// command, deny beats ask, and ask beats allow.
const (
	PatternDeny  PatternAction = "deny"
	PatternAsk   PatternAction = "ask"
	PatternAllow PatternAction = "allow"
)

// PatternRule is one bash.patterns rule: {"allow"|"ask"|"deny": Pattern}.
// Pattern is a command prefix matched word by word ("git push" matches
// `git push origin main`, not `git pushx`), or, written between slashes
// (`/^rm -rf /`, with an optional trailing `i` for case-insensitive), a
// regular expression searched in the simple command's text.
type PatternRule struct {
	Action  PatternAction
	Pattern string
}

// String is the rule as settings spell it: {"deny": "git push"}.
func (r PatternRule) String() string {
	p, _ := json.Marshal(r.Pattern)
	return `{"` + string(r.Action) + `": ` + string(p) + `}`
}

// regex is the rule's expression when it is a /regex/ rule; ok is false
// for a prefix rule. An invalid expression (settings validation refuses
// one) gives ok with a nil regexp.
func (r PatternRule) regex() (re *regexp.Regexp, ok bool) {
	src, flags, ok := splitSlashed(r.Pattern)
	if !ok {
		return nil, false
	}
	return compileRule(src, flags), true
}

// splitSlashed splits "/src/" or "/src/i" into src and its flags.
func splitSlashed(p string) (src, flags string, ok bool) {
	if len(p) < 2 || p[0] != '/' {
		return "", "", false
	}
	switch {
	case strings.HasSuffix(p, "/i") && len(p) >= 3:
		return p[1 : len(p)-2], "i", true
	case strings.HasSuffix(p, "/"):
		return p[1 : len(p)-1], "", true
	}
	return "", "", false
}

// ValidPattern reports why p cannot be a bash.patterns rule's pattern.
func ValidPattern(p string) error {
	if src, flags, ok := splitSlashed(p); ok {
		if flags != "" {
			src = "(?" + flags + ")" + src
		}
		_, err := regexp.Compile(src)
		return err
	}
	if len(strings.Fields(p)) == 0 {
		return errEmptyPattern
	}
	return nil
}

type patternError string

func (e patternError) Error() string { return string(e) }

const errEmptyPattern = patternError("must not be empty")

// PatternMatch is the outcome of CheckPatterns.
type PatternMatch struct {
	// Action is what the rules decide: "" when no rule decides (no rule
	// matched, or allow rules matched only some of the simple commands).
	Action PatternAction
	// Rule is the deciding rule (for allow, the one that matched the first
	// simple command); Command is the simple command it matched.
	Rule    PatternRule
	Command string
}

// CheckPatterns decides on command by rules: each simple command in it is
// checked — every stage of a pipeline, every command of a `;`, `&&`, `||`
// list, in subshells, blocks, loops and functions, in $(...) and <(...),
// and the command run by a wrapper (`sudo`, `env`, `nohup`, `time`, `nice`,
// `command`, `exec`, `doas`) or given to `bash -c`/`sh -c` as a literal.
// A deny rule matching any simple command denies the whole command; else
// an ask rule matching any asks; allow needs every simple command matched
// by an allow rule (cd, pushd, popd, echo, printf, true, false, pwd, test,
// [ and : without redirections count as matched: they change nothing), so
// `git push && echo done` is allowed by {"allow": "git push"} but
// `git push && rm -rf ~` is not, nor `sudo git push`: deny and ask rules
// see through a wrapper, allow rules do not.
// Among rules of the deciding action the first in the list wins. A command
// that does not parse is checked as one simple command of its words.
func CheckPatterns(command string, rules []PatternRule) PatternMatch {
	if len(rules) == 0 {
		return PatternMatch{}
	}
	segs, _ := patternSegments(command, 0, false)
	if len(segs) == 0 {
		return PatternMatch{}
	}
	var allow *PatternMatch
	allowAll := true
	for _, action := range []PatternAction{PatternDeny, PatternAsk, PatternAllow} {
		for _, seg := range segs {
			matched := false
			for _, r := range rules {
				if r.Action != action || !seg.matches(r) {
					continue
				}
				m := PatternMatch{Action: action, Rule: r, Command: seg.text}
				if action != PatternAllow {
					return m
				}
				if allow == nil {
					allow = &m
				}
				matched = true
				break
			}
			if action == PatternAllow && !matched && !seg.neutral {
				allowAll = false
			}
		}
	}
	if allow != nil && allowAll {
		return *allow
	}
	return PatternMatch{}
}

// patSegment is one simple command as the rules see it.
type patSegment struct {
	text    string   // its source, from the name to the last argument
	words   []string // its words: literal values, else their source text
	neutral bool     // one of neutralCommands without redirections
	literal bool     // every word is a literal (no expansion, no glob)
}

func (s patSegment) matches(r PatternRule) bool {
	if re, ok := r.regex(); ok {
		return re != nil && re.MatchString(s.text)
	}
	want := strings.Fields(r.Pattern)
	if len(want) == 0 || len(want) > len(s.words) {
		return false
	}
	for i, w := range want {
		if s.words[i] != w {
			return false
		}
	}
	return true
}

// neutralCommands change nothing outside the shell when they have no
// redirections (their arguments' $(...) are simple commands of their own):
// allow rules need not cover them.
var neutralCommands = map[string]bool{"cd": true, "pushd": true, "popd": true, "echo": true, "printf": true,
	"true": true, "false": true, "pwd": true, "test": true, "[": true, ":": true}

// maxPatternDepth bounds `bash -c` nesting.
const maxPatternDepth = 4

// patternSegments lists command's simple commands (see CheckPatterns);
// top leaves out those inside $(...) and <(...). control reports an if,
// while, until, for, case or function in command.
func patternSegments(command string, depth int, top bool) (segs []patSegment, control bool) {
	f, err := parseBashSource(command)
	if err != nil {
		t := trimShellSpace(command)
		if t == "" {
			return nil, false
		}
		return []patSegment{{text: t, words: strings.Fields(t)}}, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl:
			control = true
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return !top
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				segs = append(segs, callSegments(command, n, depth)...)
			}
		}
		return true // words may hold $(...) with commands of their own
	})
	return segs, control
}

// callSegments is call's segment, plus the segment of the command a
// wrapper runs and the commands of a `bash -c` string.
func callSegments(src string, call *syntax.CallExpr, depth int) []patSegment {
	words := make([]string, len(call.Args))
	offs := make([]int, len(call.Args))
	literal := true
	for i, a := range call.Args {
		offs[i] = int(a.Pos().Offset())
		if v, ok := wordLiteral(a); ok {
			words[i] = v
		} else {
			words[i] = src[offs[i]:int(a.End().Offset())]
			literal = false
		}
	}
	end := int(call.End().Offset())
	seg := patSegment{text: src[offs[0]:end], words: words, literal: literal}
	seg.neutral = neutralCommands[words[0]]
	segs := []patSegment{seg}
	// The redirections of the statement make a cd more than a cd.
	if seg.neutral && hasRedirect(src, call) {
		segs[0].neutral = false
	}
	if i := wrappedCommand(words); i > 0 && i < len(words) {
		segs = append(segs, patSegment{text: src[offs[i]:end], words: words[i:]})
	}
	if depth < maxPatternDepth {
		if s, ok := shellDashC(words); ok {
			inner, _ := patternSegments(s, depth+1, false)
			segs = append(segs, inner...)
		}
	}
	return segs
}

// hasRedirect reports a redirection right after call in src (a cd's own
// statement); a conservative look at the text, since the call does not
// know its statement.
func hasRedirect(src string, call *syntax.CallExpr) bool {
	rest := src[int(call.End().Offset()):]
	if i := strings.IndexAny(rest, ";&|\n)"); i >= 0 {
		rest = rest[:i]
	}
	return strings.ContainsAny(rest, "<>")
}

// wrappers take a command to run as their arguments; the value is the
// options that take a value of their own.
var wrappers = map[string]string{
	"sudo": "ugUCDhprtT", "doas": "uC", "env": "uCS", "nohup": "", "time": "", "nice": "n",
	"command": "", "exec": "a", "builtin": "",
}

// wrappedCommand is the index of the command a wrapper runs (0 when
// words[0] is no wrapper): past the wrapper's options, their values and,
// for env, its VAR=value words.
func wrappedCommand(words []string) int {
	valued, ok := wrappers[words[0]]
	if !ok {
		return 0
	}
	i := 1
	for i < len(words) {
		w := words[i]
		switch {
		case w == "--":
			return i + 1
		case strings.HasPrefix(w, "-") && len(w) > 1:
			if len(w) == 2 && strings.ContainsRune(valued, rune(w[1])) {
				i++ // the option's value
			}
			i++
		case words[0] == "env" && strings.Contains(w, "="):
			i++
		default:
			if n := wrappedCommand(words[i:]); n > 0 {
				return i + n
			}
			return i
		}
	}
	return i
}

// shellDashC is the script of `bash -c SCRIPT` (sh, dash, zsh too) when
// it is a literal word.
func shellDashC(words []string) (string, bool) {
	name := words[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh":
	default:
		return "", false
	}
	for i := 1; i+1 < len(words); i++ {
		if w := words[i]; strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsRune(w, 'c') {
			return words[i+1], true
		}
	}
	return "", false
}

// CommandPrefix is the prefix an "always" answer saves for command: its
// first simple command's name (past a wrapper such as sudo) and, when the
// next word looks like a subcommand (a plain word, not an option or a path),
// that too: `git push origin main` gives "git push", `touch /etc/x` gives
// "touch". Leading neutral commands (cd, echo… without redirections) are
// skipped, and commands in $(...) do not count. A command with control flow
// (if, while, until, for, case, a function) has no prefix: what it runs
// depends on more than its first words. "" when command has no
// literal command name.
func CommandPrefix(command string) string {
	segs, control := patternSegments(command, maxPatternDepth, true)
	if control {
		return ""
	}
	for _, seg := range segs {
		if seg.neutral {
			continue
		}
		words := seg.words
		if i := wrappedCommand(words); i > 0 && i < len(words) {
			words = words[i:]
		}
		if !subcommandWord.MatchString(words[0]) && !strings.Contains(words[0], "/") {
			return ""
		}
		if strings.ContainsAny(words[0], " \t\n") {
			return ""
		}
		if len(words) > 1 && subcommandWord.MatchString(words[1]) {
			return words[0] + " " + words[1]
		}
		return words[0]
	}
	return ""
}

// subcommandWord is a word that reads as a subcommand: letters, digits,
// and - _ : inside, starting with a letter.
var subcommandWord = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:+-]*$`)

// CheckOutside decides whether rules, the user's "always outside"
// answers (allow rules), let command run outside the sandbox. It is
// CheckPatterns' allow with no benefit of the doubt, since the line runs
// unconfined: a line that does not parse, assigns or declares a variable
// (what `touch` resolves to is then the model's), writes or reads a file
// through a redirection other than /dev/null, or holds arithmetic (a
// C-style for included), a [[ ]] test, an indirect, subscripted, sliced,
// assigning or @-operator expansion (bash runs a $(...) hidden in a
// value there) never matches; and only cd, pushd, popd, echo, pwd, true,
// false and : with literal arguments (no glob, no expansion) need no
// rule (printf -v assigns, test -v evaluates a subscript). Such a line
// is asked about again.
func CheckOutside(command string, rules []PatternRule) PatternMatch {
	f, err := parseBashSource(command)
	if err != nil || !outsideSafe(f) {
		return PatternMatch{}
	}
	segs, _ := patternSegments(command, 0, false)
	var first *PatternMatch
	for _, seg := range segs {
		if outsideNeutral(seg) {
			continue
		}
		matched := false
		for _, r := range rules {
			if r.Action == PatternAllow && seg.matches(r) {
				if first == nil {
					first = &PatternMatch{Action: PatternAllow, Rule: r, Command: seg.text}
				}
				matched = true
				break
			}
		}
		if !matched {
			return PatternMatch{}
		}
	}
	if first == nil {
		return PatternMatch{}
	}
	return *first
}

// outsideNeutralCommands are the neutralCommands that, with literal
// arguments, neither assign nor evaluate anything.
var outsideNeutralCommands = map[string]bool{"cd": true, "pushd": true, "popd": true, "echo": true,
	"pwd": true, "true": true, "false": true, ":": true}

// outsideNeutral: a `cd d*` could enter a folder the model named
// `d[$(…)]`, which arithmetic on $PWD would run.
func outsideNeutral(seg patSegment) bool {
	return seg.neutral && seg.literal && outsideNeutralCommands[seg.words[0]]
}

// outsideSafe reports that f holds none of what CheckOutside refuses.
func outsideSafe(f *syntax.File) bool {
	safe := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause,
			*syntax.TestClause, *syntax.CoprocClause, *syntax.Assign, *syntax.CStyleLoop,
			*syntax.BinaryArithm, *syntax.UnaryArithm, *syntax.ParenArithm:
			safe = false
		case *syntax.CallExpr:
			if len(n.Assigns) > 0 {
				safe = false
			}
		case *syntax.ParamExp:
			if n.Excl || n.Index != nil || n.Slice != nil || n.Repl != nil ||
				(n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull ||
					n.Exp.Op == syntax.OtherParamOps)) {
				safe = false
			}
		case *syntax.Redirect:
			if !redirectSafe(n) {
				safe = false
			}
		}
		return safe
	})
	return safe
}

// redirectSafe is a redirection that reaches no file but /dev/null: a
// descriptor's duplicate or close, /dev/null, a heredoc or herestring.
func redirectSafe(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	case syntax.DplOut, syntax.DplIn:
		v, ok := wordLiteral(r.Word)
		return ok && (v == "-" || strings.Trim(v, "0123456789") == "" || strings.Trim(v, "0123456789") == "-")
	}
	v, ok := wordLiteral(r.Word)
	return ok && v == "/dev/null"
}
