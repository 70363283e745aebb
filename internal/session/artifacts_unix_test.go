//go:build unix

package session

import (
	"os"
	"syscall"
	"testing"
)

// A restrictive umask must not leave the reservation unwritable for the sink.
// Not parallel: the umask is process-wide.
func TestAllocateModeIgnoresUmask(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	m := NewArtifactManager(dir)
	_, p, err := m.Allocate("bash")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("perm %o under umask 277, want 600", perm)
	}
}
