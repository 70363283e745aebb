package sink

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// refCapped is the specification of a capped artifact, stated on the whole
// stream s: the first cap/2 bytes moved back to just after their last
// newline within 4 KiB (else to before a split character), the marker line,
// and the last cap-cap/2 bytes moved forward to just after their first
// newline within 4 KiB (else past a split character).
func refCapped(s []byte, capMax int) (file []byte, dropped int) {
	if len(s) <= capMax {
		return s, 0
	}
	half, ring := capMax/2, capMax-capMax/2
	cut := half
	if i := bytes.LastIndexByte(s[half-min(4096, half):half], '\n'); i >= 0 {
		cut = half - min(4096, half) + i + 1
	} else {
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	start := len(s) - ring
	if i := bytes.IndexByte(s[start:start+min(4096, ring)], '\n'); i >= 0 {
		start += i + 1
	} else {
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
	}
	head, tail := s[:cut], s[start:]
	dropped = len(s) - len(head) - len(tail)
	marker := fmt.Sprintf("[… %d bytes dropped …]\n", dropped)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		marker = "\n" + marker
	}
	return append(append(append([]byte{}, head...), marker...), tail...), dropped
}

// capRun writes stream in random chunks to a sink capped at capMax and
// returns the artifact and the summary.
func capRun(t *testing.T, stream []byte, capMax int, seed uint64) ([]byte, Summary) {
	t.Helper()
	art := filepath.Join(t.TempDir(), "1.bash.log")
	s := New(Options{ArtifactPath: art, ArtifactID: "1", ArtifactMaxBytes: capMax})
	writeChunks(t, s, stream, 70000, seed)
	sum := s.Dump("")
	got, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	if sum.ArtifactID != "1" || sum.TotalBytes != len(stream) {
		t.Fatalf("summary %+v", short(sum))
	}
	return got, sum
}

func numberedLines(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%06d\n", i)
	}
	return b.Bytes()
}

// TestSinkCapLines: a stream of 7-byte lines over a 64 KiB cap keeps lines
// 1..4681 (32767 bytes, the last whole line of the first 32 KiB), the
// marker, and the newest whole lines of the last 32 KiB.
func TestSinkCapLines(t *testing.T) {
	const capMax = 64 << 10
	stream := numberedLines(200000) // 1.4 MB
	got, sum := capRun(t, stream, capMax, 1)
	want, dropped := refCapped(stream, capMax)
	if !bytes.Equal(got, want) || sum.DroppedBytes != dropped {
		t.Fatalf("artifact %d bytes (dropped %d), want %d (dropped %d)", len(got), sum.DroppedBytes, len(want), dropped)
	}
	head := string(numberedLines(4681))
	if !strings.HasPrefix(string(got), head+"[… ") {
		t.Fatalf("head: %q", got[len(head)-14:len(head)+20])
	}
	// The tail is whole lines ending with the last one, 32768 bytes at most.
	rest := string(got[len(head):])
	nl := strings.IndexByte(rest, '\n')
	marker, tail := rest[:nl+1], rest[nl+1:]
	tailLines := len(tail) / 7
	if len(tail)%7 != 0 || tailLines != 32768/7 || !strings.HasSuffix(tail, "200000\n") {
		t.Fatalf("tail %d bytes: %q…", len(tail), tail[:20])
	}
	wantDropped := len(stream) - len(head) - len(tail)
	if marker != fmt.Sprintf("[… %d bytes dropped …]\n", wantDropped) || sum.DroppedBytes != wantDropped {
		t.Fatalf("marker %q, summary %d, want %d", marker, sum.DroppedBytes, wantDropped)
	}
	if sum.HeadLines != 4681 || sum.TotalLines != 200000 {
		t.Fatalf("head lines %d, total %d", sum.HeadLines, sum.TotalLines)
	}
}

// TestSinkCapEdges: a stream of exactly the cap is kept whole; one byte
// more is cut; so are the lengths where the ring ends exactly at its end
// (no wrap to put in order) and just past it.
func TestSinkCapEdges(t *testing.T) {
	const capMax = 64 << 10
	long := numberedLines(40000)
	for _, n := range []int{capMax - 1, capMax, capMax + 1, capMax + capMax/2, capMax + capMax/2 + 1, 3*capMax + 12345} {
		for seed := uint64(1); seed <= 3; seed++ {
			stream := long[:n]
			got, sum := capRun(t, stream, capMax, seed)
			want, dropped := refCapped(stream, capMax)
			if !bytes.Equal(got, want) || sum.DroppedBytes != dropped {
				t.Fatalf("n=%d seed %d: artifact %d bytes (dropped %d), want %d (dropped %d)",
					n, seed, len(got), sum.DroppedBytes, len(want), dropped)
			}
			if (n > capMax) != (dropped > 0) || (n <= capMax && !bytes.Equal(got, stream)) {
				t.Fatalf("n=%d: dropped %d", n, dropped)
			}
			if n > capMax && len(got) > capMax+len(DroppedMarker(dropped))+1 {
				t.Fatalf("n=%d: artifact %d bytes over the cap", n, len(got))
			}
		}
	}
}

// TestSinkCapUTF8: without newlines, the head ends and the tail starts at a
// character boundary, whatever the alignment of 2-, 3- and 4-byte
// characters; the marker then starts a line of its own.
func TestSinkCapUTF8(t *testing.T) {
	const capMax = 64 << 10
	for _, unit := range []string{"é", "€", "😀", "a€😀é"} {
		for pad := 0; pad < 4; pad++ {
			stream := []byte(strings.Repeat("x", pad) + strings.Repeat(unit, 3*capMax/len(unit)))
			got, sum := capRun(t, stream, capMax, uint64(pad+1))
			want, dropped := refCapped(stream, capMax)
			if !bytes.Equal(got, want) || sum.DroppedBytes != dropped || !utf8.Valid(got) {
				t.Fatalf("%q pad %d: artifact %d bytes valid %v, want %d", unit, pad, len(got), utf8.Valid(got), len(want))
			}
			m := "\n" + DroppedMarker(dropped)
			i := bytes.Index(got, []byte(m))
			if i < capMax/2-utf8.UTFMax || i > capMax/2 {
				t.Fatalf("%q pad %d: marker at %d", unit, pad, i)
			}
		}
	}
}

// TestSinkCapMinimum: a cap below MinArtifactMaxBytes is raised to it.
func TestSinkCapMinimum(t *testing.T) {
	stream := numberedLines(20000)
	got, sum := capRun(t, stream, 1000, 1)
	want, dropped := refCapped(stream, MinArtifactMaxBytes)
	if !bytes.Equal(got, want) || sum.DroppedBytes != dropped {
		t.Fatalf("artifact %d bytes, want %d", len(got), len(want))
	}
}
