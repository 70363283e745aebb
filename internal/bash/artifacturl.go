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
	quoteNone   quoting = iota // a bare word: insert a single-quoted path
	quoteSingle                // inside '…': the path goes in as is
	quoteDouble                // inside "…" or a heredoc body: as is, specials escaped
	quoteRaw                   // a quoted heredoc's body: exactly as is
)

// expandArtifactURLs replaces every artifact://N in command with the
// absolute path of that artifact, quoted for where it stands, so the
// command reads the file. An unknown id is an error for the model (nothing
// runs). Comments are left alone.
func expandArtifactURLs(command string, res ArtifactResolver) (string, error) {
	if res == nil || !strings.Contains(command, "artifact://") {
		return command, nil
	}
	type repl struct {
		start, end int
		q          quoting
	}
	var repls []repl
	add := func(text string, off int, q quoting) {
		for _, m := range artifactURLRE.FindAllStringIndex(text, -1) {
			repls = append(repls, repl{off + m[0], off + m[1], q})
		}
	}
	f, err := parseBashSource(command)
	if err != nil {
		// Not valid shell: bare words are the best guess.
		add(command, 0, quoteNone)
	} else {
		hdocs := map[*syntax.Word]quoting{}
		syntax.Walk(f, func(n syntax.Node) bool {
			if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
				q := quoteDouble
				if r.Word != nil && r.Word.Lit() == "" {
					q = quoteRaw // <<'EOF' or <<"EOF": the body is not expanded
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
				// Value excludes the opening quote (and a $ for $'…').
				off := int(x.Pos().Offset()) + 1
				if x.Dollar {
					off++
				}
				add(x.Value, off, quoteSingle)
			case *syntax.CmdSubst, *syntax.ProcSubst:
				if q != quoteNone {
					// "$(…)" starts a new, unquoted context.
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
					syntax.Walk(p, func(c syntax.Node) bool { return walk(c, quoteDouble) })
				}
				return false
			}
			return true
		}
		syntax.Walk(f, func(n syntax.Node) bool { return walk(n, quoteNone) })
	}
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
		case quoteSingle:
			b.WriteString(strings.ReplaceAll(path, "'", `'\''`))
		case quoteDouble:
			b.WriteString(escapeDouble(path))
		case quoteRaw:
			b.WriteString(path)
		}
		last = r.end
	}
	b.WriteString(command[last:])
	return b.String(), nil
}

func shellSingleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// escapeDouble escapes what is special inside double quotes.
func escapeDouble(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '$' || r == '`' || r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
