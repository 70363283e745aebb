package bash

import (
	"errors"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// patSegment is one simple command as the rules see it.
type patSegment struct {
	text    string   // its source, from the name to the last argument
	words   []string // its words: literal values, else their source text
	known   []bool   // words[i] is a literal value (no expansion, no glob)
	neutral bool     // one of neutralCommands without redirections
	literal bool     // every word is known
	// derived: the command another one runs (a wrapper's, eval's,
	// find -exec's, bash -c's…), not a simple command of the line itself.
	derived bool
	// open: more arguments follow at run time (xargs adds its input's).
	open bool
	// inner is the index of the word that names the command the segment
	// runs past its wrappers (sudo apt-get install: 1).
	inner int
}

// unknownSegment is code that is not known before it runs (eval "$x",
// bash -c "$x", curl … | sh): its command word is not a literal, so it
// counts as matching every deny and ask rule and no allow rule.
func unknownSegment(text string) patSegment {
	return patSegment{text: text, words: []string{text}, known: []bool{false}, derived: true}
}

// maxPatternDepth bounds nested code (bash -c in eval in bash -c…); code
// nested deeper is not known.
const maxPatternDepth = 4

// maxShownWords bounds the text of a command found in words that do not
// parse: it is named in a question.
const maxShownWords = 64

// maxPatternSegments bounds what one command may cost the matcher; past
// it the rest is not known.
const maxPatternSegments = 4096

// segCollector gathers the simple commands of a command line.
type segCollector struct {
	segs    []patSegment
	control bool // an if, while, until, for, case or function
	top     bool // leave out what is inside $(...), <(...) and `...`
}

func (c *segCollector) add(s patSegment) {
	if len(c.segs) == maxPatternSegments {
		c.segs = append(c.segs, unknownSegment(s.text))
	}
	if len(c.segs) > maxPatternSegments {
		return
	}
	c.segs = append(c.segs, s)
}

// patternSegments lists command's simple commands (see CheckPatterns);
// top leaves out those inside $(...) and <(...). control reports an if,
// while, until, for, case or function in command.
func patternSegments(command string, depth int, top bool) (segs []patSegment, control bool) {
	c := &segCollector{top: top}
	c.code(command, depth, false)
	return c.segs, c.control
}

// code collects the commands of src, shell code run at nesting depth;
// derived marks them as run by another command.
func (c *segCollector) code(src string, depth int, derived bool) {
	if depth > maxPatternDepth {
		c.add(unknownSegment(src))
		return
	}
	f, err := parseBashSource(src)
	if err != nil {
		c.unparsable(src, err, depth, derived)
		return
	}
	// Which statement feeds which through a pipe: a shell reading its
	// stdin runs what the stage before it prints.
	feeds := map[*syntax.Stmt]*syntax.Stmt{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			feeds[b.Y] = lastStmt(b.X)
		}
		return true
	})
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl:
			c.control = true
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return !c.top
		case *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause:
			c.quotedSubst(src, n)
		case *syntax.ParamExp:
			if n.Index != nil {
				c.quotedSubst(src, n.Index)
			}
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && n.Exp.Word.Lit() == "P" {
				// ${x@P} expands x as a prompt, $(…) included.
				c.add(unknownSegment(src[n.Pos().Offset():n.End().Offset()]))
			}
		case *syntax.SglQuoted:
			if subscriptSubst.MatchString(n.Value) {
				c.add(unknownSegment(n.Value))
			}
		case *syntax.Lit:
			if v := strings.ReplaceAll(n.Value, `\`, ""); subscriptSubst.MatchString(v) {
				c.add(unknownSegment(v))
			}
		case *syntax.Assign:
			if n.Index != nil {
				c.quotedSubst(src, n.Index)
			}
			if n.Name != nil && codeVars[n.Name.Value] != "" && !n.Append && n.Index == nil {
				v, known := "", true
				switch {
				case n.Array != nil:
					known = false
				case n.Value != nil:
					v, known = wordLiteral(n.Value)
					if !known {
						v = src[n.Value.Pos().Offset():n.Value.End().Offset()]
					}
				}
				for _, cw := range codeVarCode(n.Name.Value, v, known) {
					if cw.known {
						c.code(cw.text, depth+1, true)
					} else {
						c.add(unknownSegment(cw.text))
					}
				}
			}
		case *syntax.Stmt:
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				cw := callWords(src, call)
				seg := cw.segment(0, len(cw.words))
				seg.derived = derived
				seg.neutral = neutralCommands[seg.words[0]] && seg.known[0] && len(n.Redirs) == 0
				seg.inner = innermost(cw)
				c.add(seg)
				c.runs(cw, 0, stdinOf(src, n, feeds[n]), false, depth)
			}
		}
		return true // words may hold $(...) with commands of their own
	})
}

// lastStmt is the statement of x whose output a pipe takes: x itself, or
// the last stage of a pipeline x.
func lastStmt(x *syntax.Stmt) *syntax.Stmt {
	for {
		b, ok := x.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			return x
		}
		x = b.Y
	}
}

// unparsable: bash runs the lines before a syntax error, and none from
// it on; their words are checked as one simple command, as before. But
// the parser is stricter than bash in places (bash runs `! ! rm x` and
// `time ! rm x`), so the words may be run from any of them: every word
// also starts a command of its own (derived, so it is no part of an
// allow), quotes and backslashes taken out and operators split off, and
// one with an expansion is not known.
func (c *segCollector) unparsable(src string, err error, depth int, derived bool) {
	var pe syntax.ParseError
	if errors.As(err, &pe) && pe.Pos.Line() > 1 {
		lines := strings.SplitAfter(src, "\n")
		if n := int(pe.Pos.Line()) - 1; n < len(lines) {
			c.code(strings.Join(lines[:n], ""), depth+1, derived)
		}
	}
	t := trimShellSpace(src)
	if t == "" {
		return
	}
	words := strings.Fields(t)
	known := make([]bool, len(words))
	for i := range known {
		known[i] = true
	}
	c.add(patSegment{text: t, words: words, known: known, literal: true, derived: derived})
	toks := strings.FieldsFunc(t, func(r rune) bool {
		return strings.ContainsRune(shellSpace+";&|()<>{},`", r)
	})
	plain := make([]string, len(toks))
	pknown := make([]bool, len(toks))
	lit := make([]bool, len(toks)+1) // lit[i]: every word from i on is known
	lit[len(toks)] = true
	unquote := strings.NewReplacer("'", "", `"`, "", `\`, "")
	for i := len(toks) - 1; i >= 0; i-- {
		plain[i] = unquote.Replace(toks[i])
		pknown[i] = !strings.Contains(toks[i], "$")
		lit[i] = lit[i+1] && pknown[i]
	}
	for i := range toks {
		if len(c.segs) > maxPatternSegments {
			return
		}
		if plain[i] == "" {
			continue
		}
		c.add(patSegment{text: strings.Join(toks[i:min(i+maxShownWords, len(toks))], " "), words: plain[i:], known: pknown[i:],
			literal: lit[i], derived: true})
	}
}

// cmdWords are a simple command's words with where they are in src.
type cmdWords struct {
	src        string
	words      []string
	known      []bool
	offs, ends []int
}

func callWords(src string, call *syntax.CallExpr) cmdWords {
	n := len(call.Args)
	cw := cmdWords{src: src, words: make([]string, n), known: make([]bool, n), offs: make([]int, n), ends: make([]int, n)}
	for i, a := range call.Args {
		cw.offs[i], cw.ends[i] = int(a.Pos().Offset()), int(a.End().Offset())
		if v, ok := wordLiteral(a); ok {
			cw.words[i], cw.known[i] = v, true
		} else if a.Lit() == "[" {
			// No glob: a bracket expression needs its `]` in the word.
			cw.words[i], cw.known[i] = "[", true
		} else {
			cw.words[i] = src[cw.offs[i]:cw.ends[i]]
		}
	}
	return cw
}

// segment is the simple command of words lo…hi-1.
func (cw cmdWords) segment(lo, hi int) patSegment {
	s := patSegment{text: cw.src[cw.offs[lo]:cw.ends[hi-1]], words: cw.words[lo:hi], known: cw.known[lo:hi], literal: true}
	for _, k := range s.known {
		s.literal = s.literal && k
	}
	return s
}

// stdin is what a command reads on its standard input, when that is
// shell code a shell there would run.
type stdin struct {
	code    string // the code
	present bool   // it reads code from a here-doc, here-string or pipe
	known   bool   // code is known (else: what runs is not known)
}

// stdinOf is the stdin of stmt's command: a here-doc or here-string of
// its own, else what the stage before it in a pipe prints (known only
// for echo and printf of literal words).
func stdinOf(src string, stmt, feeder *syntax.Stmt) stdin {
	for _, r := range stmt.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				return stdin{present: true, known: true}
			}
			return stdin{code: hdocBody(src, r), present: true, known: true}
		case syntax.WordHdoc:
			if v, ok := wordLiteral(r.Word); ok {
				return stdin{code: v, present: true, known: true}
			}
			return stdin{code: src[r.Word.Pos().Offset():r.Word.End().Offset()], present: true}
		case syntax.RdrIn, syntax.RdrInOut:
			return stdin{} // a file: opaque, as a script is
		}
	}
	if feeder == nil {
		return stdin{}
	}
	text := src[feeder.Pos().Offset():feeder.End().Offset()]
	if call, ok := feeder.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 && len(feeder.Redirs) == 0 {
		cw := callWords(src, call)
		if s := cw.segment(0, len(cw.words)); s.literal && (s.words[0] == "echo" || s.words[0] == "printf") {
			args := s.words[1:]
			for len(args) > 0 && s.words[0] == "echo" && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E") {
				args = args[1:]
			}
			return stdin{code: strings.Join(args, " "), present: true, known: true}
		}
	}
	return stdin{code: text, present: true}
}

// hdocBody is the source of r's here-document without its closing
// delimiter line.
func hdocBody(src string, r *syntax.Redirect) string {
	body := src[r.Hdoc.Pos().Offset():r.Hdoc.End().Offset()]
	delim, _ := wordLiteral(r.Word)
	trimmed := strings.TrimRight(body, "\n")
	if i := strings.LastIndexByte(trimmed, '\n'); delim != "" && strings.TrimLeft(trimmed[i+1:], "\t") == delim {
		return trimmed[:i+1]
	}
	return body
}

// commandName is the name a command word runs by: its base name, so
// /bin/rm and ./rm are rm to deny and ask rules.
func commandName(w string) string {
	if strings.HasSuffix(w, "/") || !strings.Contains(w, "/") {
		return w
	}
	return path.Base(w)
}

// shells run code given with -c, in a here-doc or here-string, or piped.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "rbash": true}

// runs adds the commands that cw's words lo… run in turn: a wrapper's
// command, eval's and alias's and trap's code, find -exec's commands, a
// shell's code.
func (c *segCollector) runs(cw cmdWords, lo int, in stdin, open bool, depth int) {
	if lo >= len(cw.words) || !cw.known[lo] || len(c.segs) > maxPatternSegments {
		return
	}
	words := cw.words[lo:]
	name := commandName(words[0])
	if spec, ok := wrappers[name]; ok {
		u := spec.unwrap(cw, lo)
		for _, code := range u.code {
			if code.known {
				c.code(code.text, depth+1, true)
			} else {
				c.add(unknownSegment(code.text))
			}
		}
		if u.start > lo && u.start < len(cw.words) {
			seg := cw.segment(u.start, len(cw.words))
			seg.derived, seg.open = true, open || spec.open
			if spec.joined {
				c.joined(cw, u.start, depth)
				return
			}
			c.add(seg)
			if spec.open {
				in = stdin{} // xargs reads its input itself
			}
			c.runs(cw, u.start, in, seg.open, depth)
		}
		return
	}
	switch name {
	case "eval":
		if len(words) > 1 {
			c.joined(cw, lo+1, depth)
		}
	case "alias":
		for i := lo + 1; i < len(cw.words); i++ {
			if !cw.known[i] {
				c.add(unknownSegment(cw.words[i]))
			} else if _, v, ok := strings.Cut(cw.words[i], "="); ok {
				c.code(v, depth+1, true)
			}
		}
	case "trap":
		for i := lo + 1; i < len(cw.words); i++ {
			if w := cw.words[i]; cw.known[i] && (w == "--" || (strings.HasPrefix(w, "-") && w != "-")) {
				continue
			}
			c.inner(cw, i, depth)
			break
		}
	case "find":
		c.findExec(cw, lo, depth)
	case "git":
		c.git(cw, lo, depth)
	case "mapfile", "readarray", "compgen", "complete":
		// -C names code run for each line read, or each completion.
		for i := lo + 1; i < len(cw.words); i++ {
			w := cw.words[i]
			switch {
			case !cw.known[i]:
				c.add(unknownSegment(w))
			case w == "-C" && i+1 < len(cw.words):
				i++
				c.inner(cw, i, depth)
			case strings.HasPrefix(w, "-C") && len(w) > 2:
				c.code(w[2:], depth+1, true)
			}
		}
	case "fc":
		// Runs commands from the history, not known; -l only lists.
		list := false
		for i := lo + 1; i < len(cw.words); i++ {
			list = list || cw.known[i] && strings.HasPrefix(cw.words[i], "-") && strings.Contains(cw.words[i], "l")
		}
		if !list {
			c.add(unknownSegment(cw.segment(lo, len(cw.words)).text))
		}
	case "source", ".":
		// A script file is opaque, as `bash script` is, named literally
		// or not ("$HOME/.cargo/env"); the code of a substitution
		// (<(echo rm x)) or of stdin is not known, or is the here-doc's.
		if lo+1 < len(cw.words) {
			w := cw.words[lo+1]
			switch {
			case !cw.known[lo+1] && (strings.Contains(w, "(") || strings.Contains(w, "`") || in.present):
				c.add(unknownSegment(w))
			case stdinPaths[cw.words[lo+1]]:
				c.stdinCode(in, depth)
			}
		}
	case "hash":
		// hash -p /bin/rm r: r now runs /bin/rm.
		for i := lo + 1; i+1 < len(cw.words); i++ {
			if cw.words[i] == "-p" {
				seg := cw.segment(i+1, len(cw.words))
				seg.derived = true
				c.add(seg)
				break
			}
		}
	default:
		if shells[name] {
			c.shell(cw, lo, in, depth)
		}
	}
}

// gitValued are git's options that take the next word as their value.
var gitValued = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--super-prefix": true, "--config-env": true, "--exec-path": true}

// git adds what git runs itself: an alias set with -c (one whose
// setting is not a literal is not known); submodule foreach's command,
// rebase's --exec and bisect run's command are code of their own. An
// alias from a git config file is not seen (see README "Patterns").
func (c *segCollector) git(cw cmdWords, lo int, depth int) {
	i := lo + 1
	for ; i < len(cw.words) && cw.known[i] && strings.HasPrefix(cw.words[i], "-"); i++ {
		w := cw.words[i]
		name, v, hasValue := strings.Cut(w, "=")
		if !gitValued[name] || hasValue && name != "-c" {
			if (name == "--config-env") && strings.HasPrefix(strings.ToLower(v), "alias.") {
				c.add(unknownSegment(cw.segment(lo, len(cw.words)).text))
			}
			continue
		}
		if i+1 >= len(cw.words) {
			return
		}
		i++
		switch {
		case name == "-c" && !cw.known[i], name == "--config-env" && strings.HasPrefix(strings.ToLower(cw.words[i]), "alias."):
			// An alias whose value is not known until git reads it.
			c.add(unknownSegment(cw.segment(lo, len(cw.words)).text))
		case name == "-c" && strings.HasPrefix(strings.ToLower(cw.words[i]), "alias."):
			// Taken as run, whatever the command's name: "!code" is
			// shell code, else the git command it stands for.
			_, v, _ := strings.Cut(cw.words[i], "=")
			if code, ok := strings.CutPrefix(v, "!"); ok {
				c.code(code, depth+1, true)
			} else if v != "" {
				c.code("git "+v, depth+1, true)
			}
		}
	}
	if i >= len(cw.words) || !cw.known[i] {
		return
	}
	args := cw.words[i+1:]
	switch cw.words[i] {
	case "submodule":
		for j := i + 1; j < len(cw.words); j++ {
			if !cw.known[j] {
				return
			}
			if cw.words[j] == "foreach" {
				k := j + 1
				for k < len(cw.words) && cw.known[k] && (cw.words[k] == "--recursive" || cw.words[k] == "--quiet" || cw.words[k] == "-q") {
					k++
				}
				if k < len(cw.words) {
					c.joined(cw, k, depth)
				}
				return
			}
		}
	case "rebase":
		for j, a := range args {
			k := i + 1 + j
			switch {
			case a == "-x" || a == "--exec":
				if k+1 < len(cw.words) {
					c.inner(cw, k+1, depth)
				}
			case strings.HasPrefix(a, "--exec="):
				c.code(strings.TrimPrefix(a, "--exec="), depth+1, true)
			case strings.HasPrefix(a, "-x") && cw.known[k]:
				c.code(a[2:], depth+1, true)
			}
		}
	case "bisect":
		if len(args) > 1 && args[0] == "run" {
			seg := cw.segment(i+2, len(cw.words))
			seg.derived = true
			c.add(seg)
			c.runs(cw, i+2, stdin{}, false, depth)
		}
	}
}

// subscriptSubst finds, in quoted text, a subscript (a name then [, or
// a compound assignment's [k]=) holding a command substitution: bash runs it wherever it evaluates the text as a name or
// a number (test -v, printf -v, read, let, declare -i or -n, $((…)),
// [[ -eq ]], a variable's value in arithmetic), so such text is code
// not known before it runs.
var subscriptSubst = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*\[[^\]]*(\$\(|\x60)|\[[^\]]*(\$\(|\x60)[^\]]*\]=`)

// quotedSubst: in arithmetic (a subscript included), quoted text with a
// command substitution is run too (a['$(rm x)']=1), not known before
// it runs.
func (c *segCollector) quotedSubst(src string, n syntax.Node) {
	found := false
	syntax.Walk(n, func(x syntax.Node) bool {
		var lit string
		switch x := x.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false // code the walk of the line checks
		case *syntax.SglQuoted:
			lit = x.Value
		case *syntax.Lit:
			lit = strings.ReplaceAll(x.Value, `\`, "")
		}
		found = found || strings.Contains(lit, "$(") || strings.Contains(lit, "`")
		return !found
	})
	if found {
		c.add(unknownSegment(src[n.Pos().Offset():n.End().Offset()]))
	}
}

// codeVars are the variables whose value a shell runs: as a script file
// (BASH_ENV, ENV: not known), as code (PROMPT_COMMAND), or expands, $(…)
// included (the prompts; PS4 under xtrace).
var codeVars = map[string]string{"BASH_ENV": "file", "ENV": "file", "PROMPT_COMMAND": "code",
	"PS0": "prompt", "PS1": "prompt", "PS2": "prompt", "PS3": "prompt", "PS4": "prompt"}

// codeVarCode is the code of variable name set to v (known: v is a
// literal); nothing for an empty value or a prompt with no substitution.
func codeVarCode(name, v string, known bool) []codeWord {
	switch {
	case v == "":
		return nil
	case !known || codeVars[name] == "file":
		return []codeWord{{name + "=" + v, false}}
	case codeVars[name] == "code":
		return []codeWord{{v, true}}
	case strings.Contains(v, "$(") || strings.Contains(v, "`"):
		return []codeWord{{name + "=" + v, false}}
	}
	return nil
}

// inner adds the code of word i (a -c script, env -S's string).
func (c *segCollector) inner(cw cmdWords, i int, depth int) {
	if !cw.known[i] {
		c.add(unknownSegment(cw.words[i]))
		return
	}
	c.code(cw.words[i], depth+1, true)
}

// joined adds the code of words from… joined by spaces, as eval and
// watch run them.
func (c *segCollector) joined(cw cmdWords, from int, depth int) {
	for i := from; i < len(cw.words); i++ {
		if !cw.known[i] {
			c.add(unknownSegment(cw.src[cw.offs[from]:cw.ends[len(cw.words)-1]]))
			return
		}
	}
	c.code(strings.Join(cw.words[from:], " "), depth+1, true)
}

// findExec adds the commands of find's -exec, -execdir, -ok and -okdir.
func (c *segCollector) findExec(cw cmdWords, lo int, depth int) {
	for i := lo + 1; i < len(cw.words); i++ {
		switch cw.words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start, end := i+1, i+1
		for end < len(cw.words) && !(cw.known[end] && (cw.words[end] == ";" || cw.words[end] == "+")) {
			end++
		}
		if end > start {
			seg := cw.segment(start, end)
			seg.derived = true
			c.add(seg)
			c.runs(cmdWords{src: cw.src, words: cw.words[:end], known: cw.known[:end], offs: cw.offs[:end], ends: cw.ends[:end]},
				start, stdin{}, false, depth)
		}
		i = end
	}
}

// shell adds the code a shell runs: its -c script, else, when it has no
// script file operand, its stdin's code.
func (c *segCollector) shell(cw cmdWords, lo int, in stdin, depth int) {
	readsStdin := true
	for i := lo + 1; i < len(cw.words); i++ {
		w := cw.words[i]
		if !cw.known[i] {
			c.add(unknownSegment(w)) // an option or a script: not known
			return
		}
		switch {
		case w == "--" || w == "-":
			readsStdin = i+1 >= len(cw.words)
		case w == "--rcfile" || w == "--init-file" || w == "-o" || w == "+o" || w == "-O" || w == "+O":
			i++
			continue
		case strings.HasPrefix(w, "--"):
			continue
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+"):
			if strings.ContainsRune(w[1:], 'c') && w[0] == '-' {
				if i+1 < len(cw.words) {
					c.inner(cw, i+1, depth)
				}
				return
			}
			if strings.ContainsRune(w[1:], 's') {
				readsStdin = true
				break
			}
			continue
		default:
			readsStdin = stdinPaths[w] // else a script file: opaque
		}
		break
	}
	if readsStdin {
		c.stdinCode(in, depth)
	}
}

// stdinPaths name a command's own stdin.
var stdinPaths = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true, "-": true}

// stdinCode adds the code a shell reads from in.
func (c *segCollector) stdinCode(in stdin, depth int) {
	if !in.present {
		return
	}
	if !in.known {
		c.add(unknownSegment(in.code))
		return
	}
	c.code(in.code, depth+1, true)
}

// wrapper is how a command that runs another one takes its options.
type wrapper struct {
	valued   string   // short options that take a value
	long     []string // long options that take a value (--opt value)
	operands int      // words before the command (timeout's duration)
	assigns  bool     // a lone - is an option (env -: -i)
	code     string   // short options whose value is shell code (su -c)
	codeLong []string // the same, long
	lookup   string   // short options that make it run nothing (command -v)
	open     bool     // the command gets more arguments from input (xargs)
	joined   bool     // the command is its words joined, run by a shell (watch)
}

// wrappers run the command in their arguments; deny and ask rules see
// through them (allow rules do not: `sudo x` is not `x`).
var wrappers = map[string]wrapper{
	"sudo": {valued: "ugUCDhprtTR", long: []string{"--user", "--group", "--other-user", "--close-from", "--chdir",
		"--host", "--prompt", "--role", "--type", "--command-timeout", "--chroot"}},
	"doas":     {valued: "uC"},
	"pkexec":   {long: []string{"--user"}},
	"env":      {valued: "uCa", long: []string{"--unset", "--chdir", "--argv0"}, assigns: true, code: "S", codeLong: []string{"--split-string"}},
	"nohup":    {},
	"setsid":   {},
	"nice":     {valued: "n", long: []string{"--adjustment"}},
	"ionice":   {valued: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"stdbuf":   {valued: "ioe", long: []string{"--input", "--output", "--error"}},
	"timeout":  {valued: "ks", long: []string{"--kill-after", "--signal"}, operands: 1},
	"chroot":   {long: []string{"--userspec", "--groups"}, operands: 1},
	"taskset":  {operands: 1},
	"flock":    {valued: "wE", long: []string{"--timeout", "--conflict-exit-code"}, operands: 1, code: "c", codeLong: []string{"--command"}},
	"unbuffer": {},
	"command":  {lookup: "vV"},
	"builtin":  {},
	"exec":     {valued: "a"},
	"time":     {valued: "fo", long: []string{"--format", "--output"}},
	"xargs": {valued: "adEILnPs", long: []string{"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args",
		"--max-procs", "--max-chars", "--process-slot-var"}, open: true},
	"busybox":  {},
	"watch":    {valued: "nq", long: []string{"--interval", "--equexit"}, joined: true},
	"su":       {valued: "gGsw", long: []string{"--group", "--supp-group", "--shell", "--whitelist-environment"}, code: "c", codeLong: []string{"--command", "--session-command"}},
	"runuser":  {valued: "ugGsw", long: []string{"--user", "--group", "--supp-group", "--shell", "--whitelist-environment"}, code: "c", codeLong: []string{"--command", "--session-command"}},
	"unshare":  {},
	"strace":   {valued: "abeEIoOpPsSuUX"},
	"parallel": {valued: "jaSEIdn", long: []string{"--jobs", "--arg-file", "--sshlogin", "--delimiter", "--max-args"}, open: true},
	"ssh":      {valued: "BbcDEeFIiJLlmOopQRSWw", operands: 1, joined: true},
	"script":   {valued: "ETIOBm", code: "c", codeLong: []string{"--command"}},
}

// assignWord is a NAME=value word.
var assignWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// innermost is the index of the word naming the command that cw runs,
// past its wrappers.
func innermost(cw cmdWords) int {
	lo := 0
	for lo < len(cw.words) && cw.known[lo] {
		spec, ok := wrappers[commandName(cw.words[lo])]
		if !ok || spec.joined {
			break
		}
		u := spec.unwrap(cw, lo)
		if u.start <= lo || u.start >= len(cw.words) {
			break
		}
		lo = u.start
	}
	return lo
}

// unwrapped is where a wrapper's command starts (0: none) and the shell
// code its options carry (su -c CODE, env -S CODE).
type unwrapped struct {
	start int
	code  []codeWord
}

// codeWord is shell code in a word; known is false when the word is not
// a literal.
type codeWord struct {
	text  string
	known bool
}

// unwrap finds the command of the wrapper at cw.words[lo]: past its
// options, their values, its operands and, for env, NAME=value words.
// Options stop at the first other word, as these wrappers take them.
func (w wrapper) unwrap(cw cmdWords, lo int) unwrapped {
	var u unwrapped
	operands := 0
	for i := lo + 1; i < len(cw.words); i++ {
		word := cw.words[i]
		if !cw.known[i] {
			u.start = i // the command, or what decides it: not known
			return u
		}
		switch {
		case word == "--":
			u.start = i + 1 + (w.operands - operands)
			return u
		case word == "-" && w.assigns:
			// env -: -i
		case operands == 0 && strings.HasPrefix(word, "--"):
			name, _, hasValue := strings.Cut(word, "=")
			if slices.Contains(w.codeLong, name) {
				if v := word[len(name):]; hasValue {
					u.code = append(u.code, codeWord{v[1:], true})
				} else if i+1 < len(cw.words) {
					i++
					u.code = append(u.code, codeWord{cw.words[i], cw.known[i]})
				}
				continue
			}
			if !hasValue && slices.Contains(w.long, name) {
				i++
			}
		case operands == 0 && strings.HasPrefix(word, "-") && len(word) > 1:
			for j := 1; j < len(word); j++ {
				ch := rune(word[j])
				if strings.ContainsRune(w.lookup, ch) {
					return unwrapped{}
				}
				isCode := strings.ContainsRune(w.code, ch)
				if !isCode && !strings.ContainsRune(w.valued, ch) {
					continue
				}
				switch {
				case j+1 < len(word) && isCode:
					u.code = append(u.code, codeWord{word[j+1:], true})
				case j+1 < len(word):
				case i+1 < len(cw.words):
					i++ // the option's value
					if isCode {
						u.code = append(u.code, codeWord{cw.words[i], cw.known[i]})
					}
				}
				break
			}
		case assignWord.MatchString(word):
			// NAME=value: env's, sudo's; before another wrapper's command
			// it fails to run, and skipping it only checks more. A
			// variable a shell runs (BASH_ENV…) is code.
			if name, v, _ := strings.Cut(word, "="); codeVars[name] != "" {
				u.code = append(u.code, codeVarCode(name, v, true)...)
			}
		case operands < w.operands:
			operands++
		default:
			u.start = i
			return u
		}
	}
	return u
}
