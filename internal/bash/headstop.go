package bash

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellBuiltins run inside the session shell itself: one of them writing to
// an output closed early would kill the shell with SIGPIPE, not a child.
var shellBuiltins = map[string]bool{}

func init() {
	for _, b := range strings.Fields(`. : [ alias bg bind break builtin caller cd command compgen complete
		compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts
		hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray
		readonly return set shift shopt source suspend test times trap true type typeset ulimit
		umask unalias unset wait`) {
		shellBuiltins[b] = true
	}
}

// stopSafeStmt reports whether closing the output after N lines behaves
// like the `| head -n N` NormalizeCommand removed from st: st must be a
// pipeline (whose stages bash runs in subshells) or one external command,
// so the SIGPIPE ends only what head would have ended.
func stopSafeStmt(st *syntax.Stmt) bool {
	if st.Background || st.Negated || st.Coprocess || len(st.Redirs) > 0 {
		return false
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		return c.Op == syntax.Pipe || c.Op == syntax.PipeAll
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		name := c.Args[0].Lit()
		return name != "" && !shellBuiltins[name]
	}
	return false
}
