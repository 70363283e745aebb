package tui

import (
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

const mdSample = "# Plan\n\nRun the **tests** with `make test`, then read the long explanation that follows so it wraps.\n\n" +
	"- first\n- second\n\n```go\nfunc main() {\n\tprintln(1)\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"

func TestMarkdownRender(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		md := newMarkdown(noColor)
		for _, w := range []int{30, 80} {
			out := md.render(mdSample, w)
			plain := ansi.Strip(out)
			for _, want := range []string{"Plan", "tests", "make", "• first", "func main() {", "    println(1)"} {
				if !strings.Contains(plain, want) {
					t.Errorf("noColor=%v w=%d: %q missing:\n%s", noColor, w, want, plain)
				}
			}
			if strings.Contains(plain, "**") || strings.Contains(plain, "```") {
				t.Errorf("noColor=%v w=%d: markup left as typed:\n%s", noColor, w, plain)
			}
			for i, l := range strings.Split(out, "\n") {
				if lw := ansi.StringWidth(l); lw > w {
					t.Errorf("noColor=%v w=%d: line %d is %d wide: %q", noColor, w, i, lw, l)
				}
				if strings.HasSuffix(ansi.Strip(l), " ") {
					t.Errorf("noColor=%v w=%d: line %d keeps its padding: %q", noColor, w, i, l)
				}
			}
			if strings.HasPrefix(plain, "\n") || strings.HasSuffix(plain, "\n") || strings.Contains(plain, "\n\n\n") {
				t.Errorf("noColor=%v w=%d: stray blank lines:\n%q", noColor, w, plain)
			}
			if noColor && strings.ContainsAny(out, "\t") {
				t.Errorf("tab left in the output")
			}
			if noColor {
				// Emphasis may stay; colours may not.
				if strings.Contains(out, "\x1b[38") || strings.Contains(out, ";38;") || strings.Contains(out, "\x1b[48") || strings.Contains(out, ";48;") {
					t.Errorf("NO_COLOR output has colour: %q", out)
				}
			}
		}
	}
}

// Any prefix of an answer renders, as it streams in.
func TestMarkdownPrefixes(t *testing.T) {
	md := newMarkdown(false)
	for i := range len(mdSample) {
		out := md.render(mdSample[:i], 40)
		for _, l := range strings.Split(out, "\n") {
			if ansi.StringWidth(l) > 40 {
				t.Fatalf("prefix %d: line too wide: %q", i, l)
			}
		}
	}
}

// BenchmarkMarkdownRender is one re-render of a long streamed answer (about
// 4 KB: the size where throttling live re-renders starts to matter).
func BenchmarkMarkdownRender(b *testing.B) {
	md := newMarkdown(false)
	doc := strings.Repeat(mdSample, 8)
	md.render(doc, 100)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		md.render(doc, 100)
	}
}

func TestSplitBlocks(t *testing.T) {
	got := splitBlocks("a\nb\n\n```\nx\n\ny\n```\n\n\n- l\n")
	want := []string{"a\nb", "```\nx\n\ny\n```", "- l"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("splitBlocks = %q, want %q", got, want)
	}
}

// A streaming answer renders the same text as the finished one, block by
// block, and re-renders only the block being written.
func TestLiveBlocks(t *testing.T) {
	md := newMarkdown(true)
	cache := map[string]string{}
	live := ansi.Strip(md.liveBlocks(mdSample, 60, cache))
	whole := ansi.Strip(md.render(mdSample, 60))
	if live != whole {
		t.Errorf("live rendering differs from the whole:\n--- live ---\n%s\n--- whole ---\n%s", live, whole)
	}
	n := len(cache)
	md.liveBlocks(mdSample+"\nmore", 60, cache)
	if len(cache) != n+1 {
		t.Errorf("an update rendered %d blocks, want 1", len(cache)-n)
	}
}

// BenchmarkMarkdownLiveUpdate is one re-render of the same answer while it
// streams: only its last block is new.
func BenchmarkMarkdownLiveUpdate(b *testing.B) {
	md := newMarkdown(false)
	doc := strings.Repeat(mdSample, 8)
	cache := map[string]string{}
	md.liveBlocks(doc, 100, cache)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		md.liveBlocks(doc+"tail "+strconv.Itoa(i), 100, cache)
	}
}

// TestCodeHighlight: a fenced block in a known language gets keyword,
// string, comment and number colours; an unknown language stays in the
// code colour; NO_COLOR stays plain.
func TestCodeHighlight(t *testing.T) {
	md := newMarkdown(false)
	cs := md.codeStyles
	out := md.render("```go\nfunc f() int { return 42 } // answer\ns := \"x\"\n```", 80)
	for _, want := range []string{
		cs.keyword.Render("func"), cs.keyword.Render("int"), cs.keyword.Render("return"),
		cs.number.Render("42"), cs.comment.Render("// answer"), cs.str.Render(`"x"`),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%q", want, out)
		}
	}
	if got := ansi.Strip(out); got != "  func f() int { return 42 } // answer\n  s := \"x\"" {
		t.Errorf("text %q", got)
	}
	// A block comment and a raw string carry over to the next lines.
	out = md.render("```js\n/* one\ntwo */ let s = `a\nb`;\n```", 80)
	for _, want := range []string{cs.comment.Render("/* one"), cs.comment.Render("two */"), cs.keyword.Render("let"), cs.str.Render("`a"), cs.str.Render("b`")} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%q", want, out)
		}
	}
	// In a shell, # starts a comment only at a word's start.
	out = md.render("```sh\necho $# ${#x} # count\n```", 80)
	if !strings.Contains(out, cs.comment.Render("# count")) || strings.Contains(out, cs.comment.Render("# ${#x} # count")) {
		t.Errorf("shell comment: %q", out)
	}
	if out := md.render("```brainfuck\n+++ if\n```", 80); out != "  "+md.s.code.Render("+++ if") {
		t.Errorf("unknown language: %q", out)
	}
	if out := newMarkdown(true).render("```go\nfunc f() {}\n```", 80); out != "  func f() {}" {
		t.Errorf("NO_COLOR: %q", out)
	}
}

// TestTableAlignment: `---:` columns are right-aligned, `:---:` centred.
func TestTableAlignment(t *testing.T) {
	out := newMarkdown(true).render("| name | size | mid |\n|---|---:|:---:|\n| a | 1 | x |\n| bbbb | 1000 | yyyyy |", 80)
	want := "name │ size │  mid\n" +
		"─────┼──────┼──────\n" +
		"a    │    1 │   x\n" +
		"bbbb │ 1000 │ yyyyy"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
