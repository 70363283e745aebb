package sink

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"agentsh/internal/disktest"
)

// On a real full file system the spill fails part way: the output is still
// cut to the tail in memory, no partial artifact claims to be the whole
// output, and the summary (and TakeArtifactError, once) says why.
func TestSinkArtifactOnFullDisk(t *testing.T) {
	dir := disktest.Mount(t, 128<<10)
	path := filepath.Join(dir, "7.bash.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil { // the reservation
		t.Fatal(err)
	}
	disktest.Fill(t, dir, 16<<10)
	var raw bytes.Buffer
	for i := range 40000 {
		raw.WriteString(strings.Repeat("z", i%7) + "\n")
	}
	s := New(Options{ArtifactPath: path, ArtifactID: "7"})
	writeChunks(t, s, raw.Bytes(), 4096, 7)
	got := s.Dump("")
	want := refTail(raw.String(), DefaultMaxBytes)
	if !got.Truncated || got.Output != want || got.TotalBytes != raw.Len() || got.TotalLines != 40000 {
		t.Fatalf("Summary = %+v", short(got))
	}
	if got.ArtifactID != "" || !errors.Is(got.ArtifactError, syscall.ENOSPC) {
		t.Fatalf("artifact %q, error %v; want none, ENOSPC", got.ArtifactID, got.ArtifactError)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial artifact left behind: %v", err)
	}
	if err := TakeArtifactError(path); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("TakeArtifactError = %v", err)
	}
	if err := TakeArtifactError(path); err != nil {
		t.Errorf("second TakeArtifactError = %v, want nil", err)
	}
}

// A capped artifact that fits the disk but whose ring cannot be put in
// order (that briefly needs the wrapped part again) is dropped like any
// partial artifact: none is claimed, and the summary says why.
func TestSinkCappedArtifactOnFullDisk(t *testing.T) {
	const capMax = 64 << 10
	dir := disktest.Mount(t, 512<<10)
	path := filepath.Join(dir, "8.bash.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	disktest.Fill(t, dir, 72<<10)
	// The ring wraps with 30000 bytes in its wrapped part: the cap fits,
	// the cap plus that part does not.
	stream := numberedLines(60000)[:capMax/2+3*(capMax/2)+30000]
	s := New(Options{ArtifactPath: path, ArtifactID: "8", ArtifactMaxBytes: capMax})
	writeChunks(t, s, stream, 4096, 8)
	got := s.Dump("")
	if got.ArtifactID != "" || got.DroppedBytes != 0 || !errors.Is(got.ArtifactError, syscall.ENOSPC) {
		t.Fatalf("artifact %q, dropped %d, error %v; want none, 0, ENOSPC", got.ArtifactID, got.DroppedBytes, got.ArtifactError)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial artifact left behind: %v", err)
	}
	TakeArtifactError(path)
}
