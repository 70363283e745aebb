package bash

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// headStop passes everything before the final pipeline's mark, drops the
// mark wherever the reads split it, and closes once the final pipeline
// reached the limit.
func TestHeadStopFeed(t *testing.T) {
	mark := finalMark("N0nce12345")
	// The earlier statements print 3 lines (more than the limit), then the
	// mark, then the final pipeline's lines.
	stream := append(append([]byte("1\n2\n3\n"), mark...), "y\ny\ny\n"...)
	for split := 0; split <= len(stream); split++ {
		for split2 := split; split2 <= len(stream); split2++ {
			h := newHeadStop(2, mark)
			var got []byte
			stopped := false
			for _, c := range [][]byte{stream[:split], stream[split:split2], stream[split2:]} {
				out, stop := h.feed(append([]byte(nil), c...))
				got = append(got, out...)
				if stop {
					stopped = true
					break
				}
			}
			if !stopped {
				got = append(got, h.flush()...)
			}
			if string(got) != "1\n2\n3\n" || !stopped {
				t.Fatalf("splits %d,%d: passed %q, stopped %v", split, split2, got, stopped)
			}
		}
	}
	// Before the mark, the limit never closes the output.
	h := newHeadStop(1, mark)
	for i := 0; i < 100; i++ {
		if out, stop := h.feed([]byte("line\n")); stop || string(out) != "line\n" {
			t.Fatalf("closed before the mark: %q %v", out, stop)
		}
	}
	// After the mark, below the limit: the final pipeline's lines pass up
	// to it, the rest of the read is dropped.
	h = newHeadStop(3, mark)
	out, stop := h.feed(append(append([]byte("a\n"), mark...), "b\n"...))
	if stop || string(out) != "a\nb\n" {
		t.Fatalf("mark below the limit: %q %v", out, stop)
	}
	out, stop = h.feed([]byte("c\nd\n"))
	if !stop || string(out) != "c\n" || !h.dropped.Load() {
		t.Fatalf("at the limit: %q %v dropped %v", out, stop, h.dropped.Load())
	}
	// A stream that ends with what could start the mark keeps those bytes.
	h = newHeadStop(3, mark)
	out, _ = h.feed([]byte("x\x1b]69"))
	if string(out)+string(h.flush()) != "x\x1b]69" {
		t.Fatalf("held bytes lost: %q", out)
	}
	// Without a mark the whole output is the final pipeline.
	h = newHeadStop(2, nil)
	out, stop = h.feed([]byte("1\n2\n"))
	if !stop || string(out) != "1\n2\n" || h.dropped.Load() {
		t.Fatalf("exactly the limit: %q %v dropped %v", out, stop, h.dropped.Load())
	}
}

// spec §1.1 with a trailing `| head -n N`: only the final pipeline may be
// cut early. The statements before it run to their end (their side effects
// happen, as in bash) and the limit cuts their output afterwards; the final
// pipeline is stopped once the output holds N lines, so an endless producer
// still ends at once. The text is exactly the first N lines; a run whose
// output was closed on unread output says so in details.meta.truncation
// (stopped, head range) without a notice to the model, and a run whose
// output the limit cut after it ended has the metadata spec §1.6 gives it.
func TestHeadLimitCutsOnlyTheFinalPipeline(t *testing.T) {
	te := newToolEnv(t)
	pid := te.exec(t, ToolParams{Command: "echo $$"}).Content
	after := filepath.Join(te.tc.Cwd, "after")
	for _, c := range []struct {
		cmd     string
		out     string
		touched bool // the `after` file exists afterwards
		stopped bool // the output was closed on unread output
		applied bool // the limit removed lines (details.headTailApplied)
	}{
		{"for i in 1 2 3; do echo $i; done; touch after | head -n 2", "1\n2\n", true, false, true},
		{"for i in 1 2 3; do echo $i; done; touch after; yes | head -n 2", "1\n2\n", true, true, true},
		{"seq 1 5 && touch after && yes | head -n 2", "1\n2\n", true, true, true},
		{"seq 1 5 && touch after && seq 1 1000000 | head -n 2", "1\n2\n", true, true, true},
		{"seq 1 5 || touch after && yes | head -n 2", "1\n2\n", false, true, true},
		{"echo a; seq 1 5; touch after; seq 1 1000000 | head -n 4", "a\n1\n2\n3\n", true, true, true},
		// The earlier statements print less than the limit: the final
		// pipeline fills it.
		{"echo a; touch after; yes | head -n 3", "a\ny\ny\n", true, true, true},
		{"(echo a; echo b); touch after; seq 10 20 | head -n 3", "a\nb\n10\n", true, true, true},
		{"seq 1 3 >/dev/null; touch after; seq 5 | head -n 5", "1\n2\n3\n4\n5\n", true, false, false},
		// A group or a subshell piped into head IS the final pipeline.
		{"{ yes; touch after; } | head -n 2", "y\ny\n", true, true, true},
		{"(yes) | head -n 2", "y\ny\n", false, true, true},
		// Alone, the final pipeline is stopped as before.
		{"seq 1 1000000 | head -n 2", "1\n2\n", false, true, true},
		{"yes | head -n 2", "y\ny\n", false, true, true},
		{"seq 1 2 | head -n 2", "1\n2\n", false, false, false},
		// tail never stops anything.
		{"seq 1 10; touch after; seq 20 30 | tail -n 3", "28\n29\n30\n", true, false, true},
		{"for i in 1 2 3; do echo $i; done; touch after | tail -n 2", "2\n3\n", true, false, true},
	} {
		_ = os.Remove(after)
		// A generous timeout: a command that is not stopped trips the hang
		// guard instead of ending at it.
		r := te.exec(t, ToolParams{Command: c.cmd, Timeout: fptr(600)})
		_, err := os.Stat(after)
		if r.IsError || r.Content != c.out {
			t.Errorf("%q: got %q (error %v), want %q", c.cmd, short(r.Content), r.IsError, c.out)
		}
		if touched := err == nil; touched != c.touched {
			t.Errorf("%q: after exists %v, want %v", c.cmd, touched, c.touched)
		}
		var tr *TruncationMeta
		if r.Details.Meta != nil {
			tr = r.Details.Meta.Truncation
		}
		switch {
		case c.stopped:
			n := strings.Count(c.out, "\n")
			if tr == nil || !tr.Stopped || tr.Direction != "head" || tr.TruncatedBy != "lines" ||
				tr.ShownRange != (ShownRange{1, n}) || tr.OutputLines != n || tr.OutputBytes != len(c.out) {
				t.Errorf("%q: metadata %+v", c.cmd, tr)
			}
		case tr != nil:
			t.Errorf("%q: metadata %+v for an output read to its end", c.cmd, tr)
		}
		if r.Details.HeadTailApplied != c.applied {
			t.Errorf("%q: headTailApplied %v", c.cmd, r.Details.HeadTailApplied)
		}
		if strings.Contains(r.Content, "6974") {
			t.Errorf("%q: the engine's mark reached the output: %q", c.cmd, r.Content)
		}
	}
	// The statements before the final pipeline ran in the session shell:
	// none of them wrote to a closed output, and the shell is the same.
	if again := te.exec(t, ToolParams{Command: "echo $$"}).Content; again != pid {
		t.Errorf("session shell replaced: %s then %s", pid, again)
	}
}

// An earlier statement's long output keeps the spec's metadata of a
// truncated output (the lines shown of what was read, the artifact), and
// the stop of the final pipeline is marked on it.
func TestHeadLimitAfterLongOutput(t *testing.T) {
	te := newToolEnv(t)
	after := filepath.Join(te.tc.Cwd, "after")
	r := te.exec(t, ToolParams{Command: "seq 1 100000; touch after; yes | head -n 3", Timeout: fptr(600)})
	tr := r.Details.Meta.Truncation
	want := fmt.Sprintf("1\n2\n3\n\n\n[Showing lines 1-3 of 100000. Full: artifact://%s]", tr.ArtifactID)
	if r.IsError || r.Content != want || tr.ArtifactID == "" || !tr.Stopped || tr.TotalLines != 100000 || tr.Direction != "head" {
		t.Errorf("got %q, meta %+v", short(r.Content), tr)
	}
	if _, err := os.Stat(after); err != nil {
		t.Errorf("the statement after the long output did not run: %v", err)
	}
	// The artifact holds what was read: all of seq's output and nothing
	// of yes past the limit.
	path, err := te.arts.Resolve("artifact://" + tr.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != seqLines(1, 100000) {
		t.Errorf("artifact: %d bytes, %v", len(data), err)
	}
}
