package tools

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	abc := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	var twenty, twentyNew strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&twenty, "%d\n", i)
		switch i {
		case 2:
			twentyNew.WriteString("two\n")
		case 18:
			twentyNew.WriteString("eighteen\n")
		default:
			fmt.Fprintf(&twentyNew, "%d\n", i)
		}
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\n", "a\n", ""},
		{"one line in the middle", abc, strings.Replace(abc, "e\n", "E\n", 1),
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"},
		{"at the start", abc, "A\n" + abc[2:],
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n"},
		{"insert only", "a\nb\n", "a\nx\nb\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+x\n b\n"},
		{"two hunks", twenty.String(), twentyNew.String(),
			"--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n"},
		{"close changes share a hunk", abc, strings.Replace(strings.Replace(abc, "b\n", "B\n", 1), "h\n", "H\n", 1),
			"--- a/f\n+++ b/f\n@@ -1,10 +1,10 @@\n a\n-b\n+B\n c\n d\n e\n f\n g\n-h\n+H\n i\n j\n"},
		{"from empty", "", "x\ny\n", "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"to empty", "x\ny\n", "", "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n"},
		{"newline added at end", "a\nb", "a\nb\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"last line without newline kept", "a\nb\nc", "A\nb\nc",
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n"},
		{"unicode and crlf text", "héllo\r\n世界\r\n", "héllo\r\n🙂\r\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n héllo\r\n-世界\r\n+🙂\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unifiedDiff("a/f", "b/f", tc.old, tc.new)
			if got != tc.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tc.want)
			}
			if applied, err := applyUnified(tc.old, got); err != nil || applied != tc.new {
				t.Errorf("applying gives %q, %v; want %q", applied, err, tc.new)
			}
		})
	}
}

func TestUnifiedDiffLarge(t *testing.T) {
	// More edits than the Myers bound: still a correct diff.
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "line %d changed\n", i)
	}
	d := unifiedDiff("a/f", "b/f", a.String(), b.String())
	if got, err := applyUnified(a.String(), d); err != nil || got != b.String() {
		t.Fatalf("large diff does not apply: %v", err)
	}
	if !strings.HasPrefix(d, "--- a/f\n+++ b/f\n@@ -1,3000 +1,3000 @@\n-line 0\n") {
		t.Errorf("large diff starts %q", d[:60])
	}
}

// applyUnified applies a diff produced by unifiedDiff to old, checking
// every context and removed line and every hunk header.
func applyUnified(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	lines := splitLines(diff)
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", errors.New("missing headers")
	}
	src := splitLines(old)
	var out []string
	pos := 0
	for i := 2; i < len(lines); {
		var a, b, c, d int
		if _, err := fmt.Sscanf(lines[i], "@@ -%d,%d +%d,%d @@\n", &a, &b, &c, &d); err != nil {
			return "", fmt.Errorf("line %d: bad hunk header %q: %v", i, lines[i], err)
		}
		start := a - 1
		if b == 0 {
			start = a
		}
		if start < pos || start > len(src) {
			return "", fmt.Errorf("hunk %q out of order", lines[i])
		}
		out = append(out, src[pos:start]...)
		pos = start
		wantC := len(out) + 1
		if d == 0 {
			wantC = len(out)
		}
		if c != wantC {
			return "", fmt.Errorf("hunk %q: new start %d, want %d", lines[i], c, wantC)
		}
		i++
		na, nb := 0, 0
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			l := lines[i]
			kind, text := l[0], l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch kind {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d: %q does not match old line %d", i, l, pos+1)
				}
				pos++
				na++
				if kind == ' ' {
					out = append(out, text)
					nb++
				}
			case '+':
				out = append(out, text)
				nb++
			default:
				return "", fmt.Errorf("line %d: bad line %q", i, l)
			}
			i++
		}
		if na != b || nb != d {
			return "", fmt.Errorf("hunk counts %d,%d; header says %d,%d", na, nb, b, d)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("x\n\n\ny", "\n\nx\ny\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		if len(old) > 4096 || len(new) > 4096 {
			return
		}
		d := unifiedDiff("a/f", "b/f", old, new)
		if (d == "") != (old == new) {
			t.Fatalf("diff %q for old %q new %q", d, old, new)
		}
		got, err := applyUnified(old, d)
		if err != nil {
			t.Fatalf("old %q new %q diff:\n%s\n%v", old, new, d, err)
		}
		if got != new {
			t.Fatalf("applying gives %q, want %q; diff:\n%s", got, new, d)
		}
	})
}
