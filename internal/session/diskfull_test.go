package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"agentsh/internal/disktest"
)

func readBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func removeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// loadAll loads p and fails on any bad line.
func loadAll(t *testing.T, p string) []Message {
	t.Helper()
	sess, errs, err := Load(p)
	if err != nil || len(errs) != 0 {
		t.Fatalf("Load: %v %v", errs, err)
	}
	return sess.Messages
}

// A full disk cuts an append short. The file must come back to exactly what
// it was, the next appends must work (on the space the failed one gave
// back, and after the disk is freed), and a resume must see every message
// whose append succeeded, none glued to a fragment.
func TestAppendOnFullDiskIsAllOrNothing(t *testing.T) {
	dir := disktest.Mount(t, 256<<10)
	s, err := CreateIn(dir, "/w")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one, two, three := &UserMessage{Text: "one"}, &UserMessage{Text: "two"}, &UserMessage{Text: "three"}
	if err := s.Append(one); err != nil {
		t.Fatal(err)
	}
	before := readBytes(t, s.Path())

	filler := disktest.Fill(t, dir, 8<<10)
	err = s.Append(&UserMessage{Text: strings.Repeat("x", 64<<10)})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append of 64 KB with 8 KB free: %v, want ENOSPC", err)
	}
	if after := readBytes(t, s.Path()); !bytes.Equal(after, before) {
		t.Fatalf("the failed append left %d bytes behind: …%q", len(after)-len(before), after[len(before):min(len(after), len(before)+80)])
	}
	// The space the failed line took is free again: a small one fits.
	if err := s.Append(two); err != nil {
		t.Fatalf("append after the failure: %v", err)
	}
	removeFile(t, filler)
	if err := s.Append(three); err != nil {
		t.Fatal(err)
	}
	if got := loadAll(t, s.Path()); !reflect.DeepEqual(got, []Message{one, two, three}) {
		t.Errorf("file holds %v", got)
	}

	// Resume, then fail and succeed again on the reopened file.
	s.Close()
	r, errs, err := Open(s.Path())
	if err != nil || len(errs) != 0 {
		t.Fatalf("Open: %v %v", errs, err)
	}
	defer r.Close()
	if !reflect.DeepEqual(r.LoadedMessages(), []Message{one, two, three}) {
		t.Errorf("resumed %v", r.LoadedMessages())
	}
	filler = disktest.Fill(t, dir, 4<<10)
	if err := r.Append(&UserMessage{Text: strings.Repeat("y", 32<<10)}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on the resumed file: %v, want ENOSPC", err)
	}
	removeFile(t, filler)
	four := &UserMessage{Text: "four"}
	if err := r.Append(four); err != nil {
		t.Fatal(err)
	}
	if got := loadAll(t, s.Path()); !reflect.DeepEqual(got, []Message{one, two, three, four}) {
		t.Errorf("file holds %v", got)
	}
}

// A crash left a partial last line and the disk is full: resuming must
// still work (nothing needs writing until the next message), a failed
// append must leave the file as it was, and the next message must start on
// its own line instead of being glued to the fragment.
func TestResumePartialLineOnFullDisk(t *testing.T) {
	dir := disktest.Mount(t, 256<<10)
	p := filepath.Join(dir, "s.jsonl")
	head := testHeader + "\n" + `{"type":"message","message":{"role":"user","text":"one"}}` + "\n"
	// The fragment ends the file at a page boundary, so that not even one
	// more byte fits once the disk is full.
	fragment := `{"type":"message","message":{"role":"user","text":"` + strings.Repeat("a", 8192-len(head)-51)
	writeFile(t, p, head+fragment)
	filler := disktest.Fill(t, dir, 0)
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err != nil {
		t.Fatal(err)
	} else if _, err := f.Write([]byte{'\n'}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the disk is not full: writing one byte gave %v", err)
	} else {
		f.Close()
	}

	s, errs, err := Open(p)
	if err != nil {
		t.Fatalf("Open on a full disk: %v", err)
	}
	defer s.Close()
	if len(errs) != 1 || errs[0].Line != 3 {
		t.Errorf("load errors %v, want the fragment on line 3", errs)
	}
	before := readBytes(t, p)
	if err := s.Append(&UserMessage{Text: strings.Repeat("z", 16<<10)}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v, want ENOSPC", err)
	}
	if after := readBytes(t, p); !bytes.Equal(after, before) {
		t.Fatalf("the failed append changed the file: %q", after[min(len(before), len(after)):min(len(after), len(before)+80)])
	}
	removeFile(t, filler)
	if err := s.Append(&UserMessage{Text: "two"}); err != nil {
		t.Fatal(err)
	}
	sess, errs, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || errs[0].Line != 3 {
		t.Errorf("load errors %v, want only the fragment on line 3", errs)
	}
	if want := []Message{&UserMessage{Text: "one"}, &UserMessage{Text: "two"}}; !reflect.DeepEqual(sess.Messages, want) {
		t.Errorf("messages %v, want %v", sess.Messages, want)
	}
	if lines := readLines(t, p); len(lines) != 4 || lines[2] != fragment {
		t.Errorf("lines %q", lines)
	}
}
