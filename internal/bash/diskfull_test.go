package bash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/disktest"
)

// The notice of a truncated result whose artifact could not be written
// says why, in these exact words, instead of silently dropping the link.
func TestToolNoticeWhenArtifactCannotBeSaved(t *testing.T) {
	const notice = "\n\n[Showing lines 91467-100000 of 100000 (50.0KB limit). Full output not saved: "
	const tail = "\n99999\n100000\n" + notice

	t.Run("disk full", func(t *testing.T) {
		te := newToolEnv(t)
		dir := disktest.Mount(t, 128<<10)
		te.arts = newTestArtifacts(filepath.Join(dir, "artifacts"))
		te.tc.Artifacts = te.arts
		disktest.Fill(t, dir, 16<<10)
		r := te.exec(t, ToolParams{Command: "seq 1 100000"})
		if want := tail + "no space left on device]"; r.IsError || !strings.HasSuffix(r.Content, want) {
			t.Fatalf("content …%q, want it to end in %q", r.Content[max(0, len(r.Content)-150):], want)
		}
		tr := r.Details.Meta.Truncation
		if tr.ArtifactID != "" || tr.ArtifactError != "no space left on device" {
			t.Errorf("truncation meta %+v", tr)
		}
		if ents, _ := os.ReadDir(te.arts.dir); len(ents) != 0 {
			t.Errorf("artifact folder keeps %d files", len(ents))
		}
		// A failure on an error result is reported the same way.
		r = te.exec(t, ToolParams{Command: "seq 1 100000; exit 3"})
		if want := "\n100000\n\n\nCommand exited with code 3" + notice + "no space left on device]"; !r.IsError || !strings.HasSuffix(r.Content, want) {
			t.Errorf("error content …%q, want it to end in %q", r.Content[max(0, len(r.Content)-150):], want)
		}
	})

	t.Run("no artifact folder", func(t *testing.T) {
		te := newToolEnv(t)
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		te.tc.Artifacts = newTestArtifacts(filepath.Join(file, "artifacts"))
		r := te.exec(t, ToolParams{Command: "seq 1 100000"})
		if want := tail + "not a directory]"; !strings.HasSuffix(r.Content, want) {
			t.Errorf("content …%q, want it to end in %q", r.Content[max(0, len(r.Content)-150):], want)
		}
	})

	t.Run("PTY path", func(t *testing.T) {
		t.Setenv("AGENTSH_NO_PTY", "")
		t.Setenv("PI_NO_PTY", "")
		te := ptyToolEnv(t, &fakeUI{cols: 120, rows: 40})
		dir := disktest.Mount(t, 128<<10)
		te.tc.Artifacts = newTestArtifacts(filepath.Join(dir, "artifacts"))
		disktest.Fill(t, dir, 16<<10)
		r := te.exec(t, ToolParams{Command: "seq 1 100000"})
		if want := tail + "no space left on device]"; !strings.HasSuffix(r.Content, want) {
			t.Errorf("content …%q, want it to end in %q", r.Content[max(0, len(r.Content)-150):], want)
		}
	})

	// Nothing cut, nothing to say, even though the artifact could not
	// have been written.
	t.Run("short output", func(t *testing.T) {
		te := newToolEnv(t)
		dir := disktest.Mount(t, 64<<10)
		te.tc.Artifacts = newTestArtifacts(filepath.Join(dir, "artifacts"))
		disktest.Fill(t, dir, 0)
		if r := te.exec(t, ToolParams{Command: "echo hi"}); r.Content != "hi\n" || r.Details.Meta != nil {
			t.Errorf("content %q meta %+v", r.Content, r.Details.Meta)
		}
	})
}
