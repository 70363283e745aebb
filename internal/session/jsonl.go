package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxEntryBytes bounds one line of a session file that Load and the
// session list read. An entry is a message: tool outputs reach the model
// cut to 50 KB, so even a long paste stays far below it; a longer line is
// nothing agentsh wrote, and reading it whole could take all the memory
// (a 1 GB line). It is skipped with a LoadError, without being held.
const MaxEntryBytes = 64 << 20

// errLongLine is the error of a line longer than a lineReader's limit.
type errLongLine struct{ size, max int64 }

func (e *errLongLine) Error() string {
	return fmt.Sprintf("line of %d bytes is longer than a session entry may be (%d bytes): skipped", e.size, e.max)
}

// lineReader reads a file line by line, holding at most one line of at
// most max bytes: a session file is never in memory whole, so loading it
// costs about what its messages take.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	max int64
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n" (or "\r\n"), valid until
// the following call, and io.EOF after the last one. A line longer than
// max is read past and comes back as an *errLongLine (no bytes); the next
// call goes on after it.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	var size int64
	for {
		chunk, err := l.r.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		if size <= l.max {
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		case err != nil && size == 0:
			return nil, io.EOF
		}
		if size > l.max {
			l.buf = nil // its first max bytes are of no use
			return nil, &errLongLine{size: size, max: l.max}
		}
		line := l.buf
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}
