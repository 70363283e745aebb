package sink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHandover: the summary covers exactly what was written before the
// hand-over, every later chunk reaches the new callback and not the old
// one, the artifact named by the summary already holds the output so far,
// and Dump still ends the stream with everything.
func TestHandover(t *testing.T) {
	art := filepath.Join(t.TempDir(), "1.log")
	var before, after strings.Builder
	s := New(Options{MaxBytes: 16, ArtifactPath: art, ArtifactID: "1",
		OnChunk: func(c []byte) { before.Write(c) }})
	_, _ = s.Write([]byte("0123456789\nabcdefghij\n"))
	sum := s.Handover(func(c []byte) { after.Write(c) })
	if sum.TotalBytes != 22 || sum.TotalLines != 2 || !sum.Truncated || sum.ArtifactID != "1" ||
		sum.Output != "6789\nabcdefghij\n" {
		t.Fatalf("summary %+v", sum)
	}
	if b, err := os.ReadFile(art); err != nil || string(b) != "0123456789\nabcdefghij\n" {
		t.Fatalf("artifact at the hand-over: %q, %v", b, err)
	}
	_, _ = s.Write([]byte("later\n"))
	if before.String() != "0123456789\nabcdefghij\n" || after.String() != "later\n" {
		t.Errorf("before %q after %q", before.String(), after.String())
	}
	end := s.Dump("")
	if end.TotalBytes != 28 || end.ArtifactID != "1" {
		t.Errorf("dump %+v", end)
	}
	if b, _ := os.ReadFile(art); string(b) != "0123456789\nabcdefghij\nlater\n" {
		t.Errorf("artifact at the end: %q", b)
	}
}
