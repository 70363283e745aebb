package agent

import (
	"agentsh/internal/config"
	"agentsh/internal/session"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestBangArtifactCap: a bang command's artifact follows artifacts.maxBytes
// from the settings the session follows, and the text the model reads says
// how much was dropped.
func TestBangArtifactCap(t *testing.T) {
	a, _ := newAgent(t)
	g := writeSettingsAt(t, t.TempDir(), "settings.json", `{"artifacts": {"maxBytes": 65536}}`)
	l, err := config.WatchSettingsFrom(g, "")
	if err != nil {
		t.Fatal(err)
	}
	a.FollowSettings(l)
	run, err := a.ExecuteBashRun(context.Background(), "seq 1 200000", nil, BashOptions{})
	if err != nil || run.ArtifactID == "" || run.ArtifactDroppedBytes == 0 {
		t.Fatalf("run %+v, %v", run.BashResult, err)
	}
	p, err := a.Artifacts().Path(run.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("\n[… %d bytes dropped …]\n", run.ArtifactDroppedBytes)
	if !strings.HasPrefix(string(b), "1\n2\n3\n") || !strings.HasSuffix(string(b), "\n199999\n200000\n") ||
		strings.Count(string(b), marker) != 1 || len(b) > 65536+len(marker) {
		t.Fatalf("artifact of %d bytes: %q … %q", len(b), b[:20], b[len(b)-20:])
	}
	text := session.BashExecutionToText(a.Messages()[0].(*session.BashExecutionMessage))
	if want := fmt.Sprintf("Full: artifact://%s (1.2MB dropped from the middle)]", run.ArtifactID); !strings.HasSuffix(text, want) {
		t.Fatalf("the model reads …%q, want it to end in %q", text[max(0, len(text)-150):], want)
	}
}
