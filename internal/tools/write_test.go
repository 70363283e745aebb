package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		content string
		want    string
		details WriteDetails // Path relative to the folder
	}{
		{"new file", "new.txt", "hello\nworld\n", "Wrote 12 bytes (2 lines) to new.txt",
			WriteDetails{Path: "new.txt", Bytes: 12, Lines: 2, Created: true}},
		{"parents created", "a/b/c.txt", "x", "Wrote 1 byte (1 line) to a/b/c.txt",
			WriteDetails{Path: "a/b/c.txt", Bytes: 1, Lines: 1, Created: true}},
		{"empty", "e.txt", "", "Wrote 0 bytes (0 lines) to e.txt",
			WriteDetails{Path: "e.txt", Bytes: 0, Lines: 0, Created: true}},
		{"crlf as given", "crlf.txt", "a\r\nb", "Wrote 4 bytes (2 lines) to crlf.txt",
			WriteDetails{Path: "crlf.txt", Bytes: 4, Lines: 2, Created: true}},
		{"unicode", "u.txt", "世界\n", "Wrote 7 bytes (1 line) to u.txt",
			WriteDetails{Path: "u.txt", Bytes: 7, Lines: 1, Created: true}},
		{"overwrite", "old.txt", "new\n", "Wrote 4 bytes (1 line) to old.txt",
			WriteDetails{Path: "old.txt", Bytes: 4, Lines: 1, Created: false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mkTree(t, dir, map[string]string{"old.txt": "old content\n"})
			if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
				t.Fatal(err)
			}
			res := call(t, NewWrite(envAt(dir)), map[string]any{"path": tc.path, "content": tc.content})
			checkResult(t, tc.name, res, tc.want, false)
			full := filepath.Join(dir, filepath.FromSlash(tc.path))
			if got := readString(t, full); got != tc.content {
				t.Errorf("file = %q", got)
			}
			var d WriteDetails
			want := tc.details
			want.Path = full
			if err := json.Unmarshal(res.Details, &d); err != nil || d != want {
				t.Errorf("details = %+v (%v), want %+v", d, err, want)
			}
			wantMode := os.FileMode(0o644)
			if !tc.details.Created {
				wantMode = 0o600
			}
			if fi, err := os.Stat(full); err != nil || fi.Mode().Perm() != wantMode {
				t.Errorf("mode = %v (%v), want %v", fi.Mode(), err, wantMode)
			}
			// No temp file anywhere.
			_ = filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
				if err == nil && strings.Contains(de.Name(), ".tmp-") {
					t.Errorf("temp file left: %s", p)
				}
				return nil
			})
		})
	}
}

func TestWriteErrorsAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"sub/": "", "f.txt": "keep\n", "target.txt": "t\n"})
	for _, l := range [][2]string{{"target.txt", "link.txt"}, {"missing.txt", "dangling.txt"}, {"loop", "loop"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	tool := NewWrite(envAt(dir))
	for _, tc := range []struct {
		name, path, want string
	}{
		{"folder", "sub", "Not a file: sub (it is a directory)"},
		{"trailing slash", "new/", "Not a file: new/ (the path ends in /)"},
		{"parent is a file", "f.txt/x", "File not found: f.txt/x (a parent is not a directory)"},
		{"dangling symlink", "dangling.txt", "Cannot write dangling.txt: it is a symlink to a missing file"},
		{"symlink loop", "loop", "Too many levels of symbolic links: loop"},
		{"empty path", "", "path must not be empty"},
	} {
		checkResult(t, tc.name, call(t, tool, map[string]any{"path": tc.path, "content": "x"}), tc.want, true)
	}
	checkResult(t, "missing content", call(t, tool, map[string]any{"path": "x.txt"}), `Missing required argument "content" for write`, true)

	res := call(t, tool, map[string]any{"path": "link.txt", "content": "via link\n"})
	checkResult(t, "symlink", res, "Wrote 9 bytes (1 line) to link.txt", false)
	if fi, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink")
	}
	if got := readString(t, filepath.Join(dir, "target.txt")); got != "via link\n" {
		t.Errorf("target = %q", got)
	}

	// A failure before the rename leaves the old content and no temp file.
	testHookBeforeRename = func(string) error { return errors.New("disk full") }
	t.Cleanup(func() { testHookBeforeRename = nil })
	res = call(t, tool, map[string]any{"path": "f.txt", "content": "new\n"})
	testHookBeforeRename = nil
	checkResult(t, "failed write", res, "f.txt: disk full", true)
	if got := readString(t, filepath.Join(dir, "f.txt")); got != "keep\n" {
		t.Errorf("file = %q after a failed write", got)
	}
	if names := listDir(t, dir); strings.Join(names, ",") != "dangling.txt,f.txt,link.txt,loop,sub,target.txt" {
		t.Errorf("folder holds %v", names)
	}
}

func TestWriteHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	res := call(t, NewWrite(envAt(t.TempDir())), map[string]any{"path": "~/notes/n.md", "content": "# n\n"})
	checkResult(t, "home", res, "Wrote 4 bytes (1 line) to ~/notes/n.md", false)
	if got := readString(t, filepath.Join(home, "notes", "n.md")); got != "# n\n" {
		t.Errorf("file = %q", got)
	}
}

func TestWritePermissionDenied(t *testing.T) {
	skipIfRoot(t)
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"ro.txt": "old\n", "locked/": ""})
	if err := os.Chmod(filepath.Join(dir, "ro.txt"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	tool := NewWrite(envAt(dir))
	checkResult(t, "read-only file", call(t, tool, map[string]any{"path": "ro.txt", "content": "new"}), "Permission denied: ro.txt", true)
	if got := readString(t, filepath.Join(dir, "ro.txt")); got != "old\n" {
		t.Errorf("read-only file changed: %q", got)
	}
	checkResult(t, "read-only folder", call(t, tool, map[string]any{"path": "locked/x.txt", "content": "new"}), "Permission denied: locked/x.txt", true)
	checkResult(t, "cannot create folder", call(t, tool, map[string]any{"path": "locked/d/x.txt", "content": "new"}),
		"Permission denied: locked/d/x.txt (cannot create its folder)", true)
	if names := listDir(t, filepath.Join(dir, "locked")); len(names) != 0 {
		t.Errorf("locked holds %v", names)
	}
}
