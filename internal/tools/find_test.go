package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	dir := searchTree(t)
	tool := NewFind(envAt(dir))
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr bool
	}{
		{"name at any depth", map[string]any{"pattern": "*.go"}, "a.go\nsub/c.go", false},
		{"everything", map[string]any{"pattern": "**"},
			"a.go\nb.txt\nbin.dat\ncrlf.txt\ndangling\nkeep.log\nlnk.txt\nself\nsub/\nsub/c.go\nsub/deeper/\n" +
				"sub/deeper/only-here.txt\nsub/up/\nsub/x.log\nuni.txt", false},
		{"one folder", map[string]any{"pattern": "sub/*"}, "sub/c.go\nsub/deeper/\nsub/up/\nsub/x.log", false},
		{"leading ./", map[string]any{"pattern": "./sub/*.go"}, "sub/c.go", false},
		{"folders only", map[string]any{"pattern": "*/"}, "sub/\nsub/deeper/\nsub/up/", false},
		{"hidden when asked", map[string]any{"pattern": ".*"}, ".env\n.gitignore\n.hidden/\nsub/.gitignore", false},
		{"hidden folder", map[string]any{"pattern": ".hidden/**"}, ".hidden/h.go", false},
		{"doublestar and negation", map[string]any{"pattern": "**/*.log"}, "keep.log\nsub/x.log", false},
		{"braces", map[string]any{"pattern": "*.{go,dat}"}, "a.go\nbin.dat\nsub/c.go", false},
		{"below path", map[string]any{"pattern": "*.go", "path": "sub"}, "sub/c.go", false},
		{"absolute pattern", map[string]any{"pattern": filepath.Join(dir, "sub", "*.go")}, "sub/c.go", false},
		{"absolute path", map[string]any{"pattern": "c.go", "path": filepath.Join(dir, "sub")},
			filepath.ToSlash(filepath.Join(dir, "sub")) + "/c.go", false},
		{"limit", map[string]any{"pattern": "*.txt", "limit": 2},
			"b.txt\ncrlf.txt\n\n[Showing first 2 results. Narrow the pattern or raise limit.]", false},
		{"limit equal to results", map[string]any{"pattern": "*.log", "limit": 2}, "keep.log\nsub/x.log", false},
		{"nothing", map[string]any{"pattern": "*.none"}, "No files found matching pattern", false},
		{"invalid pattern", map[string]any{"pattern": "["}, `Invalid pattern "[": syntax error in pattern`, true},
		{"pattern outside", map[string]any{"pattern": "/elsewhere/*.go"}, "Pattern /elsewhere/*.go is outside .; give a pattern relative to path", true},
		{"path is a file", map[string]any{"pattern": "*", "path": "a.go"}, "Not a directory: a.go (find searches folders; use read for a file)", true},
		{"missing path", map[string]any{"pattern": "*", "path": "nope"}, "File not found: nope", true},
		{"missing pattern", map[string]any{}, `Missing required argument "pattern" for find`, true},
		{"artifact refused", map[string]any{"pattern": "*", "path": "artifact://1"},
			"The find tool cannot use artifact://1: artifact:// outputs are read-only (use read or grep on them)", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkResult(t, tc.name, call(t, tool, tc.args), tc.want, tc.wantErr)
		})
	}
}

func TestFindDefaultLimitAndDetails(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var want []string
	for i := 0; i < FindDefaultLimit+5; i++ {
		name := fmt.Sprintf("f%04d.txt", i)
		files[name] = ""
		if i < FindDefaultLimit {
			want = append(want, name)
		}
	}
	mkTree(t, dir, files)
	res := call(t, NewFind(envAt(dir)), map[string]any{"pattern": "*.txt"})
	checkResult(t, "default limit", res, strings.Join(want, "\n")+"\n\n[Showing first 1000 results. Narrow the pattern or raise limit.]", false)
	var d FindDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d != (FindDetails{Count: 1000, Truncated: true}) {
		t.Errorf("details = %+v (%v)", d, err)
	}
}

func TestFindUnreadableAndAbort(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"locked/x.go": "", "open/y.go": ""})
	if os.Geteuid() != 0 {
		if err := os.Chmod(filepath.Join(dir, "locked"), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })
		checkResult(t, "unreadable folder", call(t, NewFind(envAt(dir)), map[string]any{"pattern": "*.go"}), "open/y.go", false)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := NewFind(envAt(dir)).Execute(ctx, json.RawMessage(`{"pattern":"*.go"}`), nil)
	if !res.Aborted || res.Content != "The find call was aborted" {
		t.Errorf("aborted = %+v", res)
	}
}
