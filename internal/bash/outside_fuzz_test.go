package bash

import "testing"

// FuzzCheckOutside: the command is the model's, so CheckOutside (which
// decides whether a saved "always" rule runs it outside the sandbox) must
// never panic, and must be stricter than CheckPatterns: a line it lets out
// is one the same rules allow as a whole, and one the same patterns, as
// deny rules, deny (the outside matching is never looser than the
// patterns' own).
func FuzzCheckOutside(f *testing.F) {
	for _, s := range []string{
		"touch x", "touch x; touch y", "cd d && touch x", "PATH=/tmp/b touch x",
		"export PATH=.; touch x", "printf -v PATH x; touch x", "test -v 'a[$(id)]'; touch x",
		"touch $(( a[$(id)] ))", "[[ $x -eq 1 ]] && touch x", "touch x > ~/.bashrc",
		"for (( i=${PWD##*/}; 0; )); do :; done; touch x", "touch ${x@P}", "touch <<EOF\n$(id)\nEOF",
		"echo ok; touch x 2>/dev/null", "touch x | sh", "eval touch x", "touch \"$(curl e|sh)\"",
		"./touch x", "/usr/bin/touch x", "sudo touch x", "timeout 5 touch x", "find . -exec touch {} +",
		"touch x | xargs rm", "bash -c 'touch x'", "sh <<< 'touch x; rm y'", "touch x; $(printf rm) y",
	} {
		f.Add(s)
	}
	rules := []PatternRule{{Action: PatternAllow, Pattern: "touch"}}
	denyRules := []PatternRule{{Action: PatternDeny, Pattern: "touch"}}
	f.Fuzz(func(t *testing.T, command string) {
		o := CheckOutside(command, rules)
		if o.Action != PatternAllow {
			return
		}
		if p := CheckPatterns(command, rules); p.Action != PatternAllow {
			t.Errorf("CheckOutside lets %q out, CheckPatterns says %q", command, p.Action)
		}
		if p := CheckPatterns(command, denyRules); p.Action != PatternDeny {
			t.Errorf("CheckOutside lets %q out under allow touch, deny touch does not deny it", command)
		}
	})
}

// FuzzCheckPatterns: the matcher never panics on the model's command, and
// deny and ask rules fail closed: a command an allow rule allows is one
// the same pattern, as a deny rule, denies, and so is a command whose
// every part the strict matching sees.
func FuzzCheckPatterns(f *testing.F) {
	for _, s := range []string{
		"rm -rf x", "/bin/rm x", `\rm x`, "r''m x", "$(printf rm) x", "${X:-rm} x", "env -i rm x",
		"timeout -k 1 5 rm x", "xargs -I{} rm {}", "find . -exec rm {} \\;", "eval \"rm x\"", "bash -c 'rm x'",
		"sh <<< 'rm x'", "bash <<EOF\nrm x\nEOF", "echo 'rm x' | sh", "git -C . push", "f(){ rm x; }; f",
		"cat <(rm x)", "echo `rm x`", "echo rm", "grep rm f", "command -v rm", "echo a\nrm x\nfoo )",
		"sudo -u root -- nice -n 5 stdbuf -o0 rm x", "alias r='rm -rf'", "trap 'rm x' EXIT",
	} {
		f.Add(s, "rm")
		f.Add(s, "git push")
	}
	f.Fuzz(func(t *testing.T, command, pattern string) {
		if ValidPattern(pattern) != nil {
			return
		}
		allow := CheckPatterns(command, []PatternRule{{PatternAllow, pattern}})
		deny := CheckPatterns(command, []PatternRule{{PatternDeny, pattern}})
		ask := CheckPatterns(command, []PatternRule{{PatternAsk, pattern}})
		if allow.Action == PatternAllow && deny.Action != PatternDeny {
			t.Errorf("allow %q allows %q, deny %q does not deny it", pattern, command, pattern)
		}
		if (deny.Action == PatternDeny) != (ask.Action == PatternAsk) || deny.Command != ask.Command {
			t.Errorf("deny %q gives %+v, ask gives %+v on %q", pattern, deny, ask, command)
		}
		CheckOutside(command, []PatternRule{{PatternAllow, pattern}})
		RefusedCommand(command, command)
		CommandPrefix(command)
	})
}
