package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// otherProcess runs a shell command in dir as another process would:
// a real write, by a real program, between the edit's read and its rename.
func otherProcess(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", script, err, out)
	}
}

// An edit must not overwrite a change another process made after the edit
// read the file: it fails with a clear error, the other process's change
// stays, and no temp file is left.
func TestEditDoesNotOverwriteAConcurrentChange(t *testing.T) {
	for _, c := range []struct {
		name, script string
		wantErr      bool
		file         string // f.txt afterwards; "" = gone
	}{
		{"appended", `printf 'their line\n' >> f.txt`, true, "a\nb\ntheir line\n"},
		{"rewritten in place, same size", `printf 'a\nc\n' > f.txt`, true, "a\nc\n"},
		{"replaced by rename", `printf 'theirs\n' > .new && mv .new f.txt`, true, "theirs\n"},
		{"deleted", `rm f.txt`, true, ""},
		// Touched or rewritten with the same bytes: nothing would be lost.
		{"touched", `touch -d '2001-01-01' f.txt`, false, "a\nB\n"},
		{"same content rewritten", `printf 'a\nb\n' > f.txt`, false, "a\nB\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(p, []byte("a\nb\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ran := false
			testHookBeforeRename = func(string) error {
				otherProcess(t, dir, c.script)
				ran = true
				return nil
			}
			t.Cleanup(func() { testHookBeforeRename = nil })
			res := call(t, NewEdit(envAt(dir)), map[string]any{"path": "f.txt", "oldText": "b", "newText": "B"})
			testHookBeforeRename = nil
			if !ran {
				t.Fatal("the other process did not run")
			}
			if c.wantErr {
				checkResult(t, c.name, res, "File changed on disk while editing: f.txt. Read it again and retry.", true)
			} else if res.IsError || !strings.HasPrefix(res.Content, "Replaced 1 occurrence in f.txt.") {
				t.Errorf("result %+v, want the edit to succeed", res)
			}
			got, err := os.ReadFile(p)
			switch {
			case c.file == "" && !os.IsNotExist(err):
				t.Errorf("the deleted file came back: %q %v", got, err)
			case c.file != "" && string(got) != c.file:
				t.Errorf("file = %q (%v), want %q", got, err, c.file)
			}
			for _, name := range listDir(t, dir) {
				if name != "f.txt" {
					t.Errorf("left behind: %s", name)
				}
			}
		})
	}
}
