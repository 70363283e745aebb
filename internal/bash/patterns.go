package bash

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// PatternAction is what a bash.patterns rule does with a command it
// matches, before the command runs or the user is asked.
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
	// Unknown (deny, ask): Command is not known before it runs (its
	// command word is not a literal, or it is code from a variable or a
	// pipe), so it matched the rule without naming it.
	Unknown bool
}

// CheckPatterns decides on command by rules: each simple command in it is
// checked — every stage of a pipeline, every command of a `;`, `&&`, `||`
// list, in subshells, blocks, loops and functions, in $(...), `...` and
// <(...) — and so is what a command runs in turn: a wrapper's command
// (see wrappers: sudo, env, timeout, stdbuf, xargs, nice, nohup, exec,
// command…), find's -exec/-execdir/-ok/-okdir commands, the code of eval,
// alias and trap, and a shell's code (`bash -c`, a here-doc or
// here-string, `echo … | sh`). Code that is not known before it runs
// (`eval "$x"`, `curl … | sh`, a command word such as $(printf rm) or
// ${X:-rm}) counts as matching every deny and ask rule (see
// patSegment.matches for how those fail closed).
// A deny rule matching any simple command denies the whole command; else
// an ask rule matching any asks; allow needs every simple command matched
// by an allow rule (cd, pushd, popd, echo, printf, true, false, pwd, test,
// [ and : without redirections count as matched: they change nothing), so
// `git push && echo done` is allowed by {"allow": "git push"} but
// `git push && rm -rf ~` is not, nor `sudo git push`: deny and ask rules
// see through a wrapper, allow rules do not.
// Among rules of the deciding action the first in the list wins. Of a
// command that does not parse, the lines before the error are checked as
// code (bash runs them) and the whole as one simple command of its words.
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
				if r.Action != action || !seg.matches(r, action != PatternAllow) {
					continue
				}
				m := PatternMatch{Action: action, Rule: r, Command: seg.text, Unknown: !seg.known[0]}
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

// matches reports whether r matches s. closed is how deny and ask rules
// match, failing closed: a command word that is not a literal matches
// every rule; a path-named command matches by its base name (/bin/rm is
// rm); past the first, the rule's words may stand apart, with options
// (and one value each) between them (git -C . push is git push); a word
// that is not a literal matches any; and a regex rule also sees the
// words as they run (\rm -rf / as rm -rf /). Allow rules match only the
// words as written: a prefix of literal words, or the regex on the text.
func (s patSegment) matches(r PatternRule, closed bool) bool {
	if closed && !s.known[0] {
		return true
	}
	if re, ok := r.regex(); ok {
		if re == nil {
			return false
		}
		return re.MatchString(s.text) || (closed && re.MatchString(s.plain()))
	}
	want := strings.Fields(r.Pattern)
	if len(want) == 0 {
		return false
	}
	if !closed {
		if len(want) > len(s.words) {
			return false
		}
		for i, w := range want {
			if !s.known[i] || s.words[i] != w {
				return false
			}
		}
		return true
	}
	if commandName(s.words[0]) != commandName(want[0]) {
		return false
	}
	j, optionBefore := 1, false
	for i := 1; i < len(s.words) && j < len(want); i++ {
		w := s.words[i]
		switch {
		case !s.known[i] || w == want[j]:
			j, optionBefore = j+1, false
		case strings.HasPrefix(w, "-") && len(w) > 1:
			optionBefore = true
		case optionBefore:
			optionBefore = false // the option's value
		default:
			return false
		}
	}
	return j == len(want) || s.open
}

// plain is the segment's words as the command runs them, its name by its
// base name.
func (s patSegment) plain() string {
	return strings.Join(append([]string{commandName(s.words[0])}, s.words[1:]...), " ")
}

// neutralCommands change nothing outside the shell when they have no
// redirections (their arguments' $(...) are simple commands of their own):
// allow rules need not cover them.
var neutralCommands = map[string]bool{"cd": true, "pushd": true, "popd": true, "echo": true, "printf": true,
	"true": true, "false": true, "pwd": true, "test": true, "[": true, ":": true}

// CommandPrefix is the prefix an "always" answer saves for command when
// no output line tells which of its commands was refused (RefusedCommand):
// its command's name (past a wrapper such as sudo) and, when the next
// word looks like a subcommand (a plain word, not an option or a path),
// that too: `git push origin main` gives "git push", `touch /etc/x` gives
// "touch". Neutral commands (cd, echo… without redirections) do not
// count, nor commands in $(...). "" when command has no literal command
// name, when it runs more than one command (which one the user would
// allow is not known; touch a; touch b gives "touch"), or with control flow (if, while, until,
// for, case, a function): what it runs depends on more than its words.
func CommandPrefix(command string) string {
	segs, control := patternSegments(command, 0, true)
	if control {
		return ""
	}
	prefix := ""
	for _, seg := range segs {
		if seg.neutral || seg.derived {
			continue
		}
		var ok bool
		if prefix, ok = samePrefix(prefix, seg.prefix()); !ok {
			return ""
		}
	}
	return prefix
}

// samePrefix merges the prefixes of two commands of a line: the same
// prefix, or the command name both start with (touch a; touch b: touch);
// ok is false when they name different commands. prev "" is none yet.
func samePrefix(prev, p string) (string, bool) {
	switch {
	case p == "":
		return "", false
	case prev == "" || prev == p:
		return p, true
	}
	a, _, _ := strings.Cut(prev, " ")
	b, _, _ := strings.Cut(p, " ")
	return a, a == b
}

// RefusedCommand is the simple command of command that printed line, an
// output line that showed the sandbox's refusal, and the prefix an
// "always" answer saves for it: the program that starts line (`rm: cannot
// remove 'x': Read-only file system` is rm's) is looked for among
// command's commands, wrapped ones included, so `cd sub && rm ../f` saves
// "rm". A line of a shell's own (`bash: line 1: ../f: Read-only file
// system`, a redirection) saves nothing: an "always outside" rule never
// lets a redirection out. A line that names none of command's commands
// (a program's own wording) falls back to CommandPrefix. "" when the
// command is not known: the question then offers no "always".
func RefusedCommand(command, line string) (prefix, text string) {
	prog, _, ok := strings.Cut(line, ":")
	prog = trimShellSpace(prog)
	if ok && prog != "" && !strings.ContainsAny(prog, " \t") {
		name := commandName(prog)
		if shells[name] {
			return "", ""
		}
		segs, _ := patternSegments(command, 0, false)
		for _, seg := range segs {
			if !seg.known[seg.inner] || commandName(seg.words[seg.inner]) != name {
				continue
			}
			p, ok := samePrefix(prefix, seg.prefix())
			if name, arg, two := strings.Cut(p, " "); two && namesPath(line, arg) {
				p = name // touch notes: notes is the refused file, no subcommand
			}
			if !ok {
				return "", ""
			}
			switch {
			case prefix == "":
				text = seg.text
			case p != prefix:
				text = "" // one of several: which, the line does not say
			}
			prefix = p
		}
		if prefix != "" {
			return prefix, text
		}
	}
	prefix = CommandPrefix(command)
	if prefix == "" {
		return "", ""
	}
	segs, _ := patternSegments(command, 0, true)
	for _, seg := range segs {
		if !seg.neutral && !seg.derived {
			text = seg.text
			break
		}
	}
	return prefix, text
}

// namesPath reports whether line names word as a path: quoted, or
// between a space or line start and a colon.
func namesPath(line, word string) bool {
	for _, q := range []string{"'" + word + "'", "‘" + word + "’", `"` + word + `"`, "`" + word + "'", " " + word + ":"} {
		if strings.Contains(line, q) {
			return true
		}
	}
	return strings.HasPrefix(line, word+":")
}

// prefix is the segment's command name (past its wrappers) and, when the
// next word reads as a subcommand, that word.
func (s patSegment) prefix() string {
	words, known := s.words[s.inner:], s.known[s.inner:]
	if !known[0] || strings.ContainsAny(words[0], " \t\n") ||
		(!subcommandWord.MatchString(words[0]) && !strings.Contains(words[0], "/")) {
		return ""
	}
	if len(words) > 1 && known[1] && subcommandWord.MatchString(words[1]) {
		return words[0] + " " + words[1]
	}
	return words[0]
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
// is asked about again. Rules match as allow rules do, never as deny
// and ask rules fail closed: `./touch` (the model's own program) is not
// `touch`, and what a wrapper, eval, find -exec or bash -c runs needs a
// rule of its own besides the wrapper's.
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
			if r.Action == PatternAllow && seg.matches(r, false) {
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

// CommandDirs are the directories command may print from, the likeliest
// first: where it ends after its literal `cd`/`pushd` steps (each taken
// from the one before, as bash's logical cd does), back to cwd, where it
// starts. A relative path in a refusal is resolved against them.
func CommandDirs(command, cwd string) []string {
	dirs := []string{cwd}
	segs, _ := patternSegments(command, maxPatternDepth, false)
	for _, seg := range segs {
		if seg.derived || !seg.known[0] || (seg.words[0] != "cd" && seg.words[0] != "pushd") {
			continue
		}
		for i := 1; i < len(seg.words); i++ {
			w := seg.words[i]
			if !seg.known[i] || w == "-" {
				break
			}
			if strings.HasPrefix(w, "-") {
				continue // -P, -L, --
			}
			switch {
			case filepath.IsAbs(w):
				dirs = append(dirs, filepath.Clean(w))
			case !strings.HasPrefix(w, "~"):
				dirs = append(dirs, filepath.Join(dirs[len(dirs)-1], w))
			}
			break
		}
	}
	out := make([]string, 0, len(dirs))
	seen := map[string]bool{}
	for i := len(dirs) - 1; i >= 0; i-- {
		if !seen[dirs[i]] {
			seen[dirs[i]] = true
			out = append(out, dirs[i])
		}
	}
	return out
}
