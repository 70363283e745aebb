package bash

import (
	"regexp"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ArtifactResolver turns "artifact://N" into the artifact's file path. An
// ArtifactAllocator that also resolves lets commands name earlier output
// (`wc -l artifact://3`).
type ArtifactResolver interface {
	Resolve(url string) (string, error)
}

// artifactURLRE matches an artifact URL in a command; the id is checked by
// the resolver (only digits are ever accepted there).
var artifactURLRE = regexp.MustCompile(`artifact://[0-9]+`)

// quoting is the shell context an artifact URL appears in.
type quoting int

const (
	quoteNone    quoting = iota // a bare word: insert a single-quoted path
	quoteLiteral                // inside '…', "…" or a quoted heredoc: the shell reads it as text, so do we
	quoteHeredoc                // an unquoted heredoc's body: the path, its $ ` \ escaped
)

// expandArtifactURLs replaces every artifact://N that the shell would see as
// (part of) a word of its own with the absolute path of that artifact,
// quoted for where it stands, so the command reads the file: a bare word,
// a word inside $(…), `…` or <(…) (also within double quotes, which start a
// new unquoted context there), and an unquoted heredoc's body. Inside single
// or double quotes and in a quoted heredoc it is literal text and stays as
// written: `echo "see artifact://7"` prints that text and needs no artifact
// 7, and `cat > notes <<'EOF'` writes the URL, not a path of this machine.
// An unknown id among the expanded ones is an error for the model (nothing
// runs). Comments are left alone, and so is a command that does not parse:
// what is quoted is unknown there, and bash reports the syntax error.
func expandArtifactURLs(command string, res ArtifactResolver) (string, error) {
	if res == nil || !strings.Contains(command, "artifact://") {
		return command, nil
	}
	f, err := parseBashSource(command)
	if err != nil {
		return command, nil
	}
	type repl struct {
		start, end int
		q          quoting
	}
	var repls []repl
	add := func(text string, off int, q quoting) {
		if q == quoteLiteral {
			return
		}
		for _, m := range artifactURLRE.FindAllStringIndex(text, -1) {
			repls = append(repls, repl{off + m[0], off + m[1], q})
		}
	}
	hdocs := map[*syntax.Word]quoting{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
			q := quoteHeredoc
			if r.Word != nil && r.Word.Lit() == "" {
				q = quoteLiteral // <<'EOF' or <<"EOF": the body is not expanded
			}
			hdocs[r.Hdoc] = q
		}
		return true
	})
	var walk func(n syntax.Node, q quoting) bool
	walk = func(n syntax.Node, q quoting) bool {
		switch x := n.(type) {
		case *syntax.Word:
			if hq, ok := hdocs[x]; ok {
				for _, p := range x.Parts {
					syntax.Walk(p, func(c syntax.Node) bool { return walk(c, hq) })
				}
				return false
			}
		case *syntax.Lit:
			add(x.Value, int(x.Pos().Offset()), q)
		case *syntax.SglQuoted:
			return false // '…' and $'…' are text
		case *syntax.CmdSubst, *syntax.ProcSubst:
			if q != quoteNone {
				// "$(…)" and a heredoc's $(…) start a new, unquoted context.
				syntax.Walk(x, func(c syntax.Node) bool {
					if c == x {
						return true
					}
					return walk(c, quoteNone)
				})
				return false
			}
		case *syntax.DblQuoted:
			for _, p := range x.Parts {
				syntax.Walk(p, func(c syntax.Node) bool { return walk(c, quoteLiteral) })
			}
			return false
		}
		return true
	}
	syntax.Walk(f, func(n syntax.Node) bool { return walk(n, quoteNone) })
	sort.Slice(repls, func(i, j int) bool { return repls[i].start < repls[j].start })
	var b strings.Builder
	last := 0
	for _, r := range repls {
		if r.start < last || r.end > len(command) {
			continue
		}
		path, err := res.Resolve(command[r.start:r.end])
		if err != nil {
			return "", err
		}
		b.WriteString(command[last:r.start])
		switch r.q {
		case quoteNone:
			b.WriteString(shellSingleQuote(path))
		case quoteHeredoc:
			b.WriteString(escapeHeredoc(path))
		}
		last = r.end
	}
	b.WriteString(command[last:])
	return b.String(), nil
}

func shellSingleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// escapeHeredoc escapes what is special in an unquoted heredoc's body ($,
// ` and \; a double quote is plain text there).
func escapeHeredoc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '$' || r == '`' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
