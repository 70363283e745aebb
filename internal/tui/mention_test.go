package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/config"
	"agentsh/internal/sandbox"
)

// writeTree creates files (relative paths) with some content below root.
func writeTree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := "x\n"
		if filepath.Base(f) == ".gitignore" {
			body = "node_modules/\n*.secret\n"
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// typeMention types s and runs the walk the completion asks for, as the
// program would on its own goroutine.
func typeMention(h *harness, s string) {
	for _, r := range s {
		if cmd := h.update(tea.KeyPressMsg{Code: r, Text: string(r)}); cmd != nil {
			h.update(cmd())
		}
	}
}

func TestMentionCompletesIgnoredFilesLeftOut(t *testing.T) {
	h := newHarness(t, 70, 20)
	cwd := h.m.session().Cwd()
	writeTree(t, cwd, ".gitignore", "internal/tui/model.go", "internal/tui/mention.go", "main.go",
		"node_modules/model/index.js", "api.secret", "docs/MODEL.md")

	typeMention(h, "look at @mdl")
	s := h.screen()
	for _, want := range []string{" internal/tui/model.go ", " docs/MODEL.md "} {
		if !strings.Contains(s, want) {
			t.Errorf("completion lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "node_modules") || strings.Contains(s, "main.go") {
		t.Errorf("an ignored file is offered:\n%s", s)
	}
	// Both hold "mdl" within "model" (5 runes); the earlier one comes first.
	// main.go has no "l" after its "d", node_modules is ignored.
	if got, want := h.m.mention.matches, []string{"docs/MODEL.md", "internal/tui/model.go"}; !slices.Equal(got, want) {
		t.Errorf("matches = %q, want %q", got, want)
	}

	h.press(tea.KeyDown, 0)
	h.press(tea.KeyTab, 0)
	if got := h.m.editor.Value(); got != "look at internal/tui/model.go " {
		t.Errorf("after tab the editor holds %q", got)
	}
	if strings.Contains(h.screen(), "docs/MODEL.md") {
		t.Errorf("the list stays open after the insert:\n%s", h.screen())
	}

	// A secret file is ignored too; esc closes the list without touching
	// the text, and it stays closed while typing on in that word.
	typeMention(h, "@api")
	if len(h.m.mention.matches) != 0 || !strings.Contains(h.screen(), "no file matches @api") {
		t.Errorf("ignored api.secret offered: %q\n%s", h.m.mention.matches, h.screen())
	}
	h.press(tea.KeyEscape, 0)
	typeMention(h, "x")
	if h.m.mention.open || strings.Contains(h.screen(), "no file matches") {
		t.Errorf("esc did not close the list:\n%s", h.screen())
	}
	if got := h.m.editor.Value(); got != "look at internal/tui/model.go @apix" {
		t.Errorf("editor = %q", got)
	}
}

func TestMentionEnterInsertsAndEmailIsNoMention(t *testing.T) {
	h := newHarness(t, 70, 20)
	writeTree(t, h.m.session().Cwd(), "README.md")
	typeMention(h, "mail me@rea")
	if h.m.mention.open {
		t.Fatalf("an address opened the completion")
	}
	h.m.editor.Reset()
	typeMention(h, "@rea")
	h.press(tea.KeyEnter, 0)
	if got := h.m.editor.Value(); got != "README.md " {
		t.Errorf("enter left %q in the editor", got)
	}
	if h.m.tr != nil && strings.Contains(h.screen(), "No model configured") {
		t.Errorf("enter sent the prompt instead of inserting the path")
	}
}

func TestMentionClosesWhenTheEditorIsCleared(t *testing.T) {
	h := newHarness(t, 70, 20)
	writeTree(t, h.m.session().Cwd(), "go.mod")
	typeMention(h, "@zz")
	if !strings.Contains(h.screen(), "no file matches @zz") {
		t.Fatalf("no list:\n%s", h.screen())
	}
	h.press('c', tea.ModCtrl) // clears the editor
	if h.m.mention.open || strings.Contains(h.screen(), "no file matches") {
		t.Errorf("the list outlived its @word:\n%s", h.screen())
	}
}

func TestFuzzyRank(t *testing.T) {
	files := []string{"a/b/c/readme.md", "readme.md", "src/read_me.go", "zzz"}
	lower := make([]string, len(files))
	for i, f := range files {
		lower[i] = strings.ToLower(f)
	}
	got := fuzzyRank("RME", files, lower, 10)
	want := []string{"readme.md", "a/b/c/readme.md", "src/read_me.go"}
	if !slices.Equal(got, want) {
		t.Errorf("fuzzyRank = %q, want %q", got, want)
	}
	if got := fuzzyRank("RME", files, lower, 1); !slices.Equal(got, want[:1]) {
		t.Errorf("fuzzyRank with n=1 = %q", got)
	}
	for _, c := range []struct {
		q, s        string
		span, start int
	}{
		{"ab", "axxxbab", 2, 5}, // the narrowest window, not the first
		{"ab", "ab", 2, 0},
		{"é/ü", "xé/aü", 4, 1}, // runes, not bytes
	} {
		span, start, ok := fuzzyMatch(c.q, c.s)
		if !ok || span != c.span || start != c.start {
			t.Errorf("fuzzyMatch(%q, %q) = %d, %d, %v; want %d, %d", c.q, c.s, span, start, ok, c.span, c.start)
		}
	}
	if got := fuzzyRank("x", files, lower, 10); len(got) != 0 {
		t.Errorf("no match expected, got %q", got)
	}
}

// TestMentionThroughSandbox: the completion lists the session folder as
// the model's tools see it, through the sandbox's view: a folder the
// sandbox denies is never read, and its names are offered only where the
// kernel's view lets any confined program list them (Landlock alone lets
// a denied folder's names be listed; a masked folder shows nothing). The
// host's view, with the sandbox off, offers them.
func TestMentionThroughSandbox(t *testing.T) {
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	h := newHarness(t, 70, 20)
	sess := h.m.session()
	cwd := sess.Cwd()
	writeTree(t, cwd, "main.go", "private/keys.go")
	sess.SetSandbox(config.SandboxSettings{Mode: sandbox.WorkspaceWrite, DenyRead: []string{filepath.Join(cwd, "private")}})
	if sess.SandboxPolicy() == nil {
		t.Skip("no sandbox on this system")
	}
	ents, err := sess.FileSystem().ReadDir(filepath.Join(cwd, "private"))
	want := []string{"main.go"}
	if err == nil && len(ents) > 0 {
		want = []string{"main.go", "private/keys.go"}
	}
	typeMention(h, "@go")
	if got := h.m.mention.matches; !slices.Equal(got, want) {
		t.Errorf("matches = %q, want %q", got, want)
	}
}
