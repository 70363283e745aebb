package pty

import (
	"strconv"
	"testing"
)

// TestNormalizeInputKeys pins the exact bytes, since programs match them literally.
func TestNormalizeInputKeys(t *testing.T) {
	const (
		off = false
		on  = true
	)
	tests := []struct {
		name string
		in   string
		app  bool
		want string
	}{
		// Plain text and legacy input the program already understands.
		{"empty", "", off, ""},
		{"text", "hello, world", off, "hello, world"},
		{"utf8 text", "héllo ✓ 日本", off, "héllo ✓ 日本"},
		{"control bytes", "\x03\x04\r\t\x7f\x00", off, "\x03\x04\r\t\x7f\x00"},
		{"lone esc", "\x1b", off, "\x1b"},
		{"legacy alt+x", "\x1bx", off, "\x1bx"},
		{"esc esc", "\x1b\x1b", off, "\x1b\x1b"},
		{"legacy shift+tab", "\x1b[Z", off, "\x1b[Z"},
		{"legacy F1", "\x1bOP", off, "\x1bOP"},
		{"legacy F4", "\x1bOS", on, "\x1bOS"},
		{"legacy keypad SS3", "\x1bOM", on, "\x1bOM"},
		{"legacy pgup", "\x1b[5~", off, "\x1b[5~"},
		{"legacy ctrl+up", "\x1b[1;5A", on, "\x1b[1;5A"},
		{"legacy ctrl+F3 (also a CPR)", "\x1b[1;5R", off, "\x1b[1;5R"},
		{"legacy F13 rxvt", "\x1b[25~", off, "\x1b[25~"},

		// Legacy cursor keys follow the program's DECCKM, not the user's terminal's.
		{"legacy up normal", "\x1b[A", off, "\x1b[A"},
		{"legacy up to app", "\x1b[A", on, "\x1bOA"},
		{"legacy ss3 down to normal", "\x1bOB", off, "\x1b[B"},
		{"legacy ss3 right app", "\x1bOC", on, "\x1bOC"},
		{"legacy left to app", "\x1b[D", on, "\x1bOD"},
		{"legacy home to app", "\x1b[H", on, "\x1bOH"},
		{"legacy end to normal", "\x1bOF", off, "\x1b[F"},
		{"legacy begin", "\x1b[E", on, "\x1bOE"},
		{"legacy 1A", "\x1b[1A", on, "\x1bOA"},
		{"legacy home rxvt", "\x1b[7~", on, "\x1bOH"},
		{"legacy end rxvt", "\x1b[8~", off, "\x1b[F"},
		{"legacy alt+up as esc prefix", "\x1b\x1b[A", on, "\x1b\x1bOA"},

		// Kitty CSI u: letters with every modifier combination.
		{"a", "\x1b[97u", off, "a"},
		{"a mods 1", "\x1b[97;1u", off, "a"},
		{"shift+a", "\x1b[97;2u", off, "A"},
		{"alt+a", "\x1b[97;3u", off, "\x1ba"},
		{"alt+shift+a", "\x1b[97;4u", off, "\x1bA"},
		{"ctrl+a", "\x1b[97;5u", off, "\x01"},
		{"ctrl+shift+a", "\x1b[97;6u", off, "\x01"},
		{"ctrl+alt+a", "\x1b[97;7u", off, "\x1b\x01"},
		{"ctrl+alt+shift+a", "\x1b[97;8u", off, "\x1b\x01"},
		{"super+a dropped mod", "\x1b[97;9u", off, "a"},
		{"ctrl+super+c", "\x1b[99;13u", off, "\x03"},
		{"hyper+meta+a", "\x1b[97;49u", off, "a"},
		{"caps lock a", "\x1b[97;65u", off, "A"},
		{"caps lock shift a", "\x1b[97;66u", off, "a"},
		{"num lock a", "\x1b[97;129u", off, "a"},
		{"ctrl+c num lock", "\x1b[99;133u", off, "\x03"},
		{"ctrl+z", "\x1b[122;5u", off, "\x1a"},
		{"ctrl+A uppercase code", "\x1b[65;5u", off, "\x01"},
		{"shifted code point", "\x1b[49:33;2u", off, "!"},
		{"shifted and base", "\x1b[1089:1057:99;2u", off, "С"},
		{"base only", "\x1b[1089::99u", off, "с"},
		{"shift+1 unreported shifted", "\x1b[49;2u", off, "1"},
		{"shifted ignored without shift", "\x1b[49:33u", off, "1"},
		{"shift+é", "\x1b[233;2u", off, "É"},
		{"non-ascii", "\x1b[233u", off, "é"},
		{"astral", "\x1b[128512u", off, "😀"},
		{"alt+non-ascii", "\x1b[233;3u", off, "\x1bé"},
		{"ctrl+non-ascii", "\x1b[233;5u", off, "é"},
		{"ctrl+1 no control byte", "\x1b[49;5u", off, "1"},

		// Ctrl on punctuation and digits (VT220 table).
		{"ctrl+space", "\x1b[32;5u", off, "\x00"},
		{"ctrl+@", "\x1b[64;5u", off, "\x00"},
		{"ctrl+2", "\x1b[50;5u", off, "\x00"},
		{"ctrl+[", "\x1b[91;5u", off, "\x1b"},
		{"ctrl+\\", "\x1b[92;5u", off, "\x1c"},
		{"ctrl+]", "\x1b[93;5u", off, "\x1d"},
		{"ctrl+^", "\x1b[94;5u", off, "\x1e"},
		{"ctrl+_", "\x1b[95;5u", off, "\x1f"},
		{"ctrl+?", "\x1b[63;5u", off, "\x7f"},
		{"ctrl+/", "\x1b[47;5u", off, "\x1f"},
		{"ctrl+shift+- shifted _", "\x1b[45:95;6u", off, "\x1f"},
		{"ctrl+8", "\x1b[56;5u", off, "\x7f"},
		{"space", "\x1b[32u", off, " "},
		{"shift+space", "\x1b[32;2u", off, " "},
		{"alt+space", "\x1b[32;3u", off, "\x1b "},
		{"ctrl+alt+space", "\x1b[32;7u", off, "\x1b\x00"},
		{"C0 code point", "\x1b[1;5u", off, "\x01"},
		{"alt C0 code point", "\x1b[1;3u", off, "\x1b\x01"},
		{"C1 code point", "\x1b[133u", off, ""},
		{"zero code point", "\x1b[0u", off, "\x00"},

		// Event types.
		{"press explicit", "\x1b[97;1:1u", off, "a"},
		{"repeat", "\x1b[97;1:2u", off, "a"},
		{"release", "\x1b[97;1:3u", off, ""},
		{"ctrl+c release", "\x1b[99;5:3u", off, ""},
		{"release with text", "\x1b[97;1:3;97u", off, ""},
		{"release empty mods", "\x1b[97;:3u", off, ""},
		{"enter release", "\x1b[13;1:3u", off, ""},
		{"up release", "\x1b[1;1:3A", on, ""},
		{"up repeat", "\x1b[1;1:2A", on, "\x1bOA"},
		{"delete release", "\x1b[3;1:3~", off, ""},
		{"unknown tilde release", "\x1b[29;1:3~", off, ""},
		{"unknown tilde press", "\x1b[29;1:1~", off, "\x1b[29;1:1~"},
		{"event 4 unrecognized", "\x1b[97;1:4u", off, "\x1b[97;1:4u"},

		// Text field.
		{"text", "\x1b[97;2;65u", off, "A"},
		{"text multi", "\x1b[97;1;104:105u", off, "hi"},
		{"text over shifted", "\x1b[49:33;2;8364u", off, "€"},
		{"text ignored with ctrl", "\x1b[97;5;97u", off, "\x01"},
		{"text ignored with alt", "\x1b[97;3;97u", off, "\x1ba"},
		{"text with control falls back", "\x1b[97;1;7u", off, "a"},
		{"text with surrogate falls back", "\x1b[97;1;55296u", off, "a"},
		{"text empty field", "\x1b[97;1;u", off, "a"},
		{"text empty mods", "\x1b[97;;98u", off, "b"},
		{"text keypad", "\x1b[57400;129;49u", off, "1"},

		// Functional keys in CSI u.
		{"enter", "\x1b[13u", off, "\r"},
		{"shift+enter", "\x1b[13;2u", off, "\r"},
		{"ctrl+enter", "\x1b[13;5u", off, "\r"},
		{"alt+enter", "\x1b[13;3u", off, "\x1b\r"},
		{"tab", "\x1b[9u", off, "\t"},
		{"shift+tab", "\x1b[9;2u", off, "\x1b[Z"},
		{"alt+tab", "\x1b[9;3u", off, "\x1b\t"},
		{"alt+shift+tab", "\x1b[9;4u", off, "\x1b\x1b[Z"},
		{"ctrl+tab", "\x1b[9;5u", off, "\t"},
		{"backspace", "\x1b[127u", off, "\x7f"},
		{"shift+backspace", "\x1b[127;2u", off, "\x7f"},
		{"ctrl+backspace", "\x1b[127;5u", off, "\x08"},
		{"alt+backspace", "\x1b[127;3u", off, "\x1b\x7f"},
		{"ctrl+alt+backspace", "\x1b[127;7u", off, "\x1b\x08"},
		{"escape", "\x1b[27u", off, "\x1b"},
		{"alt+escape", "\x1b[27;3u", off, "\x1b\x1b"},
		{"ctrl+escape", "\x1b[27;5u", off, "\x1b"},
		{"pua escape", "\x1b[57344u", off, "\x1b"},
		{"pua up", "\x1b[57352u", on, "\x1bOA"},
		{"pua F1", "\x1b[57364u", off, "\x1bOP"},
		{"pua F12 ctrl", "\x1b[57375;5u", off, "\x1b[24;5~"},

		// Keys with no legacy encoding.
		{"left shift", "\x1b[57441;2u", off, ""},
		{"right ctrl", "\x1b[57448;5u", off, ""},
		{"left super", "\x1b[57444u", off, ""},
		{"iso level3 shift", "\x1b[57453u", off, ""},
		{"caps lock key", "\x1b[57358;65u", off, ""},
		{"menu key", "\x1b[57363u", off, ""},
		{"F13", "\x1b[57376u", off, ""},
		{"media play", "\x1b[57428u", off, ""},
		{"pua beyond kitty range", "\x1b[57600u", off, "\U0000E100"},

		// Keypad.
		{"kp 0", "\x1b[57399u", off, "0"},
		{"kp 9", "\x1b[57408u", off, "9"},
		{"kp decimal", "\x1b[57409u", off, "."},
		{"kp divide", "\x1b[57410u", off, "/"},
		{"kp multiply", "\x1b[57411u", off, "*"},
		{"kp subtract", "\x1b[57412u", off, "-"},
		{"kp add", "\x1b[57413u", off, "+"},
		{"kp enter", "\x1b[57414u", off, "\r"},
		{"alt+kp enter", "\x1b[57414;3u", off, "\x1b\r"},
		{"kp equal", "\x1b[57415u", off, "="},
		{"kp separator", "\x1b[57416u", off, ","},
		{"kp left app", "\x1b[57417u", on, "\x1bOD"},
		{"kp right", "\x1b[57418u", off, "\x1b[C"},
		{"kp up ctrl", "\x1b[57419;5u", on, "\x1b[1;5A"},
		{"kp down", "\x1b[57420u", off, "\x1b[B"},
		{"kp pgup", "\x1b[57421u", off, "\x1b[5~"},
		{"kp pgdn", "\x1b[57422u", off, "\x1b[6~"},
		{"kp home", "\x1b[57423u", on, "\x1bOH"},
		{"kp end", "\x1b[57424u", off, "\x1b[F"},
		{"kp insert", "\x1b[57425u", off, "\x1b[2~"},
		{"kp delete", "\x1b[57426u", off, "\x1b[3~"},
		{"kp begin", "\x1b[57427u", off, "\x1b[E"},
		{"kp begin letter form", "\x1b[1;2E", off, "\x1b[1;2E"},
		{"ctrl+kp 5", "\x1b[57404;5u", off, "\x1d"},

		// Arrows, Home, End in kitty's letter form.
		{"up", "\x1b[A", off, "\x1b[A"},
		{"up app", "\x1b[A", on, "\x1bOA"},
		{"down mods 1 app", "\x1b[1;1B", on, "\x1bOB"},
		{"right num lock app", "\x1b[1;129C", on, "\x1bOC"},
		{"left caps lock", "\x1b[1;65D", off, "\x1b[D"},
		{"home app", "\x1b[H", on, "\x1bOH"},
		{"end", "\x1b[F", off, "\x1b[F"},
		{"shift+up", "\x1b[1;2A", on, "\x1b[1;2A"},
		{"alt+down", "\x1b[1;3B", off, "\x1b[1;3B"},
		{"alt+shift+right", "\x1b[1;4C", on, "\x1b[1;4C"},
		{"ctrl+left", "\x1b[1;5D", on, "\x1b[1;5D"},
		{"ctrl+shift+home", "\x1b[1;6H", off, "\x1b[1;6H"},
		{"ctrl+alt+end", "\x1b[1;7F", on, "\x1b[1;7F"},
		{"ctrl+alt+shift+up", "\x1b[1;8A", off, "\x1b[1;8A"},
		{"super+up drops super", "\x1b[1;9A", on, "\x1bOA"},
		{"ctrl+super+up", "\x1b[1;13A", off, "\x1b[1;5A"},
		{"ctrl+up repeat", "\x1b[1;5:2A", off, "\x1b[1;5A"},
		{"home tilde ctrl", "\x1b[7;5~", off, "\x1b[1;5H"},
		{"mods zero", "\x1b[1;0A", on, "\x1bOA"},
		{"empty first param", "\x1b[;5A", off, "\x1b[1;5A"},

		// F1–F12.
		{"F1", "\x1b[P", off, "\x1bOP"},
		{"F1 1P", "\x1b[1P", on, "\x1bOP"},
		{"F2", "\x1b[Q", off, "\x1bOQ"},
		{"F3 kitty", "\x1b[13~", off, "\x1bOR"},
		{"F4", "\x1b[S", off, "\x1bOS"},
		{"F1 rxvt", "\x1b[11~", off, "\x1bOP"},
		{"F2 rxvt", "\x1b[12~", off, "\x1bOQ"},
		{"F4 rxvt", "\x1b[14~", off, "\x1bOS"},
		{"shift+F1", "\x1b[1;2P", off, "\x1b[1;2P"},
		{"ctrl+F2", "\x1b[1;5Q", off, "\x1b[1;5Q"},
		{"ctrl+F3", "\x1b[13;5~", off, "\x1b[1;5R"},
		{"alt+F4", "\x1b[1;3S", off, "\x1b[1;3S"},
		{"F5", "\x1b[15~", off, "\x1b[15~"},
		{"F6", "\x1b[17~", off, "\x1b[17~"},
		{"F7", "\x1b[18~", off, "\x1b[18~"},
		{"F8", "\x1b[19~", off, "\x1b[19~"},
		{"F9", "\x1b[20~", off, "\x1b[20~"},
		{"F10", "\x1b[21~", off, "\x1b[21~"},
		{"F11", "\x1b[23~", off, "\x1b[23~"},
		{"F12", "\x1b[24~", off, "\x1b[24~"},
		{"shift+F5", "\x1b[15;2~", off, "\x1b[15;2~"},
		{"ctrl+alt+shift+F12", "\x1b[24;8~", off, "\x1b[24;8~"},
		{"F12 press event", "\x1b[24;1:1~", off, "\x1b[24~"},
		{"F5 release", "\x1b[15;1:3~", off, ""},
		{"super+F5", "\x1b[15;9~", off, "\x1b[15~"},

		// Insert, Delete, PageUp, PageDown.
		{"insert", "\x1b[2~", on, "\x1b[2~"},
		{"delete", "\x1b[3~", on, "\x1b[3~"},
		{"pgup", "\x1b[5~", off, "\x1b[5~"},
		{"pgdn", "\x1b[6~", off, "\x1b[6~"},
		{"shift+insert", "\x1b[2;2~", off, "\x1b[2;2~"},
		{"ctrl+delete", "\x1b[3;5~", off, "\x1b[3;5~"},
		{"alt+pgup", "\x1b[5;3~", off, "\x1b[5;3~"},
		{"ctrl+shift+pgdn", "\x1b[6;6~", off, "\x1b[6;6~"},
		{"pgdn caps lock", "\x1b[6;65~", off, "\x1b[6~"},

		// xterm modifyOtherKeys.
		{"mok ctrl+enter", "\x1b[27;5;13~", off, "\r"},
		{"mok shift+tab", "\x1b[27;2;9~", off, "\x1b[Z"},
		{"mok ctrl+alt+a", "\x1b[27;7;97~", off, "\x1b\x01"},

		// Several keys and text in one call.
		{"multi kitty", "\x1b[104u\x1b[105u", off, "hi"},
		{"multi press release", "\x1b[97u\x1b[97;1:3u\x1b[98u\x1b[98;1:3u", off, "ab"},
		{"text then keys", "ls\x1b[13u\x1b[1;5A", on, "ls\r\x1b[1;5A"},
		{"mixed legacy", "x\x1b[Ay\x1bOBz", on, "x\x1bOAy\x1bOBz"},
		{"ctrl+c then text", "\x1b[99;5uabc", off, "\x03abc"},
		{"modifiers around key", "\x1b[57441;2u\x1b[97;2u\x1b[57441;1:3u", off, "A"},

		// Passthrough of everything that is not a key.
		{"bracketed paste", "\x1b[200~hi\x1b[A\x1b[97;5u\x1b[201~", on, "\x1b[200~hi\x1b[A\x1b[97;5u\x1b[201~"},
		{"paste then key", "\x1b[200~x\x1b[201~\x1b[A", on, "\x1b[200~x\x1b[201~\x1bOA"},
		{"unterminated paste", "\x1b[200~abc\x1b[A", on, "\x1b[200~abc\x1b[A"},
		{"stray paste end", "\x1b[201~", off, "\x1b[201~"},
		{"sgr mouse", "\x1b[<0;10;5M\x1b[<0;10;5m", off, "\x1b[<0;10;5M\x1b[<0;10;5m"},
		{"x10 mouse", "\x1b[M #!\x1b[A", on, "\x1b[M #!\x1bOA"},
		{"x10 mouse bytes look like csi", "\x1b[MA[A", on, "\x1b[MA[A"},
		{"focus in", "\x1b[I", on, "\x1b[I"},
		{"kitty flags reply", "\x1b[?1u", off, "\x1b[?1u"},
		{"DA1 reply", "\x1b[?62;22c", off, "\x1b[?62;22c"},
		{"CPR", "\x1b[12;40R", off, "\x1b[12;40R"},
		{"intermediate", "\x1b[1 q", off, "\x1b[1 q"},
		{"osc bel", "\x1b]11;rgb:0000/0000/0000\x07\x1b[A", on, "\x1b]11;rgb:0000/0000/0000\x07\x1bOA"},
		{"osc st", "\x1b]52;c;aGk=\x1b\\\x1b[A", on, "\x1b]52;c;aGk=\x1b\\\x1bOA"},
		{"osc aborted by esc", "\x1b]52;c;\x1b[A", on, "\x1b]52;c;\x1bOA"},
		{"dcs", "\x1bP>|xterm(1)\x1b\\x", off, "\x1bP>|xterm(1)\x1b\\x"},
		{"unterminated osc", "\x1b]0;title", off, "\x1b]0;title"},
		{"legacy ss3 other", "\x1bOp", on, "\x1bOp"},

		// Incomplete and malformed sequences pass through unchanged.
		{"incomplete csi", "\x1b[", off, "\x1b["},
		{"incomplete kitty", "\x1b[97;5", off, "\x1b[97;5"},
		{"incomplete after key", "\x1b[97u\x1b[1;5", off, "a\x1b[1;5"},
		{"incomplete ss3", "\x1bO", on, "\x1bO"},
		{"csi interrupted by esc", "\x1b[1;\x1b[A", on, "\x1b[1;\x1bOA"},
		{"csi interrupted by control", "\x1b[12\x03", off, "\x1b[12\x03"},
		{"ss3 interrupted", "\x1bO\x1b[A", on, "\x1bO\x1bOA"},
		{"huge number", "\x1b[99999999999999999999u", off, "\x1b[99999999999999999999u"},
		{"beyond unicode", "\x1b[1114112u", off, "\x1b[1114112u"},
		{"surrogate code point", "\x1b[55296u", off, "\x1b[55296u"},
		{"huge mods", "\x1b[97;99999999999999999999u", off, "\x1b[97;99999999999999999999u"},
		{"mods beyond 8 bits", "\x1b[97;257u", off, "\x1b[97;257u"},
		{"huge text", "\x1b[97;1;99999999999999u", off, "\x1b[97;1;99999999999999u"},
		{"empty code point", "\x1b[;5u", off, "\x1b[;5u"},
		{"bare u", "\x1b[u", off, "\x1b[u"},
		{"too many fields", "\x1b[97;1;97;1u", off, "\x1b[97;1;97;1u"},
		{"too many subfields", "\x1b[97:1:2:3u", off, "\x1b[97:1:2:3u"},
		{"too many mod subfields", "\x1b[97;1:1:1u", off, "\x1b[97;1:1:1u"},
		{"private marker in u", "\x1b[>97u", off, "\x1b[>97u"},
		{"letter form with key 2", "\x1b[2;5A", off, "\x1b[2;5A"},
		{"letter form 3 fields", "\x1b[1;5;1A", off, "\x1b[1;5;1A"},
		{"letter form subparam", "\x1b[1:2;5A", off, "\x1b[1:2;5A"},
		{"tilde without number", "\x1b[~", off, "\x1b[~"},
		{"tilde empty mods", "\x1b[3;~", off, "\x1b[3~"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NormalizeInput(nil, []byte(tc.in), tc.app)
			if string(got) != tc.want {
				t.Errorf("NormalizeInput(%q, app=%v) = %q, want %q", tc.in, tc.app, got, tc.want)
			}
		})
	}
}

// TestNormalizeInputAppends guards the caller's buffer reuse on the write path.
func TestNormalizeInputAppends(t *testing.T) {
	dst := make([]byte, 3, 64)
	copy(dst, "pre")
	got := NormalizeInput(dst, []byte("x\x1b[97;5u\x1b[A"), true)
	if string(got) != "prex\x01\x1bOA" {
		t.Fatalf("got %q", got)
	}
	if &got[0] != &dst[0] {
		t.Fatal("reallocated although dst had room")
	}
}

// TestNormalizeInputNoAllocs keeps every key on the hot path free of garbage.
func TestNormalizeInputNoAllocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	in := []byte("abc\x1b[97;5u\x1b[1;5A\x1b[15;2~\x1b[9;2u\x1b[97;1;104:105u\x1b[200~p\x1b[201~\x1b[233;2u")
	allocs := testing.AllocsPerRun(100, func() {
		dst = NormalizeInput(dst[:0], in, true)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call, want 0", allocs)
	}
}

// TestNormalizeInputEveryCodePointSafe tries edge keys with every modifier, so no release ever leaks.
func TestNormalizeInputEveryCodePointSafe(t *testing.T) {
	buf := make([]byte, 0, 64)
	codes := []int{
		0, 8, 9, 13, 27, 31, 32, 64, 97, 127, 128, 159, 160,
		55295, 57344, 57399, 57427, 57454, 57455, 0x10ffff,
	}
	for _, code := range codes {
		for m := 1; m <= 256; m++ {
			seq := "\x1b[" + strconv.Itoa(code) + ";" + strconv.Itoa(m)
			buf = NormalizeInput(buf[:0], []byte(seq+"u"), m&1 == 0)
			if release := NormalizeInput(nil, []byte(seq+":3u"), false); len(release) != 0 {
				t.Fatalf("%q:3u = %q, want nothing", seq, release)
			}
		}
	}
}

// BenchmarkNormalizeInput measures one key per call, as Write sees them.
func BenchmarkNormalizeInput(b *testing.B) {
	keys := [][]byte{
		[]byte("a"),
		[]byte("\x1b[97u"),
		[]byte("\x1b[97;5u"),
		[]byte("\x1b[97;1:3u"),
		[]byte("\x1b[97;2;65u"),
		[]byte("\x1b[1;5A"),
		[]byte("\x1b[A"),
		[]byte("\x1bOB"),
		[]byte("\x1b[13u"),
		[]byte("\x1b[15;2~"),
		[]byte("\x1b[57441;2u"),
		[]byte("\x1b[127;3u"),
		[]byte("\r"),
		[]byte("\x1b[57400u"),
		[]byte("\x1b[233;2u"),
		[]byte("\x1b[3~"),
	}
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst = NormalizeInput(dst[:0], keys[i%len(keys)], i&1 == 0)
	}
}
