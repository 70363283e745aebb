package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/export/exporttest"
)

// /export writes the session as HTML, under its default name or at the
// path given (~ for the home folder), and says where; a failure says why.
func TestExportCommandWritesTheTranscript(t *testing.T) {
	h := newHarnessStore(t, 400, 40, true)
	srv := withModel(h, "openai/model-a")
	work := h.m.session().StartDir()
	h.sendLine("what is <b>this</b>?")
	h.waitFor("the answer", h.agentIdle)
	if len(srv.Requests()) != 1 {
		t.Fatalf("%d requests", len(srv.Requests()))
	}

	exported := func(path string) {
		t.Helper()
		if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, "Exported the session to "+path) {
			t.Fatalf("no notice naming %s:\n%s", path, s)
		}
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := exporttest.Check(doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, want := range []string{"what is &lt;b&gt;this&lt;/b&gt;?", "<p>answer 0</p>", "openai/model-a"} {
			if !strings.Contains(string(doc), want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
	}
	h.sendLine("/export")
	base := strings.TrimSuffix(filepath.Base(h.m.session().Store().Path()), ".jsonl")
	exported(filepath.Join(work, "agentsh-session-"+base+".html"))

	h.sendLine("/export ~/t.html")
	exported(filepath.Join(os.Getenv("HOME"), "t.html"))

	if err := os.WriteFile(filepath.Join(work, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.sendLine("/export file/x.html")
	if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, "Export failed: export html: ") ||
		!strings.Contains(s, "not a directory") {
		t.Fatalf("no failure notice:\n%s", s)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("/export went to the model: %d requests", len(srv.Requests()))
	}

	// Listed in /help and in the menu.
	h.sendLine("/help")
	if !strings.Contains(h.screen(), "/export [path]") {
		t.Errorf("/help does not list /export:\n%s", h.screen())
	}
	h.m.editor.Reset()
	h.typeText("/exp")
	if !h.m.menu.visible() || h.m.menu.selected().name != "/export" {
		t.Errorf("the menu does not offer /export")
	}
}
