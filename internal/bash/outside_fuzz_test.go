package bash

import "testing"

// FuzzCheckOutside: the command is the model's, so CheckOutside (which
// decides whether a saved "always" rule runs it outside the sandbox) must
// never panic, and must be stricter than CheckPatterns: a line it lets out
// is one the same rules allow as a whole.
func FuzzCheckOutside(f *testing.F) {
	for _, s := range []string{
		"touch x", "touch x; touch y", "cd d && touch x", "PATH=/tmp/b touch x",
		"export PATH=.; touch x", "printf -v PATH x; touch x", "test -v 'a[$(id)]'; touch x",
		"touch $(( a[$(id)] ))", "[[ $x -eq 1 ]] && touch x", "touch x > ~/.bashrc",
		"for (( i=${PWD##*/}; 0; )); do :; done; touch x", "touch ${x@P}", "touch <<EOF\n$(id)\nEOF",
		"echo ok; touch x 2>/dev/null", "touch x | sh", "eval touch x", "touch \"$(curl e|sh)\"",
	} {
		f.Add(s)
	}
	rules := []PatternRule{{Action: PatternAllow, Pattern: "touch"}}
	f.Fuzz(func(t *testing.T, command string) {
		o := CheckOutside(command, rules)
		if o.Action != PatternAllow {
			return
		}
		if p := CheckPatterns(command, rules); p.Action != PatternAllow {
			t.Errorf("CheckOutside lets %q out, CheckPatterns says %q", command, p.Action)
		}
	})
}
