package sink

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

const fffd = "\uFFFD"

var sanitizeCases = []struct {
	name, in, want string
}{
	{"empty", "", ""},
	{"plain", "hello world\n", "hello world\n"},
	{"tab kept", "a\tb\n", "a\tb\n"},
	{"crlf", "a\r\nb\r\n", "a\nb\n"},
	{"lone cr", "a\rb", "a\rb"},
	{"cr at end", "a\r", "a"},
	{"cr cr lf", "a\r\r\nb", "a\nb"},
	{"cr cr text", "a\r\rb", "a\rb"},
	{"lf cr", "a\n\rb", "a\n\rb"},
	{"only crlf", "\r\n\r\n", "\n\n"},
	{"only cr", "\r\r", ""},
	{"progress bar", "10%\r50%\r100%\n", "10%\r50%\r100%\n"},
	{"cr then erase then lf", "abc\r\x1b[K\ndef", "abc\ndef"},
	{"cr then erase then text", "abc\r\x1b[2Kdef", "abc\rdef"},
	{"cr nul text", "a\r\x00b", "a\rb"},
	{"cr before incomplete character at end", "a\r\xe2\x82", "a\r" + fffd + fffd},
	{"cr nul lf", "a\r\x00\nb", "a\nb"},
	{"nul", "a\x00b\x00", "ab"},
	{"bel bs vt ff", "a\x07b\x08c\x0bd\x0ce", "abcde"},
	{"all c0 but lf tab cr", "\x01\x02\x03\x04\x05\x06\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1c\x1d\x1e\x1fx", "x"},
	{"del", "a\x7fb", "ab"},
	{"sgr", "\x1b[31mred\x1b[0m plain\n", "red plain\n"},
	{"sgr truecolor subparams", "\x1b[38:2::255:0:0mx\x1b[m", "x"},
	{"csi private", "\x1b[?25lhidden\x1b[?25h", "hidden"},
	{"csi intermediate", "\x1b[1 qx", "x"},
	{"csi erase and home", "\x1b[2J\x1b[Hx", "x"},
	{"csi cancelled by can", "\x1b[31\x18x", "x"},
	{"csi cancelled by sub", "\x1b[31\x1ax", "x"},
	{"csi lf inside", "\x1b[3\n1mX", "\nX"},
	{"csi crlf inside", "a\x1b[\r\nmX", "a\nX"},
	{"csi tab inside", "\x1b[1\t2mX", "\tX"},
	{"csi aborted by non-ascii", "\x1b[3émx", "émx"},
	{"csi aborted by raw c1 byte", "\x1b[3\x9bx", fffd + "x"},
	{"osc bel", "\x1b]0;title\x07text", "text"},
	{"osc st", "\x1b]2;title\x1b\\text", "text"},
	{"osc hyperlink", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
	{"osc utf8 title with 9c byte", "\x1b]0;✳ Claude Ü\x07x", "x"},
	{"osc swallows controls", "\x1b]0;a\nb\rc\x07x", "x"},
	{"osc cancelled by can", "\x1b]0;t\x18x", "x"},
	{"osc then esc starts csi", "\x1b]0;t\x1b[31mx", "x"},
	{"dcs sixel", "\x1bPq#0;2;0;0;0#0~~@@-\x1b\\after", "after"},
	{"dcs bel is data", "\x1bP1$r\x07still\x1b\\x", "x"},
	{"dcs tmux passthrough", "\x1bPtmux;\x1b\x1b]52;c;Zm9v\x07\x1b\\x", "x"},
	{"apc kitty graphics", "\x1b_Gf=100,a=T;AAAA\x1b\\x", "x"},
	{"apc utf8 payload", "\x1b_é✳\x1b\\x", "x"},
	{"pm", "\x1b^private\x1b\\x", "x"},
	{"sos", "\x1bXstring\x1b\\x", "x"},
	{"esc save restore", "\x1b7save\x1b8", "save"},
	{"esc reset", "\x1bcx", "x"},
	{"esc keypad", "\x1b=\x1b>x", "x"},
	{"esc charset", "\x1b(B\x1b)0x", "x"},
	{"esc dec test", "\x1b#8x", "x"},
	{"esc esc", "\x1b\x1b[mX", "X"},
	{"esc lf executes", "a\x1b\nb", "a\n"},
	{"lone esc at end", "abc\x1b", "abc"},
	{"unterminated csi at end", "abc\x1b[31", "abc"},
	{"unterminated osc at end", "abc\x1b]0;title", "abc"},
	{"esc then non-ascii", "\x1bé", "é"},
	{"esc then raw c1 byte", "\x1b\x9dX", fffd + "X"},
	{"invalid byte", "a\xffb", "a" + fffd + "b"},
	{"invalid continuation", "\x80\xbf", fffd + fffd},
	{"truncated 3-byte then ascii", "\xe2\x82x", fffd + fffd + "x"},
	{"truncated 3-byte at end", "a\xe2\x82", "a" + fffd + fffd},
	{"truncated 4-byte at end", "a\xf0\x9f\x98", "a" + fffd + fffd + fffd},
	{"overlong", "\xc0\xaf", fffd + fffd},
	{"surrogate", "\xed\xa0\x80", fffd + fffd + fffd},
	{"beyond max rune", "\xf4\x90\x80\x80", fffd + fffd + fffd + fffd},
	{"literal fffd kept", fffd, fffd},
	{"c1 code points", "a\u0080b\u0085c\u009bd\u009fe", "abcde"},
	{"nbsp kept", "a\u00a0b", "a\u00a0b"},
	{"raw c1 bytes invalid", "a\x9b31mb", "a" + fffd + "31mb"},
	{"emoji", "ok 😀 ✅\n", "ok 😀 ✅\n"},
	{"cjk", "日本語のテキスト\n", "日本語のテキスト\n"},
	{"mixed", "\x1b[1m\x1b[32m✓\x1b[0m test passed\r\n", "✓ test passed\n"},
}

// feed sanitizes the pieces as one stream with Process, the zero-copy API.
func feed(pieces ...[]byte) string {
	var z Sanitizer
	var out []byte
	for _, p := range pieces {
		out = append(out, z.Process(p)...)
	}
	return string(z.Flush(out))
}

// TestSanitizeTable checks the stream (Process) against the table, and
// Sanitize against the final state of that stream.
func TestSanitizeTable(t *testing.T) {
	for _, tc := range sanitizeCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := feed([]byte(tc.in)); got != tc.want {
				t.Errorf("Process(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got, want := Sanitize(tc.in), finalOracle(tc.want); got != want {
				t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

var finalCases = []struct{ in, want string }{
	{"", ""},
	{"plain\n", "plain\n"},
	{"10%\r50%\r100%\n", "100%\n"},
	{"abc\rX", "X"}, // the whole line, not only its first column
	{"abc\r", "abc"},
	{"abc\r\n", "abc\n"},
	{"abc\r\r\ndef", "abc\ndef"},
	{"abc\r\rX", "X"},
	{"one\ntwo\rthree\nfour", "one\nthree\nfour"},
	{"\rx", "x"},
	{"a\rb\rc", "c"},
	{"a\n\rb", "a\nb"},
	{"a\n\r\nb", "a\n\nb"},
	{"tab\there\rover", "over"},
	{"日本語\r😀", "😀"},
}

func TestFinalState(t *testing.T) {
	for _, tc := range finalCases {
		if got := FinalState(tc.in); got != tc.want {
			t.Errorf("FinalState(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := finalOracle(tc.in); got != tc.want {
			t.Errorf("finalOracle(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// AppendFinal overwrites only the last line of what it appends to.
		if got := string(AppendFinal([]byte("kept\npart"), []byte(tc.in))); got != finalOracle("kept\npart"+tc.in) {
			t.Errorf("AppendFinal after a partial line: %q", got)
		}
	}
	// A progress bar of 100 000 frames is one line.
	var b strings.Builder
	b.WriteString("Downloading\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "\r%3d%% [%-20s]", i/1000, strings.Repeat("=", i/5000))
	}
	b.WriteString("\r100% done\n")
	if got := Sanitize(b.String()); got != "Downloading\n100% done\n" {
		t.Errorf("progress bar: %d lines, %.80q", strings.Count(got, "\n"), got)
	}
}

// finalOracle is FinalState written naively: the text split into lines,
// each line split at its CRs, and the last non-empty piece kept.
func finalOracle(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		pieces := strings.Split(l, "\r")
		l = pieces[0]
		for _, p := range pieces[1:] {
			if p != "" {
				l = p
			}
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// TestSanitizeSplits checks that chunk boundaries never matter: every case,
// and all cases concatenated, cut at every position, into three pieces at
// many position pairs, and into single bytes.
func TestSanitizeSplits(t *testing.T) {
	var all strings.Builder
	inputs := []string{}
	for _, tc := range sanitizeCases {
		inputs = append(inputs, tc.in)
		all.WriteString(tc.in)
		all.WriteString("|")
	}
	inputs = append(inputs, all.String())
	for _, in := range inputs {
		want := feed([]byte(in))
		b := []byte(in)
		for i := 0; i <= len(b); i++ {
			if got := feed(b[:i], b[i:]); got != want {
				t.Fatalf("%q split at %d: got %q, want %q", in, i, got, want)
			}
			for j := i; j <= len(b) && len(b) < 64; j++ {
				if got := feed(b[:i], b[i:j], b[j:]); got != want {
					t.Fatalf("%q split at %d,%d: got %q, want %q", in, i, j, got, want)
				}
			}
		}
		pieces := make([][]byte, len(b))
		for i := range b {
			pieces[i] = b[i : i+1]
		}
		if got := feed(pieces...); got != want {
			t.Fatalf("%q in 1-byte pieces: got %q, want %q", in, got, want)
		}
	}
}

func TestSanitizeSplitEmoji(t *testing.T) {
	in := []byte("a😀b")
	for i := 1; i < len(in); i++ {
		for j := i; j < len(in); j++ {
			if got := feed(in[:i], in[i:j], in[j:]); got != "a😀b" {
				t.Errorf("split %d,%d: %q", i, j, got)
			}
		}
	}
	// Flush in the middle of the character: the bytes seen so far are
	// invalid then, one U+FFFD each.
	var z Sanitizer
	out := z.Append(nil, in[:3])
	if got := string(z.Flush(out)); got != "a"+fffd+fffd {
		t.Errorf("flush mid-emoji: %q", got)
	}
}

func TestSanitizeSequenceBound(t *testing.T) {
	const n = MaxSequenceBytes
	tests := []struct {
		name, in, want string
	}{
		// ESC and ']' are the first two of the n bytes the parser consumes.
		{"osc unterminated", "\x1b]" + strings.Repeat("a", 70000), strings.Repeat("a", 70000-(n-2))},
		{"csi unterminated", "\x1b[" + strings.Repeat("1", 70000), strings.Repeat("1", 70000-(n-2))},
		{"osc terminated within bound", "\x1b]" + strings.Repeat("a", n-3) + "\x07x", "x"},
		{"bound reached on last payload byte", "\x1b]" + strings.Repeat("a", n-2) + "b\n", "b\n"},
		{"terminator one past bound is text", "\x1b]" + strings.Repeat("a", n-3) + "b\x07x", "x"},
		{"bound then newline", "\x1b]" + strings.Repeat("a", n) + "\nrest", "aa\nrest"},
		{"back to back sequences reset the count", strings.Repeat("\x1b]0;title\x07", 20000) + "x", "x"},
		{"chained terminators reset the count", strings.Repeat("\x1b]0;title\x1b", 20000) + "\\x", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Sanitize(tc.in)
			if got != tc.want {
				t.Fatalf("got %d bytes %.40q..., want %d bytes %.40q...", len(got), got, len(tc.want), tc.want)
			}
			b := []byte(tc.in)
			for _, cut := range []int{1, 2, 3, 100, n - 3, n - 2, n - 1, n, n + 1, len(b) - 1} {
				if cut < 0 || cut > len(b) {
					continue
				}
				if got := feed(b[:cut], b[cut:]); got != tc.want {
					t.Fatalf("split at %d differs", cut)
				}
			}
			var pieces [][]byte
			for i := 0; i < len(b); i += 7 {
				pieces = append(pieces, b[i:min(i+7, len(b))])
			}
			if got := feed(pieces...); got != tc.want {
				t.Fatalf("7-byte pieces differ")
			}
		})
	}
}

// TestCleanPrefix checks the SWAR scans against a byte loop for every byte
// value at every position, for sizes that reach each loop (32-, 8- and
// 1-byte steps) and their boundaries.
func TestCleanPrefix(t *testing.T) {
	naiveText := func(p []byte) int {
		for i, c := range p {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return i
			}
		}
		return len(p)
	}
	naive := func(p []byte) int {
		for i, c := range p {
			if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
				return i
			}
		}
		return len(p)
	}
	sizes := []int{}
	for n := 0; n <= 41; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 63, 64, 65, 75)
	for _, size := range sizes {
		for pos := 0; pos < size; pos++ {
			for c := 0; c < 256; c++ {
				p := bytes.Repeat([]byte("a\n\t~ "), 16)[:size]
				p[pos] = byte(c)
				// A dirty byte after the probed one must not hide it.
				if pos+1 < size {
					p[size-1] = 0x80
				}
				if got, want := cleanPrefix(p), naive(p); got != want {
					t.Fatalf("size %d pos %d byte %#x: got %d, want %d", size, pos, c, got, want)
				}
				if got, want := cleanString(string(p)), naive(p) == len(p); got != want {
					t.Fatalf("string: size %d pos %d byte %#x: got %v, want %v", size, pos, c, got, want)
				}
				if got, want := textPrefix(p), naiveText(p); got != want {
					t.Fatalf("textPrefix: size %d pos %d byte %#x: got %d, want %d", size, pos, c, got, want)
				}
			}
		}
	}
}

func TestProcessAliases(t *testing.T) {
	same := func(a, b []byte) bool { return len(a) > 0 && &a[0] == &b[0] }
	var z Sanitizer
	p := []byte("clean line\n\tindented ✓ ünïcödé\n")
	if out := z.Process(p); !same(out, p) || string(out) != string(p) {
		t.Fatalf("clean chunk was copied: %q", out)
	}
	// A character split at the end is held, and the rest still aliases.
	p = []byte("text é\xe2\x9c")
	if out := z.Process(p); !same(out, p) || string(out) != "text é" {
		t.Fatalf("chunk with held tail: %q", out)
	}
	p = []byte("\x93 done\n")
	if out := z.Process(p); string(out) != "✓ done\n" {
		t.Fatalf("completed character: %q", out)
	}
	// A dirty chunk goes to the scratch buffer, which is reused.
	p = []byte("\x1b[1mbold\x1b[0m\n")
	out1 := z.Process(p)
	if string(out1) != "bold\n" || same(out1, p) {
		t.Fatalf("dirty chunk: %q", out1)
	}
	out2 := z.Process([]byte("\x1b[1mbold\x1b[0m\n"))
	if !same(out1, out2) {
		t.Fatalf("scratch buffer not reused")
	}
	// Aliasing must not leak into scratch: the next dirty output must not
	// overwrite the caller's chunk.
	clean := []byte("keep me intact")
	z.Process(clean)
	z.Process([]byte("\x00overwrite?\x00"))
	if string(clean) != "keep me intact" {
		t.Fatalf("caller's buffer modified: %q", clean)
	}
}

func TestSanitizeAllocs(t *testing.T) {
	s := strings.Repeat("0123456789abcdef\n", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Sanitize(s) }); n != 0 {
		t.Errorf("Sanitize of clean text allocates %v times", n)
	}
	var z Sanitizer
	b := []byte(s)
	if n := testing.AllocsPerRun(100, func() { _ = z.Process(b) }); n != 0 {
		t.Errorf("Process of clean text allocates %v times", n)
	}
}

// textOracle is the specification for input without ESC, written
// naively: CR pairing on the surviving bytes, control removal, and range
// decoding (one U+FFFD per invalid byte, like a []rune conversion).
func textOracle(s string) string {
	var b strings.Builder
	cr := false
	emit := func(r rune) {
		if cr {
			cr = false
			if r != '\n' {
				b.WriteByte('\r')
			}
		}
		b.WriteRune(r)
	}
	for _, r := range s { // invalid bytes decode as one RuneError each
		switch {
		case r == '\r':
			cr = true
		case r == '\n' || r == '\t':
			emit(r)
		case r < 0x20 || r >= 0x7f && r < 0xa0:
		default:
			emit(r)
		}
	}
	return b.String()
}

// stripOracle is the specification for ASCII input: x/ansi's own Strip
// (which keeps executed controls), then the text rules.
func stripOracle(s string) string {
	return textOracle(ansi.Strip(s))
}

func TestOracles(t *testing.T) {
	for _, tc := range sanitizeCases {
		if strings.IndexByte(tc.in, 0x1b) < 0 {
			if got := textOracle(tc.in); got != tc.want {
				t.Errorf("textOracle disagrees with table on %q: %q", tc.in, got)
			}
		}
		if isASCII(tc.in) {
			if got := stripOracle(tc.in); got != tc.want {
				t.Errorf("stripOracle disagrees with table on %q: %q", tc.in, got)
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
