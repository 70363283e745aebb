package bash

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var allTools = []string{"bash", "read", "grep", "find", "edit", "write"}

func TestDefaultInterceptorRules(t *testing.T) {
	tests := []struct {
		cmd  string
		tool string // "" = not blocked
	}{
		// readers
		{"cat README.md", "read"},
		{"  head -20 main.go", "read"},
		{"tail -n 5 log.txt", "read"},
		{"less file", "read"},
		{"more file", "read"},
		{"cat", ""},        // no whitespace after the name
		{"category x", ""}, // word boundary
		{"catalog", ""},    // word boundary
		{"cd x && cat f", "read"},
		{"cd x; cat f", "read"},
		{"false || cat f", "read"},
		{"make\ncat out.log", "read"},
		{"(cd x && cat f)", "read"},
		{"{ cat f; }", "read"},
		{"if true; then cat f; fi", "read"},
		{"for f in *.go; do head -5 $f; done", "read"},
		{"cat x | grep foo", "read"}, // first stage only
		{"cat f | wc -l", ""},        // feeds a program, not the model
		{"head -c 100 /dev/urandom | base64", ""},
		{"cat f | head -5", "read"},
		{"cat a b | sort | uniq -c", ""},
		{"cat f > /dev/null", "read"}, // not a write, but a read
		{"cat <<< hello", ""},         // here-string: not a file read
		{"cat <<EOF | python3\nprint(1)\nEOF", ""},
		{"FOO=1 cat f", "read"},

		// search
		{"grep -rn foo .", "grep"},
		{"rg foo", "grep"},
		{"ripgrep foo", "grep"},
		{"ag foo", "grep"},
		{"ack foo", "grep"},
		{"FOO=1 grep x .", "grep"},
		{"LC_ALL=C A=b rg x", "grep"},
		{"ls | grep foo", ""},
		{"git log | rg fix | head", ""},
		{"grep foo <<< \"$x\"", ""},
		{"echo $(grep x f)", ""}, // command substitution is not a segment
		{"grepx foo", ""},

		// find
		{"find . -name '*.go'", "find"},
		{"find -iname x", "find"},
		{"find src -type f", "find"},
		{"fd --type f", "find"},
		{"fd --type=f", "find"},
		{"fd --glob '*.md'", "find"},
		{"locate -name x", "find"},
		{"find . -mtime -1", ""},
		{"find . -newer '-name'x", ""},
		{"fd foo", ""},
		// fd's short flags mean the same as --type and --glob.
		{"fd -t f x", "find"},
		{"fd -g '*.go'", "find"},
		{"fd -tf x", "find"},
		{"fd -HI -t d build", "find"},
		{"fd -HIt f", "find"},
		{"fd -e go", "find"},
		{"fd --extension=go", "find"},
		{"fdfind -t f x", "find"},
		{"cd src && fd -g '*.go'", "find"},
		{"fd -H foo", ""},
		{"fd -d 2 foo", ""},             // max depth, no filter
		{"fd -E target foo", ""},        // exclude takes a value
		{"fd -Et foo", ""},              // exclude pattern "t"
		{"fd foo -x sed -e s/a/b/", ""}, // -e belongs to the command fd runs
		{"fd -- -t", ""},

		// sed -i
		{"sed -i 's/a/b/' f", "edit"},
		{"sed -i.bak 's/a/b/' f", "edit"},
		{"sed -Ei 's/a+/b/' f", "edit"},
		{"sed -ni '/x/p' f", "edit"},
		{"sed --in-place 's/a/b/' f", "edit"},
		{"sed --in-place=.orig 's/a/b/' f", "edit"},
		{"sed -e 's/a/b/' -i f", "edit"},
		{"sed 's/a/b/' f", ""},
		{"sed -n 's/ -i/x/p' f", ""}, // -i inside quotes
		{"sed -e -i f", ""},          // -i is the script
		{"cat f | sed -i s/a/b/", "read"},

		// perl -i
		{"perl -i -pe 's/a/b/' f", "edit"},
		{"perl -pi -e 's/a/b/' f", "edit"},
		{"perl -ni -e 'print' f", "edit"},
		{"perl -pi.bak -e 's/a/b/' f", "edit"},
		{"perl -i.bak -pe 's/a/b/' f", "edit"},
		{"perl -0pi -e 's/a/b/' f", "edit"},
		{"perl --input f", ""},
		{"perl -Mstrict -e 'print 1'", ""},
		{"perl -e 'print \"-i\"'", ""},
		{"perl -e 'x' -- -i", ""},
		{"perl script.pl -i", ""},
		{"perl -I/lib/inc x.pl", ""},

		// awk -i inplace
		{"awk -i inplace '{print}' f", "edit"},
		{"gawk -i inplace '{print}' f", "edit"},
		{"gawk -iinplace '{print}' f", "edit"},
		{"gawk --include=inplace '{print}' f", "edit"},
		{"awk '{print}' f", ""},
		{"awk '{print \"-i inplace\"}' f", ""},

		// shell-redirect writes
		{"echo hi > f.txt", "write"},
		{"echo hi >> f.txt", "write"},
		{"echo hi >| f.txt", "write"},
		{"echo hi &> f.txt", "write"},
		{"echo hi>f.txt", "write"},
		{"printf '%s\\n' a > f", "write"},
		{"echo x > \"$OUT\"", "write"},
		{"> f echo hi", ""}, // redirect before the name: segment text starts at the name
		{"echo hi 1> f", "write"},
		{"echo x >& out.txt", "write"},
		{"cat <<EOF > f\nhello\nEOF", "write"},
		{"cat > notes.md <<'EOF'\n# notes | head -5\nEOF", "write"},
		{"cat<<EOF>f\nx\nEOF", ""}, // no whitespace after cat: the regexes need it
		{"cat f > out", "write"},
		{"cd x && echo hi > f", "write"},
		{"echo \"a -> b\"", ""},
		{"echo 'x > y'", ""},
		{"echo x 2>&1", ""},
		{"echo x >&2", ""},
		{"echo x 1>&2", ""},
		{"echo x >/dev/null", ""},
		{"echo x > /dev/stderr", ""},
		{"echo x 2>/dev/null", ""},
		{"echo x 2> err.log", ""},
		{"cat f > /dev/null", "read"},
		{"echo hi | tee f", ""},
		{"ls > f", ""},

		// other
		{"", ""},
		{"   ", ""},
		{"ls -la", ""},
		{"go test ./...", ""},
		{"git log --oneline | head -5", ""},
		{"x=1", ""},
		{"echo $((1 + 2)) > f", "write"},
	}
	rules := DefaultInterceptorRules()
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			got := CheckInterception(tt.cmd, rules, allTools)
			if got.Blocked != (tt.tool != "") || got.SuggestedTool != tt.tool {
				t.Fatalf("CheckInterception(%q) = blocked %v tool %q, want tool %q", tt.cmd, got.Blocked, got.SuggestedTool, tt.tool)
			}
			if !got.Blocked {
				if got != (InterceptionResult{}) {
					t.Fatalf("non-blocked result not zero: %#v", got)
				}
				return
			}
			if got.Rule == nil || got.Rule.Tool != tt.tool {
				t.Fatalf("rule %#v", got.Rule)
			}
			if got.Message != got.Rule.Message {
				t.Fatalf("message %q", got.Message)
			}
		})
	}
}

func TestInterceptionNeedsAvailableTool(t *testing.T) {
	rules := DefaultInterceptorRules()
	if got := CheckInterception("cat f", rules, []string{"bash", "read"}); !got.Blocked || got.SuggestedTool != "read" {
		t.Fatalf("with read: %#v", got)
	}
	if got := CheckInterception("cat f", rules, []string{"bash", "grep", "write"}); got.Blocked {
		t.Fatalf("without read: %#v", got)
	}
	if got := CheckInterception("cat f", rules, nil); got.Blocked {
		t.Fatalf("no tools: %#v", got)
	}
	// Heredoc write: with write → write; with only read → not a read.
	hd := "cat <<EOF > f\nx\nEOF"
	if got := CheckInterception(hd, rules, []string{"read", "write"}); got.SuggestedTool != "write" {
		t.Fatalf("heredoc write: %#v", got)
	}
	if got := CheckInterception(hd, rules, []string{"read"}); got.Blocked {
		t.Fatalf("heredoc write blocked as read: %#v", got)
	}
	// cat f > /dev/null: a read, never a write.
	if got := CheckInterception("cat f > /dev/null", rules, []string{"write"}); got.Blocked {
		t.Fatalf("/dev/null write: %#v", got)
	}
	// A later rule still applies when an earlier rule's tool is missing:
	// `cat f; grep x .` with only grep available.
	if got := CheckInterception("cat f; grep x .", rules, []string{"grep"}); got.SuggestedTool != "grep" {
		t.Fatalf("second rule: %#v", got)
	}
}

func TestInterceptionRuleOrderAndCopy(t *testing.T) {
	rules := []InterceptorRule{
		{Pattern: `^ls\b`, Tool: "a", Message: "first"},
		{Pattern: `^ls\b`, Tool: "b", Message: "second"},
	}
	got := CheckInterception("ls", rules, []string{"a", "b"})
	if got.Rule == nil || got.Rule.Message != "first" {
		t.Fatalf("first rule should win: %#v", got)
	}
	got.Rule.Message = "mutated"
	if rules[0].Message != "first" {
		t.Fatal("result Rule aliases the caller's slice")
	}
	got = CheckInterception("ls", rules, []string{"b"})
	if got.Rule == nil || got.Rule.Message != "second" {
		t.Fatalf("inactive first rule must be skipped: %#v", got)
	}
	// Rules are exactly the ones given: empty blocks nothing.
	if got := CheckInterception("cat f", nil, allTools); got.Blocked {
		t.Fatalf("nil rules: %#v", got)
	}
}

func TestInterceptionInvalidRegexSkipped(t *testing.T) {
	rules := []InterceptorRule{
		{Pattern: `(?<!x)cat`, Tool: "read", Message: "lookbehind"}, // not RE2
		{Pattern: `(unclosed`, Tool: "read", Message: "bad"},
		{Pattern: `^cat\s`, Tool: "read", Message: "good"},
	}
	for range 2 { // second round hits the cache
		got := CheckInterception("cat f", rules, []string{"read"})
		if !got.Blocked || got.Rule.Message != "good" {
			t.Fatalf("got %#v", got)
		}
	}
	if got := CheckInterception("cat f", rules[:2], []string{"read"}); got.Blocked {
		t.Fatalf("only invalid rules: %#v", got)
	}
}

func TestInterceptionFlags(t *testing.T) {
	rule := InterceptorRule{Pattern: `^make\s+deploy`, Tool: "deploy", Message: "use deploy"}
	if got := CheckInterception("MAKE deploy", []InterceptorRule{rule}, []string{"deploy"}); got.Blocked {
		t.Fatal("matched without i flag")
	}
	rule.Flags = "i"
	if got := CheckInterception("MAKE deploy", []InterceptorRule{rule}, []string{"deploy"}); !got.Blocked {
		t.Fatal("i flag ignored")
	}
	rule.Flags = "gi" // unknown g ignored
	if got := CheckInterception("Make Deploy", []InterceptorRule{rule}, []string{"deploy"}); !got.Blocked {
		t.Fatal("gi flags")
	}
	// "s": dot matches newline inside one segment (a multi-line argument).
	rs := InterceptorRule{Pattern: `^echo 'a.b`, Tool: "t", Message: "m"}
	cmd := "echo 'a\nb'"
	if got := CheckInterception(cmd, []InterceptorRule{rs}, []string{"t"}); got.Blocked {
		t.Fatal("dot matched newline without s")
	}
	rs.Flags = "s"
	if got := CheckInterception(cmd, []InterceptorRule{rs}, []string{"t"}); !got.Blocked {
		t.Fatal("s flag ignored")
	}
	// "m": ^ matches after a newline inside one segment.
	rm := InterceptorRule{Pattern: `^b'`, Tool: "t", Message: "m"}
	if got := CheckInterception(cmd, []InterceptorRule{rm}, []string{"t"}); got.Blocked {
		t.Fatal("^ matched mid-text without m")
	}
	rm.Flags = "m"
	if got := CheckInterception(cmd, []InterceptorRule{rm}, []string{"t"}); !got.Blocked {
		t.Fatal("m flag ignored")
	}
}

func TestInterceptionConfiguredRulesPerSegment(t *testing.T) {
	// A settings rule is regex-only but is still tested per segment.
	rule := InterceptorRule{Pattern: `^\s*npm\s+install\b`, Tool: "pkg", Message: "use pkg"}
	for cmd, want := range map[string]bool{
		"npm install x":           true,
		"cd web && npm install":   true,
		"FOO=1 npm install":       true,
		"echo npm install":        false,
		"ls | npm install":        false,
		"echo 'a' && npm install": true,
	} {
		if got := CheckInterception(cmd, []InterceptorRule{rule}, []string{"pkg"}); got.Blocked != want {
			t.Errorf("%q: blocked=%v want %v", cmd, got.Blocked, want)
		}
	}
	// A regex-only copy of the write rule does see `echo "a -> b"` as a write;
	// that is why the built-in rule carries a syntax check.
	w := DefaultInterceptorRules()[0]
	data, _ := json.Marshal(w)
	var fromSettings InterceptorRule
	if err := json.Unmarshal(data, &fromSettings); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "check") {
		t.Fatalf("check leaked into JSON: %s", data)
	}
	if got := CheckInterception(`echo x >/dev/null`, []InterceptorRule{fromSettings}, []string{"write"}); !got.Blocked {
		t.Fatal("regex-only write rule expected to match")
	}
	if got := CheckInterception(`echo x >/dev/null`, []InterceptorRule{w}, []string{"write"}); got.Blocked {
		t.Fatal("built-in write rule must not block /dev/null")
	}
	// The write regex alone is still careful about fd duplication and `->`.
	for cmd, want := range map[string]bool{
		"echo hi > f": true, "echo hi>>f": true, "echo hi 1>f": true, "echo x >& f": true,
		"cat <<EOF > f": true, "cat > f <<'EOF'": true, "echo x &>f": true,
		"echo x 2>&1": false, "echo x >&2": false, "echo x 1>&2": false, `echo "a -> b"`: false,
		"echo x 2>f": false, "ls > f": false,
	} {
		if got := CheckInterception(cmd, []InterceptorRule{fromSettings}, []string{"write"}); got.Blocked != want {
			t.Errorf("regex-only write rule on %q: blocked=%v want %v", cmd, got.Blocked, want)
		}
	}
}

// The find rule's regex alone (a default written to settings and read
// back) catches fd's short flags too, and still needs a filter flag.
func TestRegexOnlyFindRuleKnowsFdShortFlags(t *testing.T) {
	data, _ := json.Marshal(DefaultInterceptorRules()[3])
	var rule InterceptorRule
	if err := json.Unmarshal(data, &rule); err != nil || rule.Tool != "find" {
		t.Fatalf("%s %v", data, err)
	}
	for cmd, want := range map[string]bool{
		"fd -t f x": true, "fd -g '*.go'": true, "fd -tf x": true, "fd -e go": true, "fd --type f": true,
		"find . -name x": true, "fd foo": false, "fd -H foo": false, "find . -mtime -1": false,
	} {
		if got := CheckInterception(cmd, []InterceptorRule{rule}, []string{"find"}); got.Blocked != want {
			t.Errorf("regex-only find rule on %q: blocked=%v want %v", cmd, got.Blocked, want)
		}
	}
}

func TestInterceptionUnparsableFallsBackToWholeText(t *testing.T) {
	rules := DefaultInterceptorRules()
	got := CheckInterception("  cat 'unterminated  ", rules, allTools)
	if !got.Blocked || got.SuggestedTool != "read" {
		t.Fatalf("got %#v", got)
	}
	got = CheckInterception("ls; cat 'unterminated", rules, allTools)
	if got.Blocked {
		t.Fatalf("fallback tests the whole text from its start: %#v", got)
	}
}

func TestBlockedMessage(t *testing.T) {
	got := BlockedMessage("Use the `read` tool.", "cat f")
	want := "Blocked: Use the `read` tool.\n\nOriginal command: cat f"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	res := CheckInterception("cat README.md", DefaultInterceptorRules(), []string{"read"})
	want = "Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files.\n\nOriginal command: cat README.md"
	if got := BlockedMessage(res.Message, "cat README.md"); got != want {
		t.Fatalf("got %q", got)
	}
}

func TestDefaultInterceptorRulesShape(t *testing.T) {
	rules := DefaultInterceptorRules()
	want := map[string]string{
		"read":  msgRead,
		"grep":  msgGrep,
		"find":  msgFind,
		"write": msgWrite,
	}
	edits := map[string]bool{msgSed: true, msgPerl: true, msgAwk: true}
	if len(rules) != 7 {
		t.Fatalf("%d rules", len(rules))
	}
	for _, r := range rules {
		if r.Tool == "edit" {
			if !edits[r.Message] {
				t.Errorf("edit message %q", r.Message)
			}
			delete(edits, r.Message)
			continue
		}
		if want[r.Tool] != r.Message {
			t.Errorf("tool %q message %q", r.Tool, r.Message)
		}
		if compileRule(r.Pattern, r.Flags) == nil {
			t.Errorf("default pattern does not compile: %q", r.Pattern)
		}
	}
	if len(edits) != 0 {
		t.Errorf("missing edit rules: %v", edits)
	}
	// Fresh copies, comparable and DeepEqual-stable.
	a, b := DefaultInterceptorRules(), DefaultInterceptorRules()
	if !reflect.DeepEqual(a, b) || a[0] != b[0] {
		t.Fatal("defaults not stable")
	}
	a[0].Message = "x"
	if DefaultInterceptorRules()[0].Message == "x" {
		t.Fatal("defaults share storage")
	}
}

func TestInterceptionConcurrent(t *testing.T) {
	rules := append(DefaultInterceptorRules(), InterceptorRule{Pattern: `^x\d+`, Flags: "i", Tool: "t", Message: "m"})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				cmd := "cd d && cat f"
				if (i+j)%2 == 0 {
					cmd = "X12"
				}
				if got := CheckInterception(cmd, rules, []string{"read", "t"}); !got.Blocked {
					t.Errorf("%q not blocked", cmd)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestInterceptionLarge(t *testing.T) {
	cmd := strings.Repeat("echo \"a > b\" 2>&1 && ls | grep x; ", 1<<20/34) + "cat f"
	start := time.Now()
	got := CheckInterception(cmd, DefaultInterceptorRules(), allTools)
	if d := time.Since(start); d > 2*time.Minute { // hang guard against quadratic behaviour
		t.Fatalf("took %v", d)
	}
	if got.SuggestedTool != "read" {
		t.Fatalf("got %#v", got.SuggestedTool)
	}
}

func FuzzCheckInterception(f *testing.F) {
	for _, s := range []string{
		"cat f", "cd x && cat f", "cat <<EOF > f\nx\nEOF", "echo \"a -> b\"", "echo x 2>&1",
		"sed -i s/a/b/ f", "perl -pi -e 1 f", "gawk -i inplace 1 f", "find . -name x",
		"ls | grep foo", "FOO=1 grep x .", "f() { cat x; }; f", "case a in a) head -1 f;; esac",
		"> f", "x=1 >f", "echo $(cat <<EOF\nbody\nEOF\n) > f", "cat 'unterminated",
	} {
		f.Add(s)
	}
	rules := DefaultInterceptorRules()
	f.Fuzz(func(t *testing.T, cmd string) {
		got := CheckInterception(cmd, rules, allTools)
		if got.Blocked {
			if got.Rule == nil || got.SuggestedTool != got.Rule.Tool || got.Message != got.Rule.Message {
				t.Fatalf("inconsistent result %#v", got)
			}
		} else if got != (InterceptionResult{}) {
			t.Fatalf("non-blocked result not zero: %#v", got)
		}
		for _, seg := range commandSegments(cmd) {
			if !strings.Contains(cmd, seg.text) || seg.text == "" {
				t.Fatalf("segment %q not a non-empty substring of %q", seg.text, cmd)
			}
		}
	})
}
