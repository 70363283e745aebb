package tools

import (
	"strconv"
	"strings"
)

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// maxDiffEdits bounds the Myers search (its memory grows with the square of
// the edit distance); a middle part that differs more is shown as removed
// and added as a whole, which is still a correct diff.
const maxDiffEdits = 1500

type diffKind byte

const (
	diffEqual  diffKind = ' '
	diffDelete diffKind = '-'
	diffInsert diffKind = '+'
)

// diffOp is one line of the edit script; aLine and bLine are the 0-based
// positions in old and new before the op.
type diffOp struct {
	kind         diffKind
	text         string // the line with its "\n", if it has one
	aLine, bLine int
}

// splitLines splits s into lines that keep their "\n"; a last line
// without one is kept as is.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// unifiedDiff returns a unified diff of oldText → newText with
// diffContext lines of context, under "--- oldName" / "+++ newName"
// headers, or "" when they are equal. A last line without a newline is
// followed by "\ No newline at end of file", as diff and git print it.
func unifiedDiff(oldName, newName, oldText, newText string) string {
	if oldText == newText {
		return ""
	}
	ops := diffLines(splitLines(oldText), splitLines(newText))
	var b strings.Builder
	b.WriteString("--- " + oldName + "\n+++ " + newName + "\n")
	for _, h := range hunks(ops, diffContext) {
		writeHunk(&b, ops[h[0]:h[1]])
	}
	return b.String()
}

// diffLines returns the edit script turning a into b: the common prefix and
// suffix, and a Myers shortest script in between.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b)-pre-suf)
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{kind: diffEqual, text: a[i], aLine: i, bLine: i})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	for _, op := range myers(am, bm) {
		op.aLine += pre
		op.bLine += pre
		ops = append(ops, op)
	}
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, diffOp{kind: diffEqual, text: a[ai], aLine: ai, bLine: bi})
	}
	return ops
}

// myers is the O(ND) greedy algorithm of "An O(ND) Difference Algorithm
// and Its Variations" (Myers, 1986), keeping one frontier per step for the
// backtrack.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return wholesale(a, b)
	}
	// Compare lines as small integers.
	ids := map[string]int32{}
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ai, bi := intern(a), intern(b)

	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int32, 2*off+1)
	var trace [][]int32 // trace[d] is v[off-d .. off+d] before step d
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: an insertion
			} else {
				x = int(v[off+k-1]) + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && ai[x] == bi[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return wholesale(a, b)
	}
	// Walk back from (n, m), collecting ops in reverse.
	var rev []diffOp
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d] // frontier before step d, indexed k+d
		at := func(k int) int { return int(prev[k+d]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffOp{kind: diffEqual, text: a[x], aLine: x, bLine: y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, diffOp{kind: diffInsert, text: b[y], aLine: x, bLine: y})
		} else {
			x--
			rev = append(rev, diffOp{kind: diffDelete, text: a[x], aLine: x, bLine: y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{kind: diffEqual, text: a[x], aLine: x, bLine: y})
	}
	ops := make([]diffOp, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

// wholesale is the script that removes all of a and adds all of b.
func wholesale(a, b []string) []diffOp {
	ops := make([]diffOp, 0, len(a)+len(b))
	for i, l := range a {
		ops = append(ops, diffOp{kind: diffDelete, text: l, aLine: i, bLine: 0})
	}
	for i, l := range b {
		ops = append(ops, diffOp{kind: diffInsert, text: l, aLine: len(a), bLine: i})
	}
	return ops
}

// hunks groups the changes of ops into [start, end) ranges with ctx lines of
// context; changes closer than 2*ctx unchanged lines share a hunk.
func hunks(ops []diffOp, ctx int) [][2]int {
	var out [][2]int
	for i := 0; i < len(ops); {
		if ops[i].kind == diffEqual {
			i++
			continue
		}
		start := max(i-ctx, 0)
		last := i // last change in the hunk
		for j := i + 1; j < len(ops); {
			if ops[j].kind != diffEqual {
				last = j
				j++
				continue
			}
			k := j
			for k < len(ops) && ops[k].kind == diffEqual {
				k++
			}
			if k == len(ops) || k-j > 2*ctx {
				break
			}
			j = k
		}
		end := min(last+1+ctx, len(ops))
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

func writeHunk(b *strings.Builder, ops []diffOp) {
	aCount, bCount := 0, 0
	for _, op := range ops {
		if op.kind != diffInsert {
			aCount++
		}
		if op.kind != diffDelete {
			bCount++
		}
	}
	aStart, bStart := ops[0].aLine+1, ops[0].bLine+1
	if aCount == 0 {
		aStart-- // an empty range names the line before it
	}
	if bCount == 0 {
		bStart--
	}
	b.WriteString("@@ -" + strconv.Itoa(aStart) + "," + strconv.Itoa(aCount) +
		" +" + strconv.Itoa(bStart) + "," + strconv.Itoa(bCount) + " @@\n")
	for _, op := range ops {
		b.WriteByte(byte(op.kind))
		b.WriteString(op.text)
		if !strings.HasSuffix(op.text, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}
