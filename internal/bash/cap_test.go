package bash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"agentsh/internal/sink"
)

const testCap = 64 << 10

// seqOutput is the real output of `seq 1 n`.
func seqOutput(t *testing.T, n int) []byte {
	t.Helper()
	out, err := exec.Command("seq", "1", fmt.Sprint(n)).Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cappedSlices cuts a stream of short lines as a 64 KiB cap does: the
// whole lines of its first 32 KiB and of its last 32 KiB.
func cappedSlices(out []byte) (head, tail []byte, dropped int) {
	head = out[:bytes.LastIndexByte(out[:testCap/2], '\n')+1]
	tail = out[len(out)-testCap/2:]
	tail = tail[bytes.IndexByte(tail, '\n')+1:]
	return head, tail, len(out) - len(head) - len(tail)
}

// checkCapped compares the artifact of id with head, the marker and tail.
func checkCapped(t *testing.T, te *toolEnv, id string, out []byte) int {
	t.Helper()
	head, tail, dropped := cappedSlices(out)
	path, err := te.arts.Resolve("artifact://" + id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("[… %d bytes dropped …]\n", dropped)
	want := string(head) + marker + string(tail)
	if sha256.Sum256(got) != sha256.Sum256([]byte(want)) {
		t.Fatalf("artifact: %d bytes, want %d (head %d, marker %q, tail %d)", len(got), len(want), len(head), marker, len(tail))
	}
	return dropped
}

// TestToolArtifactCap: with artifacts.maxBytes at 64 KiB, `seq 1 200000`
// (1.3 MB) leaves an artifact of its first and last 32 KiB of whole lines
// around the marker, and the notice says how much was dropped.
func TestToolArtifactCap(t *testing.T) {
	te := newToolEnv(t)
	te.tc.Settings.ArtifactMaxBytes = testCap
	out := seqOutput(t, 200000)
	r := te.exec(t, ToolParams{Command: "seq 1 200000"})
	tr := r.Details.Meta.Truncation
	if r.IsError || tr == nil || tr.ArtifactID != "0" || tr.TotalBytes != len(out) {
		t.Fatalf("meta %+v", tr)
	}
	dropped := checkCapped(t, te, "0", out)
	if tr.ArtifactDroppedBytes != dropped {
		t.Fatalf("meta dropped %d, want %d", tr.ArtifactDroppedBytes, dropped)
	}
	notice := fmt.Sprintf("\n\n[Showing lines %d-200000 of 200000 (50.0KB limit). Full: artifact://0 (1.2MB dropped from the middle)]", tr.ShownRange.Start)
	if !strings.HasSuffix(r.Content, "199999\n200000\n"+notice) || FormatSize(dropped) != "1.2MB" {
		t.Fatalf("content tail %q", r.Content[len(r.Content)-200:])
	}
	// Without the cap the same run keeps everything and says nothing more.
	te.tc.Settings.ArtifactMaxBytes = 0
	r = te.exec(t, ToolParams{Command: "seq 1 200000"})
	if tr := r.Details.Meta.Truncation; tr.ArtifactDroppedBytes != 0 || strings.Contains(r.Content, "dropped") ||
		!strings.HasSuffix(r.Content, "Full: artifact://1]") {
		t.Fatalf("uncapped: %q", r.Content[len(r.Content)-100:])
	}
}

// TestToolArtifactCapLineWindow: a head/tail window past the capped
// artifact's head is not read from the file (whose lines there are other
// lines); whatever is shown is what the notice says it is.
func TestToolArtifactCapLineWindow(t *testing.T) {
	te := newToolEnv(t)
	te.tc.Settings.ArtifactMaxBytes = testCap
	lines := strings.SplitAfter(string(seqOutput(t, 200000)), "\n")
	for _, w := range [][2]int{{11000, 10}, {6000, 10}} {
		r := te.exec(t, ToolParams{Command: "seq 1 200000", Head: iptr(w[0]), Tail: iptr(w[1])})
		tr := r.Details.Meta.Truncation
		if r.IsError || tr == nil {
			t.Fatalf("%v: %+v", w, r)
		}
		text, _, _ := strings.Cut(r.Content, "\n\n[Showing")
		want := strings.Join(lines[tr.ShownRange.Start-1:tr.ShownRange.End], "")
		if text != want {
			t.Fatalf("%v: shown %d-%d is %q", w, tr.ShownRange.Start, tr.ShownRange.End, short(text))
		}
	}
}

// TestExecutorArtifactCapEdges: an output of exactly the cap is kept whole;
// one byte more is cut, with the count in the result.
func TestExecutorArtifactCapEdges(t *testing.T) {
	e := newTestExecutor(t)
	out := seqOutput(t, 20000)
	for _, n := range []int{testCap, testCap + 1} {
		art := t.TempDir() + "/1.bash.log"
		r, err := e.Run(context.Background(), fmt.Sprintf("seq 1 20000 | head -c %d", n),
			RunOptions{Shell: testShell(t), ArtifactPath: art, ArtifactID: "1", ArtifactMaxBytes: testCap})
		if err != nil || r.ArtifactID != "1" || r.TotalBytes != n {
			t.Fatalf("n=%d: %+v, %v", n, r, err)
		}
		got, _ := os.ReadFile(art)
		if n == testCap {
			if r.ArtifactDroppedBytes != 0 || !bytes.Equal(got, out[:n]) {
				t.Fatalf("at the cap: dropped %d, %d bytes", r.ArtifactDroppedBytes, len(got))
			}
			continue
		}
		head, tail, dropped := cappedSlices(out[:n])
		want := string(head) + sink.DroppedMarker(dropped) + string(tail)
		if r.ArtifactDroppedBytes != dropped || string(got) != want {
			t.Fatalf("over the cap: dropped %d (want %d), %d bytes (want %d)", r.ArtifactDroppedBytes, dropped, len(got), len(want))
		}
	}
}

// TestToolPTYArtifactCap: the PTY path caps its artifact the same way.
func TestToolPTYArtifactCap(t *testing.T) {
	te := ptyToolEnv(t, &fakeUI{cols: 80, rows: 24})
	te.tc.Settings.ArtifactMaxBytes = testCap
	out := seqOutput(t, 200000)
	r := te.exec(t, ToolParams{Command: "seq 1 200000"})
	tr := r.Details.Meta.Truncation
	if r.IsError || tr == nil || tr.ArtifactID == "" {
		t.Fatalf("result %q", short(r.Content))
	}
	dropped := checkCapped(t, te, tr.ArtifactID, out)
	if tr.ArtifactDroppedBytes != dropped || !strings.HasSuffix(r.Content, "Full: artifact://"+tr.ArtifactID+" (1.2MB dropped from the middle)]") {
		t.Fatalf("dropped %d (want %d): %q", tr.ArtifactDroppedBytes, dropped, r.Content[len(r.Content)-120:])
	}
}

// TestTruncationNoticeDropped: the exact notice texts with a capped
// artifact.
func TestTruncationNoticeDropped(t *testing.T) {
	tr := &TruncationMeta{TruncatedBy: "bytes", TotalLines: 10000, ShownRange: ShownRange{Start: 9901, End: 10000},
		ArtifactID: "3", ArtifactDroppedBytes: 1288490189}
	if got, want := TruncationNotice(tr), "Showing lines 9901-10000 of 10000 (50.0KB limit). Full: artifact://3 (1.2GB dropped from the middle)"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	tr.ArtifactDroppedBytes = 0
	if got, want := TruncationNotice(tr), "Showing lines 9901-10000 of 10000 (50.0KB limit). Full: artifact://3"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
