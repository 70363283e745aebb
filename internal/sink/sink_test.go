package sink

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode/utf8"
)

// refTail is the specification of the kept output: the last max bytes,
// moved forward to the next character boundary.
func refTail(s string, max int) string {
	start := max0(len(s) - max)
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

func max0(n int) int { return max(n, 0) }

func refLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// writeChunks writes raw in pseudo-random pieces of 1..maxChunk bytes.
func writeChunks(t testing.TB, s *OutputSink, raw []byte, maxChunk int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	for len(raw) > 0 {
		n := min(len(raw), 1+r.IntN(maxChunk))
		if w, err := s.Write(raw[:n]); w != n || err != nil {
			t.Fatalf("Write = %d, %v", w, err)
		}
		raw = raw[n:]
	}
}

func sha(b []byte) [32]byte { return sha256.Sum256(b) }

func TestSinkSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "1.bash.log")
	var chunks [][]byte
	s := New(Options{ArtifactPath: path, ArtifactID: "1", OnChunk: func(b []byte) {
		chunks = append(chunks, bytes.Clone(b))
	}})
	_, _ = s.Write([]byte("hello\r\n\x1b[32mworld\x1b[0m"))
	got := s.Dump("")
	want := Summary{Output: "hello\nworld", TotalLines: 2, TotalBytes: 11, OutputLines: 2, OutputBytes: 11}
	if got != want {
		t.Fatalf("Summary = %+v, want %+v", got, want)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("artifact created for small output: %v", err)
	}
	if j := string(bytes.Join(chunks, nil)); j != "hello\nworld" {
		t.Fatalf("OnChunk saw %q", j)
	}
}

func TestSinkEmpty(t *testing.T) {
	s := New(Options{})
	_, _ = s.Write(nil)
	_, _ = s.Write([]byte("\x1b[0m\x00"))
	if got := s.Dump(""); got != (Summary{}) {
		t.Fatalf("Summary = %+v, want zero", got)
	}
}

func TestSinkLimitBoundary(t *testing.T) {
	for _, n := range []int{99, 100, 101} {
		path := filepath.Join(t.TempDir(), "a.log")
		s := New(Options{MaxBytes: 100, ArtifactPath: path, ArtifactID: "7"})
		_, _ = s.Write(bytes.Repeat([]byte("x"), n))
		got := s.Dump("")
		over := n > 100
		if got.Truncated != over || (got.ArtifactID == "7") != over || got.OutputBytes != min(n, 100) || got.TotalBytes != n {
			t.Errorf("n=%d: %+v", n, got)
		}
		_, err := os.Stat(path)
		if (err == nil) != over {
			t.Errorf("n=%d: artifact exists = %v", n, err == nil)
		}
	}
}

// spillInput is colourised multi-byte output: about 600 KB raw.
func spillInput() (raw []byte, clean string) {
	var r, c strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&r, "\x1b[3%dmline %05d\x1b[0m ✓ ünïcödé 日本\r\n", i%8, i)
		fmt.Fprintf(&c, "line %05d ✓ ünïcödé 日本\n", i)
	}
	return []byte(r.String()), c.String()
}

func TestSinkSpill(t *testing.T) {
	raw, clean := spillInput()
	if Sanitize(string(raw)) != clean {
		t.Fatal("test input does not sanitize as expected")
	}
	for _, maxChunk := range []int{1, 7, 4096, 100000, len(raw)} {
		t.Run(fmt.Sprint(maxChunk), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "3.bash.log")
			var seen bytes.Buffer
			s := New(Options{ArtifactPath: path, ArtifactID: "3", OnChunk: func(b []byte) { seen.Write(b) }})
			writeChunks(t, s, raw, maxChunk, uint64(maxChunk))
			got := s.Dump("")
			tail := refTail(clean, DefaultMaxBytes)
			want := Summary{
				Output: tail, Truncated: true,
				TotalLines: 10000, TotalBytes: len(clean),
				OutputLines: refLines(tail), OutputBytes: len(tail),
				ArtifactID: "3",
			}
			if got != want {
				t.Fatalf("Summary mismatch:\n got %+v\nwant %+v", short(got), short(want))
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if sha(file) != sha([]byte(clean)) {
				t.Fatalf("artifact (%d bytes) is not the sanitized stream (%d bytes)", len(file), len(clean))
			}
			if seen.String() != string(file) {
				t.Fatal("OnChunk concatenation differs from the artifact")
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("mode = %v, %v", st.Mode(), err)
			}
		})
	}
}

func short(s Summary) Summary {
	if len(s.Output) > 40 {
		s.Output = s.Output[:20] + "…" + s.Output[len(s.Output)-20:]
	}
	return s
}

func TestSinkTailRuneBoundary(t *testing.T) {
	// 20000 × "€" is 60000 bytes; 60000-51200 = 8800 is the second byte of
	// a character, so the tail starts two bytes later.
	s := New(Options{})
	_, _ = s.Write([]byte(strings.Repeat("€", 20000)))
	got := s.Dump("")
	if got.OutputBytes != DefaultMaxBytes-2 || got.Output != strings.Repeat("€", (DefaultMaxBytes-2)/3) {
		t.Fatalf("OutputBytes = %d", got.OutputBytes)
	}
	if got.TotalLines != 1 || got.OutputLines != 1 || got.TotalBytes != 60000 || !got.Truncated || got.ArtifactID != "" {
		t.Fatalf("Summary = %+v", short(got))
	}
}

func TestSinkOverflowNoArtifact(t *testing.T) {
	raw, clean := spillInput()
	s := New(Options{ArtifactID: "9"}) // an id without a path is never reported
	writeChunks(t, s, raw, 5000, 1)
	got := s.Dump("")
	tail := refTail(clean, DefaultMaxBytes)
	if got.Output != tail || !got.Truncated || got.ArtifactID != "" || got.TotalLines != 10000 ||
		got.TotalBytes != len(clean) || got.OutputLines != refLines(tail) || got.OutputBytes != len(tail) {
		t.Fatalf("Summary = %+v", short(got))
	}
}

func TestSinkUnopenableArtifact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "dir", "4.bash.log")
	s := New(Options{MaxBytes: 1000, ArtifactPath: path, ArtifactID: "4"})
	_, _ = s.Write(bytes.Repeat([]byte("0123456789\n"), 200))
	got := s.Dump("")
	if !got.Truncated || got.ArtifactID != "" || got.OutputBytes != 1000 || got.TotalLines != 200 || got.OutputLines != 91 {
		t.Fatalf("Summary = %+v", short(got))
	}
	if !errors.Is(got.ArtifactError, os.ErrNotExist) {
		t.Errorf("ArtifactError = %v, want the open error (not exist)", got.ArtifactError)
	}
	if err := TakeArtifactError(path); err != got.ArtifactError {
		t.Errorf("TakeArtifactError = %v, want %v", err, got.ArtifactError)
	}
	if err := TakeArtifactError(path); err != nil {
		t.Errorf("TakeArtifactError again = %v, want nil (taken)", err)
	}
}

func TestSinkReservedArtifact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "5.bash.log")
	if err := os.WriteFile(path, []byte("stale content that must go away"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(Options{MaxBytes: 10, ArtifactPath: path, ArtifactID: "5"})
	_, _ = s.Write([]byte("0123456789"))
	_, _ = s.Write([]byte("abc"))
	got := s.Dump("")
	file, _ := os.ReadFile(path)
	if string(file) != "0123456789abc" || got.ArtifactID != "5" || got.Output != "3456789abc" {
		t.Fatalf("file %q, summary %+v", file, got)
	}
}

// TestSinkWriteFailure uses /dev/full through a symlink: opening works and
// every write fails with ENOSPC, like a full disk. Removing the artifact
// removes only the symlink.
func TestSinkWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, tc := range []struct {
		name  string
		write []int // chunk sizes
	}{
		{"large chunk fails at once", []int{100, 200000}},
		{"small chunks fail at Dump", []int{100, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "6.bash.log")
			if err := os.Symlink("/dev/full", path); err != nil {
				t.Fatal(err)
			}
			s := New(Options{MaxBytes: 150, ArtifactPath: path, ArtifactID: "6"})
			total := 0
			for _, n := range tc.write {
				if w, err := s.Write(bytes.Repeat([]byte("y"), n)); w != n || err != nil {
					t.Fatalf("Write = %d, %v", w, err)
				}
				total += n
			}
			got := s.Dump("")
			if got.ArtifactID != "" || !got.Truncated || got.TotalBytes != total || got.OutputBytes != 150 {
				t.Fatalf("Summary = %+v", short(got))
			}
			if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("partial artifact left behind: %v", err)
			}
			if !errors.Is(got.ArtifactError, syscall.ENOSPC) || !errors.Is(TakeArtifactError(path), syscall.ENOSPC) {
				t.Errorf("ArtifactError = %v, want ENOSPC", got.ArtifactError)
			}
		})
	}
}

func TestSinkNotice(t *testing.T) {
	s := New(Options{})
	_, _ = s.Write([]byte("partial output\nsecond"))
	got := s.Dump("Command timed out after 5 seconds")
	want := Summary{
		Output:     "[Command timed out after 5 seconds]\npartial output\nsecond",
		TotalLines: 2, TotalBytes: 21, OutputLines: 2, OutputBytes: 21,
	}
	if got != want {
		t.Fatalf("Summary = %+v", got)
	}
}

func TestSinkSingleLine10MB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "8.bash.log")
	line := bytes.Repeat([]byte("abcdefghij"), 1<<20) // 10 MiB, no newline
	s := New(Options{ArtifactPath: path, ArtifactID: "8"})
	_, _ = s.Write(line)
	got := s.Dump("")
	if got.TotalBytes != len(line) || got.TotalLines != 1 || got.OutputLines != 1 ||
		got.OutputBytes != DefaultMaxBytes || got.Output != string(line[len(line)-DefaultMaxBytes:]) || got.ArtifactID != "8" {
		t.Fatalf("Summary = %+v", short(got))
	}
	file, _ := os.ReadFile(path)
	if !bytes.Equal(file, line) {
		t.Fatal("artifact differs")
	}
}

func TestSinkDumpTwiceAndLateWrites(t *testing.T) {
	var calls int
	s := New(Options{MaxBytes: 8, OnChunk: func([]byte) { calls++ }})
	_, _ = s.Write([]byte("one\ntwo\r"))
	first := s.Dump("done")
	want := Summary{Output: "[done]\none\ntwo", TotalLines: 2, TotalBytes: 7, OutputLines: 2, OutputBytes: 7}
	if first != want {
		t.Fatalf("first Dump = %+v", first)
	}
	if calls != 1 { // "one\ntwo"; the held CR changes nothing at the end
		t.Fatalf("OnChunk calls = %d", calls)
	}
	if n, err := s.Write([]byte("ignored")); n != 7 || err != nil {
		t.Fatalf("late Write = %d, %v", n, err)
	}
	if again := s.Dump("other"); again != first || calls != 1 {
		t.Fatalf("second Dump = %+v, calls %d", again, calls)
	}
}

func TestSinkFlushAtDump(t *testing.T) {
	s := New(Options{})
	_, _ = s.Write([]byte("a\xe2\x82"))    // incomplete character
	_, _ = s.Write([]byte("\x1b]0;title")) // unterminated OSC after it
	got := s.Dump("")
	if got.Output != "a"+fffd+fffd || got.TotalBytes != 7 || got.TotalLines != 1 {
		t.Fatalf("Summary = %+v", got)
	}
}

// TestSinkTailProperty compares the lazily trimmed tail with refTail for
// many limits and write patterns, including limits smaller than a
// character.
func TestSinkTailProperty(t *testing.T) {
	text := Sanitize(strings.Repeat("ab\ncdé€😀\n", 300))
	for _, max := range []int{1, 2, 3, 4, 5, 17, 100, 1000, 5000} {
		for _, maxChunk := range []int{1, 3, 50, 999, 4000} {
			s := New(Options{MaxBytes: max})
			writeChunks(t, s, []byte(text), maxChunk, uint64(max*maxChunk))
			got := s.Dump("")
			tail := refTail(text, max)
			if got.Output != tail || got.OutputLines != refLines(tail) || got.TotalLines != refLines(text) {
				t.Fatalf("max %d chunk %d: got %d bytes, want %d", max, maxChunk, len(got.Output), len(tail))
			}
		}
	}
}

type chunkReader struct {
	chunks [][]byte
	err    error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, r.err
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func TestSinkReadFrom(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		err     error
		wantErr error
	}{
		{"eof", io.EOF, nil},
		{"eio is eof", &os.PathError{Op: "read", Path: "/dev/ptmx", Err: syscall.EIO}, nil},
		{"other error", boom, boom},
		{"no progress", nil, io.ErrNoProgress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{})
			r := &chunkReader{chunks: [][]byte{[]byte("a\r"), []byte("\nb\xc3"), []byte("\xa9")}, err: tc.err}
			n, err := s.ReadFrom(r)
			if n != 6 || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("ReadFrom = %d, %v", n, err)
			}
			if got := s.Dump(""); got.Output != "a\nbé" || got.TotalLines != 2 {
				t.Fatalf("Summary = %+v", got)
			}
		})
	}
}

func TestSinkReadFromLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "2.bash.log")
	raw, clean := spillInput()
	s := New(Options{ArtifactPath: path, ArtifactID: "2"})
	n, err := s.ReadFrom(bytes.NewReader(raw))
	if n != int64(len(raw)) || err != nil {
		t.Fatalf("ReadFrom = %d, %v", n, err)
	}
	got := s.Dump("")
	file, _ := os.ReadFile(path)
	if string(file) != clean || got.ArtifactID != "2" || got.TotalLines != 10000 {
		t.Fatalf("Summary = %+v", short(got))
	}
}

func TestSinkConcurrent(t *testing.T) {
	s := New(Options{MaxBytes: 1000, ArtifactPath: filepath.Join(t.TempDir(), "c.log"), ArtifactID: "c"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				_, _ = s.Write([]byte("0123456789\n"))
			}
		})
	}
	wg.Wait()
	got := s.Dump("")
	if got.TotalBytes != 8*1000*11 || got.TotalLines != 8000 || got.OutputLines != 91 || got.ArtifactID != "c" {
		t.Fatalf("Summary = %+v", short(got))
	}
}

// progressRaw is what a downloader prints: a header, a bar of frames drawn
// over each other with CR (and erase-line sequences), then a summary.
func progressRaw(frames int) (raw []byte, stream, final string) {
	var r, s strings.Builder
	r.WriteString("Collecting numpy\r\n")
	s.WriteString("Collecting numpy\n")
	for i := range frames {
		fmt.Fprintf(&r, "\r\x1b[K   %6d/%d kB", i+1, frames)
		fmt.Fprintf(&s, "\r   %6d/%d kB", i+1, frames)
	}
	r.WriteString("\r\nInstalled\r\n")
	s.WriteString("\nInstalled\n")
	final = fmt.Sprintf("Collecting numpy\n   %6d/%d kB\nInstalled\n", frames, frames)
	return []byte(r.String()), s.String(), final
}

// TestSinkProgressBar: the output and the counts keep each line's final
// state (100 000 frames are one line), while OnChunk and the artifact get
// every frame, byte for byte.
func TestSinkProgressBar(t *testing.T) {
	raw, stream, final := progressRaw(100000)
	if FinalState(stream) != final || Sanitize(string(raw)) != final {
		t.Fatal("test input does not sanitize as expected")
	}
	for _, maxChunk := range []int{1, 13, 4096, len(raw)} {
		path := filepath.Join(t.TempDir(), "2.bash.log")
		var seen bytes.Buffer
		s := New(Options{ArtifactPath: path, ArtifactID: "2", OnChunk: func(b []byte) { seen.Write(b) }})
		writeChunks(t, s, raw, maxChunk, 7)
		got := s.Dump("")
		want := Summary{Output: final, Truncated: true, TotalLines: 3, TotalBytes: len(stream),
			OutputLines: 3, OutputBytes: len(final), ArtifactID: "2"}
		if got != want {
			t.Fatalf("chunks of %d: %+v\nwant %+v", maxChunk, short(got), short(want))
		}
		if seen.String() != stream {
			t.Fatalf("chunks of %d: OnChunk differs from the stream", maxChunk)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != stream {
			t.Fatalf("chunks of %d: the artifact is not the stream (%d bytes, %v)", maxChunk, len(b), err)
		}
	}
	// Small enough for the tail: no artifact, and still one line.
	raw, _, final = progressRaw(100)
	s := New(Options{ArtifactPath: filepath.Join(t.TempDir(), "3.bash.log"), ArtifactID: "3"})
	_, _ = s.Write(raw)
	if got := s.Dump(""); got.Output != final || got.Truncated || got.TotalLines != 3 {
		t.Fatalf("small bar: %+v", short(got))
	}
}

// TestSinkOverwriteLongLine: an overwritten line longer than the tail
// uncovers the lines before it, and only the tail's worth of them.
func TestSinkOverwriteLongLine(t *testing.T) {
	for _, max := range []int{5, 10, 64} {
		for _, maxChunk := range []int{1, 7, 1000} {
			before := strings.Repeat("line\n", 40)
			raw := before + strings.Repeat("x", 10*max) + "\rshort\n"
			s := New(Options{MaxBytes: max})
			writeChunks(t, s, []byte(raw), maxChunk, uint64(max))
			got := s.Dump("")
			if want := refTail(before+"short\n", max); got.Output != want || got.TotalLines != 41 {
				t.Fatalf("max %d chunks %d: %q, want %q", max, maxChunk, got.Output, want)
			}
		}
	}
}
