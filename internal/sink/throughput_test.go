package sink

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestThroughputYes is the acceptance check for the fast path: 1 GB of
// `yes 0123456789abcdef` read through ReadFrom and spilled to an artifact
// must run at >= 0.8× the speed of bash redirecting the same pipeline to a
// file. It takes a few seconds and writes 2 GB, so it only runs with
// SINK_THROUGHPUT=1.
func TestThroughputYes(t *testing.T) {
	if os.Getenv("SINK_THROUGHPUT") == "" {
		t.Skip("set SINK_THROUGHPUT=1 to run")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	const total = 1_000_000_000
	const pipeline = "yes 0123456789abcdef | head -c 1000000000"
	dir := t.TempDir()

	best := func(run func() time.Duration) time.Duration {
		d := run()
		for range 2 {
			d = min(d, run())
		}
		return d
	}
	bashTime := best(func() time.Duration {
		start := time.Now()
		out := filepath.Join(dir, "bash.out")
		if err := exec.Command("bash", "-c", pipeline+" > "+out).Run(); err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		_ = os.Remove(out)
		return d
	})
	sinkTime := best(func() time.Duration {
		path := filepath.Join(dir, "1.bash.log")
		cmd := exec.Command("bash", "-c", pipeline)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = w
		s := New(Options{ArtifactPath: path, ArtifactID: "1"})
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
		n, err := s.ReadFrom(r)
		_ = r.Close()
		if werr := cmd.Wait(); err != nil || werr != nil || n != total {
			t.Fatalf("ReadFrom = %d, %v; wait: %v", n, err, werr)
		}
		sum := s.Dump("")
		d := time.Since(start)
		if st, err := os.Stat(path); err != nil || st.Size() != total || sum.ArtifactID != "1" || sum.TotalLines != total/17+1 {
			t.Fatalf("artifact %v, %v; summary %+v", st, err, short(sum))
		}
		_ = os.Remove(path)
		return d
	})
	ratio := bashTime.Seconds() / sinkTime.Seconds()
	t.Logf("bash > file: %v (%.0f MB/s); sink: %v (%.0f MB/s); ratio %.2f",
		bashTime, total/bashTime.Seconds()/1e6, sinkTime, total/sinkTime.Seconds()/1e6, ratio)
	if ratio < 0.8 {
		t.Errorf("sink runs at %.2f× the speed of bash writing to a file, want >= 0.8×", ratio)
	}
}
