package testkit

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from what the tests produce")

// Golden compares got with the file testdata/<name> of the test's package;
// with -update it writes got there instead. A difference fails the test
// (Errorf) with a line diff; a missing file fails it at once.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden %s: %v", name, err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("golden %s: %v", name, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run the test with -update to write it)", name, err)
	}
	if string(want) != got {
		t.Errorf("%s differs (-want +got; run the test with -update to accept it):\n%s", path, Diff(string(want), got))
	}
}

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 3

// Diff is a line diff of want and got: "-" lines only in want, "+" lines
// only in got, "@@" a skipped stretch of equal lines. Empty when equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	ops := diffLines(a, b)
	var out strings.Builder
	show := make([]bool, len(ops))
	for i, op := range ops {
		if op.kind == ' ' {
			continue
		}
		for j := max(0, i-diffContext); j <= min(len(ops)-1, i+diffContext); j++ {
			show[j] = true
		}
	}
	skipped := false
	for i, op := range ops {
		if !show[i] {
			skipped = true
			continue
		}
		if skipped {
			fmt.Fprintf(&out, "@@ line %d @@\n", op.line)
			skipped = false
		}
		fmt.Fprintf(&out, "%c%s\n", op.kind, op.text)
	}
	if skipped {
		out.WriteString("@@ … @@\n")
	}
	return out.String()
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	text string
	line int // the 1-based line of got (of want for '-')
}

// diffLines is the longest-common-subsequence edit script of a into b.
// Golden files are small (screens, one page of HTML), so the quadratic
// table is fine.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], j + 1})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i + 1})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], j + 1})
			j++
		}
	}
	return ops
}
