package bash

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
)

// progressCmd prints a header, a progress bar of 100 000 frames drawn with
// CR over each other (about 1 MB), and a summary.
const progressCmd = `echo start; for ((i=1; i<=100000; i++)); do printf '\r%6d/100000' $i; done; printf '\n'; echo done`

// TestToolProgressBarFinalState: the model's text keeps each line's final
// state (the bar is one line, counted as one), the live updates too, and the
// artifact keeps every frame.
func TestToolProgressBarFinalState(t *testing.T) {
	te := newToolEnv(t)
	var mu sync.Mutex
	var last string
	r := te.execCtx(t, context.Background(), ToolParams{Command: progressCmd},
		func(s string) { mu.Lock(); last = s; mu.Unlock() })
	text, _, _ := strings.Cut(r.Content, "\n\n[Showing ")
	if r.IsError || text != "start\n100000/100000\ndone\n" {
		t.Fatalf("content %q", short(r.Content))
	}
	tr := r.Details.Meta.Truncation
	if tr == nil || tr.TotalLines != 3 || tr.OutputLines != 3 || tr.ShownRange != (ShownRange{1, 3}) || tr.ArtifactID == "" {
		t.Fatalf("meta %+v", tr)
	}
	mu.Lock()
	if strings.ContainsRune(last, '\r') || !strings.HasSuffix(last, "100000/100000\ndone\n") {
		t.Errorf("last live update %q", short(last))
	}
	mu.Unlock()
	path, err := te.arts.Resolve("artifact://" + tr.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\r"); n != 100000 || !strings.HasPrefix(string(b), "start\n\r     1/100000\r     2/100000") ||
		!strings.HasSuffix(string(b), "\r100000/100000\ndone\n") || len(b) != tr.TotalBytes {
		t.Fatalf("artifact: %d bytes, %d CRs, %q…%q", len(b), n, b[:min(len(b), 40)], b[max(0, len(b)-40):])
	}
	// The first lines and a window in the middle come from the captured
	// head and the artifact, also in their final state.
	r = te.exec(t, ToolParams{Command: progressCmd, Head: iptr(2)})
	if text, _, _ := strings.Cut(r.Content, "\n\n[Showing "); text != "start\n100000/100000\n" {
		t.Fatalf("head 2: %q", short(r.Content))
	}
}

// TestToolStyledOutput: with a UI, the result's details carry the output
// with its SGR colours (never cursor movement) and so do the live updates;
// the model's text is plain, and without a UI nothing coloured is made.
func TestToolStyledOutput(t *testing.T) {
	const cmd = `printf '\033[31mred\033[0m \033[2J\033[1;1H\033[?25lplain\n'`
	te := newToolEnv(t)
	te.tc.HasUI = true
	var mu sync.Mutex
	var last string
	r := te.execCtx(t, context.Background(), ToolParams{Command: cmd}, func(s string) { mu.Lock(); last = s; mu.Unlock() })
	if r.IsError || r.Content != "red plain\n" || r.Details.Styled != "\x1b[31mred\x1b[0m plain\n" {
		t.Fatalf("with a UI: %q, styled %q", r.Content, r.Details.Styled)
	}
	mu.Lock()
	if last != "\x1b[31mred\x1b[0m plain\n" {
		t.Errorf("last live update %q", last)
	}
	mu.Unlock()
	te.tc.HasUI = false
	last = ""
	r = te.execCtx(t, context.Background(), ToolParams{Command: cmd}, func(s string) { mu.Lock(); last = s; mu.Unlock() })
	if r.Content != "red plain\n" || r.Details.Styled != "" || last != "red plain\n" {
		t.Fatalf("without a UI: %q, styled %q, live %q", r.Content, r.Details.Styled, last)
	}
}
