package pty

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The one encoder of key presses into the bytes an xterm sends for them:
// the TUI builds a Key for every key the user types into a program, and
// NormalizeInput one for every key it parses out of a kitty or legacy
// sequence.

// Key is one key press to send to a program.
type Key struct {
	// Code is a Unicode code point or a named key (KeyEnter, KeyUp, …);
	// a negative one is no key, for a Text of its own.
	Code rune
	// Shifted is what shift makes of Code on the user's layout, 0 when not
	// known (shift upper-cases Code then).
	Shifted rune
	// Mod holds the modifiers and lock keys; xterm has room for shift, alt
	// and ctrl only.
	Mod KeyMod
	// Text is what the key types when the terminal reported it (a layout,
	// an input method): unless ctrl is held it is sent in place of Code,
	// after an ESC for alt.
	Text string
}

// KeyMod is a set of modifiers, with the kitty keyboard protocol's bits.
type KeyMod uint8

// The modifiers; super, hyper and meta have no xterm form and are dropped.
const (
	ModShift KeyMod = 1 << iota
	ModAlt
	ModCtrl
	ModSuper
	ModHyper
	ModMeta
	ModCapsLock
	ModNumLock
)

// The named keys. Their codes lie past Unicode, so that no character is
// taken for one, in kitty's order: a kitty key code k is keyBase+k-kittyFirst.
const (
	KeyEscape    = keyBase + 57344 - kittyFirst
	KeyEnter     = keyBase + 57345 - kittyFirst
	KeyTab       = keyBase + 57346 - kittyFirst
	KeyBackspace = keyBase + 57347 - kittyFirst
	KeyInsert    = keyBase + 57348 - kittyFirst
	KeyDelete    = keyBase + 57349 - kittyFirst
	KeyLeft      = keyBase + 57350 - kittyFirst
	KeyRight     = keyBase + 57351 - kittyFirst
	KeyUp        = keyBase + 57352 - kittyFirst
	KeyDown      = keyBase + 57353 - kittyFirst
	KeyPageUp    = keyBase + 57354 - kittyFirst
	KeyPageDown  = keyBase + 57355 - kittyFirst
	KeyHome      = keyBase + 57356 - kittyFirst
	KeyEnd       = keyBase + 57357 - kittyFirst
	// KeyF1 to KeyF12 follow each other: KeyF1+n is F(n+1).
	KeyF1  = keyBase + 57364 - kittyFirst
	KeyF12 = keyBase + 57375 - kittyFirst
	// KeyBegin is the keypad's middle key without num lock (kitty's
	// KP_Begin): xterm sends CSI E for it.
	KeyBegin = keyBase + 57427 - kittyFirst
)

const (
	// keyBase is the code of KeyEscape, the first named key.
	keyBase rune = unicode.MaxRune + 1
	// kittyFirst and kittyLast bound the codes kitty gives keys without a
	// character (Escape … ISO_Level5_Shift).
	kittyFirst rune = 57344
	kittyLast  rune = 57454
	// keyKP0 is kitty's KP_0, the first keypad key; KeyBegin is the last.
	keyKP0 = keyBase + 57399 - kittyFirst
	// keyFunctionalLast is the last named key; those with no form below
	// (lock keys, F13–F35, media keys, bare modifiers) have no xterm
	// encoding at all.
	keyFunctionalLast = keyBase + kittyLast - kittyFirst
)

// keypadKeys maps KP_0 … KP_Begin (in kitty's order) to ordinary keys: the
// program's keypad mode (DECKPAM) is not tracked, and the plain characters
// are what xterm sends in the default numeric mode, which every program
// accepts.
var keypadKeys = [...]rune{
	'0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
	'.', '/', '*', '-', '+', KeyEnter, '=', ',',
	KeyLeft, KeyRight, KeyUp, KeyDown, KeyPageUp, KeyPageDown,
	KeyHome, KeyEnd, KeyInsert, KeyDelete, KeyBegin,
}

// keyForm is how xterm writes a named key.
type keyForm struct {
	kind keyFormKind
	b    byte // the final byte, or the number before ~
}

type keyFormKind uint8

const (
	formNone   keyFormKind = iota
	formCursor             // CSI final, SS3 final in DECCKM, CSI 1;mod final
	formTilde              // CSI n ~, CSI n;mod ~
	formSS3                // SS3 final, CSI 1;mod final (F1–F4)
	formEdit               // Enter, Tab, Backspace, Esc: a control byte
)

// keyForms holds the form of every named key, indexed from KeyEscape.
var keyForms = [KeyBegin - KeyEscape + 1]keyForm{
	0:                        {formEdit, escByte}, // KeyEscape
	KeyEnter - KeyEscape:     {formEdit, '\r'},
	KeyTab - KeyEscape:       {formEdit, '\t'},
	KeyBackspace - KeyEscape: {formEdit, 0x7f},
	KeyInsert - KeyEscape:    {formTilde, 2},
	KeyDelete - KeyEscape:    {formTilde, 3},
	KeyLeft - KeyEscape:      {formCursor, 'D'},
	KeyRight - KeyEscape:     {formCursor, 'C'},
	KeyUp - KeyEscape:        {formCursor, 'A'},
	KeyDown - KeyEscape:      {formCursor, 'B'},
	KeyPageUp - KeyEscape:    {formTilde, 5},
	KeyPageDown - KeyEscape:  {formTilde, 6},
	KeyHome - KeyEscape:      {formCursor, 'H'},
	KeyEnd - KeyEscape:       {formCursor, 'F'},
	KeyF1 - KeyEscape:        {formSS3, 'P'},
	KeyF1 + 1 - KeyEscape:    {formSS3, 'Q'},
	KeyF1 + 2 - KeyEscape:    {formSS3, 'R'},
	KeyF1 + 3 - KeyEscape:    {formSS3, 'S'},
	KeyF1 + 4 - KeyEscape:    {formTilde, 15},
	KeyF1 + 5 - KeyEscape:    {formTilde, 17},
	KeyF1 + 6 - KeyEscape:    {formTilde, 18},
	KeyF1 + 7 - KeyEscape:    {formTilde, 19},
	KeyF1 + 8 - KeyEscape:    {formTilde, 20},
	KeyF1 + 9 - KeyEscape:    {formTilde, 21},
	KeyF1 + 10 - KeyEscape:   {formTilde, 23},
	KeyF12 - KeyEscape:       {formTilde, 24},
	KeyBegin - KeyEscape:     {formCursor, 'E'},
}

// AppendKey appends to dst the bytes xterm sends for k and returns it; a
// key xterm cannot express (F13, a media key, a bare modifier, a C1
// control) appends nothing.
//
// appCursor is the program's DECCKM, which decides how bare arrows, Home,
// End and Begin look; the program's keypad mode is not followed (see
// keypadKeys).
func AppendKey(dst []byte, k Key, appCursor bool) []byte {
	if k.Text != "" && k.Mod&ModCtrl == 0 {
		return append(altPrefix(dst, k.Mod), k.Text...)
	}
	code := plainKey(k.Code)
	if code < KeyEscape || code > keyFunctionalLast {
		return appendRuneKey(dst, code, k.Shifted, k.Mod)
	}
	if code > KeyBegin {
		return dst
	}
	// xterm's modifier parameter: 1 + shift, alt and ctrl bits.
	xmod := 1 + int(k.Mod&(ModShift|ModAlt|ModCtrl))
	switch f := keyForms[code-KeyEscape]; f.kind {
	case formCursor:
		return cursorKey(dst, f.b, xmod, appCursor)
	case formTilde:
		return tildeKey(dst, int(f.b), xmod)
	case formSS3:
		if xmod == 1 {
			return append(dst, escByte, 'O', f.b)
		}
		return cursorKey(dst, f.b, xmod, false)
	case formEdit:
		return appendEditKey(dst, f.b, k.Mod)
	}
	return dst
}

// plainKey maps a keypad key to the ordinary key it types.
func plainKey(code rune) rune {
	if code >= keyKP0 && code <= KeyBegin {
		return keypadKeys[code-keyKP0]
	}
	return code
}

// altPrefix appends the ESC that alt puts before a key (xterm's
// metaSendsEscape, what every terminal does today).
func altPrefix(dst []byte, mod KeyMod) []byte {
	if mod&ModAlt != 0 {
		return append(dst, escByte)
	}
	return dst
}

// appendEditKey encodes Enter, Tab, Backspace and Esc, whose modifiers have
// no xterm form but shift+Tab (back tab) and ctrl+Backspace (BS, not DEL).
func appendEditKey(dst []byte, b byte, mod KeyMod) []byte {
	dst = altPrefix(dst, mod)
	switch {
	case b == '\t' && mod&ModShift != 0:
		return append(dst, escByte, '[', 'Z')
	case b == 0x7f && mod&ModCtrl != 0:
		return append(dst, 0x08)
	}
	return append(dst, b)
}

// appendRuneKey encodes a character key: shift and caps lock choose its
// case, ctrl makes a control byte of it where the VT220 had one.
func appendRuneKey(dst []byte, code, shifted rune, mod KeyMod) []byte {
	if code >= 0 && code < 0x20 {
		// Some terminals report ctrl+letter as its control code point.
		return append(altPrefix(dst, mod), byte(code))
	}
	if !typable(code) {
		return dst
	}
	shift := mod&ModShift != 0
	switch {
	case shift && typable(shifted):
		code = shifted
	case shift != (mod&ModCapsLock != 0):
		code = unicode.ToUpper(code)
	}
	dst = altPrefix(dst, mod)
	if mod&ModCtrl != 0 {
		if c, ok := ctrlByte(code); ok {
			return append(dst, c)
		}
	}
	return utf8.AppendRune(dst, code)
}

// typable reports whether r may be sent as typed text: a Unicode scalar
// value that is neither a C0/C1 control nor DEL, which would act as keys.
func typable(r rune) bool {
	return r >= 0x20 && (r < 0x7f || r >= 0xa0) && utf8.ValidRune(r)
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
