package pty

import (
	"bytes"
	"strconv"
	"testing"
	"unicode/utf8"
)

// TestAppendKey pins the exact bytes of the encoder the TUI uses, since
// programs match them literally.
func TestAppendKey(t *testing.T) {
	const (
		s, a, c = ModShift, ModAlt, ModCtrl
	)
	for _, tc := range []struct {
		name string
		k    Key
		app  bool
		want string
	}{
		{"rune", Key{Code: 'a'}, false, "a"},
		{"shift rune", Key{Code: 'a', Mod: s}, false, "A"},
		{"shift uses shifted", Key{Code: '1', Shifted: '!', Mod: s}, false, "!"},
		{"shifted ignored without shift", Key{Code: '1', Shifted: '!'}, false, "1"},
		{"caps lock", Key{Code: 'a', Mod: ModCapsLock}, false, "A"},
		{"caps lock shift", Key{Code: 'a', Mod: ModCapsLock | s}, false, "a"},
		{"alt rune", Key{Code: 'x', Mod: a}, false, "\x1bx"},
		{"alt shift rune", Key{Code: 'x', Mod: a | s}, false, "\x1bX"},
		{"ctrl letter", Key{Code: 'c', Mod: c}, false, "\x03"},
		{"ctrl shift letter", Key{Code: 'c', Mod: c | s}, false, "\x03"},
		{"ctrl alt letter", Key{Code: 'c', Mod: c | a}, false, "\x1b\x03"},
		{"ctrl space", Key{Code: ' ', Mod: c}, false, "\x00"},
		{"ctrl alt space", Key{Code: ' ', Mod: c | a}, false, "\x1b\x00"},
		{"ctrl [", Key{Code: '[', Mod: c}, false, "\x1b"},
		{"ctrl 8", Key{Code: '8', Mod: c}, false, "\x7f"},
		{"ctrl digit without control", Key{Code: '1', Mod: c}, false, "1"},
		{"ctrl non-ascii", Key{Code: 'é', Mod: c}, false, "é"},
		{"control code point", Key{Code: 0x01, Mod: a}, false, "\x1b\x01"},
		{"C1 control", Key{Code: 0x85}, false, ""},
		{"surrogate", Key{Code: 0xd800}, false, ""},
		{"private use character", Key{Code: 0xe000}, false, "\ue000"},
		{"astral", Key{Code: '😀'}, false, "😀"},
		{"super dropped", Key{Code: 'a', Mod: ModSuper | ModHyper | ModMeta | ModNumLock}, false, "a"},
		{"no key", Key{Code: -1}, false, ""},

		{"text", Key{Code: 'a', Text: "a"}, false, "a"},
		{"text multi-rune", Key{Code: -1, Text: "e\u0301"}, false, "e\u0301"},
		{"text over code", Key{Code: '1', Mod: s, Text: "!"}, false, "!"},
		{"alt text", Key{Code: 'x', Mod: a, Text: "x"}, false, "\x1bx"},
		{"text ignored with ctrl", Key{Code: 'a', Mod: c, Text: "a"}, false, "\x01"},
		{"text of no key ignored with ctrl", Key{Code: -1, Mod: c, Text: "hi"}, false, ""},

		{"enter", Key{Code: KeyEnter}, false, "\r"},
		{"shift enter", Key{Code: KeyEnter, Mod: s}, false, "\r"},
		{"ctrl enter", Key{Code: KeyEnter, Mod: c}, false, "\r"},
		{"alt enter", Key{Code: KeyEnter, Mod: a}, false, "\x1b\r"},
		{"tab", Key{Code: KeyTab}, false, "\t"},
		{"shift tab", Key{Code: KeyTab, Mod: s}, false, "\x1b[Z"},
		{"alt shift tab", Key{Code: KeyTab, Mod: a | s}, false, "\x1b\x1b[Z"},
		{"backspace", Key{Code: KeyBackspace}, false, "\x7f"},
		{"ctrl backspace", Key{Code: KeyBackspace, Mod: c}, false, "\x08"},
		{"alt ctrl backspace", Key{Code: KeyBackspace, Mod: a | c}, false, "\x1b\x08"},
		{"esc", Key{Code: KeyEscape}, false, "\x1b"},
		{"alt esc", Key{Code: KeyEscape, Mod: a}, false, "\x1b\x1b"},

		{"up", Key{Code: KeyUp}, false, "\x1b[A"},
		{"up app", Key{Code: KeyUp}, true, "\x1bOA"},
		{"ctrl up app", Key{Code: KeyUp, Mod: c}, true, "\x1b[1;5A"},
		{"all mods down", Key{Code: KeyDown, Mod: s | a | c}, false, "\x1b[1;8B"},
		{"right", Key{Code: KeyRight}, false, "\x1b[C"},
		{"left", Key{Code: KeyLeft}, true, "\x1bOD"},
		{"home", Key{Code: KeyHome}, false, "\x1b[H"},
		{"end app", Key{Code: KeyEnd}, true, "\x1bOF"},
		{"begin", Key{Code: KeyBegin}, false, "\x1b[E"},
		{"insert", Key{Code: KeyInsert}, false, "\x1b[2~"},
		{"shift delete", Key{Code: KeyDelete, Mod: s}, true, "\x1b[3;2~"},
		{"page up", Key{Code: KeyPageUp}, false, "\x1b[5~"},
		{"ctrl page down", Key{Code: KeyPageDown, Mod: c}, false, "\x1b[6;5~"},

		{"F1", Key{Code: KeyF1}, true, "\x1bOP"},
		{"F4", Key{Code: KeyF1 + 3}, false, "\x1bOS"},
		{"shift F2", Key{Code: KeyF1 + 1, Mod: s}, false, "\x1b[1;2Q"},
		{"ctrl F3 ignores DECCKM", Key{Code: KeyF1 + 2, Mod: c}, true, "\x1b[1;5R"},
		{"F5", Key{Code: KeyF1 + 4}, false, "\x1b[15~"},
		{"F6", Key{Code: KeyF1 + 5}, false, "\x1b[17~"},
		{"F10", Key{Code: KeyF1 + 9}, false, "\x1b[21~"},
		{"F11", Key{Code: KeyF1 + 10}, false, "\x1b[23~"},
		{"alt F12", Key{Code: KeyF12, Mod: a}, false, "\x1b[24;3~"},
		{"F13 has no form", Key{Code: KeyF12 + 1}, false, ""},
		{"lock key", Key{Code: KeyEnd + 1}, false, ""},
		{"last named key", Key{Code: keyFunctionalLast}, false, ""},
		{"past the named keys", Key{Code: keyFunctionalLast + 1}, false, ""},

		{"keypad 5", Key{Code: keyKP0 + 5}, false, "5"},
		{"keypad enter", Key{Code: keyKP0 + 15}, false, "\r"},
		{"keypad up app", Key{Code: keyKP0 + 20}, true, "\x1bOA"},
		{"keypad begin", Key{Code: KeyBegin, Mod: s}, false, "\x1b[1;2E"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AppendKey(nil, tc.k, tc.app); string(got) != tc.want {
				t.Errorf("AppendKey(%+v, app=%v) = %q, want %q", tc.k, tc.app, got, tc.want)
			}
		})
	}
}

// TestAppendKeyNoAllocs keeps the TUI's key path free of garbage when the
// caller's buffer has room.
func TestAppendKeyNoAllocs(t *testing.T) {
	dst := make([]byte, 0, 64)
	keys := []Key{{Code: 'a'}, {Code: KeyUp, Mod: ModCtrl}, {Code: KeyF1 + 4}, {Code: 'x', Mod: ModAlt, Text: "x"}}
	allocs := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			dst = AppendKey(dst[:0], k, true)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run, want 0", allocs)
	}
}

// FuzzAppendKey checks the encoder on any key: no panic, the caller's
// bytes kept, at most one key's worth of bytes, output that Session.Write
// passes on unchanged, and for a key without text the same bytes as
// NormalizeInput makes of the kitty sequence for it.
func FuzzAppendKey(f *testing.F) {
	f.Fuzz(func(t *testing.T, code, shifted int32, mod uint8, text string, appCursor bool) {
		k := Key{Code: code, Shifted: shifted, Mod: KeyMod(mod), Text: text}
		dst := []byte("prefix")
		got := AppendKey(dst, k, appCursor)
		if string(got[:len(dst)]) != "prefix" {
			t.Fatalf("prefix clobbered: %q", got)
		}
		out := got[len(dst):]
		if again := AppendKey(nil, k, appCursor); !bytes.Equal(again, out) {
			t.Fatalf("not deterministic for %+v: %q then %q", k, out, again)
		}
		if text != "" {
			return // the text is sent as it is: nothing more to check
		}
		// The longest form is CSI 24;8~, or ESC and a 4-byte character.
		if len(out) > 7 {
			t.Fatalf("%+v encodes to %d bytes: %q", k, len(out), out)
		}
		if n := NormalizeInput(nil, out, appCursor); !bytes.Equal(n, out) {
			t.Fatalf("%+v: Session.Write would turn %q into %q", k, out, n)
		}
		// The same key in kitty's form, for a character or a named key
		// (named keys go back to kitty's codes).
		wire := code
		if code >= keyBase && code <= keyFunctionalLast {
			wire = code - keyBase + kittyFirst
		}
		if wire < 0x20 || wire == 0x7f || (wire >= kittyFirst && wire <= kittyLast && code < keyBase) || !utf8.ValidRune(wire) || !utf8.ValidRune(shifted) || shifted < 0 {
			return // no kitty form, or one that means another key
		}
		seq := "\x1b[" + strconv.Itoa(int(wire))
		if shifted != 0 {
			seq += ":" + strconv.Itoa(int(shifted))
		}
		seq += ";" + strconv.Itoa(int(mod)+1) + "u"
		if n := NormalizeInput(nil, []byte(seq), appCursor); !bytes.Equal(n, out) {
			t.Fatalf("%+v: AppendKey gives %q, NormalizeInput(%q) %q", k, out, seq, n)
		}
	})
}
