package archtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// layersBlock is the fenced block of the README's Layout that lists the
// packages top to bottom, one layer a line.
var layersBlock = regexp.MustCompile("(?s)```layers\n(.*?)```")

// layers reads the README's layer list: each listed folder's layer, 0 at
// the top.
func layers(t *testing.T, root string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := layersBlock.FindSubmatch(data)
	if m == nil {
		t.Fatal("README.md has no ```layers block")
	}
	out := map[string]int{}
	for i, line := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		for _, dir := range strings.Fields(line) {
			out[dir] = i
		}
	}
	return out
}

// home is the listed folder a package belongs to: itself, or the nearest
// listed folder above it (internal/tui/pager belongs to internal/tui).
func home(pkg string, listed map[string]int) (string, bool) {
	for p := pkg; p != "." && p != ""; p = filepath.Dir(p) {
		if _, ok := listed[p]; ok {
			return p, true
		}
	}
	return "", false
}

// checkImports returns the imports that break the layers: a package may
// import its own folder's packages and those of lower layers only.
func checkImports(graph map[string][]string, listed map[string]int) (bad []string) {
	for pkg, imps := range graph {
		from, ok := home(pkg, listed)
		if !ok {
			bad = append(bad, pkg+": not in the README's layers")
			continue
		}
		for _, imp := range imps {
			to, ok := home(imp, listed)
			switch {
			case !ok:
				bad = append(bad, pkg+" imports "+imp+", which is not in the README's layers")
			case to == from:
			case listed[to] <= listed[from]:
				bad = append(bad, pkg+" imports "+imp+" (layer "+strconv.Itoa(listed[to])+" ≤ "+strconv.Itoa(listed[from])+")")
			}
		}
	}
	return bad
}

// TestImportsPointDown: every import between agentsh's packages (tests'
// are free to reach up: a package's test may drive a higher one) goes from a layer of the README's Layout to a lower one, so
// there is no cycle and no upward arrow.
func TestImportsPointDown(t *testing.T) {
	root := repoRoot(t)
	listed := layers(t, root)
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(f[0], "agentsh/")
		graph[pkg] = nil
		for _, imp := range f[1:] {
			if rest, ok := strings.CutPrefix(imp, "agentsh/"); ok && rest != pkg {
				graph[pkg] = append(graph[pkg], rest)
			}
		}
	}
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages: %s", len(graph), out)
	}
	for _, b := range checkImports(graph, listed) {
		t.Error(b)
	}
}

// The rule itself: an upward import, a sibling's and an unlisted package
// are found; a sub-package's import of its parent's folder is not.
func TestCheckImportsFindsUpwardArrows(t *testing.T) {
	listed := map[string]int{"a": 0, "b": 1, "c": 2, "d": 2}
	graph := map[string][]string{
		"a":   {"b", "c"},     // down: fine
		"a/x": {"a", "b"},     // own folder, down: fine
		"c":   {"b"},          // up
		"d":   {"c"},          // sibling
		"e":   nil,            // not listed
		"b":   {"a/x", "zzz"}, // up (into a's folder), unlisted
	}
	got := strings.Join(checkImports(graph, listed), "\n")
	for _, want := range []string{"c imports b", "d imports c", "e: not in", "b imports a/x", "b imports zzz"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, ok := range []string{"a imports", "a/x imports"} {
		if strings.Contains(got, ok) {
			t.Errorf("%q reported in:\n%s", ok, got)
		}
	}
}
