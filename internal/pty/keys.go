package pty

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The TUI reads the user's keyboard with the kitty keyboard protocol turned
// on, but the program in the PTY believes it runs in an xterm: it knows
// nothing of CSI u and would see key releases as stray keys. NormalizeInput
// rewrites every key the TUI forwards into what an xterm would have sent for
// it and leaves every other byte alone, so pastes, mouse reports and
// terminal replies reach the program exactly as they arrived.

const escByte = 0x1b

// Kitty's key codes for keys that have no Unicode character. Keys that
// arrive in legacy or CSI ~ form are mapped onto these too, so one encoder
// serves every input form.
const (
	keyEscape    rune = 57344
	keyEnter     rune = 57345
	keyTab       rune = 57346
	keyBackspace rune = 57347
	keyInsert    rune = 57348
	keyDelete    rune = 57349
	keyLeft      rune = 57350
	keyRight     rune = 57351
	keyUp        rune = 57352
	keyDown      rune = 57353
	keyPageUp    rune = 57354
	keyPageDown  rune = 57355
	keyHome      rune = 57356
	keyEnd       rune = 57357
	keyF1        rune = 57364
	keyF12       rune = 57375
	keyKP0       rune = 57399
	keyKPBegin   rune = 57427
	// The last code kitty assigns (ISO_Level5_Shift); the codes between
	// keyEnd and here that are not handled below (lock keys, F13–F35, media
	// keys, bare modifiers) have no xterm encoding at all.
	keyFunctionalLast rune = 57454
)

// Kitty modifier bits (the wire value minus one).
const (
	kittyShift = 1 << iota
	kittyAlt
	kittyCtrl
	_ // super
	_ // hyper
	_ // meta
	kittyCapsLock
)

// maxKeyParam caps every number before it can overflow; nothing in the
// protocol (code points included) is larger, so anything bigger is not a key.
const maxKeyParam = unicode.MaxRune

// keypadKeys maps KP_0 … KP_Begin (in kitty's order) to ordinary keys: the
// program's keypad mode (DECKPAM) is not tracked, and the plain characters
// are what xterm sends in the default numeric mode, which every program
// accepts.
var keypadKeys = [...]rune{
	'0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
	'.', '/', '*', '-', '+', keyEnter, '=', ',',
	keyLeft, keyRight, keyUp, keyDown, keyPageUp, keyPageDown,
	keyHome, keyEnd, keyInsert, keyDelete, keyKPBegin,
}

// tildeNumbers holds the CSI n ~ numbers of F1…F12, indexed from keyF1;
// F1–F4 are only read in this form (rxvt, kitty's F3), xterm writes them
// with SS3 or CSI 1;mod P–S.
var tildeNumbers = [...]int{11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 23, 24}

// keyEvent is one parsed key event.
type keyEvent struct {
	code    rune   // Unicode code point or a kitty functional key code
	shifted rune   // the shifted key's code point, 0 when not reported
	mods    int    // modifier bits (wire value − 1)
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
	return encodeKey(dst, k, appCursor), n
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
		if k.mods, k.release, ok = parseMods(f[1]); !ok {
			return k, false
		}
		if nf == 3 {
			if !validKeyText(f[2]) {
				return k, false
			}
			k.text = f[2]
		}
		k.code, k.shifted = kittyCode(rune(code)), rune(shifted)
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
			if k.mods, k.release, ok = parseMods(f[1]); !ok {
				return k, false
			}
			k.code = kittyCode(rune(code))
			return k, true
		}
		if nf > 2 {
			return k, false
		}
		if k.mods, k.release, ok = parseMods(f[1]); !ok {
			return k, false
		}
		switch n {
		case 2:
			k.code = keyInsert
		case 3:
			k.code = keyDelete
		case 5:
			k.code = keyPageUp
		case 6:
			k.code = keyPageDown
		case 7:
			k.code = keyHome
		case 8:
			k.code = keyEnd
		default:
			for i, t := range tildeNumbers {
				if t == n {
					k.code = keyF1 + rune(i)
					return k, true
				}
			}
			// Some other key (F13 in rxvt, …): the program may know it, so
			// it passes; a kitty release of it must not.
			return k, k.release
		}
		return k, true
	case 'A', 'B', 'C', 'D', 'E', 'F', 'H', 'P', 'Q', 'S':
		if nf > 2 {
			return k, false
		}
		if n, _, ok := paramNum(f[0]); !ok || n > 1 {
			return k, false
		}
		if k.mods, k.release, ok = parseMods(f[1]); !ok {
			return k, false
		}
		k.code = letterKeys[final-'A']
		return k, true
	}
	return k, false
}

// kittyCode moves Esc, Enter, Tab and Backspace, which kitty reports by their
// ASCII codes, onto the functional codes, so that they get their own
// modifier rules (shift+Tab, ctrl+Backspace) rather than ctrl+letter's.
func kittyCode(code rune) rune {
	switch code {
	case 27:
		return keyEscape
	case 13:
		return keyEnter
	case 9:
		return keyTab
	case 127:
		return keyBackspace
	}
	return code
}

// letterKeys maps the final byte of CSI 1;mods X (offset from 'A', so 0 is
// 'A') to the key.
var letterKeys = [...]rune{
	0: keyUp, 'B' - 'A': keyDown, 'C' - 'A': keyRight, 'D' - 'A': keyLeft,
	'E' - 'A': keyKPBegin, 'F' - 'A': keyEnd, 'H' - 'A': keyHome,
	'P' - 'A': keyF1, 'Q' - 'A': keyF1 + 1, 'S' - 'A': keyF1 + 3,
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

// modifiers parses the "mods[:event]" field; an empty or zero value means
// no modifiers.
func parseMods(field []byte) (mods int, release, ok bool) {
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
		mods = m - 1
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

// printable reports whether r may be sent as typed text: a Unicode scalar
// value that is neither a C0/C1 control nor DEL, which would act as keys.
func typable(r rune) bool {
	return r >= 0x20 && (r < 0x7f || r >= 0xa0) && utf8.ValidRune(r)
}

// encodeKey appends the xterm encoding of k; keys xterm cannot express
// append nothing.
func encodeKey(dst []byte, k keyEvent, appCursor bool) []byte {
	if k.release {
		return dst
	}
	shift, alt, ctrl := k.mods&kittyShift != 0, k.mods&kittyAlt != 0, k.mods&kittyCtrl != 0
	// xterm's modifier parameter has room for shift, alt and ctrl only;
	// super, hyper and meta have no legacy form and are dropped.
	xmod := 1 + k.mods&(kittyShift|kittyAlt|kittyCtrl)
	code := k.code
	if code >= keyKP0 && code <= keyKPBegin {
		code = keypadKeys[code-keyKP0]
	}
	switch code {
	case keyUp:
		return cursorKey(dst, 'A', xmod, appCursor)
	case keyDown:
		return cursorKey(dst, 'B', xmod, appCursor)
	case keyRight:
		return cursorKey(dst, 'C', xmod, appCursor)
	case keyLeft:
		return cursorKey(dst, 'D', xmod, appCursor)
	case keyKPBegin:
		return cursorKey(dst, 'E', xmod, appCursor)
	case keyEnd:
		return cursorKey(dst, 'F', xmod, appCursor)
	case keyHome:
		return cursorKey(dst, 'H', xmod, appCursor)
	case keyInsert:
		return tildeKey(dst, 2, xmod)
	case keyDelete:
		return tildeKey(dst, 3, xmod)
	case keyPageUp:
		return tildeKey(dst, 5, xmod)
	case keyPageDown:
		return tildeKey(dst, 6, xmod)
	case keyEnter:
		if alt {
			dst = append(dst, escByte)
		}
		return append(dst, '\r')
	case keyTab:
		if alt {
			dst = append(dst, escByte)
		}
		if shift {
			return append(dst, escByte, '[', 'Z')
		}
		return append(dst, '\t')
	case keyBackspace:
		if alt {
			dst = append(dst, escByte)
		}
		if ctrl {
			return append(dst, 0x08)
		}
		return append(dst, 0x7f)
	case keyEscape:
		if alt {
			dst = append(dst, escByte)
		}
		return append(dst, escByte)
	}
	if code >= keyF1 && code <= keyF12 {
		i := code - keyF1
		if i < 4 {
			if xmod == 1 {
				return append(dst, escByte, 'O', byte('P'+i))
			}
			return append(dst, escByte, '[', '1', ';', byte('0'+xmod), byte('P'+i))
		}
		return tildeKey(dst, tildeNumbers[i], xmod)
	}
	switch {
	case code >= keyEscape && code <= keyFunctionalLast:
		return dst // lock keys, F13+, media keys, bare modifiers
	case code < 0x20:
		// Some terminals report ctrl+letter as its control code point.
		if alt {
			dst = append(dst, escByte)
		}
		return append(dst, byte(code))
	case !typable(code):
		return dst
	}
	if !ctrl && !alt && len(k.text) > 0 {
		if out, ok := appendKeyText(dst, k.text); ok {
			return out
		}
	}
	ch := code
	switch {
	case shift && typable(k.shifted):
		ch = k.shifted
	case shift != (k.mods&kittyCapsLock != 0):
		ch = unicode.ToUpper(ch)
	}
	if alt {
		dst = append(dst, escByte)
	}
	if ctrl {
		if c, ok := ctrlByte(ch); ok {
			return append(dst, c)
		}
	}
	return utf8.AppendRune(dst, ch)
}

// ctrlByte is the control byte xterm sends for ctrl+ch (the VT220 table,
// digits included, as kitty's legacy mode has it); ok is false when ctrl
// does not change ch.
func ctrlByte(ch rune) (byte, bool) {
	switch {
	case ch >= 'a' && ch <= 'z':
		return byte(ch - 'a' + 1), true
	case ch >= '@' && ch <= '_': // @ A–Z [ \ ] ^ _
		return byte(ch - '@'), true
	}
	switch ch {
	case ' ', '2':
		return 0, true
	case '3':
		return 0x1b, true
	case '4':
		return 0x1c, true
	case '5':
		return 0x1d, true
	case '6', '~':
		return 0x1e, true
	case '7', '/':
		return 0x1f, true
	case '8', '?':
		return 0x7f, true
	}
	return 0, false
}

// cursorKey encodes an arrow, Home, End or Begin: the unmodified key follows
// the program's DECCKM, a modified one always has xterm's CSI 1;mod form.
func cursorKey(dst []byte, final byte, xmod int, appCursor bool) []byte {
	switch {
	case xmod != 1:
		return append(dst, escByte, '[', '1', ';', byte('0'+xmod), final)
	case appCursor:
		return append(dst, escByte, 'O', final)
	}
	return append(dst, escByte, '[', final)
}

// tildeKey encodes CSI n[;mod]~.
func tildeKey(dst []byte, n, xmod int) []byte {
	dst = append(dst, escByte, '[')
	dst = strconv.AppendInt(dst, int64(n), 10)
	if xmod != 1 {
		dst = append(dst, ';', byte('0'+xmod))
	}
	return append(dst, '~')
}
