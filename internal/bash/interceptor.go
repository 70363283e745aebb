package bash

import (
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// InterceptorRule is one interception rule: when Pattern matches a
// command segment and Tool is available, the command is blocked with Message.
//
// Rules loaded from settings are regex-only. The built-in defaults
// (DefaultInterceptorRules) may also carry an unexported syntax-tree check that
// must hold as well, because a regex cannot see quoting or tell `> file` from
// `2>&1`; that check is not part of the JSON form, so a default rule written to
// and read back from settings becomes regex-only.
type InterceptorRule struct {
	Pattern string `json:"pattern"`
	Flags   string `json:"flags,omitempty"` // "i" → case-insensitive ((?i)), "m", "s"; unknown flags ignored
	Tool    string `json:"tool"`
	Message string `json:"message"`

	check segmentCheck // built-in AST predicate; zero for rules from settings
}

// InterceptionResult is the outcome of CheckInterception.
type InterceptionResult struct {
	Blocked       bool
	Message       string           // the matching rule's Message; format the tool error with BlockedMessage
	SuggestedTool string           // the matching rule's Tool when Blocked
	Rule          *InterceptorRule // a copy of the matching rule when Blocked
}

// Messages of the default rules.
const (
	msgRead  = "Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files."
	msgGrep  = "Use the `grep` tool instead of grep/rg. It respects .gitignore and provides structured output."
	msgFind  = "Use the `find` tool instead of find/fd. It respects .gitignore and is faster for glob patterns."
	msgSed   = "Use the `edit` tool instead of sed -i. It provides diff preview and fuzzy matching."
	msgPerl  = "Use the `edit` tool instead of perl -i. It provides diff preview and fuzzy matching."
	msgAwk   = "Use the `edit` tool instead of awk -i inplace. It provides diff preview and fuzzy matching."
	msgWrite = "Use the `write` tool instead of echo/cat redirection. It handles encoding and provides confirmation."
)

// DefaultInterceptorRules returns a fresh copy of the built-in rules (RE2
// syntax), in priority order. The shell-redirect write rule comes first so that
// `cat <<EOF > f` suggests `write`, not `read`; the read rule's check also
// refuses a `cat` that writes to a file or reads a heredoc, so the order matters
// only when the command cannot be parsed.
func DefaultInterceptorRules() []InterceptorRule {
	return []InterceptorRule{
		{
			// A `>` not inside a word like `->` and not an fd duplication;
			// the check then requires a real output redirect of fd 1.
			Pattern: `(?s)^\s*(?:echo|printf|cat)\s(?:.*[^02-9&>\-])?(?:(?:>>?|>\||&>>?)\s*[^\s&>]|>&\s*[^\s0-9&>\-])`,
			Tool:    "write", Message: msgWrite, check: checkWrite,
		},
		{
			Pattern: `^\s*(?:cat|head|tail|less|more)\s`,
			Tool:    "read", Message: msgRead, check: checkRead,
		},
		{
			Pattern: `^\s*(?:grep|rg|ripgrep|ag|ack)\s`,
			Tool:    "grep", Message: msgGrep, check: checkGrep,
		},
		{
			// fd's own flags count too: -t/--type, -g/--glob, -e/--extension,
			// also inside a cluster of short flags (`-tf`, `-HIt f`).
			Pattern: `(?s)^\s*(?:(?:find|locate)\s(?:.*\s)?(?:-name|-iname|-type|--type|-glob|--glob)` +
				`|(?:fd|fdfind)\s(?:.*\s)?(?:--type|--glob|--extension|-[A-Za-z0-9]*[tge][A-Za-z0-9]*))(?:[\s=]|$)`,
			Tool: "find", Message: msgFind, check: checkFind,
		},
		{
			Pattern: `(?s)^\s*sed\s(?:.*\s)?(?:-[nrsuzEb]*i|--in-place(?:[\s=]|$))`,
			Tool:    "edit", Message: msgSed, check: checkSed,
		},
		{
			Pattern: `(?s)^\s*perl\s(?:.*\s)?-[0-9acnpstuwlTUWX]*i`,
			Tool:    "edit", Message: msgPerl, check: checkPerl,
		},
		{
			Pattern: `(?s)^\s*g?awk\s(?:.*\s)?(?:-i\s*|--include(?:=|\s+))inplace\b`,
			Tool:    "edit", Message: msgAwk, check: checkAwk,
		},
	}
}

// BlockedMessage formats the tool error text of a blocked command.
func BlockedMessage(ruleMessage, command string) string {
	return "Blocked: " + ruleMessage + "\n\nOriginal command: " + command
}

// CheckInterception tests command against rules, in order, and blocks on the
// first rule whose Tool is in availableTools and whose regex matches one of the
// command's segments (and whose built-in check, if any, holds for it). It uses
// exactly the rules it is given: pass DefaultInterceptorRules() when none are
// configured. Rules with an invalid regex are skipped (logged at debug level).
//
// Segments: command is parsed as bash; a segment is a simple command at a
// command position — every statement of a `;`/newline/`&`/`&&`/`||` list,
// recursively inside subshells, `{ }` blocks, if/while/until/for/case bodies,
// `time`, and function bodies — with leading `VAR=value` assignments stripped
// (`FOO=1 grep x .` is tested as `grep x .`). Of a pipeline only the first
// stage is a segment; later stages are filters (`ls | grep foo` is not a
// search). Commands inside $(...), backticks and <(...) are not segments.
// A segment's text is cut from the source by offset: from its command name to
// the end of its last argument or redirection (heredoc bodies excluded). If
// the command does not parse, the whole trimmed command is the only segment and
// only the regexes apply.
func CheckInterception(command string, rules []InterceptorRule, availableTools []string) InterceptionResult {
	if len(rules) == 0 || len(availableTools) == 0 || trimShellSpace(command) == "" {
		return InterceptionResult{}
	}
	available := make(map[string]bool, len(availableTools))
	for _, t := range availableTools {
		available[t] = true
	}
	var segs []cmdSegment
	segsReady := false
	for i := range rules {
		rule := &rules[i]
		if !available[rule.Tool] {
			continue
		}
		re := compileRule(rule.Pattern, rule.Flags)
		if re == nil {
			continue
		}
		if !segsReady {
			segs, segsReady = commandSegments(command), true
		}
		for _, seg := range segs {
			if !re.MatchString(seg.text) {
				continue
			}
			// A built-in check needs the syntax tree; without one (the
			// command did not parse) only the regex decides.
			if rule.check != checkNone && seg.call != nil && !rule.check.holds(seg) {
				continue
			}
			r := *rule
			return InterceptionResult{
				Blocked:       true,
				Message:       rule.Message,
				SuggestedTool: rule.Tool,
				Rule:          &r,
			}
		}
	}
	return InterceptionResult{}
}

// ---- regex cache ----

type compiledRule struct{ re *regexp.Regexp } // re is nil for an invalid pattern

var ruleRegexCache sync.Map // flags + "\x00" + pattern → compiledRule

// compileRule compiles pattern with the given flags once per distinct
// (pattern, flags) pair; it returns nil when the pattern is invalid.
func compileRule(pattern, flags string) *regexp.Regexp {
	var prefix []byte
	for _, f := range "ims" {
		if strings.ContainsRune(flags, f) {
			prefix = append(prefix, byte(f))
		}
	}
	key := string(prefix) + "\x00" + pattern
	if v, ok := ruleRegexCache.Load(key); ok {
		return v.(compiledRule).re
	}
	src := pattern
	if len(prefix) > 0 {
		src = "(?" + string(prefix) + ")" + pattern
	}
	re, err := regexp.Compile(src)
	if err != nil {
		slog.Debug("bash interceptor: skipping rule with invalid regex", "pattern", pattern, "flags", flags, "err", err)
		re = nil
	}
	v, _ := ruleRegexCache.LoadOrStore(key, compiledRule{re: re})
	return v.(compiledRule).re
}

// ---- segments ----

// cmdSegment is one simple command the rules are tested against.
type cmdSegment struct {
	text string
	stmt *syntax.Stmt     // nil when the command did not parse
	call *syntax.CallExpr // nil when the command did not parse
	// pipedTo is the command name of the next pipeline stage ("" when the
	// output is not piped, "?" when the next stage is not a simple command).
	pipedTo string
}

// commandSegments splits command into segments (see CheckInterception).
func commandSegments(command string) []cmdSegment {
	f, err := parseBashSource(command)
	if err != nil {
		return []cmdSegment{{text: trimShellSpace(command)}}
	}
	var segs []cmdSegment
	for _, st := range f.Stmts {
		segs = appendStmtSegments(segs, command, st)
	}
	return segs
}

func appendStmtSegments(segs []cmdSegment, src string, st *syntax.Stmt) []cmdSegment {
	if st == nil {
		return segs
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return segs // only assignments and/or redirections
		}
		start := int(c.Args[0].Pos().Offset())
		end := int(c.End().Offset())
		for _, r := range st.Redirs {
			// Heredoc bodies are excluded: use the redirect's word, not r.End().
			if r.Word != nil {
				end = max(end, int(r.Word.End().Offset()))
			}
		}
		if start < 0 || end > len(src) || start >= end {
			return segs
		}
		return append(segs, cmdSegment{text: src[start:end], stmt: st, call: c})
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			n := len(segs)
			segs = appendStmtSegments(segs, src, c.X) // only the first stage
			if len(segs) == n+1 {
				segs[n].pipedTo = firstCommandName(c.Y)
			}
			return segs
		default: // && and ||
			segs = appendStmtSegments(segs, src, c.X)
			return appendStmtSegments(segs, src, c.Y)
		}
	case *syntax.Subshell:
		return appendStmtList(segs, src, c.Stmts)
	case *syntax.Block:
		return appendStmtList(segs, src, c.Stmts)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			segs = appendStmtList(segs, src, ic.Cond)
			segs = appendStmtList(segs, src, ic.Then)
		}
		return segs
	case *syntax.WhileClause:
		segs = appendStmtList(segs, src, c.Cond)
		return appendStmtList(segs, src, c.Do)
	case *syntax.ForClause:
		return appendStmtList(segs, src, c.Do)
	case *syntax.CaseClause:
		for _, item := range c.Items {
			segs = appendStmtList(segs, src, item.Stmts)
		}
		return segs
	case *syntax.TimeClause:
		return appendStmtSegments(segs, src, c.Stmt)
	case *syntax.FuncDecl:
		return appendStmtSegments(segs, src, c.Body)
	}
	return segs
}

// firstCommandName is the name of the command st starts with, "?" when it
// does not start with a simple command of a literal name.
func firstCommandName(st *syntax.Stmt) string {
	for st != nil {
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			if len(c.Args) > 0 {
				if name, ok := wordLiteral(c.Args[0]); ok {
					return name
				}
			}
			return "?"
		case *syntax.BinaryCmd:
			st = c.X
		default:
			return "?"
		}
	}
	return "?"
}

// contentFilters read file content handed to them; feeding them through a
// pipe is still reading or searching the file.
var contentFilters = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "rg": true, "ripgrep": true,
	"ag": true, "ack": true, "sed": true, "less": true, "more": true, "cat": true, "head": true, "tail": true}

func appendStmtList(segs []cmdSegment, src string, stmts []*syntax.Stmt) []cmdSegment {
	for _, st := range stmts {
		segs = appendStmtSegments(segs, src, st)
	}
	return segs
}

// ---- built-in checks ----

// segmentCheck names a built-in AST predicate of a default rule. It is an
// enum rather than a func so that InterceptorRule stays comparable.
type segmentCheck uint8

const (
	checkNone segmentCheck = iota
	checkWrite
	checkRead
	checkGrep
	checkFind
	checkSed
	checkPerl
	checkAwk
)

func (c segmentCheck) holds(seg cmdSegment) bool {
	st, call := seg.stmt, seg.call
	switch c {
	case checkWrite:
		return writesFile(st)
	case checkRead:
		// `cat f | wc -l` feeds a program, not the model: only a pipe into
		// a filter that shows the content (`cat f | grep x`) is a read.
		if seg.pipedTo != "" && !contentFilters[seg.pipedTo] {
			return false
		}
		// `cat <<EOF > f`, `cat > f <<'EOF'`, `cat <<< x`: not a file read.
		name, _ := wordLiteral(call.Args[0])
		return name != "cat" || (!hasHereInput(st) && !writesFile(st))
	case checkGrep:
		// grep over a here-string or heredoc filters text, not files.
		return !hasHereInput(st)
	case checkFind:
		if name, _ := wordLiteral(call.Args[0]); name == "fd" || name == "fdfind" {
			return fdFilters(call)
		}
		return anyLiteralArg(call, func(a string) bool {
			switch a {
			case "-name", "-iname", "-type", "--type", "-glob", "--glob":
				return true
			}
			return strings.HasPrefix(a, "--type=") || strings.HasPrefix(a, "--glob=")
		})
	case checkSed:
		return sedInPlace(call)
	case checkPerl:
		return perlInPlace(call)
	case checkAwk:
		return awkInPlace(call)
	}
	return true
}

// hasHereInput reports a heredoc or here-string on st.
func hasHereInput(st *syntax.Stmt) bool {
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			return true
		}
	}
	return false
}

// writesFile reports an output redirection of stdout (fd 1 or both streams)
// to a real file: `>`, `>>`, `>|`, `&>`, `&>>`, `>& file`. A `/dev/...` target
// (/dev/null, /dev/stderr, ...), an fd duplication (`>&2`, `2>&1`, `>&-`) and a
// redirect of another fd (`2>/dev/null`, `2> err.log`) are not writes. A target
// with an expansion (`> "$out"`) is a write.
func writesFile(st *syntax.Stmt) bool {
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "1" {
			continue
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		case syntax.DplOut:
			// `>&word` writes to a file only when word is not an fd number or `-`.
			if t, ok := wordLiteral(r.Word); !ok || t == "-" || allASCIIDigits(t) || r.N != nil {
				continue
			}
		default:
			continue
		}
		if t, ok := wordLiteral(r.Word); ok && strings.HasPrefix(t, "/dev/") {
			continue
		}
		return true
	}
	return false
}

func allASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// literalArgs returns the arguments after the command name; a word with an
// expansion is returned as "" with ok false.
func literalArgs(call *syntax.CallExpr) (args []string, lit []bool) {
	args = make([]string, 0, len(call.Args)-1)
	lit = make([]bool, 0, len(call.Args)-1)
	for _, w := range call.Args[1:] {
		s, ok := wordLiteral(w)
		args = append(args, s)
		lit = append(lit, ok)
	}
	return args, lit
}

func anyLiteralArg(call *syntax.CallExpr, pred func(string) bool) bool {
	args, lit := literalArgs(call)
	for i, a := range args {
		if lit[i] && pred(a) {
			return true
		}
	}
	return false
}

var (
	sedInPlaceFlag  = regexp.MustCompile(`^(?:-[nrsuzEb]*i|--in-place(?:=|$))`)
	perlInPlaceFlag = regexp.MustCompile(`^-[0-9acnpstuwlTUWX]*i`)
)

// sedInPlace reports a GNU/BSD sed in-place flag (`-i`, `-i.bak`, `-Ei`,
// `-ni`, `--in-place[=SUF]`) among the arguments, skipping the values of
// -e/-f/-l and stopping at `--`.
func sedInPlace(call *syntax.CallExpr) bool {
	args, lit := literalArgs(call)
	for i := 0; i < len(args); i++ {
		if !lit[i] {
			continue
		}
		a := args[i]
		switch {
		case a == "--":
			return false
		case a == "-e" || a == "-f" || a == "-l" || a == "--expression" || a == "--file" || a == "--line-length":
			i++ // the next word is a value
		case sedInPlaceFlag.MatchString(a):
			return true
		}
	}
	return false
}

// perlInPlace reports a perl in-place switch (`-i`, `-i.bak`, `-pi`, `-ni`,
// `-pi.bak`, `-0pi`) among perl's switches; `--input`-like words, `-Mstrict`
// and the code after `-e` do not count. Switches end at `--` or the first
// non-switch argument (the script or its arguments).
func perlInPlace(call *syntax.CallExpr) bool {
	args, lit := literalArgs(call)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !lit[i] || a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return false
		}
		if perlInPlaceFlag.MatchString(a) {
			return true
		}
		// A cluster ending in e/E (`-e`, `-pe`, `-lne`) takes the code as
		// the next word.
		if !strings.HasPrefix(a, "--") && (strings.HasSuffix(a, "e") || strings.HasSuffix(a, "E")) {
			i++
		}
	}
	return false
}

// awkInPlace reports gawk's in-place extension: `-i inplace`, `-iinplace`,
// `--include inplace`, `--include=inplace` (also `inplace.awk`).
func awkInPlace(call *syntax.CallExpr) bool {
	args, lit := literalArgs(call)
	isInplace := func(s string) bool { return s == "inplace" || s == "inplace.awk" }
	for i := 0; i < len(args); i++ {
		if !lit[i] {
			continue
		}
		a := args[i]
		switch {
		case a == "--":
			return false
		case a == "-i" || a == "--include":
			if i+1 < len(args) && lit[i+1] && isInplace(args[i+1]) {
				return true
			}
			i++
		case strings.HasPrefix(a, "-i") && isInplace(a[2:]),
			strings.HasPrefix(a, "--include=") && isInplace(a[len("--include="):]):
			return true
		}
	}
	return false
}

// fdValueFlags are fd's short flags that take a value, as the rest of their
// cluster or as the next word: -d depth, -E exclude, -c color, -j threads,
// -S size, -o owner, -C directory, -x/-X a command to run.
const fdValueFlags = "dEcjSoCxX"

// fdFilters reports an fd name, type or glob filter among the arguments:
// -t/--type, -e/--extension, -g/--glob, alone or in a cluster (`-tf`,
// `-HIt f`, `-ge`). Values of other flags are skipped, and the words after
// -x/--exec/-X/--exec-batch are the command fd runs, not its flags.
func fdFilters(call *syntax.CallExpr) bool {
	args, lit := literalArgs(call)
	for i := 0; i < len(args); i++ {
		if !lit[i] {
			continue
		}
		a := args[i]
		switch {
		case a == "--" || a == "--exec" || a == "--exec-batch":
			return false
		case a == "--type" || a == "--glob" || a == "--extension" ||
			strings.HasPrefix(a, "--type=") || strings.HasPrefix(a, "--extension="):
			return true
		case strings.HasPrefix(a, "--") || !strings.HasPrefix(a, "-") || a == "-":
		default:
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 't' || c == 'e' || c == 'g' {
					return true
				}
				if strings.IndexByte(fdValueFlags, c) >= 0 {
					if c == 'x' || c == 'X' {
						return false
					}
					if j == len(a)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
		}
	}
	return false
}
