package export

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteRegularRefusesSpecialFiles: export_html to a FIFO
// someone reads (the RPC client's own stdin is one) or to a device is
// refused without blocking and without writing; a regular file, new or
// longer before, gets exactly the page.
func TestWriteRegularRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	done := make(chan error, 2)
	go func() { done <- writeRegular(fifo, []byte("<html>")) }()
	go func() { done <- writeRegular("/dev/zero", []byte("<html>")) }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
				t.Errorf("write to a special file: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("writing to a special file hung")
		}
	}
	if n, _ := rd.Read(make([]byte, 16)); n > 0 {
		t.Errorf("the FIFO's reader got %d bytes", n)
	}
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte("an older, longer page\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeRegular(page, []byte("<html>")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(page); string(got) != "<html>" {
		t.Errorf("page = %q", got)
	}
}
