package pty

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// The program in the PTY believes it runs in an xterm: it knows nothing of
// CSI u and would see key releases as stray keys. Keys reach it as raw
// bytes too (the keys a model sends to a job, a paste), and a terminal may
// write them in kitty's, xterm's modifyOtherKeys or a legacy form.
// NormalizeInput parses every key it finds into a Key and rewrites it with
// AppendKey, into what an xterm would have sent for it; every other byte is
// left alone, so pastes, mouse reports and terminal replies reach the
// program exactly as they arrived, and what AppendKey wrote passes as it is.

const escByte = 0x1b

// maxKeyParam caps every number before it can overflow; nothing in the
// protocol (code points included) is larger, so anything bigger is not a key.
const maxKeyParam = unicode.MaxRune

// tildeKeys maps the n of CSI n ~ to its key (0: none known). 7 and 8
// (Home, End) and F1–F4 (11–14) are only read in this form (rxvt, kitty's
// F3): xterm writes them with CSI, SS3 or CSI 1;mod H, F, P–S.
var tildeKeys = [...]rune{
	2: KeyInsert, 3: KeyDelete, 5: KeyPageUp, 6: KeyPageDown, 7: KeyHome, 8: KeyEnd,
	11: KeyF1, 12: KeyF1 + 1, 13: KeyF1 + 2, 14: KeyF1 + 3, 15: KeyF1 + 4,
	17: KeyF1 + 5, 18: KeyF1 + 6, 19: KeyF1 + 7, 20: KeyF1 + 8, 21: KeyF1 + 9,
	23: KeyF1 + 10, 24: KeyF12,
}

// keyEvent is one parsed key event.
type keyEvent struct {
	Key            // Text stays empty: text is the field as it came
	release bool   // the key went up: a legacy terminal sends nothing
	text    []byte // the raw text field ("cp:cp…"), nil when absent
}

// NormalizeInput appends to dst what an xterm would send for the keys in p and returns it.
//
// appCursor is the program's DECCKM, which decides how bare arrows, Home and
// End look. No state is kept between calls: a sequence cut at the end of p
// passes through as it is, because the TUI hands over whole keys and waiting
// for a continuation would hold a real keystroke (a bare Esc) back.
func NormalizeInput(dst, p []byte, appCursor bool) []byte {
	for len(p) > 0 {
		i := bytes.IndexByte(p, escByte)
		if i < 0 {
			return append(dst, p...)
		}
		dst = append(dst, p[:i]...)
		var n int
		dst, n = normalizeEscape(dst, p[i:], appCursor)
		p = p[i+n:]
	}
	return dst
}

// normalizeEscape handles the sequence starting at p[0] == ESC and reports how
// many bytes of p it consumed.
func normalizeEscape(dst, p []byte, appCursor bool) ([]byte, int) {
	if len(p) < 2 {
		return append(dst, p...), len(p)
	}
	switch p[1] {
	case '[':
		return normalizeCSI(dst, p, appCursor)
	case 'O':
		if len(p) > 2 {
			switch c := p[2]; c {
			case 'A', 'B', 'C', 'D', 'E', 'F', 'H':
				// The user's terminal answered for its own DECCKM state, not
				// the program's.
				return cursorKey(dst, c, 1, appCursor), 3
			}
		}
	}
	// Alt+key in legacy form, a bare Esc, other SS3 keys or the start of a
	// control string (OSC, DCS, … replies): already what xterm sends. The
	// next byte is scanned afresh, so ESC ESC [ A still re-encodes the
	// arrow, and a control string's payload passes as text: an ESC in it
	// ends the string in xterm too.
	return append(dst, escByte), 1
}

var bracketedPasteEnd = []byte("\x1b[201~")

// normalizeCSI handles p starting with ESC [.
func normalizeCSI(dst, p []byte, appCursor bool) ([]byte, int) {
	// ECMA-48 shape: parameter bytes, then intermediate bytes, then a final.
	i := 2
	for i < len(p) && p[i] >= 0x30 && p[i] <= 0x3f {
		i++
	}
	pEnd := i
	for i < len(p) && p[i] >= 0x20 && p[i] <= 0x2f {
		i++
	}
	if i == len(p) {
		return append(dst, p...), len(p) // cut short: pass it on
	}
	final := p[i]
	if final < 0x40 || final > 0x7e {
		// Not a CSI after all (a control or ESC interrupted it): pass what
		// was seen and let the interrupting byte be scanned on its own.
		return append(dst, p[:i]...), i
	}
	n := i + 1
	params := p[2:pEnd]
	if pEnd != i {
		return append(dst, p[:n]...), n // intermediates: no key has them
	}
	if final == '~' && string(params) == "200" {
		// Bracketed paste: its content is text even when it holds ESC [ A.
		if j := bytes.Index(p[n:], bracketedPasteEnd); j >= 0 {
			n += j + len(bracketedPasteEnd)
		} else {
			n = len(p)
		}
		return append(dst, p[:n]...), n
	}
	// An X10 mouse report (CSI M and three raw bytes) needs no care: the raw
	// bytes are at least 0x20, never ESC, so they pass as text.
	k, ok := parseKeyCSI(params, final)
	if !ok {
		return append(dst, p[:n]...), n
	}
	return normalizeKey(dst, k, appCursor), n
}

// parseKeyCSI reads the key in a CSI sequence's parameters; ok is false when
// the sequence is not a key this package knows, so it is passed through.
func parseKeyCSI(params []byte, final byte) (k keyEvent, ok bool) {
	var f [3][]byte
	nf := 0
	for {
		j := bytes.IndexByte(params, ';')
		if nf == len(f) {
			return k, false
		}
		if j < 0 {
			f[nf] = params
			nf++
			break
		}
		f[nf] = params[:j]
		nf++
		params = params[j+1:]
	}
	switch final {
	case 'u':
		var cp [3][]byte
		if splitSubParams(f[0], cp[:]) < 0 {
			return k, false
		}
		code, set, ok := paramNum(cp[0])
		if !ok || !set || !utf8.ValidRune(rune(code)) {
			return k, false
		}
		shifted, _, ok := paramNum(cp[1])
		if !ok || !utf8.ValidRune(rune(shifted)) {
			return k, false
		}
		if _, _, ok := paramNum(cp[2]); !ok { // the base layout key: unused
			return k, false
		}
		if k.Mod, k.release, ok = parseMods(f[1]); !ok {
			return k, false
		}
		if nf == 3 {
			if !validKeyText(f[2]) {
				return k, false
			}
			k.text = f[2]
		}
		k.Code, k.Shifted = kittyCode(rune(code)), rune(shifted)
		return k, true
	case '~':
		n, set, ok := paramNum(f[0])
		if !ok || !set {
			return k, false
		}
		if n == 27 && nf == 3 {
			// xterm modifyOtherKeys: CSI 27 ; mods ; code ~. The same keys
			// as kitty's CSI u, from terminals that prefer xterm's scheme.
			code, set, ok := paramNum(f[2])
			if !ok || !set || !utf8.ValidRune(rune(code)) {
				return k, false
			}
			if k.Mod, k.release, ok = parseMods(f[1]); !ok {
				return k, false
			}
			k.Code = kittyCode(rune(code))
			return k, true
		}
		if nf > 2 {
			return k, false
		}
		if k.Mod, k.release, ok = parseMods(f[1]); !ok {
			return k, false
		}
		if n < len(tildeKeys) && tildeKeys[n] != 0 {
			k.Code = tildeKeys[n]
			return k, true
		}
		// Some other key (F13 in rxvt, …): the program may know it, so it
		// passes; a kitty release of it must not.
		return k, k.release
	case 'A', 'B', 'C', 'D', 'E', 'F', 'H', 'P', 'Q', 'S':
		if nf > 2 {
			return k, false
		}
		if n, _, ok := paramNum(f[0]); !ok || n > 1 {
			return k, false
		}
		if k.Mod, k.release, ok = parseMods(f[1]); !ok {
			return k, false
		}
		k.Code = letterKeys[final-'A']
		return k, true
	}
	return k, false
}

// kittyCode maps kitty's codes for keys without a character onto the named
// keys, and moves Esc, Enter, Tab and Backspace, which kitty reports by their
// ASCII codes, there too, so that they get their own modifier rules
// (shift+Tab, ctrl+Backspace) rather than ctrl+letter's.
func kittyCode(code rune) rune {
	if code >= kittyFirst && code <= kittyLast {
		return keyBase + code - kittyFirst
	}
	switch code {
	case 27:
		return KeyEscape
	case 13:
		return KeyEnter
	case 9:
		return KeyTab
	case 127:
		return KeyBackspace
	}
	return code
}

// letterKeys maps the final byte of CSI 1;mods X (offset from 'A', so 0 is
// 'A') to the key.
var letterKeys = [...]rune{
	0: KeyUp, 'B' - 'A': KeyDown, 'C' - 'A': KeyRight, 'D' - 'A': KeyLeft,
	'E' - 'A': KeyBegin, 'F' - 'A': KeyEnd, 'H' - 'A': KeyHome,
	'P' - 'A': KeyF1, 'Q' - 'A': KeyF1 + 1, 'S' - 'A': KeyF1 + 3,
}

// splitSubParams splits a field at ':' into out and returns how many parts it
// had, or -1 when there are more than out can hold.
func splitSubParams(field []byte, out [][]byte) int {
	n := 0
	for {
		if n == len(out) {
			return -1
		}
		j := bytes.IndexByte(field, ':')
		if j < 0 {
			out[n] = field
			return n + 1
		}
		out[n] = field[:j]
		n++
		field = field[j+1:]
	}
}

// number parses a decimal parameter; set is false for an empty one.
func paramNum(b []byte) (v int, set, ok bool) {
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		v = v*10 + int(c-'0')
		if v > maxKeyParam {
			return 0, false, false
		}
	}
	return v, len(b) > 0, true
}

// parseMods parses the "mods[:event]" field; an empty or zero value means
// no modifiers.
func parseMods(field []byte) (mods KeyMod, release, ok bool) {
	var sp [2][]byte
	if splitSubParams(field, sp[:]) < 0 {
		return 0, false, false
	}
	m, _, ok := paramNum(sp[0])
	if !ok || m > 256 {
		return 0, false, false
	}
	ev, _, ok := paramNum(sp[1])
	if !ok || ev > 3 {
		return 0, false, false
	}
	if m > 0 {
		mods = KeyMod(m - 1) // m ≤ 256: every bit fits
	}
	return mods, ev == 3, true
}

// validKeyText checks the syntax of the text field (code points joined by ':').
func validKeyText(field []byte) bool {
	for len(field) > 0 {
		j := bytes.IndexByte(field, ':')
		if j < 0 {
			j = len(field)
		}
		if _, _, ok := paramNum(field[:j]); !ok {
			return false
		}
		field = field[min(j+1, len(field)):]
	}
	return true
}

// appendKeyText appends the text field as UTF-8; ok is false (and dst is left
// as it was) when the field holds nothing a legacy terminal would type, so
// the key itself is encoded instead.
func appendKeyText(dst, field []byte) ([]byte, bool) {
	start := len(dst)
	for len(field) > 0 {
		j := bytes.IndexByte(field, ':')
		if j < 0 {
			j = len(field)
		}
		v, set, _ := paramNum(field[:j])
		field = field[min(j+1, len(field)):]
		if !set {
			continue
		}
		r := rune(v)
		if !typable(r) {
			return dst[:start], false
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, len(dst) > start
}

// normalizeKey appends what xterm sends for the parsed key. The kitty text
// field, decoded on the fly so that nothing is allocated, stands for the
// key when it is plain typing.
func normalizeKey(dst []byte, k keyEvent, appCursor bool) []byte {
	if k.release {
		return dst
	}
	if len(k.text) > 0 && k.Mod&(ModCtrl|ModAlt) == 0 && typable(plainKey(k.Code)) {
		if out, ok := appendKeyText(dst, k.text); ok {
			return out
		}
	}
	return AppendKey(dst, k.Key, appCursor)
}
