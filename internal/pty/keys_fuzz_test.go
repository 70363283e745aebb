package pty

import (
	"bytes"
	"testing"
)

// FuzzNormalizeInput checks the guarantees on arbitrary bytes: a terminal may send anything.
//
// No panic, no state, no damage to the caller's buffer, ESC-free text
// untouched and no amplification.
func FuzzNormalizeInput(f *testing.F) {
	for _, s := range []string{
		"hello",
		"\x1b[97;5u",
		"\x1b[97;1:3u",
		"\x1b[1;5A\x1b[A\x1bOA",
		"\x1b[13~\x1b[15;2~\x1b[57399u",
		"\x1b[97:65;2;65u",
		"\x1b[200~\x1b[A\x1b[201~",
		"\x1b[99999999999999999999u",
		"\x1b[97;5",
		"\x1b]0;t\x07",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, p []byte, appCursor bool) {
		orig := bytes.Clone(p)
		prefix := []byte("prefix")
		dst := make([]byte, len(prefix), len(prefix)+len(p)+8)
		copy(dst, prefix)

		got := NormalizeInput(dst, p, appCursor)
		if !bytes.Equal(p, orig) {
			t.Fatalf("input modified: %q, was %q", p, orig)
		}
		if !bytes.HasPrefix(got, prefix) {
			t.Fatalf("prefix clobbered: %q", got)
		}
		out := got[len(prefix):]
		if again := NormalizeInput(nil, p, appCursor); !bytes.Equal(again, out) {
			t.Fatalf("not deterministic for %q: %q then %q", p, out, again)
		}
		if bytes.IndexByte(p, escByte) < 0 && !bytes.Equal(out, p) {
			t.Fatalf("ESC-free input changed: %q -> %q", p, out)
		}
		// A hostile input must not make the PTY write balloon. The only
		// encoding longer than its source is the "1" xterm needs before ;mod
		// that kitty may leave out: CSI ;2A (5 bytes) -> CSI 1;2A.
		if len(out)*5 > len(p)*6 {
			t.Fatalf("output grew by more than a fifth: %q -> %q", p, out)
		}
	})
}
