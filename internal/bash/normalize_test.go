package bash

import (
	"strings"
	"testing"
	"time"
)

func TestNormalizeCommand(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want NormalizedCommand
	}{
		// extracted
		{"head -n N", "git log | head -n 50", NormalizedCommand{"git log", 50, 0}},
		{"head -nN", "git log | head -n50", NormalizedCommand{"git log", 50, 0}},
		{"head -N", "git log | head -20", NormalizedCommand{"git log", 20, 0}},
		{"tail -n N", "make | tail -n 100", NormalizedCommand{"make", 0, 100}},
		{"tail -nN", "make | tail -n7", NormalizedCommand{"make", 0, 7}},
		{"tail -N", "make | tail -100", NormalizedCommand{"make", 0, 100}},
		{"no spaces around pipe", "ls|head -5", NormalizedCommand{"ls", 5, 0}},
		{"many spaces", "git log   |   head -n   10  ", NormalizedCommand{"git log", 10, 0}},
		{"tabs", "ls\t|\thead\t-3", NormalizedCommand{"ls", 3, 0}},
		{"go test 2>&1", "go test ./... 2>&1 | head -n 50", NormalizedCommand{"go test ./... 2>&1", 50, 0}},
		{"seq head -n2", "seq 1 5 | head -n2", NormalizedCommand{"seq 1 5", 2, 0}},
		{"chain: only last stage", "a | head -n 3 | tail -n 2", NormalizedCommand{"a | head -n 3", 0, 2}},
		{"for loop", "for i in 1 2; do echo $i; done | sort -n | tail -5", NormalizedCommand{"for i in 1 2; do echo $i; done | sort -n", 0, 5}},
		{"quoted pipe ignored, real tail", `grep "foo | head -5" . | tail -3`, NormalizedCommand{`grep "foo | head -5" .`, 0, 3}},
		{"pipe then newline", "a |\nhead -3", NormalizedCommand{"a", 3, 0}},
		{"backslash-newline before pipe", "a \\\n| head -3", NormalizedCommand{"a", 3, 0}},
		{"comment after pipe", "a | # keep short\n  head -3", NormalizedCommand{"a", 3, 0}},
		{"surrounding whitespace", "\n\t  ls -la | head -5 \n\n", NormalizedCommand{"ls -la", 5, 0}},
		{"trailing CRLF", "ls | head -5\r\n", NormalizedCommand{"ls", 5, 0}},
		{"leading zeros", "ls | head -n 007", NormalizedCommand{"ls", 7, 0}},
		{"quoted count", `ls | head -n "5"`, NormalizedCommand{"ls", 5, 0}},
		{"last of several statements", "cd x; ls | head -5", NormalizedCommand{"cd x; ls", 5, 0}},
		{"last of several lines", "cd x\nls | tail -2", NormalizedCommand{"cd x\nls", 0, 2}},
		{"subshell upstream", "(cd x && make) | tail -30", NormalizedCommand{"(cd x && make)", 0, 30}},
		{"heredoc body, trailing newline", "cat <<EOF\n  | head -5\nEOF\n", NormalizedCommand{"cat <<EOF\n  | head -5\nEOF", 0, 0}},
		{"end of && list", "make && ./app | head -5", NormalizedCommand{"make && ./app", 5, 0}},
		{"end of || list", "a || b | tail -n 2", NormalizedCommand{"a || b", 0, 2}},
		{"end of mixed list", "a; b && c || d | e | head -3", NormalizedCommand{"a; b && c || d | e", 3, 0}},
		{"procsubst upstream", "diff <(ls a) <(ls b) | head -4", NormalizedCommand{"diff <(ls a) <(ls b)", 4, 0}},

		// left alone (trimmed only)
		{"or-list is not a pipe", "a || head -n 5", NormalizedCommand{"a || head -n 5", 0, 0}},
		{"head -n0", "ls | head -n0", NormalizedCommand{"ls | head -n0", 0, 0}},
		{"head -n 0", "ls | head -n 0", NormalizedCommand{"ls | head -n 0", 0, 0}},
		{"head -0", "ls | head -0", NormalizedCommand{"ls | head -0", 0, 0}},
		{"inside double quotes", `echo "a | head -5"`, NormalizedCommand{`echo "a | head -5"`, 0, 0}},
		{"inside single quotes", `echo 'a | head -5'`, NormalizedCommand{`echo 'a | head -5'`, 0, 0}},
		{"heredoc body", "cat <<EOF\nx | head -5\nEOF", NormalizedCommand{"cat <<EOF\nx | head -5\nEOF", 0, 0}},
		{"heredoc body after stage", "cat <<EOF | head -5\nbody\nEOF", NormalizedCommand{"cat <<EOF | head -5\nbody\nEOF", 0, 0}},
		{"comment", "ls # | head -5", NormalizedCommand{"ls # | head -5", 0, 0}},
		{"trailing comment", "ls | head -5 # first five", NormalizedCommand{"ls | head -5 # first five", 0, 0}},
		{"dynamic count", "ls | head -n $N", NormalizedCommand{"ls | head -n $N", 0, 0}},
		{"dynamic count braces", "ls | head -${N}", NormalizedCommand{"ls | head -${N}", 0, 0}},
		{"followed by ;", "ls | head -5; echo done", NormalizedCommand{"ls | head -5; echo done", 0, 0}},
		{"trailing ;", "ls | head -5;", NormalizedCommand{"ls | head -5;", 0, 0}},
		{"followed by &&", "ls | head -5 && echo ok", NormalizedCommand{"ls | head -5 && echo ok", 0, 0}},
		{"not the last statement", "ls | head -5\necho done", NormalizedCommand{"ls | head -5\necho done", 0, 0}},
		{"pipe-all", "(cd x && make) |& tail -30", NormalizedCommand{"(cd x && make) |& tail -30", 0, 0}},
		{"redirect after head", "cat file | head -n 5 > out.txt", NormalizedCommand{"cat file | head -n 5 > out.txt", 0, 0}},
		{"stderr redirect on head", "ls | head -5 2>/dev/null", NormalizedCommand{"ls | head -5 2>/dev/null", 0, 0}},
		{"file argument", "ls | head -n 5 file", NormalizedCommand{"ls | head -n 5 file", 0, 0}},
		{"head -c", "ls | head -c 100", NormalizedCommand{"ls | head -c 100", 0, 0}},
		{"tail -f", "ls | tail -f", NormalizedCommand{"ls | tail -f", 0, 0}},
		{"--lines=", "ls | head --lines=5", NormalizedCommand{"ls | head --lines=5", 0, 0}},
		{"tail +N", "ls | tail -n +5", NormalizedCommand{"ls | tail -n +5", 0, 0}},
		{"tail +N bare", "ls | tail +5", NormalizedCommand{"ls | tail +5", 0, 0}},
		{"head -n -5", "ls | head -n -5", NormalizedCommand{"ls | head -n -5", 0, 0}},
		{"extra flag", "ls | tail -q -n 5", NormalizedCommand{"ls | tail -q -n 5", 0, 0}},
		{"bare head", "ls | head", NormalizedCommand{"ls | head", 0, 0}},
		{"head alone", "head -5 file", NormalizedCommand{"head -5 file", 0, 0}},
		{"head -5 no pipe", "head -5", NormalizedCommand{"head -5", 0, 0}},
		{"quoted head name", `ls | "head" -5`, NormalizedCommand{`ls | "head" -5`, 0, 0}},
		{"escaped head name", `ls | \head -5`, NormalizedCommand{`ls | \head -5`, 0, 0}},
		{"assignment on stage", "ls | LC_ALL=C head -5", NormalizedCommand{"ls | LC_ALL=C head -5", 0, 0}},
		{"backgrounded", "ls | head -5 &", NormalizedCommand{"ls | head -5 &", 0, 0}},
		{"negated", "! ls | head -5", NormalizedCommand{"! ls | head -5", 0, 0}},
		{"negated in && list", "a && ! ls | head -5", NormalizedCommand{"a && ! ls | head -5", 0, 0}},
		{"backgrounded && list", "a && ls | head -5 &", NormalizedCommand{"a && ls | head -5 &", 0, 0}},
		{"head as the && operand", "a && head -5", NormalizedCommand{"a && head -5", 0, 0}},
		{"time", "time ls | head -5", NormalizedCommand{"time ls | head -5", 0, 0}},
		{"count overflow", "ls | head -99999999999999999999999", NormalizedCommand{"ls | head -99999999999999999999999", 0, 0}},
		{"newline then pipe does not parse", "a\n| head -3", NormalizedCommand{"a\n| head -3", 0, 0}},
		{"unparsable: open quote", "  echo \"abc | head -5  ", NormalizedCommand{"echo \"abc | head -5", 0, 0}},
		{"unparsable: bad syntax", "ls | | head -5", NormalizedCommand{"ls | | head -5", 0, 0}},
		{"empty", "   \n", NormalizedCommand{"", 0, 0}},
		{"nbsp not trimmed", "\u00a0ls | head -5", NormalizedCommand{"\u00a0ls", 5, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NormalizeCommand(tt.in)
			if got != tt.want {
				t.Errorf("NormalizeCommand(%q)\n got  %#v\n want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// The command the tool runs has the removed stage's upstream in a subshell,
// as bash ran it as a pipeline stage; without a limit it is the trimmed
// command itself.
func TestNormalizeRunsUpstreamInSubshell(t *testing.T) {
	for in, want := range map[string]string{
		"  seq 1 5 | head -2\n":                    "( seq 1 5 )",
		"cd x; ls | head -5":                       "cd x; ( ls )",
		"make && ./app 2>&1 | tail -n 3":           "make && ( ./app 2>&1 )",
		"(cd x && make) | tail -30":                "( (cd x && make) )",
		"a | b | head -3":                          "( a | b )",
		"exit 3 | tail -n 1":                       "( exit 3 )",
		"for i in 1 2; do echo $i; done | head -1": "( for i in 1 2; do echo $i; done )",
		"a \\\n| head -3":                          "( a )",
		"ls | head -5; echo done":                  "ls | head -5; echo done",
		"  echo hi  ":                              "echo hi",
	} {
		if _, got := normalize(in); got != want {
			t.Errorf("normalize(%q) runs %q, want %q", in, got, want)
		}
	}
}

// With a nonce, the final pipeline's subshell prints the mark first when
// statements come before it; a command that is only that pipeline has none
// (the whole output may be cut).
func TestNormalizeMarksTheFinalPipeline(t *testing.T) {
	const m = `( { \builtin printf '\033]6974;%s\007' N0nce;} 2>/dev/null; `
	for in, want := range map[string]string{
		"cd x; ls | head -5":                    "cd x; " + m + "ls )",
		"make && ./app 2>&1 | head -n 3":        "make && " + m + "./app 2>&1 )",
		"a || b | head -n 2":                    "a || " + m + "b )",
		"for i in 1 2; do :; done; c | head -1": "for i in 1 2; do :; done; " + m + "c )",
		"x=1\n{ a; b; } | head -3":              "x=1\n" + m + "{ a; b; } )",
		"  seq 1 5 | head -2\n":                 "",
		"{ a; b; } | head -3":                   "",
		"(a; b) | head -3":                      "",
		"ls | head -5; echo done":               "",
		"echo hi":                               "",
	} {
		_, run, marked := normalizeMarked(in, "N0nce")
		if marked != (want != "") || marked && run != want {
			t.Errorf("normalizeMarked(%q) runs %q (marked %v), want %q", in, run, marked, want)
		}
		if _, plain := normalize(in); !marked && run != plain {
			t.Errorf("normalizeMarked(%q) unmarked runs %q, normalize %q", in, run, plain)
		}
	}
}

func TestNormalizeCommandHeredocIndentationPreserved(t *testing.T) {
	body := "python3 - <<'PY'\n" +
		"import sys\n" +
		"for i in range(3):\n" +
		"    if i:\n" +
		"\t\tprint(i)   \n" +
		"\n" +
		"    print('done | head -5')\n" +
		"PY"
	// Unchanged apart from the outer trim.
	if got := NormalizeCommand("\n  " + body + "\n\n"); got.Command != body || got.HeadLines != 0 || got.TailLines != 0 {
		t.Fatalf("heredoc changed:\n%q\nwant\n%q", got.Command, body)
	}
	// A limit after the heredoc body cannot be a suffix cut; left alone.
	in := "python3 - <<'PY' | tail -n 2\n    print(1)\nPY"
	if got := NormalizeCommand(in); got.Command != in || got.TailLines != 0 {
		t.Fatalf("got %#v", got)
	}
	// A limit on a later statement keeps the heredoc byte for byte.
	in = body + "\nls | tail -n 2"
	if got := NormalizeCommand(in); got.Command != body+"\nls" || got.TailLines != 2 {
		t.Fatalf("got %#v", got)
	}
}

func TestNormalizeCommandLarge(t *testing.T) {
	// 1 MB: one long line of statements, then a limit.
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("echo 'x | head -5' \"$HOME\" && ")
	}
	b.WriteString("true")
	upstream := b.String()
	in := upstream + " | head -n 3"
	start := time.Now()
	got := NormalizeCommand(in)
	elapsed := time.Since(start)
	// `a && b | head` ends in a pipeline: extracted, and fast.
	if got.Command != upstream || got.HeadLines != 3 {
		t.Fatalf("&& list: head %d, len %d vs %d", got.HeadLines, len(got.Command), len(upstream))
	}
	// Same size as separate lines ending in a pipeline: extracted.
	lines := strings.ReplaceAll(upstream, " && ", "\n")
	in = lines + " | tail -4"
	start = time.Now()
	got = NormalizeCommand(in)
	elapsed += time.Since(start)
	if got.Command != lines || got.TailLines != 4 {
		t.Fatalf("not extracted: tail %d, len %d vs %d", got.TailLines, len(got.Command), len(lines))
	}
	// Unparsable 1 MB input.
	in = strings.Repeat("echo a; ", 1<<20/8) + "echo 'unterminated | head -5"
	start = time.Now()
	got = NormalizeCommand(in)
	elapsed += time.Since(start)
	if got.HeadLines != 0 || got.Command != trimShellSpace(in) {
		t.Fatalf("unparsable input changed")
	}
	// A hang guard against quadratic behaviour, not a speed assertion
	// (the race detector alone makes this ~30x slower).
	if elapsed > 2*time.Minute {
		t.Fatalf("took %v", elapsed)
	}
	t.Logf("3 MB normalized in %v", elapsed)
}

func FuzzNormalizeCommand(f *testing.F) {
	for _, s := range []string{
		"git log | head -20",
		"go test ./... 2>&1 | head -n 50",
		"a || head -n 5",
		"a | head -n 3 | tail -n 2",
		"cat <<EOF\nx | head -5\nEOF",
		"cat <<EOF | head -5\nbody\nEOF",
		"ls # | head -5",
		"a \\\n| head -3",
		"(cd x && make) |& tail -30",
		"echo \"a | head -5",
		"for i in 1 2; do echo $i; done | sort -n | tail -5",
		"make && ./app | head -5",
		"a || b | tail -n 2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, run := normalize(raw)
		if got != NormalizeCommand(raw) {
			t.Fatalf("normalize and NormalizeCommand differ on %q", raw)
		}
		trimmed := trimShellSpace(raw)
		if got.HeadLines < 0 || got.TailLines < 0 || (got.HeadLines > 0 && got.TailLines > 0) {
			t.Fatalf("bad limits %#v", got)
		}
		if got.Command != trimShellSpace(got.Command) {
			t.Fatalf("result not trimmed: %q", got.Command)
		}
		if !strings.Contains(raw, got.Command) {
			t.Fatalf("result %q is not a substring of %q", got.Command, raw)
		}
		if got.HeadLines == 0 && got.TailLines == 0 {
			if got.Command != trimmed || run != trimmed {
				t.Fatalf("no limit but command changed: %q -> %q, runs %q", raw, got.Command, run)
			}
			return
		}
		if !strings.HasPrefix(trimmed, got.Command) || len(got.Command) >= len(trimmed) {
			t.Fatalf("limit extracted but %q is not a proper prefix of %q", got.Command, trimmed)
		}
		// The removed suffix must name the stage.
		rest := trimmed[len(got.Command):]
		if !strings.Contains(rest, "|") || (!strings.Contains(rest, "head") && !strings.Contains(rest, "tail")) {
			t.Fatalf("removed suffix %q does not look like a head/tail stage", rest)
		}
		// What runs is the stripped command with a subshell around its end:
		// P + "( " + X + " )" where P + X is the stripped command (X's end
		// may keep a character the trim removes, such as \v), or the
		// stripped command itself when the parser rejects that.
		if _, err := parseBashSource(run); err != nil {
			t.Fatalf("runs %q, which does not parse: %v", run, err)
		}
		inner, ok := strings.CutSuffix(run, " )")
		found := run == got.Command
		for i := 0; ok && !found && i+2 <= len(inner); i++ {
			found = inner[i:i+2] == "( " && trimShellSpace(inner[:i]+inner[i+2:]) == got.Command
		}
		if !found {
			t.Fatalf("runs %q for %q", run, got.Command)
		}
		// With a mark, the marked command is the unmarked one with the mark
		// printed first in the final pipeline's subshell, or the same.
		const mark = `{ \builtin printf '\033]6974;%s\007' N0nce;} 2>/dev/null; `
		got2, marked, isMarked := normalizeMarked(raw, "N0nce")
		if got2 != got || isMarked && strings.Replace(marked, "( "+mark, "( ", 1) != run ||
			!isMarked && marked != run {
			t.Fatalf("marked %q (%v) for %q, unmarked %q", marked, isMarked, raw, run)
		}
		if _, err := parseBashSource(marked); err != nil {
			t.Fatalf("marked %q does not parse: %v", marked, err)
		}
		// Idempotence on the stripped command is not required (it may hold
		// another stage), but normalizing it again must not panic either.
		_ = NormalizeCommand(got.Command)
	})
}
