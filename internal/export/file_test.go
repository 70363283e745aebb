package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/export/exporttest"
	"agentsh/internal/session"
)

func storedSession(t *testing.T) (*agent.AgentSession, *session.Store, string) {
	t.Helper()
	cwd := t.TempDir()
	store, err := session.CreateIn(filepath.Join(t.TempDir(), "sessions"), cwd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	a, err := agent.New(cwd, store, exec, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []session.Message{
		&session.UserMessage{Text: "hello <b>there</b>", Timestamp: t0},
		&session.AssistantMessage{Text: "**hi**", Provider: "openai", Model: "m1",
			Usage: &session.Usage{Input: 5, Output: 2, TotalTokens: 7}, Timestamp: t0 + 1},
	} {
		if err := a.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	return a, store, cwd
}

func readChecked(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := exporttest.Check(b); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

// Without a path the file is agentsh-session-<session file name>.html in
// the session's directory, and shows the session's header.
func TestWriteSessionDefaultName(t *testing.T) {
	a, store, cwd := storedSession(t)
	path, err := WriteSession(a, "")
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(filepath.Base(store.Path()), ".jsonl")
	if want := filepath.Join(cwd, "agentsh-session-"+base+".html"); path != want {
		t.Fatalf("path %q, want %q", path, want)
	}
	doc := readChecked(t, path)
	start, err := time.Parse(time.RFC3339Nano, store.Header().Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<code>" + a.ID() + "</code>", "<code>" + cwd + "</code>",
		start.UTC().Format("2006-01-02 15:04:05") + " UTC",
		"<code>openai/m1</code>", "5 in · 2 out", "hello &lt;b&gt;there&lt;/b&gt;", "<strong>hi</strong>",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the export lacks %q", want)
		}
	}
}

// A relative path is taken from the shell's current directory and its
// missing folders are made; an absolute one is used as it is.
func TestWriteSessionPaths(t *testing.T) {
	a, _, cwd := storedSession(t)
	sub := filepath.Join(cwd, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// An absolute cd: a session's shell starts in the process's directory.
	if _, err := a.ExecuteBash(t.Context(), "cd "+sub, nil, agent.BashOptions{}); err != nil {
		t.Fatal(err)
	}
	if a.Cwd() != sub {
		t.Fatalf("cwd %q after cd", a.Cwd())
	}
	path, err := WriteSession(a, "out/t.html")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sub, "out", "t.html"); path != want {
		t.Errorf("path %q, want %q", path, want)
	}
	doc := readChecked(t, path)
	// The cd is in the transcript.
	if !strings.Contains(doc, "$ cd "+sub) {
		t.Error("the bang command is missing")
	}
	abs := filepath.Join(t.TempDir(), "abs.html")
	if path, err := WriteSession(a, abs); err != nil || path != abs {
		t.Fatalf("absolute path: %q, %v", path, err)
	}
	readChecked(t, abs)

	// A session kept in memory is named by its id.
	mem, err := agent.New(cwd, nil, nil, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := DefaultFileName(mem), "agentsh-session-"+mem.ID()+".html"; got != want {
		t.Errorf("in-memory name %q, want %q", got, want)
	}
}

func TestWriteSessionUnwritable(t *testing.T) {
	a, _, cwd := storedSession(t)
	file := filepath.Join(cwd, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A regular file where a folder should be fails even for root.
	_, err := WriteSession(a, filepath.Join(file, "x.html"))
	if err == nil || !strings.HasPrefix(err.Error(), "export html: ") || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("error %v", err)
	}
	if _, err := WriteSession(a, cwd); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("writing over a folder: %v", err)
	}
}

// A compacted session goes on from a summary, but the export is its whole
// history, read back from the file, with the summary where it took place.
func TestExportCompactedSessionHasTheWholeHistory(t *testing.T) {
	a, store, cwd := storedSession(t)
	old := &session.UserMessage{Text: "the oldest question", Timestamp: t0 + 2}
	kept := &session.UserMessage{Text: "the newest question", Timestamp: t0 + 3}
	if err := a.Append(old); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(kept); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendCompaction(session.CompactionEntry{Summary: "they talked <a lot>",
		FirstKeptEntryID: store.EntryID(kept), TokensBefore: 1200, TokensAfter: 300}); err != nil {
		t.Fatal(err)
	}
	path := store.Path()
	store.Close()
	reopened, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reopened.Close() })
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	b, err := agent.New(cwd, reopened, exec, bash.ShellConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := b.Messages(); len(msgs) == 0 || msgs[0].Role() != session.RoleCompactionSummary {
		t.Fatalf("the resumed session does not start from the summary: %v", msgs)
	}
	out, err := WriteSession(b, "full.html")
	if err != nil {
		t.Fatal(err)
	}
	page := readChecked(t, out)
	for _, want := range []string{"hello &lt;b&gt;there&lt;/b&gt;", "the oldest question", "the newest question",
		"they talked &lt;a lot&gt;", "Compacted: the turns above were summarized"} {
		if !strings.Contains(page, want) {
			t.Errorf("the export lacks %q", want)
		}
	}
	if i, j := strings.Index(page, "the oldest question"), strings.Index(page, "Compacted:"); i < 0 || j < i || j > strings.Index(page, "the newest question") {
		t.Errorf("the compaction marker is not between the summarized and the kept turns")
	}
}
