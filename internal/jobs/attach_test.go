package jobs

import (
	"errors"
	"testing"

	"agentsh/internal/pty"
)

// Write hands the program the bytes as they are (a key's encoding, not the
// model's escapes), and Resize is what the program then sees as its size.
func TestWriteRawAndResize(t *testing.T) {
	m := newManager(t)
	j := mustStart(t, m, spec(t, `IFS= read -r -p "line? " l; printf 'got %q size %s\n' "$l" "$(stty size)"`))
	waitState(t, j, "waiting for input")
	if c, r := j.Size(); c != DefaultCols || r != DefaultRows {
		t.Fatalf("size %dx%d, want the default %dx%d", c, r, DefaultCols, DefaultRows)
	}
	j.Resize(70, 15)
	if c, r := j.Size(); c != 70 || r != 15 {
		t.Fatalf("size after Resize(70, 15): %dx%d", c, r)
	}
	raw := []byte(`a\nb` + "\r")
	if n, err := j.Write(raw); err != nil || n != len(raw) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	readUntil(t, j, `got a\\nb size 15 70`)
	if st := j.Final(); st.String() != "exited 0" {
		t.Fatalf("job ended %q", st)
	}
	if _, err := j.Write([]byte("x")); !errors.Is(err, pty.ErrNotRunning) {
		t.Errorf("Write after the end: %v, want ErrNotRunning", err)
	}
	j.Resize(30, 10) // a no-op, not a panic, once the terminal is gone
}
