package bash

import "testing"

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
