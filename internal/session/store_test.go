package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// isolateData points the XDG data dir at a fresh temp folder.
func isolateData(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end in a newline: %q", path, data)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestCreateAppendLoad(t *testing.T) {
	isolateData(t)
	cwd := t.TempDir()
	s, err := Create(cwd)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	dir := SessionsDir(cwd)
	if filepath.Dir(s.Path()) != dir {
		t.Fatalf("path %s not in %s", s.Path(), dir)
	}
	name := filepath.Base(s.Path())
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{16}\.jsonl$`).MatchString(name) {
		t.Errorf("file name %q", name)
	}
	if !strings.HasSuffix(name, "_"+s.ID()+".jsonl") {
		t.Errorf("id %s not in name %s", s.ID(), name)
	}
	if want := strings.TrimSuffix(s.Path(), ".jsonl"); s.ArtifactsDir() != want {
		t.Errorf("ArtifactsDir = %s, want %s", s.ArtifactsDir(), want)
	}
	// Nothing is written before the first message: not the file, not
	// even the folder.
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a session without a message made %s: %v", dir, err)
	}

	msgs := sampleMessages()
	for _, m := range msgs {
		if err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode: %v %v", fi, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode: %v %v", fi, err)
	}
	lines := readLines(t, s.Path())
	if len(lines) != 1+len(msgs) {
		t.Fatalf("%d lines, want %d", len(lines), 1+len(msgs))
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	ts, _ := h["timestamp"].(string)
	if h["type"] != "session" || h["version"] != 1.0 || h["id"] != s.ID() || h["cwd"] != cwd || len(h) != 5 {
		t.Errorf("header %s", lines[0])
	}
	if _, err := time.Parse(time.RFC3339, ts); err != nil {
		t.Errorf("header timestamp %q: %v", ts, err)
	}
	// Entries carry the reference's id, parentId (null for the first, then
	// the entry before) and timestamp.
	entryRE := regexp.MustCompile(`^\{"type":"message","id":"([0-9a-f]{8})","parentId":(null|"[0-9a-f]{8}"),"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","message":\{"role":"`)
	prev := "null"
	for _, l := range lines[1:] {
		m := entryRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("message line %s", l)
		}
		if m[2] != prev {
			t.Errorf("parentId %s, want %s: %s", m[2], prev, l)
		}
		prev = `"` + m[1] + `"`
	}

	sess, errs, err := Load(s.Path())
	if err != nil || len(errs) != 0 {
		t.Fatalf("Load: %v %v", errs, err)
	}
	if sess.Header != s.Header() || !reflect.DeepEqual(sess.Messages, msgs) {
		t.Errorf("loaded %+v", sess)
	}
	if sess.ArtifactsDir() != s.ArtifactsDir() {
		t.Errorf("Session.ArtifactsDir = %s", sess.ArtifactsDir())
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(msgs[0]); err == nil {
		t.Error("Append after Close succeeded")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const testHeader = `{"type":"session","version":1,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`

func TestLoadCorruptMiddleAndTruncatedLastLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, testHeader+"\n"+
		`{"type":"message","message":{"role":"user","text":"one"}}`+"\n"+
		`{"type":"message","message":{"role":"user","te`+"\n"+ // line 3: corrupt
		"\n"+ // line 4: blank, ignored
		`{"type":"message","message":{"role":"weird"}}`+"\n"+ // line 5: unknown role
		`{"type":"frobnicate","summary":"x"}`+"\n"+ // line 6: unknown entry
		`{"type":"message","message":{"role":"user","text":"two"}}`+"\n"+
		`{"type":"message","message":{"role":"assistant","text":"thr`) // line 8: cut by a crash
	sess, errs, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{&UserMessage{Text: "one"}, &UserMessage{Text: "two"}}
	if !reflect.DeepEqual(sess.Messages, want) {
		t.Errorf("messages %#v", sess.Messages)
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
		if e.Path != p || !strings.HasPrefix(e.Error(), p+":") {
			t.Errorf("error %q does not name the file", e.Error())
		}
	}
	if !reflect.DeepEqual(lines, []int{3, 5, 6, 8}) {
		t.Errorf("error lines %v (%v), want [3 5 6 8]", lines, errs)
	}
	if !strings.Contains(errs[1].Error(), `unknown role "weird"`) || !strings.Contains(errs[2].Error(), `unknown entry type "frobnicate"`) {
		t.Errorf("errors: %v", errs)
	}

	// Open repairs the partial last line so the next entry stands alone.
	s, errs2, err := Open(p)
	if err != nil || len(errs2) != 4 {
		t.Fatalf("Open: %v %v", errs2, err)
	}
	if s.ID() != "abc" || !reflect.DeepEqual(s.LoadedMessages(), want) {
		t.Errorf("Open: id %s messages %v", s.ID(), s.LoadedMessages())
	}
	if err := s.Append(&UserMessage{Text: "four"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	sess, errs, err = Load(p)
	if err != nil || len(errs) != 4 {
		t.Fatalf("reload: %v %v", errs, err)
	}
	if got := sess.Messages[len(sess.Messages)-1]; !reflect.DeepEqual(got, &UserMessage{Text: "four"}) || len(sess.Messages) != 3 {
		t.Errorf("after repair: %#v", sess.Messages)
	}
}

func TestLoadFatal(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"empty":      "",
		"notheader":  `{"type":"message","message":{"role":"user","text":"x"}}` + "\n",
		"garbage":    "hello\n",
		"newversion": `{"type":"session","version":99,"id":"a"}` + "\n",
	} {
		p := filepath.Join(dir, name+".jsonl")
		writeFile(t, p, content)
		if s, _, err := Load(p); err == nil || s != nil {
			t.Errorf("%s: Load succeeded", name)
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
		if _, _, err := Open(p); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
	if _, _, err := Load(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewestAndFind(t *testing.T) {
	isolateData(t)
	cwd := t.TempDir()
	if _, err := Newest(cwd); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Newest on empty: %v", err)
	}
	dir := SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"aaaa1111": "2026-01-01T00-00-00-000Z_aaaa1111.jsonl",
		"aaaa2222": "2026-01-02T00-00-00-000Z_aaaa2222.jsonl",
		"bbbb":     "2026-01-03T00-00-00-000Z_bbbb.jsonl",
		"bbbb2":    "2026-01-04T00-00-00-000Z_bbbb2.jsonl",
	}
	base := time.Now().Add(-time.Hour)
	for i, id := range []string{"aaaa1111", "bbbb", "bbbb2", "aaaa2222", "eeee", "ffff"} {
		p := filepath.Join(dir, "2026-01-05T00-00-00-000Z_"+id+".jsonl")
		if name, ok := files[id]; ok {
			p = filepath.Join(dir, name)
		}
		switch id {
		case "eeee": // a header alone, as every start left before: not a session to continue
			writeFile(t, p, testHeader+"\n")
		case "ffff": // no message Load would keep
			writeFile(t, p, testHeader+"\n"+`{"type":"message","message":{"role":"weird"}}`+"\n{broken\n")
		default:
			writeFile(t, p, testHeader+"\n"+`{"type":"message","message":{"role":"user","text":"hi"}}`+"\n")
		}
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	// Neither counts as a session file.
	writeFile(t, filepath.Join(dir, "notes.txt"), "")
	if err := os.Mkdir(filepath.Join(dir, "2026-01-05T00-00-00-000Z_dddd.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}

	// Newest goes by last write: aaaa2222 was touched last of the
	// sessions with a message.
	if p, err := Newest(cwd); err != nil || p != filepath.Join(dir, files["aaaa2222"]) {
		t.Errorf("Newest = %s, %v", p, err)
	}
	for arg, want := range map[string]string{
		"aaaa1111": files["aaaa1111"],
		"aaaa2":    files["aaaa2222"],
		"bbbb":     files["bbbb"], // exact beats the prefix of bbbb2
		"bbbb2":    files["bbbb2"],
		" bbbb2 ":  files["bbbb2"],
	} {
		if p, err := Find(cwd, arg); err != nil || p != filepath.Join(dir, want) {
			t.Errorf("Find(%q) = %s, %v; want %s", arg, p, err, want)
		}
	}
	if _, err := Find(cwd, "aaaa"); err == nil || err.Error() != `session: id prefix "aaaa" is ambiguous: aaaa1111, aaaa2222` {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := Find(cwd, "cccc"); err == nil || !strings.Contains(err.Error(), `no session "cccc"`) {
		t.Errorf("missing: %v", err)
	}
	if _, err := Find(cwd, ""); err == nil {
		t.Error("empty id accepted")
	}

	// Paths: absolute, relative to cwd, and a missing one.
	abs := filepath.Join(dir, files["bbbb"])
	if p, err := Find(t.TempDir(), abs); err != nil || p != abs {
		t.Errorf("Find(abs) = %s, %v", p, err)
	}
	writeFile(t, filepath.Join(cwd, "mine.jsonl"), testHeader+"\n")
	if p, err := Find(cwd, "mine.jsonl"); err != nil || p != filepath.Join(cwd, "mine.jsonl") {
		t.Errorf("Find(rel) = %s, %v", p, err)
	}
	if _, err := Find(cwd, "./nope.jsonl"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Find(missing path) = %v", err)
	}
	if _, err := Find(cwd, dir+"/"); err == nil {
		t.Error("Find accepted a directory")
	}
}

func TestCreateInUniqueNames(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for range 20 {
		s, err := CreateIn(dir, "/x")
		if err != nil {
			t.Fatal(err)
		}
		if seen[s.Path()] || seen[s.ID()] {
			t.Fatalf("duplicate %s", s.Path())
		}
		seen[s.Path()], seen[s.ID()] = true, true
		s.Close()
	}
}

// Concurrent appends from several goroutines never interleave within a line.
func TestAppendConcurrent(t *testing.T) {
	s, err := CreateIn(t.TempDir(), "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := strings.Repeat("x", 20_000) // well beyond PIPE_BUF and a page
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if err := s.Append(&UserMessage{Text: big, Timestamp: int64(g*100 + i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	sess, errs, err := Load(s.Path())
	if err != nil || len(errs) != 0 || len(sess.Messages) != 80 {
		t.Fatalf("loaded %d messages, errors %v %v", len(sess.Messages), errs, err)
	}
}
