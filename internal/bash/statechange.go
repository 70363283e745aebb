package bash

import (
	"os/exec"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// neutralBuiltins cannot change the shell's state (cwd, variables,
// functions, aliases, options) whatever their arguments.
var neutralBuiltins = map[string]bool{
	"true": true, "false": true, "echo": true, "test": true, "[": true, ":": true, "pwd": true,
	"type": true, "jobs": true, "kill": true, "wait": true, "times": true, "help": true, "logout": false,
}

// MayChangeState reports whether command could change the session state
// when run in the shell itself: it assigns variables, defines functions,
// calls a state builtin (cd, export, source, set, alias, …), calls a
// function or alias the session knows (functions), or does anything the
// parser cannot see through (a command name that is not a literal, a
// parse error). A command made only of programs on PATH and neutral
// builtins cannot, and its run skips the capture. Pipelines and subshells
// are not special-cased: erring on the side of capturing costs only time.
func MayChangeState(command string, functions []string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return true
	}
	known := make(map[string]bool, len(functions))
	for _, fn := range functions {
		known[fn] = true
	}
	changes := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if changes {
			return false
		}
		switch n := n.(type) {
		case *syntax.FuncDecl, *syntax.LetClause, *syntax.DeclClause:
			changes = true
		case *syntax.BinaryArithm:
			switch n.Op {
			case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
				syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
				syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn:
				changes = true
			}
		case *syntax.UnaryArithm:
			changes = n.Op == syntax.Inc || n.Op == syntax.Dec
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				changes = true
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				changes = len(n.Assigns) > 0 // `X=1` alone sets the shell's variable
				return !changes
			}
			name := n.Args[0].Lit()
			switch {
			case name == "" || strings.ContainsAny(name, "=$`"):
				changes = true
			case known[name]:
				changes = true
			case neutralBuiltins[name]:
			case name == "printf":
				changes = len(n.Args) > 1 && strings.HasPrefix(n.Args[1].Lit(), "-v")
			case strings.Contains(name, "/"):
				// A path runs a program: no shell state.
			default:
				if _, err := exec.LookPath(name); err != nil || shellBuiltin(name) {
					changes = true // a builtin that may, an alias, a function of the rc
				}
			}
		}
		return !changes
	})
	return changes
}

// shellBuiltin lists the bash builtins that may change state even though a
// program of the same name may exist on PATH (cd, read, …).
func shellBuiltin(name string) bool {
	switch name {
	case "cd", "pushd", "popd", "dirs", "export", "unset", "declare", "typeset", "local", "readonly",
		"alias", "unalias", "set", "shopt", "source", ".", "eval", "exec", "enable", "builtin", "command",
		"hash", "umask", "ulimit", "trap", "read", "mapfile", "readarray", "getopts", "let", "shift",
		"exit", "return", "break", "continue", "bind", "complete", "compgen", "compopt", "disown", "fc",
		"history", "bg", "fg", "suspend":
		return true
	}
	return false
}

// CommandNames lists the command words of command, in order and once each:
// the names a function or an alias could stand in for. A command that
// does not parse gives its first word.
func CommandNames(command string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		if w := strings.Fields(command); len(w) > 0 {
			add(w[0])
		}
		return out
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			add(c.Args[0].Lit())
		}
		return true
	})
	return out
}
