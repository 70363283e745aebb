package bash

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// NormalizedCommand is the result of NormalizeCommand: the trimmed command
// without a trailing `| head`/`| tail` stage, and that stage's line limit.
type NormalizedCommand struct {
	Command   string // command to run, limit removed, trimmed at both ends (interior whitespace kept exactly)
	HeadLines int    // 0 = none
	TailLines int    // 0 = none
}

// shellSpace is the set of characters trimmed from both ends of a command.
// Only ASCII whitespace is trimmed: a leading U+00A0 (say) is part of a shell
// word, and trimming it would change which program runs.
const shellSpace = " \t\n\r\v\f"

func trimShellSpace(s string) string { return strings.Trim(s, shellSpace) }

// parseBashSource parses src as a bash program. The parser is cheap to create and
// not safe for concurrent use, so every call gets its own.
func parseBashSource(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// NormalizeCommand extracts one trailing `| head -n N` / `| tail -n N` stage
// (forms -n N, -nN, -N) from raw into a structured line limit and returns the
// trimmed command without it.
//
// Why a real parser: the reference implementation used one regex anchored at
// the end of the text. It matched the second `|` of `a || head -n 5` and left
// the broken command `a |`; it extracted `head -n0`, which the limit code then
// treats as "no limit", so the user got all the output; and it cannot tell a
// pipe from a `|` inside quotes, a heredoc body or a comment. Here the command
// is parsed with mvdan.cc/sh (bash dialect) and the decision is made on the
// syntax tree; the text that is kept is cut from the original source by byte
// offset (never re-printed, the printer canonicalises whitespace and quoting).
//
// The limit is extracted only when all of these hold, otherwise the command is
// returned trimmed and otherwise unchanged:
//   - raw parses as bash;
//   - the last top-level statement is a pipeline (`|`, not `|&`), or an
//     `&&`/`||` list that ends in one, and neither the pipeline nor the list
//     is negated (`!`), backgrounded (`&`) or redirected as a whole. Only the
//     end of the text is considered: in `cd x; ls | head -5` and in
//     `make && ./app | head -5` the limit is taken, and it then applies to the
//     output of the whole command, make's included (spec §1.1; the
//     reference's regex took it from both);
//   - the pipeline's last stage is a simple command whose name is the bare word
//     `head` or `tail`, with no assignments and no redirections, and whose
//     arguments are exactly one line count: `-n N`, `-nN` or `-N`, N a positive
//     decimal literal. Anything else (`-c`, `-f`, `--lines=`, `+N`, `$N`, a file
//     argument, a zero count) keeps the stage;
//   - nothing but whitespace follows that stage: a trailing `;`, `&&`, another
//     statement or a comment keeps the stage. (A `|` at the start of a new line
//     is a bash syntax error and does not parse; `a |` + newline + `head -3` and
//     a backslash-newline before the `|` are fine.)
//
// Only one stage is extracted: `a | head -n 3 | tail -n 2` becomes
// `a | head -n 3` with TailLines 2. Trimming removes ASCII whitespace at both
// ends only; interior whitespace, including heredoc bodies, is kept byte for byte.
func NormalizeCommand(raw string) NormalizedCommand {
	n, _ := normalize(raw)
	return n
}

// normalize is NormalizeCommand that also returns the command the bash tool
// runs. With a limit extracted, that is NormalizedCommand.Command with the
// removed stage's upstream in a subshell, `cd x; ( ls )`: bash ran it in one
// as a pipeline stage, so a builtin or a loop there still cannot end or
// change the session shell (`exit 3 | tail -n 1`), and closing the output
// after N lines ends that subshell, not the session shell (Tool.Execute).
// Without a limit the two are the same.
func normalize(raw string) (NormalizedCommand, string) {
	n, run, _ := normalizeMarked(raw, "")
	return n, run
}

// finalMark is the mark normalizeMarked's command prints where its final
// pipeline starts: an OSC sequence no program prints, with the run's nonce.
func finalMark(nonce string) []byte { return []byte("\x1b]6974;" + nonce + "\x07") }

// normalizeMarked is normalize that, given a nonce (letters and digits) and
// a limit extracted from a command with statements before its final pipeline
// (`a; b | head -n 2`), makes the final pipeline's subshell print
// finalMark(nonce) first: `a; ( {…printf mark;} 2>/dev/null; b )`. The
// engine's headStop reads it to know where the final pipeline starts, the
// only part it may cut early (spec §1.1). marked reports that the mark is in run; without statements
// before the final pipeline there is none, and the whole output may be cut.
// The mark is printed with stderr on /dev/null so that `set -x` does not
// trace it into the output.
func normalizeMarked(raw, nonce string) (out NormalizedCommand, run string, marked bool) {
	trimmed := trimShellSpace(raw)
	out = NormalizedCommand{Command: trimmed}
	if !strings.Contains(trimmed, "head") && !strings.Contains(trimmed, "tail") {
		return out, trimmed, false // fast path: nothing to extract, skip the parse
	}
	f, err := parseBashSource(raw)
	if err != nil || len(f.Stmts) == 0 {
		return out, trimmed, false
	}
	pipe := trailingPipeline(f.Stmts[len(f.Stmts)-1])
	if pipe == nil {
		return out, trimmed, false
	}
	isHead, n, ok := headTailStage(pipe.Y)
	if !ok {
		return out, trimmed, false
	}
	// The stage must be the very last thing in the text.
	yEnd := int(pipe.Y.End().Offset())
	if yEnd > len(raw) || trimShellSpace(raw[yEnd:]) != "" {
		return out, trimmed, false
	}
	// Cut at the end of the upstream statement (not at the `|`, so that a
	// backslash-newline before the pipe does not leave a dangling `\`).
	xPos, xEnd := int(pipe.X.Pos().Offset()), int(pipe.X.End().Offset())
	if xEnd <= 0 || xEnd > int(pipe.OpPos.Offset()) || xPos >= xEnd {
		return out, trimmed, false // e.g. a heredoc body after the stage: not a plain suffix
	}
	cmd := trimShellSpace(raw[:xEnd])
	if cmd == "" {
		return out, trimmed, false
	}
	// Defensive: the cut must still be a valid command on its own.
	if _, err := parseBashSource(cmd); err != nil {
		return out, trimmed, false
	}
	out.Command = cmd
	if isHead {
		out.HeadLines = n
	} else {
		out.TailLines = n
	}
	if nonce != "" && trimShellSpace(raw[:xPos]) != "" {
		run = trimShellSpace(raw[:xPos] + "( { \\builtin printf '\\033]6974;%s\\007' " + nonce + ";} 2>/dev/null; " + raw[xPos:xEnd] + " )")
		if _, err := parseBashSource(run); err == nil {
			return out, run, true
		}
	}
	// The spaces keep `( (cd x && make) )` from reading as `((` arithmetic.
	run = trimShellSpace(raw[:xPos] + "( " + raw[xPos:xEnd] + " )")
	if _, err := parseBashSource(run); err != nil {
		run = cmd
	}
	return out, run, false
}

// trailingPipeline returns the pipeline that ends st, through the right
// operands of `&&`/`||` lists, or nil when st does not end in one that
// could be cut (negated, backgrounded or redirected as a whole).
func trailingPipeline(st *syntax.Stmt) *syntax.BinaryCmd {
	for {
		if st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0 {
			return nil
		}
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		switch {
		case !ok:
			return nil
		case b.Op == syntax.AndStmt || b.Op == syntax.OrStmt:
			st = b.Y
		case b.Op == syntax.Pipe:
			return b
		default:
			return nil
		}
	}
}

// headTailStage reports whether st is a bare `head`/`tail` call with exactly a
// positive literal line count, and returns which one and the count.
func headTailStage(st *syntax.Stmt) (isHead bool, n int, ok bool) {
	if st == nil || st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0 {
		return false, 0, false
	}
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(call.Args) < 2 || len(call.Args) > 3 {
		return false, 0, false
	}
	name, plain := plainLit(call.Args[0])
	if !plain || (name != "head" && name != "tail") {
		return false, 0, false
	}
	args := make([]string, 0, 2)
	for _, w := range call.Args[1:] {
		s, lit := wordLiteral(w)
		if !lit {
			return false, 0, false // $N, $(...), globs are not literal counts
		}
		args = append(args, s)
	}
	var digits string
	switch {
	case len(args) == 2 && args[0] == "-n":
		digits = args[1]
	case len(args) == 1 && strings.HasPrefix(args[0], "-n"):
		digits = args[0][2:]
	case len(args) == 1 && strings.HasPrefix(args[0], "-"):
		digits = args[0][1:]
	default:
		return false, 0, false
	}
	n, ok = positiveDecimal(digits)
	return name == "head", n, ok
}

// positiveDecimal parses s when it is only ASCII digits (no sign, no space) and
// its value is a positive int.
func positiveDecimal(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// plainLit returns the value of a word that is a single unquoted literal.
func plainLit(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return "", false
	}
	return l.Value, true
}

// wordLiteral returns the shell value of a word made only of literal text:
// unquoted literals, single-quoted strings and double-quoted strings without
// expansions. Unquoted literals containing glob or brace characters, and any
// word with an expansion, are not literal. Backslash escapes in unquoted text
// are resolved; the value is what the command would see as its argument.
func wordLiteral(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{") {
				return "", false
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false // $'...' has its own escapes; treat as dynamic
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, inner := range p.Parts {
				l, ok := inner.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescapeUnquoted removes the backslashes of an unquoted literal.
func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that are special inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
