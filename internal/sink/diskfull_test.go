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
