package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// listDir returns the names in dir, sorted: temp files would show here.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	sort.Strings(names)
	return names
}

func TestEdit(t *testing.T) {
	tests := []struct {
		name     string
		initial  string // content of f.txt before
		args     map[string]any
		want     string // Content
		wantErr  bool
		wantFile string // content of f.txt after
	}{
		{"single", "a\nb\nc\n", map[string]any{"oldText": "b", "newText": "B"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c", false, "a\nB\nc\n"},
		{"multi-line with context", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", map[string]any{"oldText": "4\n5\n", "newText": "four\n"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,8 +1,7 @@\n 1\n 2\n 3\n-4\n-5\n+four\n 6\n 7\n 8", false,
			"1\n2\n3\nfour\n6\n7\n8\n9\n"},
		{"not found", "a\nb\n", map[string]any{"oldText": "  b", "newText": "c"},
			"Could not find the text to replace in f.txt. oldText must match exactly, including whitespace and indentation; read the file again to check.",
			true, "a\nb\n"},
		{"many", "x\nx\nx\n", map[string]any{"oldText": "x", "newText": "y"},
			"Found 3 occurrences of the text in f.txt; add more context to make it unique or set replaceAll.", true, "x\nx\nx\n"},
		{"replaceAll", "x\nx\nx\n", map[string]any{"oldText": "x", "newText": "y", "replaceAll": true},
			"Replaced 3 occurrences in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-x\n-x\n-x\n+y\n+y\n+y", false, "y\ny\ny\n"},
		{"replaceAll of one", "x\n", map[string]any{"oldText": "x", "newText": "y", "replaceAll": true},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-x\n+y", false, "y\n"},
		{"crlf kept with lf needle", "a\r\nb\r\nc\r\n", map[string]any{"oldText": "a\nb\n", "newText": "A\nB\nB2\n"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n-a\n-b\n+A\n+B\n+B2\n c", false,
			"A\r\nB\r\nB2\r\nc\r\n"},
		{"crlf needle in lf file", "a\nb\n", map[string]any{"oldText": "a\r\nb", "newText": "x\r\ny"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n-b\n+x\n+y", false, "x\ny\n"},
		{"bom kept", "\uFEFFa\nb\n", map[string]any{"oldText": "a", "newText": "z"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+z\n b", false, "\uFEFFz\nb\n"},
		{"unicode", "héllo 世界\n", map[string]any{"oldText": "世界", "newText": "🙂"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-héllo 世界\n+héllo 🙂", false, "héllo 🙂\n"},
		{"delete", "keep\ndrop\n", map[string]any{"oldText": "drop\n", "newText": ""},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,1 @@\n keep\n-drop", false, "keep\n"},
		{"no final newline", "a\nb", map[string]any{"oldText": "b", "newText": "c"},
			"Replaced 1 occurrence in f.txt.\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file",
			false, "a\nc"},
		{"identical", "a\n", map[string]any{"oldText": "a", "newText": "a"},
			"oldText and newText are identical; nothing to change", true, "a\n"},
		{"empty oldText", "a\n", map[string]any{"oldText": "", "newText": "b"},
			"oldText must not be empty (use write to create or replace a whole file)", true, "a\n"},
		{"missing newText", "a\n", map[string]any{"oldText": "a"}, `Missing required argument "newText" for edit`, true, "a\n"},
		{"binary", "a\x00b", map[string]any{"oldText": "a", "newText": "b"}, "Cannot edit binary file: f.txt (contains NUL bytes)", true, "a\x00b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(p, []byte(tc.initial), 0o644); err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"path": "f.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			checkResult(t, tc.name, call(t, NewEdit(envAt(dir)), args), tc.want, tc.wantErr)
			if got := readString(t, p); got != tc.wantFile {
				t.Errorf("file = %q, want %q", got, tc.wantFile)
			}
			if names := listDir(t, dir); strings.Join(names, ",") != "f.txt" {
				t.Errorf("folder holds %v", names)
			}
		})
	}
}

func TestEditDetailsModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"sub/run.sh": "echo old\n"})
	p := filepath.Join(dir, "sub", "run.sh")
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/run.sh", filepath.Join(dir, "link.sh")); err != nil {
		t.Fatal(err)
	}
	res := call(t, NewEdit(envAt(dir)), map[string]any{"path": "link.sh", "oldText": "old", "newText": "new"})
	diff := "--- a/link.sh\n+++ b/link.sh\n@@ -1,1 +1,1 @@\n-echo old\n+echo new\n"
	checkResult(t, "via symlink", res, "Replaced 1 occurrence in link.sh.\n"+strings.TrimSuffix(diff, "\n"), false)
	var d EditDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d != (EditDetails{Diff: diff, Path: p, Replacements: 1}) {
		t.Errorf("details = %+v (%v)", d, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.sh")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.sh is no longer a symlink: %v %v", fi, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("mode = %v (%v), want 0751", fi.Mode(), err)
	}
	if got := readString(t, p); got != "echo new\n" {
		t.Errorf("target = %q", got)
	}

	// Outside the cwd the diff names the absolute path.
	other := filepath.Join(t.TempDir(), "o.txt")
	if err := os.WriteFile(other, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = call(t, NewEdit(envAt(dir)), map[string]any{"path": other, "oldText": "x", "newText": "y"})
	abs := filepath.ToSlash(other)
	checkResult(t, "outside cwd", res, "Replaced 1 occurrence in "+other+".\n--- "+abs+"\n+++ "+abs+"\n@@ -1,1 +1,1 @@\n-x\n+y", false)
}

func TestEditErrors(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"sub/": "", "f.txt": "a\n"})
	tool := NewEdit(envAt(dir))
	checkResult(t, "missing", call(t, tool, map[string]any{"path": "nope.txt", "oldText": "a", "newText": "b"}), "File not found: nope.txt", true)
	checkResult(t, "folder", call(t, tool, map[string]any{"path": "sub", "oldText": "a", "newText": "b"}), "Not a file: sub (it is a directory)", true)
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	checkResult(t, "symlink loop", call(t, tool, map[string]any{"path": "loop", "oldText": "a", "newText": "b"}),
		"Too many levels of symbolic links: loop", true)

	// A failure before the rename leaves the file and no temp file.
	testHookBeforeRename = func(string) error { return errors.New("disk full") }
	t.Cleanup(func() { testHookBeforeRename = nil })
	res := call(t, tool, map[string]any{"path": "f.txt", "oldText": "a", "newText": "b"})
	testHookBeforeRename = nil
	checkResult(t, "failed write", res, "f.txt: disk full", true)
	if got := readString(t, filepath.Join(dir, "f.txt")); got != "a\n" {
		t.Errorf("file = %q after a failed write", got)
	}
	if names := listDir(t, dir); strings.Join(names, ",") != "f.txt,loop,sub" {
		t.Errorf("folder holds %v", names)
	}
}

func TestEditPermissionDenied(t *testing.T) {
	skipIfRoot(t)
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"ro.txt": "a\n", "locked/f.txt": "a\n"})
	if err := os.Chmod(filepath.Join(dir, "ro.txt"), 0o444); err != nil {
		t.Fatal(err)
	}
	tool := NewEdit(envAt(dir))
	checkResult(t, "read-only file", call(t, tool, map[string]any{"path": "ro.txt", "oldText": "a", "newText": "b"}), "Permission denied: ro.txt", true)
	if got := readString(t, filepath.Join(dir, "ro.txt")); got != "a\n" {
		t.Errorf("read-only file changed: %q", got)
	}
	// A writable file in a folder we may not write: the temp file cannot be made.
	if err := os.Chmod(filepath.Join(dir, "locked"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	checkResult(t, "read-only folder", call(t, tool, map[string]any{"path": "locked/f.txt", "oldText": "a", "newText": "b"}),
		"Permission denied: locked/f.txt", true)
}

func TestEditConcurrent(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "k%d.\n", i)
	}
	mkTree(t, dir, map[string]string{"f.txt": b.String()})
	tool := NewEdit(envAt(dir))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := call(t, tool, map[string]any{"path": "f.txt", "oldText": fmt.Sprintf("k%d.", i), "newText": fmt.Sprintf("v%d.", i)}); res.IsError {
				t.Errorf("edit %d: %s", i, res.Content)
			}
		}()
	}
	wg.Wait()
	if got, want := readString(t, filepath.Join(dir, "f.txt")), strings.ReplaceAll(b.String(), "k", "v"); got != want {
		t.Errorf("lost updates:\n%s", got)
	}
}
