package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCraftedSessionIDRefused: a session file whose id holds an
// escape sequence (it would set the clipboard when the exit hint or the
// picker prints it) is neither loaded nor listed; ids agentsh and omp make
// still are.
func TestCraftedSessionIDRefused(t *testing.T) {
	for _, id := range []string{"3f2a9c01d4e5b6a7", "01a23da2-65f2-7406-88aa-24bc3595f6f8"} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
	}
	for _, id := range []string{"", "a\x1b]52;c;aGk=\x07", "a b", "../x", strings.Repeat("a", 129)} {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
	}
	dir := t.TempDir()
	bad := "x\x1b]52;c;cHduZWQ=\x07"
	header := `{"type":"session","version":1,"id":"x\u001b]52;c;cHduZWQ=\u0007","timestamp":"2026-12-07T20:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	path := filepath.Join(dir, "2026-12-07T20-00-00-000Z_crafted.jsonl")
	if err := os.WriteFile(path, []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), "is not a session id") {
		t.Errorf("Load of a crafted id: %v", err)
	}
	named := filepath.Join(dir, "2026-12-07T20-00-01-000Z_"+bad+".jsonl")
	if err := os.WriteFile(named, []byte(strings.Replace(header, `x\u001b]52;c;cHduZWQ=\u0007`, "abc", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := ListIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 0 {
		t.Errorf("listed %+v", infos)
	}
}

// TestLoadRefusesSpecialFiles: switch_session or -r naming a
// FIFO or /dev/zero is refused at once instead of blocking the caller or
// reading without end.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "s.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { _, _, err := Load(fifo); done <- err }()
	go func() { _, _, err := Load("/dev/zero"); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load of a special file: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Load of a special file hung")
		}
	}
}
