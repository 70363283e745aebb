package pager

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/sink"
)

// TestPagerCappedArtifact: the pager shows a capped artifact as the sink
// left it: the first lines, the marker line, and the last lines, numbered
// as lines of the file.
func TestPagerCappedArtifact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "3.bash.log")
	s := sink.New(sink.Options{ArtifactPath: path, ArtifactID: "3", ArtifactMaxBytes: 64 << 10})
	_, _ = s.Write([]byte(pgSeq(200000)))
	sum := s.Dump("")
	if sum.ArtifactID != "3" || sum.DroppedBytes == 0 {
		t.Fatalf("summary %+v", sum)
	}
	p, err := openPager(path, "artifact://3 · $ seq")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	st := testStyles(true)
	marker := fmt.Sprintf("[… %d bytes dropped …]", sum.DroppedBytes)
	pgSearch(t, p, "bytes dropped")
	scr := strings.Join(pgScreen(t, p, 80, 24, st), "\n")
	if !strings.Contains(scr, marker) {
		t.Fatalf("no marker %q on the screen:\n%s", marker, scr)
	}
	pgPress(t, p, "G")
	s2 := pgScreen(t, p, 80, 24, st)
	if got := strings.Fields(s2[22]); len(got) != 2 || got[1] != "200000" {
		t.Fatalf("G: last row %q", s2[22])
	}
}
