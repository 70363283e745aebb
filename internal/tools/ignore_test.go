package tools

import (
	"path/filepath"
	"testing"
)

func TestGlobRule(t *testing.T) {
	base := filepath.FromSlash("/repo")
	tests := []struct {
		line  string
		path  string // below base
		dir   bool
		match bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "x/y/a.log", false, true},
		{"*.log", "a.log.txt", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false},
		{"build/", "x/build", true, true},
		{"/top", "top", false, true},
		{"/top", "x/top", false, false},
		{"a/b", "a/b", false, true},
		{"a/b", "x/a/b", false, false},
		{"**/foo", "foo", false, true},
		{"**/foo", "x/y/foo", true, true},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"dir/**", "dir", true, false},
		{"dir/**", "dir/x", false, true},
		{"dir/**", "dir/x/y", false, true},
		{"*.[oa]", "x.o", false, true},
		{"*.[!oa]", "x.o", false, false},
		{"?.txt", "a.txt", false, true},
		{"?.txt", "ab.txt", false, false},
		{"{a}.txt", "{a}.txt", false, true},
		{"{a}.txt", "a.txt", false, false},
		{`\#x`, "#x", false, true},
		{`\!x`, "!x", false, true},
		{"sp\\ ", "sp ", false, true},
		{"sp  ", "sp", false, true},
		{"*.go\r", "a.go", false, true},
		{"foo", "foo/bar", false, false}, // the folder is skipped by the walker, not the file by its name
	}
	for _, tc := range tests {
		r, ok := parseGlobRule(tc.line, base)
		if !ok {
			t.Errorf("%q did not parse", tc.line)
			continue
		}
		if got := r.matches(filepath.Join(base, filepath.FromSlash(tc.path)), tc.dir); got != tc.match {
			t.Errorf("%q on %q (dir=%v) = %v, want %v", tc.line, tc.path, tc.dir, got, tc.match)
		}
	}
	for _, line := range []string{"", "   ", "# comment", "!", "/", "[", "!/"} {
		if _, ok := parseGlobRule(line, base); ok {
			t.Errorf("%q parsed as a rule", line)
		}
	}
	if r, _ := parseGlobRule("!keep.log", base); !r.negate {
		t.Error("negation lost")
	}
}

func TestCompareRel(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a", "a", 0},
		{"a/b", "a.go", -1}, // folder "a" sorts before name "a.go", as a sorted walk visits them
		{"a.go", "a/b", 1},
		{"a", "a/b", -1},
		{"b", "a/z", 1},
		{"x/y", "x/z", -1},
	} {
		if got := compareRel(tc.a, tc.b); got != tc.want {
			t.Errorf("compareRel(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
