package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// lineReader gives each line without its end, skips a line longer than
// its limit as an *errLongLine whatever the buffer size, and goes on after it.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the 64 KB buffer
	in := "a\r\n\nb\n" + long + "\n" + long[:100] + "\nlast"
	lr := newLineReader(strings.NewReader(in), 150<<10)
	var got []string
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		var e *errLongLine
		switch {
		case errors.As(err, &e):
			got = append(got, fmt.Sprintf("long %d", e.size))
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, string(line))
		}
	}
	want := []string{"a", "", "b", fmt.Sprintf("long %d", len(long)), long[:100], "last"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lines %.200q, want %.200q", got, want)
	}
	// A line of exactly the limit is kept.
	lr = newLineReader(strings.NewReader(long[:1000]+"\n"), 1000)
	if line, err := lr.next(); err != nil || len(line) != 1000 {
		t.Fatalf("line at the limit: %d bytes, %v", len(line), err)
	}
}

// A session file is read line by line: a line longer than MaxEntryBytes is
// skipped with a LoadError that says so, the entries around it load, and
// the session list counts them too; a header that long is no header.
func TestLoadSkipsOverlongLine(t *testing.T) {
	dir := t.TempDir()
	st, err := CreateIn(dir, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(&UserMessage{Text: "before"}); err != nil {
		t.Fatal(err)
	}
	path := st.Path()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	huge := `{"type":"message","message":{"role":"user","content":"` + strings.Repeat("y", MaxEntryBytes) + `"}}` + "\n"
	after := `{"type":"message","message":{"role":"user","content":"after"}}` + "\n"
	if _, err := f.WriteString(huge + after); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, errs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 2 || s.Messages[0].(*UserMessage).Text != "before" || s.Messages[1].(*UserMessage).Text != "after" {
		t.Errorf("messages %d", len(s.Messages))
	}
	wantErr := fmt.Sprintf("%s:3: line of %d bytes is longer than a session entry may be (%d bytes): skipped", path, len(huge)-1, MaxEntryBytes)
	if len(errs) != 1 || errs[0].Error() != wantErr {
		t.Errorf("load errors %v, want %s", errs, wantErr)
	}
	infos, err := ListIn(dir)
	if err != nil || len(infos) != 1 || infos[0].Messages != 2 || infos[0].FirstPrompt != "before" {
		t.Errorf("list %+v %v", infos, err)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(bad); err == nil || !strings.Contains(err.Error(), ":1: not a session header: line of ") {
		t.Errorf("overlong header: %v", err)
	}
}

// A loaded session holds about what its messages take: a tool result's
// raw JSON is not kept beside its text (it was, doubling a long session's
// memory: a 1 GB session file took more than 3 GB).
func TestLoadedSessionMemory(t *testing.T) {
	st, err := CreateIn(t.TempDir(), "/w")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Repeat("line of output\n", 50<<10/15)
	if err := st.Append(&ToolResultMessage{ToolCallID: "c", ToolName: "bash", Content: out}); err != nil {
		t.Fatal(err)
	}
	path := st.Path()
	st.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The same entry 200 times (an fsync'd Append each would be slow).
	header, entry, _ := strings.Cut(string(data), "\n")
	if err := os.WriteFile(path, []byte(header+"\n"+strings.Repeat(entry, 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if len(s.Messages) != 200 || held > fi.Size()*3/2 {
		t.Errorf("%d messages of a %d-byte file hold %d bytes", len(s.Messages), fi.Size(), held)
	}
	t.Logf("%d messages of a %d-byte file hold %d bytes", len(s.Messages), fi.Size(), held)
	runtime.KeepAlive(s)
}
