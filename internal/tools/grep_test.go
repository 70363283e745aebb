package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func noRg() (string, error) { return "", errors.New("rg disabled in this test") }

// grepWalker is the grep tool forced onto the built-in walker.
func grepWalker(env Env) Tool { return &grepTool{env: env, lookRg: noRg} }

// searchTree is the tree most grep and find tests search.
func searchTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{
		".gitignore":               "# build output\n*.log\nbuild/\n!keep.log\n",
		"a.go":                     "package a\n\nfunc Foo() {}\n// foo bar\n",
		"b.txt":                    "Foo\nfoo\n",
		"app.log":                  "foo in log\n",
		"keep.log":                 "foo kept\n",
		"build/out.go":             "foo\n",
		"sub/.gitignore":           "gen.go\n/only-here.txt\n!x.log\n",
		"sub/gen.go":               "foo gen\n",
		"sub/only-here.txt":        "foo\n",
		"sub/deeper/only-here.txt": "foo deeper\n",
		"sub/c.go":                 "x\nfoo c\n",
		"sub/x.log":                "foo xlog\n",
		".hidden/h.go":             "foo\n",
		".env":                     "foo=1\n",
		"bin.dat":                  "foo\x00\x01",
		"crlf.txt":                 "foo\r\nbar\r\n",
		"uni.txt":                  "naïve 世界 foo\n",
	})
	for _, l := range [][2]string{{"b.txt", "lnk.txt"}, {".", "sub/up"}, {"self", "self"}, {"missing", "dangling"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGrep(t *testing.T) {
	dir := searchTree(t)
	mkTree(t, dir, map[string]string{
		"ctx/f.txt":  "l1\nl2\nhit 3\nl4\nhit 5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\nl14\nhit 15\nl16\nl17\n",
		"ctx/g.txt":  "hit g\n",
		"long/l.txt": "foo" + strings.Repeat("x", 600) + "\n",
	})
	tool := grepWalker(envAt(dir))
	all := "a.go:4:// foo bar\nb.txt:2:foo\ncrlf.txt:1:foo\nkeep.log:1:foo kept\n" +
		"long/l.txt:1:foo" + strings.Repeat("x", 497) + "… [103 chars omitted]\n" +
		"sub/c.go:2:foo c\nsub/deeper/only-here.txt:1:foo deeper\nsub/x.log:1:foo xlog\nuni.txt:1:naïve 世界 foo"
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr bool
	}{
		{"ignores, hidden, binary, symlinks", map[string]any{"pattern": "foo"}, all, false},
		{"explicit cwd", map[string]any{"pattern": "foo", "path": "."}, all, false},
		{"crlf and $", map[string]any{"pattern": "foo$"}, "b.txt:2:foo\ncrlf.txt:1:foo\nuni.txt:1:naïve 世界 foo", false},
		{"ignoreCase", map[string]any{"pattern": "^foo", "ignoreCase": true, "path": "b.txt"}, "b.txt:1:Foo\nb.txt:2:foo", false},
		{"case sensitive", map[string]any{"pattern": "Foo"}, "a.go:3:func Foo() {}\nb.txt:1:Foo", false},
		{"unicode pattern", map[string]any{"pattern": "世界"}, "uni.txt:1:naïve 世界 foo", false},
		{"glob by name overrides ignores", map[string]any{"pattern": "foo", "glob": "*.go"},
			"a.go:4:// foo bar\nsub/c.go:2:foo c\nsub/gen.go:1:foo gen", false},
		{"glob with a folder", map[string]any{"pattern": "foo", "glob": "sub/**"},
			"sub/c.go:2:foo c\nsub/deeper/only-here.txt:1:foo deeper\nsub/gen.go:1:foo gen\nsub/only-here.txt:1:foo\nsub/x.log:1:foo xlog", false},
		{"doublestar glob", map[string]any{"pattern": "foo", "glob": "**/deeper/*.txt"}, "sub/deeper/only-here.txt:1:foo deeper", false},
		{"negated glob", map[string]any{"pattern": "foo", "glob": "!*.txt"},
			"a.go:4:// foo bar\nkeep.log:1:foo kept\nsub/c.go:2:foo c\nsub/x.log:1:foo xlog", false},
		{"sub folder keeps its prefix", map[string]any{"pattern": "foo", "path": "sub"},
			"sub/c.go:2:foo c\nsub/deeper/only-here.txt:1:foo deeper\nsub/x.log:1:foo xlog", false},
		{"absolute folder", map[string]any{"pattern": "deeper", "path": filepath.Join(dir, "sub")},
			filepath.ToSlash(filepath.Join(dir, "sub")) + "/deeper/only-here.txt:1:foo deeper", false},
		{"explicit ignored file", map[string]any{"pattern": "foo", "path": "sub/gen.go"}, "sub/gen.go:1:foo gen", false},
		{"explicit symlink", map[string]any{"pattern": "foo", "path": "lnk.txt"}, "lnk.txt:2:foo", false},
		{"context", map[string]any{"pattern": "hit", "path": "ctx", "context": 1},
			"ctx/f.txt-2-l2\nctx/f.txt:3:hit 3\nctx/f.txt-4-l4\nctx/f.txt:5:hit 5\nctx/f.txt-6-l6\n--\n" +
				"ctx/f.txt-14-l14\nctx/f.txt:15:hit 15\nctx/f.txt-16-l16\n--\nctx/g.txt:1:hit g", false},
		{"context merges", map[string]any{"pattern": "hit [35]$", "path": "ctx/f.txt", "context": 2},
			"ctx/f.txt-1-l1\nctx/f.txt-2-l2\nctx/f.txt:3:hit 3\nctx/f.txt-4-l4\nctx/f.txt:5:hit 5\nctx/f.txt-6-l6\nctx/f.txt-7-l7", false},
		{"limit cuts context too", map[string]any{"pattern": "hit", "path": "ctx", "context": 1, "limit": 2},
			"ctx/f.txt-2-l2\nctx/f.txt:3:hit 3\nctx/f.txt-4-l4\nctx/f.txt:5:hit 5\nctx/f.txt-6-l6\n\n" +
				"[Showing first 2 matches. Narrow the search or raise limit.]", false},
		{"limit at a file boundary", map[string]any{"pattern": "hit", "path": "ctx", "limit": 3},
			"ctx/f.txt:3:hit 3\nctx/f.txt:5:hit 5\nctx/f.txt:15:hit 15\n\n[Showing first 3 matches. Narrow the search or raise limit.]", false},
		{"limit equal to matches", map[string]any{"pattern": "hit", "path": "ctx", "limit": 4},
			"ctx/f.txt:3:hit 3\nctx/f.txt:5:hit 5\nctx/f.txt:15:hit 15\nctx/g.txt:1:hit g", false},
		{"no match", map[string]any{"pattern": "zzz"}, "No matches found", false},
		{"invalid regex", map[string]any{"pattern": "a("}, "Invalid regular expression: error parsing regexp: missing closing ): `a(`", true},
		{"invalid glob", map[string]any{"pattern": "a", "glob": "[a"}, `Invalid glob "[a": syntax error in pattern`, true},
		{"empty pattern", map[string]any{"pattern": ""}, "pattern must not be empty", true},
		{"missing path", map[string]any{"pattern": "a", "path": "nope"}, "File not found: nope", true},
		{"binary file", map[string]any{"pattern": "foo", "path": "bin.dat"}, "Cannot search binary file: bin.dat (contains NUL bytes)", true},
		{"negative context", map[string]any{"pattern": "a", "context": -1}, "Invalid context: must be at least 0, got -1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkResult(t, tc.name, call(t, tool, tc.args), tc.want, tc.wantErr)
		})
	}
}

func TestGrepDefaultLimitAndDetails(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"m.txt": seqLines(150, "m%d"), "n.txt": "m\n"})
	res := call(t, grepWalker(envAt(dir)), map[string]any{"pattern": "^m"})
	var want []string
	for i := 1; i <= 100; i++ {
		want = append(want, fmt.Sprintf("m.txt:%d:m%d", i, i))
	}
	checkResult(t, "default limit", res, strings.Join(want, "\n")+"\n\n[Showing first 100 matches. Narrow the search or raise limit.]", false)
	var d GrepDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d != (GrepDetails{Matches: 100, Files: 1, Truncated: true, Engine: "go"}) {
		t.Errorf("details = %+v (%v)", d, err)
	}
}

func TestGrepBigFile(t *testing.T) {
	dir := t.TempDir()
	_, n := bigFile(t, dir)
	tool := grepWalker(envAt(dir))
	checkResult(t, "needle", call(t, tool, map[string]any{"pattern": "needle"}),
		fmt.Sprintf("big.txt:%d:%07d needle%s", n-7, n-7, strings.Repeat("z", 85)), false)
	checkResult(t, "last line", call(t, tool, map[string]any{"pattern": fmt.Sprintf("^%07d ", n), "path": "big.txt"}),
		fmt.Sprintf("big.txt:%d:%07d %s", n, n, strings.Repeat("z", 91)), false)
}

func TestGrepNestedRepoAndIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{
		".git/info/exclude":   "excluded.txt\n",
		".gitignore":          "*.gen\n",
		"excluded.txt":        "hit\n",
		"a.gen":               "hit\n",
		"keep.txt":            "hit\n",
		".ignore":             "!b.gen\n",
		"b.gen":               "hit\n", // .ignore beats .gitignore
		"inner/.git/HEAD":     "ref\n",
		"inner/c.gen":         "hit\n", // outer .gitignore stops at the inner repository
		"inner/excluded.txt":  "hit\n", // and so does the outer exclude file
		"deep/x/.rgignore":    "*.txt\n",
		"deep/x/y.txt":        "hit\n",
		"deep/z.txt":          "hit\n",
		"escaped/{a}.txt":     "hit\n",
		"escaped/.gitignore":  "{a}.txt\n\\#x\n",
		"escaped/#x":          "hit\n",
		"trailing/.gitignore": "sp\\ \nsp2   \n",
		"trailing/sp ":        "hit\n",
		"trailing/sp2":        "hit\n",
	})
	res := call(t, grepWalker(envAt(dir)), map[string]any{"pattern": "hit"})
	checkResult(t, "ignore files", res, "b.gen:1:hit\ndeep/z.txt:1:hit\ninner/c.gen:1:hit\ninner/excluded.txt:1:hit\nkeep.txt:1:hit", false)
	// Searching below the repository root still applies the root's rules.
	res = call(t, grepWalker(envAt(filepath.Join(dir, "deep"))), map[string]any{"pattern": "hit", "path": ".."})
	checkResult(t, "parent path", res, "../b.gen:1:hit\n../deep/z.txt:1:hit\n../inner/c.gen:1:hit\n../inner/excluded.txt:1:hit\n../keep.txt:1:hit", false)
	mkTree(t, dir, map[string]string{"sub/s.gen": "hit\n", "sub/s.txt": "hit\n"})
	res = call(t, grepWalker(envAt(dir)), map[string]any{"pattern": "hit", "path": "sub"})
	checkResult(t, "parent rules", res, "sub/s.txt:1:hit", false)
}

func TestGrepPermissionDenied(t *testing.T) {
	skipIfRoot(t)
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"secret.txt": "hit\n", "open.txt": "hit\n", "locked/x.txt": "hit\n"})
	if err := os.Chmod(filepath.Join(dir, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	tool := grepWalker(envAt(dir))
	checkResult(t, "unreadable skipped", call(t, tool, map[string]any{"pattern": "hit"}), "open.txt:1:hit", false)
	checkResult(t, "explicit", call(t, tool, map[string]any{"pattern": "hit", "path": "secret.txt"}), "Permission denied: secret.txt", true)
}

func TestGrepArtifactAndAbort(t *testing.T) {
	art := filepath.Join(t.TempDir(), "1.bash.log")
	if err := os.WriteFile(art, []byte("ok\nerror: boom\nok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envAt(t.TempDir())
	env.ResolveArtifact = func(string) (string, error) { return art, nil }
	checkResult(t, "artifact", call(t, grepWalker(env), map[string]any{"pattern": "error", "path": "artifact://1"}),
		"artifact://1:2:error: boom", false)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := grepWalker(envAt(searchTree(t))).Execute(ctx, json.RawMessage(`{"pattern":"foo"}`), nil)
	if !res.Aborted || res.Content != "The grep call was aborted" {
		t.Errorf("aborted = %+v", res)
	}
}

// TestGrepRipgrepMatchesWalker runs both engines on the same trees.
func TestGrepRipgrepMatchesWalker(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	dir := searchTree(t)
	mkTree(t, dir, map[string]string{
		".git/HEAD": "ref\n",
		"ctx/f.txt": "l1\nl2\nhit 3\nl4\nhit 5\nl6\nl7\nl8\nhit 9\n",
		"ctx/g.txt": "hit g\n",
	})
	walker := grepWalker(envAt(dir))
	withRg := &grepTool{env: envAt(dir), lookRg: func() (string, error) { return rg, nil }}
	for _, args := range []map[string]any{
		{"pattern": "foo"},
		{"pattern": "foo$"},
		{"pattern": "FOO", "ignoreCase": true},
		{"pattern": "foo", "glob": "*.go"},
		{"pattern": "foo", "glob": "sub/**"},
		{"pattern": "foo", "glob": "!*.txt"},
		{"pattern": "foo", "path": "sub"},
		{"pattern": "hit", "path": "ctx", "context": 1},
		{"pattern": "hit", "path": "ctx", "context": 1, "limit": 2},
		{"pattern": "hit", "path": "ctx", "limit": 3},
		{"pattern": "foo", "path": "lnk.txt"},
		{"pattern": "zzz"},
	} {
		w, r := call(t, walker, args), call(t, withRg, args)
		if w.Content != r.Content || w.IsError != r.IsError {
			t.Errorf("%v:\nwalker:\n%s\nripgrep:\n%s", args, w.Content, r.Content)
		}
		var d GrepDetails
		if json.Unmarshal(r.Details, &d) == nil && d.Engine != "ripgrep" {
			t.Errorf("%v: engine %q", args, d.Engine)
		}
	}
}

// fakeRg writes a script that records its arguments and folder, prints
// out and then runs tail (a shell command).
func fakeRg(t *testing.T, out []string, tail string) (rg, argsFile string) {
	t.Helper()
	bin := t.TempDir()
	argsFile = filepath.Join(bin, "args")
	jsonFile := filepath.Join(bin, "out.json")
	if err := os.WriteFile(jsonFile, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\" > '" + argsFile + "'\ncat '" + jsonFile + "'\n" + tail + "\n"
	rg = filepath.Join(bin, "rg")
	if err := os.WriteFile(rg, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return rg, argsFile
}

func rgJSON(typ, path string, line int, text string, binary bool) string {
	m := map[string]any{"type": typ, "data": map[string]any{"path": map[string]any{"text": path}}}
	d := m["data"].(map[string]any)
	switch typ {
	case "match", "context":
		d["lines"] = map[string]any{"text": text}
		d["line_number"] = line
	case "end":
		if binary {
			d["binary_offset"] = 3
		} else {
			d["binary_offset"] = nil
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestGrepRipgrepOutputParsing(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"f.txt": "foo\n"})
	rg, argsFile := fakeRg(t, []string{
		rgJSON("begin", "./b.txt", 0, "", false),
		rgJSON("match", "./b.txt", 2, "foo\r\n", false),
		rgJSON("end", "./b.txt", 0, "", false),
		rgJSON("begin", "./bin.dat", 0, "", false),
		rgJSON("match", "./bin.dat", 1, "foo", false),
		rgJSON("end", "./bin.dat", 0, "", true),
		rgJSON("begin", "./a.go", 0, "", false),
		rgJSON("context", "./a.go", 3, "x\n", false),
		rgJSON("match", "./a.go", 4, "// foo bar\n", false),
		rgJSON("end", "./a.go", 0, "", false),
		`{"type":"summary","data":{}}`,
	}, "exit 0")
	tool := &grepTool{env: envAt(dir), lookRg: func() (string, error) { return rg, nil }}
	res := call(t, tool, map[string]any{"pattern": "foo", "ignoreCase": true, "glob": "*.go", "context": 1})
	checkResult(t, "parsed", res, "a.go-3-x\na.go:4:// foo bar\n--\nb.txt:2:foo", false)
	var d GrepDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d != (GrepDetails{Matches: 2, Files: 2, Engine: "ripgrep"}) {
		t.Errorf("details = %+v (%v)", d, err)
	}
	got := strings.Split(strings.TrimSpace(readString(t, argsFile)), "\n")
	want := []string{dir, "--json", "--sort", "path", "--no-config", "--no-messages", "--no-require-git", "--no-ignore-global",
		"--crlf", "--encoding", "none", "--context", "1", "--glob", "*.go", "--regexp", "(?i)foo", "--", "."}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("rg ran in/with\n%q\nwant\n%q", got, want)
	}

	// rg failing outright (exit 2, nothing found): the walker answers.
	rg2, _ := fakeRg(t, nil, "echo 'regex parse error' >&2; exit 2")
	tool = &grepTool{env: envAt(dir), lookRg: func() (string, error) { return rg2, nil }}
	res = call(t, tool, map[string]any{"pattern": "foo"})
	checkResult(t, "fallback", res, "f.txt:1:foo", false)
	if err := json.Unmarshal(res.Details, &d); err != nil || d.Engine != "go" {
		t.Errorf("fallback details = %+v (%v)", d, err)
	}

	// Past the limit rg is killed rather than waited for.
	var many []string
	many = append(many, rgJSON("begin", "./m.txt", 0, "", false))
	for i := 1; i <= 5; i++ {
		many = append(many, rgJSON("match", "./m.txt", i, fmt.Sprintf("m%d\n", i), false))
	}
	rg3, _ := fakeRg(t, many, "exec sleep 30")
	tool = &grepTool{env: envAt(dir), lookRg: func() (string, error) { return rg3, nil }}
	start := time.Now()
	res = call(t, tool, map[string]any{"pattern": "m", "limit": 2})
	checkResult(t, "killed at the limit", res, "m.txt:1:m1\nm.txt:2:m2\n\n[Showing first 2 matches. Narrow the search or raise limit.]", false)
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %v: rg was not killed", el)
	}

	// A single file keeps the path as given.
	rg4, argsFile4 := fakeRg(t, []string{
		rgJSON("begin", filepath.Join(dir, "f.txt"), 0, "", false),
		rgJSON("match", filepath.Join(dir, "f.txt"), 1, "\uFEFFfoo\n", false),
		rgJSON("end", filepath.Join(dir, "f.txt"), 0, "", false),
	}, "exit 0")
	tool = &grepTool{env: envAt(dir), lookRg: func() (string, error) { return rg4, nil }}
	checkResult(t, "file", call(t, tool, map[string]any{"pattern": "foo", "path": "./f.txt"}), "./f.txt:1:foo", false)
	if got := readString(t, argsFile4); !strings.HasSuffix(got, "--\n"+filepath.Join(dir, "f.txt")+"\n") {
		t.Errorf("rg args for a file: %q", got)
	}
}
