package bash

import (
	"strings"
	"testing"
)

func TestCheckPatterns(t *testing.T) {
	rules := []PatternRule{
		{PatternAllow, "git push"},
		{PatternAllow, "git status"},
		{PatternAsk, "npm publish"},
		{PatternDeny, "/^rm -rf /"},
		{PatternDeny, "git push --force"},
		{PatternAsk, "/CURL/i"},
	}
	for _, c := range []struct {
		cmd     string
		action  PatternAction
		rule    string
		matched string
	}{
		{"git push origin main", PatternAllow, `{"allow": "git push"}`, "git push origin main"},
		{"git pushx", "", "", ""},
		{"git   'push'", PatternAllow, `{"allow": "git push"}`, "git   'push'"},
		{"git status && git push", PatternAllow, `{"allow": "git status"}`, "git status"},
		{"cd sub && git push", PatternAllow, `{"allow": "git push"}`, "git push"},
		// allow needs every simple command
		{"git push && rm -f x", "", "", ""},
		{"git push | tee log", "", "", ""},
		{"git push && echo done; pwd", PatternAllow, `{"allow": "git push"}`, "git push"},
		{"git push && echo done > log", "", "", ""},
		{"git push && echo $(curl x)", PatternAsk, `{"ask": "/CURL/i"}`, "echo $(curl x)"},
		{"git push && echo $(date)", "", "", ""},
		{"cd x > /tmp/f; git push", "", "", ""},
		// deny and ask look at every stage, list member, nesting
		{"echo hi | rm -rf /tmp/x", PatternDeny, `{"deny": "/^rm -rf /"}`, "rm -rf /tmp/x"},
		{"true && (cd a; { npm publish --tag x; })", PatternAsk, `{"ask": "npm publish"}`, "npm publish --tag x"},
		{"echo $(git push --force origin)", PatternDeny, `{"deny": "git push --force"}`, "git push --force origin"},
		{"for i in 1; do FOO=1 npm publish; done", PatternAsk, `{"ask": "npm publish"}`, "npm publish"},
		{"f() { rm -rf /; }", PatternDeny, `{"deny": "/^rm -rf /"}`, "rm -rf /"},
		{"sudo -u root git push --force", PatternDeny, `{"deny": "git push --force"}`, "git push --force"},
		{"env A=1 nohup npm publish", PatternAsk, `{"ask": "npm publish"}`, "npm publish"},
		{`bash -c 'ls; rm -rf /home'`, PatternDeny, `{"deny": "/^rm -rf /"}`, "rm -rf /home"},
		{"git push --force && npm publish", PatternDeny, `{"deny": "git push --force"}`, "git push --force"},
		// ask beats allow
		{"git push && npm publish", PatternAsk, `{"ask": "npm publish"}`, "npm publish"},
		{"curl -s x", PatternAsk, `{"ask": "/CURL/i"}`, "curl -s x"},
		// a wrapper is allowed only by a rule of its own
		{"sudo git push", "", "", ""},
		// quoting: a literal "rm -rf /" argument is no command
		{"echo 'rm -rf /'", "", "", ""},
		// unparsable: the words of the whole command
		{"npm publish (", PatternAsk, `{"ask": "npm publish"}`, "npm publish ("},
	} {
		m := CheckPatterns(c.cmd, rules)
		if m.Action != c.action || (c.action != "" && (m.Rule.String() != c.rule || m.Command != c.matched)) {
			t.Errorf("%q: got %q %s on %q; want %q %s on %q", c.cmd, m.Action, m.Rule, m.Command, c.action, c.rule, c.matched)
		}
	}
	if m := CheckPatterns("rm -rf /", nil); m.Action != "" {
		t.Errorf("no rules decided %q", m.Action)
	}
}

func TestCommandPrefix(t *testing.T) {
	for cmd, want := range map[string]string{
		"git push origin main":       "git push",
		"touch /etc/x":               "touch",
		"cd sub && npm install left": "npm install",
		"sudo apt-get install x":     "apt-get install",
		"python3 x.py":               "python3",
		"FOO=1 make -j4":             "make",
		"$EDITOR x":                  "",
		"go test ./...":              "go test",
		"echo hi > /etc/motd":        "echo hi",
		"echo start; make all":       "make all",
		"echo $(date); make":         "make",
		"if true; then make; fi":     "",
		"f() { make; }; f":           "",
		"/usr/bin/touch /etc/x":      "/usr/bin/touch",
	} {
		if got := CommandPrefix(cmd); got != want {
			t.Errorf("CommandPrefix(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestValidPattern(t *testing.T) {
	for p, ok := range map[string]bool{"git push": true, "/^rm/": true, "/x/i": true, "/(/": false, "  ": false, "/": true} {
		if err := ValidPattern(p); (err == nil) != ok {
			t.Errorf("ValidPattern(%q) = %v", p, err)
		}
	}
}

// BenchmarkCheckPatterns is the cost rules add to each model command: a
// list of five commands against ten rules.
func BenchmarkCheckPatterns(b *testing.B) {
	var rules []PatternRule
	for _, p := range []string{"git push --force", "/^rm -rf /", "npm publish", "/curl .*\\| *sh/", "docker run"} {
		rules = append(rules, PatternRule{PatternDeny, p}, PatternRule{PatternAsk, p + " x"})
	}
	cmd := `cd sub && go test ./... 2>&1 | tail -n 20; git status --short && echo "$(date)" > log`
	for b.Loop() {
		if m := CheckPatterns(cmd, rules); m.Action != "" {
			b.Fatal(m)
		}
	}
}

// TestCommandPrefixAmbiguous: a line of several commands with different
// prefixes gives none: which one the user would allow is not known.
func TestCommandPrefixAmbiguous(t *testing.T) {
	for cmd, want := range map[string]string{
		"mkdir -p out && touch /x/f": "",
		"git status; git push":       "git",
		"touch a; touch b":           "touch",
		"sudo touch a; touch b":      "touch",
		"timeout 5 make -j4":         "make",
		"echo $(rm x); make":         "make",
	} {
		if got := CommandPrefix(cmd); got != want {
			t.Errorf("CommandPrefix(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestRefusedCommand: "always" saves the command whose error showed the
// refusal, not the first of the line, so the rule saved lets that command
// run next time.
func TestRefusedCommand(t *testing.T) {
	for _, c := range []struct{ cmd, line, prefix, text string }{
		{"cd sub && rm ../f", "rm: cannot remove '../f': Read-only file system", "rm", "rm ../f"},
		{"mkdir -p out && touch /x/f", "touch: cannot touch '/x/f': Read-only file system", "touch", "touch /x/f"},
		{"git status && git push origin", "git: cannot lock ref: Permission denied", "git", ""},
		{"touch notes", "touch: cannot touch 'notes': Read-only file system", "touch", "touch notes"},
		{"ls; /usr/bin/touch /x/f", "/usr/bin/touch: cannot touch '/x/f': Read-only file system", "/usr/bin/touch", "/usr/bin/touch /x/f"},
		{"timeout 5 rm /x/f", "rm: cannot remove '/x/f': Read-only file system", "rm", "timeout 5 rm /x/f"},
		{"for f in a b; do rm /x/$f; done", "rm: cannot remove '/x/a': Read-only file system", "rm", "rm /x/$f"},
		{"./approvaltool run $$", "./approvaltool: line 1: /x/blocked.sh: Permission denied", "./approvaltool run", "./approvaltool run $$"},
		// a shell's own line: a redirection, which no saved rule lets out
		{"echo x > ../f", "bash: line 1: ../f: Read-only file system", "", ""},
		{"touch a && echo x > /x/f", "bash: line 1: /x/f: Read-only file system", "", ""},
		// a line that names no command of the line: the only command's
		{"npm install left-pad", "npm error EROFS: read-only file system, open '/x/f'", "npm install", "npm install left-pad"},
		{"cd sub && npm install", "Error: EROFS: read-only file system, open '/x/f'", "npm install", "npm install"},
		{"make && npm install", "Error: EROFS: read-only file system", "", ""},
		// not a literal: nothing to save
		{"$TOOL /x/f", "tool: cannot write '/x/f': Permission denied", "", ""},
	} {
		prefix, text := RefusedCommand(c.cmd, c.line)
		if prefix != c.prefix || text != c.text {
			t.Errorf("RefusedCommand(%q, %q) = %q, %q; want %q, %q", c.cmd, c.line, prefix, text, c.prefix, c.text)
		}
	}
}

// TestCommandDirs: where a command may print a relative path from, the
// likeliest first.
func TestCommandDirs(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"echo x > ../f", []string{"/w"}},
		{"cd sub && rm ../f", []string{"/w/sub", "/w"}},
		{"cd a; cd ../b; touch x", []string{"/w/b", "/w/a", "/w"}},
		{"cd -P /etc && touch x", []string{"/etc", "/w"}},
		{"cd \"$d\" && touch x", []string{"/w"}},
		// a subshell's cd is taken as if it lasted: one candidate too many
		{"(cd sub; touch ../x); cd sub", []string{"/w/sub/sub", "/w/sub", "/w"}},
		{"cd ~ && touch x", []string{"/w"}},
	} {
		if got := CommandDirs(c.cmd, "/w"); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("CommandDirs(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}
