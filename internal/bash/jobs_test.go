package bash

import (
	"context"
	"testing"
	"time"

	"agentsh/internal/jobs"
)

// TestBackgroundReturnsOnceOutputSettles: `background: true`
// for a server that prints its ready line at once returns once that output
// settles, with the line, while the server runs on; the call is held by a
// hang guard only (the figure is measured, not asserted: about
// BackgroundQuiet plus the start; BenchmarkBackgroundReadyLine).
func TestBackgroundReturnsOnceOutputSettles(t *testing.T) {
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	te := newToolEnv(t)
	te.tool.Jobs = m
	// Far above the exec's hang guard: a call that waited for the bound
	// instead of the settled output trips the guard; a slow start on a
	// loaded machine is not taken for silence.
	te.tool.settle = time.Hour
	const cmd = "echo listening on 8080; exec sleep 1000"
	r := te.exec(t, ToolParams{Command: cmd, Background: true})
	want := "Started job 1: " + cmd + "\nlistening on 8080\n\nJob 1 is running. " + JobToolsHint("1")
	if r.IsError || r.Content != want {
		t.Fatalf("result %+v\nwant %q", r, want)
	}
	j, _ := m.Get("1")
	if st := j.Wait(context.Background(), 50*time.Millisecond); st.Kind != jobs.Running {
		t.Fatalf("the server did not run on: %s", st)
	}
}
