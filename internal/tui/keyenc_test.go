package tui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/pty"
	"agentsh/internal/testkit"
)

// programBytes is what the program on the PTY reads for a key press in the
// overlay or an attached job: the TUI's encoding, then the normalization
// Session.Write applies to every write, which must leave it as it is.
func programBytes(t *testing.T, k tea.Key, appCursor bool) []byte {
	t.Helper()
	b := encodeKey(k, appCursor)
	if n := pty.NormalizeInput(nil, b, appCursor); string(n) != string(b) {
		t.Errorf("%s: Session.Write would turn %q into %q", keyencName(k), b, n)
	}
	return b
}

// keyencMods are the modifier sets every key is tried with: every mix of
// the three xterm can express, then the ones it cannot and the lock keys.
var keyencMods = []tea.KeyMod{
	0, tea.ModShift, tea.ModAlt, tea.ModAlt | tea.ModShift,
	tea.ModCtrl, tea.ModCtrl | tea.ModShift, tea.ModCtrl | tea.ModAlt, tea.ModCtrl | tea.ModAlt | tea.ModShift,
	tea.ModMeta, tea.ModHyper, tea.ModSuper, tea.ModCtrl | tea.ModSuper,
	tea.ModCapsLock, tea.ModCapsLock | tea.ModShift, tea.ModCapsLock | tea.ModAlt, tea.ModNumLock, tea.ModScrollLock,
}

// keyencCases is a broad set of key presses: every named key Bubble Tea
// knows and a spread of runes, each with every modifier set, with and
// without the text a terminal reports for it, and multi-rune text.
func keyencCases() []tea.Key {
	var codes []rune
	for c := tea.KeyUp; c <= tea.KeyF13; c++ {
		codes = append(codes, c)
	}
	// Past F13 the keys have no xterm encoding; a sample stands for them.
	codes = append(codes, tea.KeyF24, tea.KeyF35, tea.KeyF36, tea.KeyF63,
		tea.KeyCapsLock, tea.KeyScrollLock, tea.KeyNumLock, tea.KeyPrintScreen, tea.KeyPause, tea.KeyMenu,
		tea.KeyMediaPlay, tea.KeyMute, tea.KeyLeftShift, tea.KeyRightMeta, tea.KeyIsoLevel5Shift)
	codes = append(codes, tea.KeyEnter, tea.KeyTab, tea.KeyBackspace, tea.KeyEscape, tea.KeySpace)
	for r := rune(0); r < 0x20; r++ {
		if r != tea.KeyTab && r != tea.KeyEnter && r != tea.KeyEscape {
			codes = append(codes, r)
		}
	}
	for r := rune(0x21); r < 0x7f; r++ {
		codes = append(codes, r)
	}
	codes = append(codes, 0x85, 0xa0, 'é', 'É', 'ß', 'С', 'с', '€', 0xd800, '😀', 0xe000, 57414, 0x10ffff)

	var ks []tea.Key
	for _, c := range codes {
		for _, m := range keyencMods {
			k := tea.Key{Code: c, Mod: m}
			ks = append(ks, k)
			// The text a terminal reports with the key, when it types one.
			if t := keyencText(c, m); t != "" {
				k.Text = t
				ks = append(ks, k)
			}
		}
	}
	for _, m := range keyencMods {
		ks = append(ks,
			tea.Key{Code: '1', ShiftedCode: '!', Mod: m},
			tea.Key{Code: '1', ShiftedCode: '!', Mod: m, Text: "!"},
			tea.Key{Code: 'с', ShiftedCode: 'С', BaseCode: 'c', Mod: m},
			tea.Key{Code: tea.KeyExtended, Text: "e\u0301", Mod: m},
			tea.Key{Code: tea.KeyExtended, Text: "😀😀", Mod: m},
			tea.Key{Code: 'h', Text: "hi", Mod: m},
			tea.Key{Code: tea.KeyKp1, Text: "1", Mod: m},
			tea.Key{Code: 'a', Text: "a", Mod: m, IsRepeat: true},
		)
	}
	return ks
}

// keyencText is the text Bubble Tea would report for code with mods when
// it typed one: the rune, upper-cased with shift or caps lock.
func keyencText(c rune, m tea.KeyMod) string {
	if c >= tea.KeyExtended || c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0xd800 && c < 0xe000) {
		return ""
	}
	if m&(tea.ModShift|tea.ModCapsLock) != 0 {
		return strings.ToUpper(string(c))
	}
	return string(c)
}

// keyencName names a case uniquely and readably.
func keyencName(k tea.Key) string {
	s := fmt.Sprintf("%q code=%U mod=%d", k.String(), k.Code, k.Mod)
	if k.Text != "" {
		s += " text=" + strconv.Quote(k.Text)
	}
	if k.ShiftedCode != 0 {
		s += fmt.Sprintf(" shifted=%U", k.ShiftedCode)
	}
	if k.BaseCode != 0 {
		s += fmt.Sprintf(" base=%U", k.BaseCode)
	}
	if k.IsRepeat {
		s += " repeat"
	}
	return s
}

// TestKeyEncodingGolden pins, in testdata/keyenc.golden, the bytes a program
// in the overlay receives for
// every key press of keyencCases: programs match them literally, so no
// refactoring of the encoder may change one.
func TestKeyEncodingGolden(t *testing.T) {
	var sb strings.Builder
	seen := map[string]bool{}
	for _, k := range keyencCases() {
		name := keyencName(k)
		if seen[name] {
			t.Fatalf("two cases named %s", name)
		}
		seen[name] = true
		fmt.Fprintf(&sb, "%s\t%q\t%q\n", name, programBytes(t, k, false), programBytes(t, k, true))
	}
	testkit.Golden(t, "keyenc.golden", sb.String())
}

// BenchmarkEncodeKey measures one key press on its way to the program:
// the TUI's encoding and the normalization Session.Write applies.
func BenchmarkEncodeKey(b *testing.B) {
	keys := []tea.Key{
		{Code: 'a', Text: "a"},
		{Code: 'c', Mod: tea.ModCtrl},
		{Code: 'x', Mod: tea.ModAlt},
		{Code: tea.KeyUp},
		{Code: tea.KeyUp, Mod: tea.ModCtrl},
		{Code: tea.KeyEnter},
		{Code: tea.KeyEnter, Mod: tea.ModCtrl},
		{Code: tea.KeyF5},
		{Code: tea.KeyBackspace},
		{Code: tea.KeyTab, Mod: tea.ModShift},
	}
	var dst []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst = pty.NormalizeInput(dst[:0], encodeKey(keys[i%len(keys)], i&1 == 0), i&1 == 0)
	}
}
