// Package archtest holds tests of the repository as a whole: rules about how
// its code and documents refer to each other, which no single package can check.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// specPath is the behaviour contract that "spec §N" refers to, from the root.
const specPath = "docs/spec.md"

var (
	// specHeading is a numbered heading of docs/spec.md: "## 1. …", "### 1.1 …".
	specHeading = regexp.MustCompile(`(?m)^#{1,6} +(\d+(?:\.\d+)*)\.? `)
	// specCitation is "spec §N", with any further sections cited in the same
	// breath ("spec §2.3, §1.6", "spec §1.1 and §1.6").
	specCitation = regexp.MustCompile(`(?i)\bspec §\d+(?:\.\d+)*(?:(?:, | and | or |/|–)§\d+(?:\.\d+)*)*`)
	sectionNum   = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)
	// oldCitation is the upper-case form that pointed outside the repository.
	oldCitation = regexp.MustCompile(`\bSPEC[ ]§`)
	// issueCitation is an issue number ("issue 21", "(issues 12, 13)",
	// "issue #4"): the tracker is not in the repository, so a comment says
	// why in words instead.
	issueCitation = regexp.MustCompile(`(?i)\bissues? #?\d`)
	// quoted is a quoted example inside a comment ("fix issue 1" typed as a
	// message), which cites nothing.
	quoted = regexp.MustCompile("\"[^\"]*\"|`[^`]*`")
	// lineBreak joins a sentence broken over comment or Markdown lines, so
	// "spec\n// §9" reads as one citation.
	lineBreak = regexp.MustCompile(`[ \t]*\n[ \t]*(?://[ \t]*)?`)
)

// repoRoot walks up from the test's directory to the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// sourceFiles lists the repository's .go and .md files, relative to root,
// leaving out hidden folders and testdata (recorded material of other
// programs, not the project's own words).
func sourceFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return files
}

// specSections returns the section numbers of the headings of spec.
func specSections(spec string) map[string]bool {
	secs := map[string]bool{}
	for _, m := range specHeading.FindAllStringSubmatch(spec, -1) {
		secs[m[1]] = true
	}
	return secs
}

// citedSections returns every section a "spec §N" citation of text names.
func citedSections(text string) []string {
	var out []string
	for _, c := range specCitation.FindAllString(lineBreak.ReplaceAllString(text, " "), -1) {
		for _, m := range sectionNum.FindAllStringSubmatch(c, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// issueCitations returns the issue numbers cited in the comments of a Go
// source file, each with its position.
func issueCitations(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, g := range f.Comments {
		text := quoted.ReplaceAllString(strings.Join(strings.Fields(g.Text()), " "), `""`)
		for _, m := range issueCitation.FindAllStringIndex(text, -1) {
			end := min(m[1]+20, len(text))
			out = append(out, fset.Position(g.Pos()).String()+": "+text[m[0]:end]+"…")
		}
	}
	return out
}

// TestSpecCitationsResolve checks that every "spec §N" in the repository's
// Go and Markdown files names a heading of docs/spec.md, so a reader can
// follow each one, and that no Go file still cites the old upper-case SPEC,
// which lived outside the repository.
func TestSpecCitationsResolve(t *testing.T) {
	root := repoRoot(t)
	spec, err := os.ReadFile(filepath.Join(root, specPath))
	if err != nil {
		t.Fatalf("the behaviour contract: %v", err)
	}
	secs := specSections(string(spec))
	if len(secs) == 0 {
		t.Fatalf("%s has no numbered headings", specPath)
	}
	cited := 0
	for _, rel := range sourceFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatalf("reading %s: %v", rel, err)
		}
		text := string(data)
		for _, n := range citedSections(text) {
			cited++
			if !secs[n] {
				t.Errorf("%s cites spec §%s, which %s has no heading for", rel, n, specPath)
			}
		}
		if strings.HasSuffix(rel, ".go") && oldCitation.MatchString(lineBreak.ReplaceAllString(text, " ")) {
			t.Errorf("%s cites the upper-case SPEC by section: write spec §N, a section of %s", rel, specPath)
		}
	}
	if cited == 0 {
		t.Errorf("no spec §N citation found under %s: the walk or the pattern is broken", root)
	}
}

// TestNoIssueNumbersInGoComments checks that Go comments say why in words
// rather than by an issue number, which means nothing to a reader of the
// repository alone.
func TestNoIssueNumbersInGoComments(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, rel := range sourceFiles(t, root) {
		if !strings.HasSuffix(rel, ".go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatalf("reading %s: %v", rel, err)
		}
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", rel, err)
		}
		for _, c := range issueCitations(fset, f) {
			t.Errorf("an issue number in a comment (say why in words instead): %s", c)
		}
	}
}

// TestCitationPatterns pins what the two checks above catch and let pass,
// so a pattern that stops matching cannot turn them into tests that always
// pass.
func TestCitationPatterns(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"see spec §1.6.", []string{"1.6"}},
		{"(spec §2.3, §1.6)", []string{"2.3", "1.6"}},
		{"spec §1.1 and §1.6", []string{"1.1", "1.6"}},
		{"goes on (spec\n// §9). ", []string{"9"}},
		{"Spec §10 says", []string{"10"}},
		{"the spec's messages, §3 alone, jobs.Spec", nil},
	} {
		if got := citedSections(c.text); !slices.Equal(got, c.want) {
			t.Errorf("citedSections(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if secs := specSections("# Title\n## 1. Tool-call pipeline\n### 1.1 Normalize\n## 9. Jobs (ours)\n"); len(secs) != 3 ||
		!secs["1"] || !secs["1.1"] || !secs["9"] {
		t.Errorf("specSections = %v, want 1, 1.1 and 9", secs)
	}
	src := "package p\n\n// A (issue 21): x.\nfunc a() {}\n\n// Typed as a message (\"fix issue 1\") it is text.\nfunc b() {}\n\n" +
		"// See issues\n// 12, 13.\nfunc c() {}\n\nvar s = \"issue 4\"\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if got := issueCitations(fset, f); len(got) != 2 || !strings.HasPrefix(got[0], "p.go:3:") || !strings.HasPrefix(got[1], "p.go:9:") {
		t.Errorf("issueCitations = %q, want the comments at lines 3 and 9 only", got)
	}
	if !oldCitation.MatchString(lineBreak.ReplaceAllString("(SPEC\n// §9)", " ")) {
		t.Error("the upper-case citation split over two lines is not caught")
	}
}
