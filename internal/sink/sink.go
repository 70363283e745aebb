// Package sink collects the output of a shell command (spec §4): it
// sanitizes the raw terminal stream into plain UTF-8 text, each line in its
// final state (a `\r` progress bar is one line; sanitize.go), keeps a
// bounded UTF-8-safe tail in memory for the model, and spills the whole
// stream to an artifact file once it outgrows that tail; past the
// artifact's cap the file keeps the first half and the newest output.
// TailBuffer is the live tail of a running command (tail.go), and Styles
// the coloured copy a UI may ask for (styles.go;
// docs/decisions/0007-final-state-lines-and-colours.md).
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
	"unicode/utf8"
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

// DefaultArtifactMaxBytes is the default cap of an artifact file (1 GiB).
const DefaultArtifactMaxBytes = 1 << 30

// MinArtifactMaxBytes is the smallest cap Options accepts: a smaller one is
// raised to it, so the head and the tail each keep more than the in-memory
// tail's worth of lines.
const MinArtifactMaxBytes = 64 << 10

// capWindow bounds how far the head's end moves back to a newline, and the
// tail's start forward to one, when a capped artifact is cut.
const capWindow = 4 << 10

// maxEmptyReads mirrors bufio: a reader that keeps returning 0, nil is broken.
const maxEmptyReads = 100

var (
	_ io.Writer     = (*OutputSink)(nil)
	_ io.ReaderFrom = (*OutputSink)(nil)
)

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// Options configures an OutputSink.
type Options struct {
	MaxBytes     int    // in-memory tail size; <= 0 means DefaultMaxBytes
	ArtifactPath string // file for the complete output on overflow; "" = none
	ArtifactID   string // reported in Summary only when the file was written
	// ArtifactMaxBytes caps the artifact file: past it the file keeps the
	// stream's first half and its newest output (see Summary.DroppedBytes).
	// <= 0 means DefaultArtifactMaxBytes; a positive value below
	// MinArtifactMaxBytes is raised to it.
	ArtifactMaxBytes int
	OnChunk          func([]byte) // receives each sanitized chunk; slice valid only during the call
	// Styled keeps a coloured copy of the tail for a UI (Summary.Styled),
	// made by a second Sanitizer with KeepSGR that runs only then.
	Styled bool
	// OnStyledChunk receives each chunk sanitized with its SGR sequences
	// kept (implies Styled); the slice is valid only during the call.
	OnStyledChunk func([]byte)
}

// styledMaxFactor sizes the coloured tail against the plain one: SGR
// sequences take room of their own, and the coloured copy must still
// cover the whole plain tail.
const styledMaxFactor = 4

// Summary describes the collected output after Dump.
type Summary struct {
	Output      string // "[notice]\n" + tail when a notice was given, else tail
	Truncated   bool   // Output is not the complete stream
	TotalLines  int    // lines of the complete sanitized stream
	TotalBytes  int    // bytes of the complete sanitized stream
	OutputLines int    // lines of the tail (without the notice)
	OutputBytes int    // bytes of the tail (without the notice)
	ArtifactID  string // set only when the artifact file was written
	// DroppedBytes is how many bytes of the stream the capped artifact
	// left out between its head and its tail (0 when it holds it all);
	// the file then reads head, DroppedMarker, tail.
	DroppedBytes int
	// HeadLines is the number of complete lines the artifact's head holds
	// when DroppedBytes > 0: line numbers in the file match the stream's
	// only up to there.
	HeadLines int
	// ArtifactError says why the complete stream was not saved although
	// it outgrew the tail and an artifact path was given; nil otherwise.
	ArtifactError error
	// Styled is Output with the SGR sequences of the stream kept, when
	// Options.Styled asked for it and the stream had any (else ""):
	// removing them gives Output exactly. The style in force where the
	// tail starts comes first.
	Styled string
}

// OutputSink receives a command's raw output; create it with New. It is safe
// for concurrent use; OnChunk runs with the sink locked and must not call
// back into it.
type OutputSink struct {
	mu       sync.Mutex
	opts     Options
	san      Sanitizer
	tail     tail
	total    int    // sanitized bytes seen
	newlines int    // '\n' among them
	lastByte byte   // last sanitized byte, to count an unterminated last line
	overflow bool   // the stream outgrew the tail at least once
	stream   []byte // the stream before the first overflow, once a CR made the tail differ from it
	file     *os.File
	fileW    *bufio.Writer
	filePos  int // where fileW writes next: the stream offset until the cap, then a place in the ring
	capMax   int // artifact cap (Options.ArtifactMaxBytes resolved)
	headDone bool
	headNL   int   // '\n' in the first capMax/2 bytes, counted when they are complete
	fileErr  error // the artifact could not be opened or written: memory only
	dumped   bool
	summary  Summary
	sty      *styledTail // nil unless Options.Styled
	marks    *marks      // the styles file of the artifact; nil unless Styled with an artifact path
}

// styledTail is the coloured copy of the tail.
type styledTail struct {
	san  Sanitizer
	tail tail
	on   func([]byte)
}

func (st *styledTail) push(c []byte) {
	if len(c) == 0 {
		return
	}
	if st.on != nil {
		st.on(c)
	}
	st.tail.write(c)
}

// New returns an OutputSink configured by opts.
func New(opts Options) *OutputSink {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	c := opts.ArtifactMaxBytes
	if c <= 0 {
		c = DefaultArtifactMaxBytes
	}
	s := &OutputSink{opts: opts, tail: tail{max: opts.MaxBytes}, capMax: max(c, MinArtifactMaxBytes)}
	if opts.Styled || opts.OnStyledChunk != nil {
		s.sty = &styledTail{san: Sanitizer{KeepSGR: true}, tail: tail{max: styledMaxFactor * opts.MaxBytes, sgr: true},
			on: opts.OnStyledChunk}
		if opts.ArtifactPath != "" {
			s.marks = &marks{path: opts.ArtifactPath + StylesSuffix}
		}
	}
	return s
}

// Write consumes raw command output. It always returns len(p), nil: artifact
// problems degrade the sink to memory-only instead of failing the command,
// and writes after Dump are discarded.
func (s *OutputSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock() // deferred so that a panicking OnChunk cannot leave it locked
	if !s.dumped {
		crs, base := s.san.CRs(), s.total
		c := s.san.Process(p)
		s.push(c, s.san.CRs() != crs)
		if s.sty != nil {
			sgrs := s.sty.san.SGRs()
			sc := s.sty.san.Process(p)
			s.sty.push(sc)
			if s.marks != nil && s.sty.san.SGRs() != sgrs {
				s.marks.scan(sc, base)
			}
		}
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
	crs := s.san.CRs()
	c := s.san.Flush(nil)
	s.push(c, s.san.CRs() != crs)
	if s.sty != nil {
		s.sty.push(s.sty.san.Flush(nil))
	}
	artifact := ""
	dropped, headLines := 0, 0
	if s.file != nil {
		err := s.fileW.Flush()
		if err == nil && s.total > s.capMax {
			dropped, headLines, err = s.cutFile()
		}
		if cerr := s.file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.dropFile(fmt.Errorf("write artifact: %w", err))
			dropped, headLines = 0, 0
		} else {
			artifact = s.opts.ArtifactID
			s.file, s.fileW = nil, nil
		}
	}
	s.summary = s.summaryLocked(notice, artifact)
	s.summary.DroppedBytes, s.summary.HeadLines = dropped, headLines
	if s.marks != nil {
		s.marks.close(artifact != "" && dropped == 0)
	}
	if s.sty != nil && s.sty.san.SGRs() > 0 {
		t := &s.sty.tail
		if st, ok := alignStyled(t.styled(t.buf, t.max), s.tail.bytes()); ok {
			s.summary.Styled = s.summary.Output[:len(s.summary.Output)-s.summary.OutputBytes] + st
		}
	}
	s.sty = nil
	if s.fileErr != nil {
		s.summary.ArtifactError = s.fileErr
		artifactErrors.Store(s.opts.ArtifactPath, s.fileErr)
	}
	s.tail.buf = nil // the summary holds its own copy
	return s.summary
}

// Handover returns the summary of the output so far without ending the
// stream, and sends every later chunk to onChunk in place of
// Options.OnChunk: a foreground command that becomes a job (spec §9)
// reports what it printed until then, and the job takes the rest, with no
// chunk in both or in neither. The artifact stays open and is flushed, so
// the ArtifactID the summary names (once the output outgrew the tail) can
// be read. Bytes held by the sanitizer (a CR, a split character) are not
// in the summary yet.
func (s *OutputSink) Handover(onChunk func([]byte)) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.OnChunk = onChunk
	s.sty = nil // the UI that asked for colours no longer shows this stream
	if s.marks != nil {
		s.marks.failed = true // the artifact's colours end here: none
	}
	if s.dumped {
		return s.summary
	}
	artifact := ""
	if s.file != nil && s.fileW.Flush() == nil {
		artifact = s.opts.ArtifactID
	}
	return s.summaryLocked("", artifact)
}

// summaryLocked describes the stream so far: the tail (with "[notice]\n"
// in front when notice is set) and the counts.
func (s *OutputSink) summaryLocked(notice, artifact string) Summary {
	tail := s.tail.bytes()
	out := string(tail)
	if notice != "" {
		out = "[" + notice + "]\n" + out
	}
	return Summary{
		Output:      out,
		Truncated:   s.overflow,
		TotalLines:  lines(s.newlines, s.total, s.lastByte),
		TotalBytes:  s.total,
		OutputLines: countLines(tail),
		OutputBytes: len(tail),
		ArtifactID:  artifact,
	}
}

// push records one sanitized chunk; cr says it holds a CR, which may
// overwrite a line of the tail.
func (s *OutputSink) push(c []byte, cr bool) {
	if len(c) == 0 {
		return
	}
	if s.opts.OnChunk != nil {
		s.opts.OnChunk(c)
	}
	// Before the first overflow the stream fits the limit: the tail holds
	// all of it until a CR overwrites a line, and stream from then on.
	if !s.overflow {
		if s.total+len(c) > s.opts.MaxBytes {
			s.overflow = true
			if s.opts.ArtifactPath != "" {
				s.openFile()
			}
			s.stream = nil
		} else if cr || s.stream != nil {
			if s.stream == nil {
				s.stream = append(make([]byte, 0, s.opts.MaxBytes), s.tail.buf...)
			}
			s.stream = append(s.stream, c...)
		}
	}
	if s.file != nil {
		s.writeFile(c)
	}
	if half := s.capMax / 2; !s.headDone && s.total+len(c) >= half {
		s.headDone = true
		s.headNL = s.newlines + bytes.Count(c[:half-s.total], []byte{'\n'})
	}
	s.total += len(c)
	s.newlines += bytes.Count(c, []byte{'\n'})
	s.lastByte = c[len(c)-1]
	if cr || s.tail.cr {
		s.tail.write(c)
	} else {
		s.tail.add(c)
	}
}

// openFile starts the artifact with everything seen so far, which at the
// first overflow is still entirely in the tail, or in stream once a CR
// overwrote a line.
func (s *OutputSink) openFile() {
	// No O_TRUNC: the path is usually an empty reservation, and truncating
	// an existing file makes ext4 flush the whole artifact to disk on close
	// (measured: ~450 ms for 1 GB, every time). Truncate only if needed.
	f, err := os.OpenFile(s.opts.ArtifactPath, os.O_RDWR|os.O_CREATE, 0o600)
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
	if s.marks != nil {
		s.marks.open()
	} else {
		// A styles file left from an artifact that once had this path
		// would colour this one.
		_ = os.Remove(s.opts.ArtifactPath + StylesSuffix)
	}
	if s.stream != nil {
		s.writeFile(s.stream)
	} else {
		s.writeFile(s.tail.buf)
	}
}

// writeFile appends c to the artifact. The file holds the stream as it is
// up to the cap; past it, the region after the first half is a ring that
// keeps the newest capMax-capMax/2 bytes, and cutFile puts it in order at
// Dump. Wrapping is a seek back, so the writes stay sequential.
func (s *OutputSink) writeFile(c []byte) {
	for len(c) > 0 && s.file != nil {
		if s.filePos == s.capMax {
			half := s.capMax / 2
			if err := s.fileW.Flush(); err != nil {
				s.dropFile(fmt.Errorf("write artifact: %w", err))
				return
			}
			if _, err := s.file.Seek(int64(half), io.SeekStart); err != nil {
				s.dropFile(fmt.Errorf("write artifact: %w", err))
				return
			}
			s.filePos = half
		}
		n := min(len(c), s.capMax-s.filePos)
		if _, err := s.fileW.Write(c[:n]); err != nil {
			s.dropFile(fmt.Errorf("write artifact: %w", err))
			return
		}
		s.filePos += n
		c = c[n:]
	}
}

// DroppedMarker is the line a capped artifact has between its head and its
// tail, for n dropped bytes.
func DroppedMarker(n int) string {
	return fmt.Sprintf("[… %d bytes dropped …]\n", n)
}

// cutFile turns a capped artifact into head, marker, tail: the head is the
// first half cut back to its last newline within capWindow (else to a
// character boundary), the tail is the ring in stream order starting after
// its first newline within capWindow (else at a character boundary). The
// marker gets a newline of its own before it when the head does not end
// with one. It returns the bytes of the stream left out and the lines of
// the head.
func (s *OutputSink) cutFile() (dropped, headLines int, err error) {
	f := s.file
	half := s.capMax / 2
	ring := s.capMax - half
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp

	// The head's end.
	w := min(capWindow, half)
	win := buf[:w]
	if _, err := f.ReadAt(win, int64(half-w)); err != nil {
		return 0, 0, fmt.Errorf("read artifact: %w", err)
	}
	headLen := half
	if i := bytes.LastIndexByte(win, '\n'); i >= 0 {
		headLen = half - w + i + 1
	} else {
		headLen = half - w + runeCut(win)
	}

	// The ring in order: its oldest byte is where the next one would go.
	// The part that wrapped (B) is copied after the rest (A), so the tail
	// is one run from src.
	p := (s.total - half) % ring
	src := half + p
	if p > 0 {
		if err := moveRange(f, half+ring, half, p, buf); err != nil {
			return 0, 0, err
		}
	}
	w = min(capWindow, ring)
	win = buf[:w]
	if _, err := f.ReadAt(win, int64(src)); err != nil {
		return 0, 0, fmt.Errorf("read artifact: %w", err)
	}
	skip := 0
	if i := bytes.IndexByte(win, '\n'); i >= 0 {
		skip = i + 1
	} else {
		for skip < len(win) && skip < utf8.UTFMax && !utf8.RuneStart(win[skip]) {
			skip++
		}
	}
	tailLen := ring - skip
	dropped = s.total - headLen - tailLen
	marker := DroppedMarker(dropped)
	if headLen > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], int64(headLen-1)); err != nil {
			return 0, 0, fmt.Errorf("read artifact: %w", err)
		}
		if last[0] != '\n' {
			marker = "\n" + marker
		}
	}
	// The tail first: the marker may overlap where it is now.
	dst := headLen + len(marker)
	if err := moveRange(f, dst, src+skip, tailLen, buf); err != nil {
		return 0, 0, err
	}
	if _, err := f.WriteAt([]byte(marker), int64(headLen)); err != nil {
		return 0, 0, err
	}
	if err := f.Truncate(int64(dst + tailLen)); err != nil {
		return 0, 0, err
	}
	return dropped, s.headNL, nil
}

// runeCut returns how much of b ends at a character boundary: a trailing
// character that b holds only part of is left out.
func runeCut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// moveRange copies n bytes of f from src to dst like memmove: the ranges
// may overlap.
func moveRange(f *os.File, dst, src, n int, buf []byte) error {
	if dst == src || n == 0 {
		return nil
	}
	for done := 0; done < n; {
		k := min(len(buf), n-done)
		off := done // from the start when moving left, from the end when moving right
		if dst > src {
			off = n - done - k
		}
		if _, err := f.ReadAt(buf[:k], int64(src+off)); err != nil {
			return fmt.Errorf("read artifact: %w", err)
		}
		if _, err := f.WriteAt(buf[:k], int64(dst+off)); err != nil {
			return err
		}
		done += k
	}
	return nil
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
	if s.marks != nil {
		s.marks.close(false)
	}
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

// alignStyled returns the end of styled text st (KeepSGR) that holds
// exactly the plain text plain, which ends st's text, with the SGR
// sequences in force where it starts in front; ok is false when st holds
// less text than plain.
func alignStyled(st, plain []byte) (string, bool) {
	text := len(st) // bytes of text in st
	for b := st; ; {
		i := bytes.IndexByte(b, 0x1b)
		if i < 0 {
			break
		}
		j := bytes.IndexByte(b[i:], 'm')
		if j < 0 {
			return "", false
		}
		text -= j + 1
		b = b[i+j+1:]
	}
	skip := text - len(plain)
	if skip < 0 {
		return "", false
	}
	// Walk past skip bytes of text; sequences at the cut belong to what
	// follows it.
	k := 0
	for skip > 0 {
		if st[k] == 0x1b {
			k += bytes.IndexByte(st[k:], 'm') + 1
			continue
		}
		k++
		skip--
	}
	state := appendSGRs(nil, st[:k])
	out := append(state, st[k:]...)
	return string(out), true
}
