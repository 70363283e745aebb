package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentsh/internal/confinedfs"
	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
)

// confinedSetup is a workspace outside the temp directory (a
// workspace-write sandbox may write the temp directory), a file next to
// it, and a fake HOME in the test's temp folder with a key in ~/.ssh,
// which the policy denies reading.
type confinedSetup struct {
	base, work, outside, home, key string
}

func newConfinedSetup(t *testing.T) confinedSetup {
	t.Helper()
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	if filepath.Clean(os.TempDir()) == "/var/tmp" {
		t.Skip("/var/tmp is the temp directory")
	}
	base, err := os.MkdirTemp("/var/tmp", "agentsh-confined-")
	if err != nil {
		t.Skipf("no folder outside the temp directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	s := confinedSetup{base: base, work: filepath.Join(base, "work"), outside: filepath.Join(base, "outside.txt")}
	mkTree(t, s.work, map[string]string{"main.go": "package main\n// TODO inside\n", "secret/token.txt": "TODO secret\n"})
	if err := os.WriteFile(s.outside, []byte("OUTSIDE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.home = filepath.Join(t.TempDir(), "home")
	s.key = filepath.Join(s.home, ".ssh", "id_rsa")
	mkTree(t, s.home, map[string]string{".ssh/id_rsa": "PRIVATE KEY\n"})
	t.Setenv("HOME", s.home)
	t.Cleanup(noHelperLeft(t))
	return s
}

// env is an Env at s.work whose calls run in the view of mode's policy,
// which denies reading ~/.ssh and, with denySecret, the workspace's
// secret/ (with Landlock alone that leaves the workspace's own folder
// without new entries: a denied path splits its parents).
func (s confinedSetup) env(mode sandbox.Mode, denySecret bool) Env {
	p := &sandbox.Policy{Mode: mode, Workdir: s.work, DenyRead: []string{filepath.Join(s.home, ".ssh")}}
	if denySecret {
		p.DenyRead = append(p.DenyRead, filepath.Join(s.work, "secret"))
	}
	if mode == sandbox.WorkspaceWrite {
		p.Writable = []string{os.TempDir()}
	}
	f := confinedfs.New(p)
	e := envAt(s.work)
	e.FS = func() FS { return f }
	return e
}

// noHelperLeft returns a cleanup that stops the helpers and checks that
// none of their processes is left.
func noHelperLeft(t *testing.T) func() {
	return func() {
		marks := confinedfs.Markers()
		confinedfs.StopAll()
		for _, m := range marks {
			if pids := proctest.Marked(m); len(pids) > 0 {
				t.Errorf("file helper processes left: %v", pids)
			}
		}
	}
}

func mustExist(t *testing.T, p, want string) {
	t.Helper()
	if got := readString(t, p); got != want {
		t.Errorf("%s holds %q, want %q", p, got, want)
	}
}

func mustNotExist(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s exists", p)
	}
}

// TestConfinedWorkspaceWrite: in workspace-write the file tools write in
// the workspace but not beside it (../outside.txt, an absolute path, a new
// file or through a symlink), and cannot read ~/.ssh (directly or through
// a symlink): the kernel refuses, the model reads "Permission denied".
func TestConfinedWorkspaceWrite(t *testing.T) {
	s := newConfinedSetup(t)
	env := s.env(sandbox.WorkspaceWrite, false)
	w, r, ed := NewWrite(env), NewRead(env), NewEdit(env)
	newOutside := filepath.Join(s.base, "new-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".txt")

	checkResult(t, "write inside", call(t, w, map[string]string{"path": "sub/in.txt", "content": "in\n"}),
		"Wrote 3 bytes (1 line) to sub/in.txt", false)
	mustExist(t, filepath.Join(s.work, "sub", "in.txt"), "in\n")

	checkResult(t, "write ../outside.txt", call(t, w, map[string]string{"path": "../outside.txt", "content": "pwned\n"}),
		"Permission denied: ../outside.txt", true)
	mustExist(t, s.outside, "OUTSIDE\n")
	checkResult(t, "write a new file outside", call(t, w, map[string]string{"path": newOutside, "content": "pwned\n"}),
		"Permission denied: "+newOutside, true)
	mustNotExist(t, newOutside)
	checkResult(t, "write a new folder outside", call(t, w, map[string]string{"path": "../newdir/x.txt", "content": "pwned\n"}),
		"Permission denied: ../newdir/x.txt (cannot create its folder)", true)
	mustNotExist(t, filepath.Join(s.base, "newdir"))
	checkResult(t, "edit ../outside.txt", call(t, ed, map[string]string{"path": "../outside.txt", "oldText": "OUTSIDE", "newText": "pwned"}),
		"Permission denied: ../outside.txt", true)
	mustExist(t, s.outside, "OUTSIDE\n")

	if err := os.Symlink(s.outside, filepath.Join(s.work, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.home, ".ssh"), filepath.Join(s.work, "keys")); err != nil {
		t.Fatal(err)
	}
	checkResult(t, "write through a symlink", call(t, w, map[string]string{"path": "link.txt", "content": "pwned\n"}),
		"Permission denied: link.txt", true)
	checkResult(t, "edit through a symlink", call(t, ed, map[string]string{"path": "link.txt", "oldText": "OUTSIDE", "newText": "pwned"}),
		"Permission denied: link.txt", true)
	mustExist(t, s.outside, "OUTSIDE\n")
	if _, err := os.Lstat(filepath.Join(s.work, "link.txt")); err != nil {
		t.Errorf("the symlink is gone: %v", err)
	}

	checkResult(t, "read ~/.ssh/id_rsa", call(t, r, map[string]string{"path": "~/.ssh/id_rsa"}),
		"Permission denied: ~/.ssh/id_rsa", true)
	checkResult(t, "read the key by its path", call(t, r, map[string]string{"path": s.key}),
		"Permission denied: "+s.key, true)
	checkResult(t, "read the key through a symlink", call(t, r, map[string]string{"path": "keys/id_rsa"}),
		"Permission denied: keys/id_rsa", true)
	checkResult(t, "read outside (allowed)", call(t, r, map[string]string{"path": "../outside.txt"}),
		"     1\tOUTSIDE", false)
}

// TestConfinedReadOnly: under read-only the tools read the workspace but
// neither write nor edit it.
func TestConfinedReadOnly(t *testing.T) {
	s := newConfinedSetup(t)
	env := s.env(sandbox.ReadOnly, false)
	checkResult(t, "read", call(t, NewRead(env), map[string]string{"path": "main.go"}),
		"     1\tpackage main\n     2\t// TODO inside", false)
	checkResult(t, "write", call(t, NewWrite(env), map[string]string{"path": "main.go", "content": "pwned\n"}),
		"Permission denied: main.go", true)
	checkResult(t, "write a new file", call(t, NewWrite(env), map[string]string{"path": "new.go", "content": "pwned\n"}),
		"Permission denied: new.go", true)
	checkResult(t, "edit", call(t, NewEdit(env), map[string]string{"path": "main.go", "oldText": "TODO", "newText": "DONE"}),
		"Permission denied: main.go", true)
	mustExist(t, filepath.Join(s.work, "main.go"), "package main\n// TODO inside\n")
	mustNotExist(t, filepath.Join(s.work, "new.go"))
	home := s.home + "/.bashrc"
	checkResult(t, "write ~/.bashrc", call(t, NewWrite(env), map[string]string{"path": "~/.bashrc", "content": "pwned\n"}),
		"Permission denied: ~/.bashrc", true)
	mustNotExist(t, home)
}

// TestConfinedSearch: grep, find and the @ completion's lister read no
// file of a folder the policy denies (in the workspace, and ~/.ssh); they
// list its names only where the kernel's view lets any program list them
// (Landlock alone does, a masked folder does not). The host's view, the
// sandbox off, finds everything.
func TestConfinedSearch(t *testing.T) {
	s := newConfinedSetup(t)
	env := s.env(sandbox.WorkspaceWrite, true)
	for _, g := range grepEngines(t, env) {
		checkResult(t, g.name+": grep", call(t, g.tool, map[string]any{"pattern": "TODO"}), "main.go:2:// TODO inside", false)
		checkResult(t, g.name+": grep the denied folder", call(t, g.tool, map[string]any{"pattern": "TODO", "path": "secret"}),
			"No matches found", false)
		checkResult(t, g.name+": grep the key", call(t, g.tool, map[string]any{"pattern": "KEY", "path": "~/.ssh/id_rsa"}),
			"Permission denied: ~/.ssh/id_rsa", true)
		checkResult(t, g.name+": grep ~/.ssh", call(t, g.tool, map[string]any{"pattern": "KEY", "path": "~/.ssh"}),
			"No matches found", false)
	}
	for _, g := range grepEngines(t, envAt(s.work)) {
		checkResult(t, g.name+": grep on the host", call(t, g.tool, map[string]any{"pattern": "TODO"}),
			"main.go:2:// TODO inside\nsecret/token.txt:1:TODO secret", false)
	}

	ents, err := env.FS().ReadDir(filepath.Join(s.work, "secret"))
	namesListable := err == nil && len(ents) > 0
	wantFind, wantList := "No files found matching pattern", "main.go"
	if namesListable {
		wantFind, wantList = "secret/token.txt", "main.go,secret/token.txt"
	}
	checkResult(t, "find", call(t, NewFind(env), map[string]any{"pattern": "**/*.txt"}), wantFind, false)
	files, _, err := ListFiles(context.Background(), env.FS(), s.work, 100)
	if err != nil || strings.Join(files, ",") != wantList {
		t.Errorf("ListFiles: %q, %v; want %s", files, err, wantList)
	}
	files, _, err = ListFiles(context.Background(), nil, s.work, 100)
	if err != nil || strings.Join(files, ",") != "main.go,secret/token.txt" {
		t.Errorf("ListFiles on the host: %q, %v", files, err)
	}
}

// TestConfinedOffIsHost: without a sandbox (Env.FS nil, or the host's)
// the tools write beside the workspace and read the key, as before.
func TestConfinedOffIsHost(t *testing.T) {
	s := newConfinedSetup(t)
	env := envAt(s.work)
	checkResult(t, "write ../outside.txt", call(t, NewWrite(env), map[string]string{"path": "../outside.txt", "content": "mine\n"}),
		"Wrote 5 bytes (1 line) to ../outside.txt", false)
	mustExist(t, s.outside, "mine\n")
	checkResult(t, "read ~/.ssh/id_rsa", call(t, NewRead(env), map[string]string{"path": "~/.ssh/id_rsa"}),
		"     1\tPRIVATE KEY", false)
	ctx := WithFS(context.Background(), HostFS)
	confined := s.env(sandbox.ReadOnly, false)
	if r := NewWrite(confined).Execute(ctx, []byte(`{"path":"main.go","content":"x\n"}`), nil); r.IsError {
		t.Errorf("WithFS(HostFS) did not lift the sandbox: %s", r.Content)
	}
}

// TestConfinedGrepMany: a search through the sandbox's helper opens the
// files of a folder in batches; every file of a big folder is searched,
// and a file the policy denies among them is skipped.
func TestConfinedGrepMany(t *testing.T) {
	s := newConfinedSetup(t)
	files := map[string]string{}
	var want []string
	for i := range 150 {
		name := fmt.Sprintf("many/f%03d.txt", i)
		files[name] = "hit\n"
		want = append(want, name+":1:hit")
	}
	mkTree(t, s.work, files)
	denied := filepath.Join(s.work, "many", "f007.txt")
	f := confinedfs.New(&sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: s.work, DenyRead: []string{denied}})
	env := envAt(s.work)
	env.FS = func() FS { return f }
	want = append(want[:7], want[8:]...)
	for _, g := range grepEngines(t, env) {
		checkResult(t, g.name, call(t, g.tool, map[string]any{"pattern": "hit", "path": "many", "limit": 1000}),
			strings.Join(want, "\n"), false)
	}
}

// grepEngines are the grep tool on env with the built-in walker and, when
// rg is installed, with ripgrep (in a sandbox's view: below a guardian
// with the view's sandbox). Each call checks that its engine ran.
func grepEngines(t *testing.T, env Env) []struct {
	name string
	tool Tool
} {
	t.Helper()
	walker := &grepTool{env: env, lookRg: func() (string, error) { return "", os.ErrNotExist }}
	out := []struct {
		name string
		tool Tool
	}{{"go", engineCheck{t, walker, "go"}}}
	if rg, err := exec.LookPath("rg"); err == nil {
		out = append(out, struct {
			name string
			tool Tool
		}{"ripgrep", engineCheck{t, &grepTool{env: env, lookRg: func() (string, error) { return rg, nil }}, "ripgrep"}})
	} else {
		t.Log("rg is not installed: only the walker is tested")
	}
	return out
}

// engineCheck is a grep tool whose results with matches must name engine
// (ripgrep that found nothing but met an unreadable file exits 2, and the
// walker then confirms there is nothing).
type engineCheck struct {
	t *testing.T
	Tool
	engine string
}

func (e engineCheck) Execute(ctx context.Context, raw json.RawMessage, up func(string)) Result {
	r := e.Tool.Execute(ctx, raw, up)
	var d GrepDetails
	if !r.IsError && r.Content != "No matches found" && (json.Unmarshal(r.Details, &d) != nil || d.Engine != e.engine) {
		e.t.Errorf("grep %s ran with engine %q, want %q", raw, d.Engine, e.engine)
	}
	return r
}
