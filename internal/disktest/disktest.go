// Package disktest gives tests a real full disk: a small tmpfs mounted for
// the test, filled until the kernel answers ENOSPC. Nothing is simulated;
// the code under test meets the error the way it would on a full disk.
package disktest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes on a fresh folder and unmounts it when
// the test ends. It skips the test, saying why, where mounting is not
// permitted (not root, or no CAP_SYS_ADMIN in a container).
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	opts := "size=" + strconv.Itoa(size) + ",mode=0700"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("disktest: cannot mount a tmpfs to fill (%v): this test needs root or CAP_SYS_ADMIN", err)
		}
		t.Fatalf("disktest: mount tmpfs on %s: %v", dir, err)
	}
	// Lazy: a file the code under test still holds open must not keep the
	// mount (and the test's temp folder) busy.
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// Fill writes a filler file in dir until the file system is full and
// returns its path; then it frees free bytes (rounded to whole pages by
// tmpfs) by shortening the filler, so a write of more than free bytes
// stops short with ENOSPC. Removing the filler frees the disk again.
func Fill(t testing.TB, dir string, free int) string {
	t.Helper()
	p := filepath.Join(dir, ".disktest-filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("disktest: %v", err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{'f'}, 64<<10)
	var size int64
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatalf("disktest: fill %s: %v", dir, err)
		}
	}
	if free > 0 {
		if err := f.Truncate(max(size-int64(free), 0)); err != nil {
			t.Fatalf("disktest: %v", err)
		}
	}
	return p
}
