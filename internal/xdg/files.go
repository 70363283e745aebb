package xdg

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// OpenRegular opens path for reading; it must be a regular file
// (through links). It opens without blocking, so a FIFO is refused before
// anything waits on it and a device (/dev/zero) before it is read
// without end.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("read %s: not a regular file", path)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ReadRegular reads path, which must be a regular file (through
// links) of at most max bytes (0: any size), what being named in errors.
// It opens without blocking, so a FIFO is refused before anything waits
// on it, and a device (/dev/zero) is refused before it is read without
// end.
func ReadRegular(path string, max int64, what string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if max > 0 && st.Size() > max {
		return nil, fmt.Errorf("read %s: %d bytes, more than %s may have (%d)", path, st.Size(), what, max)
	}
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: more than %s may have (%d bytes)", path, what, max)
	}
	return data, nil
}
