// Package sink collects the output of a shell command: it sanitizes the raw
// terminal stream into plain UTF-8 text, keeps a bounded UTF-8-safe tail in
// memory for the model, and spills the complete text to an artifact file
// once it outgrows that tail.
package sink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// DefaultMaxBytes is the default size of the in-memory tail (50 KiB).
const DefaultMaxBytes = 50 * 1024

// readBufSize is the ReadFrom buffer: large enough that a fast producer is
// drained with few syscalls, and reused so that 1 GB of output allocates
// nothing per chunk.
const readBufSize = 1 << 20

// fileBufSize batches small writes to the artifact. It is well below a pipe
// read (64 KiB), because bufio copies a chunk that fits its free space
// instead of writing it straight through.
const fileBufSize = 16 << 10

// maxEmptyReads mirrors bufio: a reader that keeps returning 0, nil is broken.
const maxEmptyReads = 100

var (
	_ io.Writer     = (*OutputSink)(nil)
	_ io.ReaderFrom = (*OutputSink)(nil)
)

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// Options configures an OutputSink.
type Options struct {
	MaxBytes     int          // in-memory tail size; <= 0 means DefaultMaxBytes
	ArtifactPath string       // file for the complete output on overflow; "" = none
	ArtifactID   string       // reported in Summary only when the file was written
	OnChunk      func([]byte) // receives each sanitized chunk; slice valid only during the call
}

// Summary describes the collected output after Dump.
type Summary struct {
	Output      string // "[notice]\n" + tail when a notice was given, else tail
	Truncated   bool   // Output is not the complete stream
	TotalLines  int    // lines of the complete sanitized stream
	TotalBytes  int    // bytes of the complete sanitized stream
	OutputLines int    // lines of the tail (without the notice)
	OutputBytes int    // bytes of the tail (without the notice)
	ArtifactID  string // set only when the artifact file holds the complete stream
	// ArtifactError says why the complete stream was not saved although
	// it outgrew the tail and an artifact path was given; nil otherwise.
	ArtifactError error
}

// OutputSink receives a command's raw output; create it with New. It is safe
// for concurrent use; OnChunk runs with the sink locked and must not call
// back into it.
type OutputSink struct {
	mu       sync.Mutex
	opts     Options
	san      Sanitizer
	tail     tail
	total    int  // sanitized bytes seen
	newlines int  // '\n' among them
	lastByte byte // last sanitized byte, to count an unterminated last line
	overflow bool // the stream outgrew the tail at least once
	file     *os.File
	fileW    *bufio.Writer
	fileErr  error // the artifact could not be opened or written: memory only
	dumped   bool
	summary  Summary
}

// New returns an OutputSink configured by opts.
func New(opts Options) *OutputSink {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	return &OutputSink{opts: opts, tail: tail{max: opts.MaxBytes}}
}

// Write consumes raw command output. It always returns len(p), nil: artifact
// problems degrade the sink to memory-only instead of failing the command,
// and writes after Dump are discarded.
func (s *OutputSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock() // deferred so that a panicking OnChunk cannot leave it locked
	if !s.dumped {
		s.push(s.san.Process(p))
	}
	return len(p), nil
}

// ReadFrom copies r into the sink until EOF. EIO counts as EOF, because that
// is how a PTY master reports that the child side has closed. After Dump it
// keeps draining r, so the writer never blocks on a full pipe.
func (s *OutputSink) ReadFrom(r io.Reader) (int64, error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	var total int64
	empty := 0
	for {
		n, err := r.Read(buf)
		if n > 0 {
			empty = 0
			total += int64(n)
			_, _ = s.Write(buf[:n])
		} else if err == nil {
			if empty++; empty >= maxEmptyReads {
				return total, io.ErrNoProgress
			}
		}
		switch {
		case err == nil:
		case err == io.EOF, errors.Is(err, syscall.EIO):
			return total, nil
		default:
			return total, err
		}
	}
}

// Dump ends the stream and returns its summary, with "[notice]\n" prefixed
// to the output when notice is not empty. It flushes the sanitizer (a held
// CR becomes LF, an incomplete character U+FFFD, an unterminated escape
// sequence is dropped) and closes the artifact file. Later calls return the
// first summary; later writes are discarded.
func (s *OutputSink) Dump(notice string) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dumped {
		return s.summary
	}
	s.dumped = true
	s.push(s.san.Flush(nil))
	artifact := ""
	if s.file != nil {
		err := s.fileW.Flush()
		if cerr := s.file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.dropFile(fmt.Errorf("write artifact: %w", err))
		} else {
			artifact = s.opts.ArtifactID
			s.file, s.fileW = nil, nil
		}
	}
	tail := s.tail.bytes()
	out := string(tail)
	if notice != "" {
		out = "[" + notice + "]\n" + out
	}
	s.summary = Summary{
		Output:      out,
		Truncated:   s.overflow,
		TotalLines:  lines(s.newlines, s.total, s.lastByte),
		TotalBytes:  s.total,
		OutputLines: countLines(tail),
		OutputBytes: len(tail),
		ArtifactID:  artifact,
	}
	if s.fileErr != nil {
		s.summary.ArtifactError = s.fileErr
		artifactErrors.Store(s.opts.ArtifactPath, s.fileErr)
	}
	s.tail.buf = nil // the summary holds its own copy
	return s.summary
}

// push records one sanitized chunk.
func (s *OutputSink) push(c []byte) {
	if len(c) == 0 {
		return
	}
	if s.opts.OnChunk != nil {
		s.opts.OnChunk(c)
	}
	// Before the first overflow the tail holds the whole stream, so this is
	// "buffered + chunk would exceed the limit".
	if !s.overflow && s.total+len(c) > s.opts.MaxBytes {
		s.overflow = true
		if s.opts.ArtifactPath != "" {
			s.openFile()
		}
	}
	if s.file != nil {
		if _, err := s.fileW.Write(c); err != nil {
			s.dropFile(fmt.Errorf("write artifact: %w", err))
		}
	}
	s.total += len(c)
	s.newlines += bytes.Count(c, []byte{'\n'})
	s.lastByte = c[len(c)-1]
	s.tail.write(c)
}

// openFile starts the artifact with everything seen so far, which at the
// first overflow is still entirely in the tail.
func (s *OutputSink) openFile() {
	// No O_TRUNC: the path is usually an empty reservation, and truncating
	// an existing file makes ext4 flush the whole artifact to disk on close
	// (measured: ~450 ms for 1 GB, every time). Truncate only if needed.
	f, err := os.OpenFile(s.opts.ArtifactPath, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		s.fileErr = fmt.Errorf("open artifact: %w", err)
		return
	}
	st, err := f.Stat()
	if err == nil && st.Size() > 0 {
		err = f.Truncate(0)
	}
	if err != nil {
		f.Close()
		s.fileErr = fmt.Errorf("open artifact: %w", err)
		return
	}
	s.file, s.fileW = f, bufio.NewWriterSize(f, fileBufSize)
	if _, err := s.fileW.Write(s.tail.buf); err != nil {
		s.dropFile(fmt.Errorf("write artifact: %w", err))
	}
}

// dropFile abandons the artifact after a write error: a partial file would
// claim to be the complete output, so it is removed and not reported; why
// is.
func (s *OutputSink) dropFile(why error) {
	if s.file == nil {
		return
	}
	_ = s.file.Close()
	_ = os.Remove(s.opts.ArtifactPath)
	s.file, s.fileW = nil, nil
	s.fileErr = why
}

// artifactErrors holds Summary.ArtifactError by artifact path until
// TakeArtifactError: the executor and the PTY runtime pass only the
// artifact id of a Summary on, so the caller that reserved the path asks
// here why nothing was saved.
var artifactErrors sync.Map // path → error

// TakeArtifactError returns and forgets why the sink given path as its
// ArtifactPath could not save the complete stream; nil when it did, or when
// it never had to.
func TakeArtifactError(path string) error {
	if path == "" {
		return nil
	}
	if v, ok := artifactErrors.LoadAndDelete(path); ok {
		return v.(error)
	}
	return nil
}

// lines counts lines the usual way: every '\n' ends one, and a non-empty
// remainder without '\n' is one more.
func lines(newlines, n int, last byte) int {
	if n > 0 && last != '\n' {
		return newlines + 1
	}
	return newlines
}

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return lines(bytes.Count(b, []byte{'\n'}), len(b), b[len(b)-1])
}
