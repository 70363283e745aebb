package agent

import (
	"agentsh/internal/bash"
	"agentsh/internal/disktest"
	"agentsh/internal/session"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A bang command on a full disk: its output is still the caller's, the
// truncated result says why there is no artifact, the message is kept in
// memory, and the error says the file could not take it.
func TestExecuteBashOnFullDisk(t *testing.T) {
	dir := disktest.Mount(t, 256<<10)
	store, err := session.CreateIn(dir, "/w")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ex := bash.NewExecutor()
	t.Cleanup(ex.Close)
	a, err := New(t.TempDir(), store, ex, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	filler := disktest.Fill(t, dir, 0)

	run, err := a.ExecuteBashRun(context.Background(), "seq 1 100000", nil, BashOptions{})
	var save *SaveError
	if !errors.As(err, &save) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error %v, want a *SaveError for ENOSPC", err)
	}
	if run.ExitCode == nil || *run.ExitCode != 0 || !run.Truncated || !strings.HasSuffix(run.Output, "\n99999\n100000\n") {
		t.Errorf("result lost: exit %v truncated %v output …%q", run.ExitCode, run.Truncated, run.Output[max(0, len(run.Output)-30):])
	}
	if run.ArtifactID != "" || run.ArtifactError != "no space left on device" {
		t.Errorf("artifact %q, error %q; want none, because no space left on device", run.ArtifactID, run.ArtifactError)
	}
	msgs := a.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages in memory, want 1", len(msgs))
	}
	text := session.BashExecutionToText(msgs[0].(*session.BashExecutionMessage))
	if want := "\n\n[Showing lines 91467-100000 of 100000 (50.0KB limit). Full output not saved: no space left on device]"; !strings.HasSuffix(text, want) {
		t.Errorf("the model reads …%q, want it to end in %q", text[max(0, len(text)-150):], want)
	}
	if ents, _ := os.ReadDir(store.ArtifactsDir()); len(ents) != 0 {
		t.Errorf("artifact folder keeps %d files after the failed spill", len(ents))
	}

	removeFile(t, filler)
	if _, err := a.ExecuteBash(context.Background(), "echo after", nil, BashOptions{}); err != nil {
		t.Fatal(err)
	}
	got := loadAll(t, store.Path())
	if len(got) != 1 || got[0].(*session.BashExecutionMessage).Output != "after\n" {
		t.Errorf("file holds %v, want only the second command", got)
	}
}
