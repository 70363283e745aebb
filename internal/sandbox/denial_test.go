package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetectDenial feeds the classifier the messages programs print for a
// Landlock refusal, with paths of a real tree: a project
// (writable), an outside folder this process can write, a denied folder.
func TestDetectDenial(t *testing.T) {
	root := t.TempDir()
	work, outside, secret := filepath.Join(root, "work"), filepath.Join(root, "outside"), filepath.Join(root, "home", ".ssh")
	for _, d := range []string{work, outside, secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "id_rsa"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := &Policy{Mode: WorkspaceWrite, Workdir: work, Writable: []string{"/tmp-not-here"}, DenyRead: []string{secret}}
	out := filepath.Join(outside, "x")
	for _, c := range []struct {
		name, output, cwd string
		p                 *Policy
		kind              DenialKind
		path              string
	}{
		{"touch", "touch: cannot touch '" + out + "': Permission denied", work, ws, DeniedWrite, out},
		{"redirect", "bash: line 1: " + out + ": Permission denied", work, ws, DeniedWrite, out},
		{"mkdir", "mkdir: cannot create directory ‘" + out + "’: Permission denied", work, ws, DeniedWrite, out},
		{"python", "PermissionError: [Errno 13] Permission denied: '" + out + "'", work, ws, DeniedWrite, out},
		{"go", "open " + out + ": permission denied", work, ws, DeniedWrite, out},
		{"git", "fatal: Unable to create '" + filepath.Join(outside, ".git", "index.lock") + "': Permission denied", work, ws, "", ""}, // no .git: its parent cannot take the lock
		{"relative", "touch: cannot touch '../outside/x': Permission denied", work, ws, DeniedWrite, out},
		{"inside the project", "touch: cannot touch 'a': Permission denied", work, ws, "", ""},
		{"read-only mode", "touch: cannot touch 'a': Permission denied", work, &Policy{Mode: ReadOnly, Workdir: work}, DeniedWrite, filepath.Join(work, "a")},
		{"denyRead", "cat: " + filepath.Join(secret, "id_rsa") + ": Permission denied", work, ws, DeniedRead, filepath.Join(secret, "id_rsa")},
		{"no such parent", "touch: cannot touch '/nonexistent-agentsh/x': Permission denied", work, ws, "", ""},
		{"not a denial word", "touch: cannot touch '" + out + "': No such file or directory", work, ws, "", ""},
		{"off", "touch: cannot touch '" + out + "': Permission denied", work, &Policy{Mode: Off}, "", ""},
		{"nil", "touch: cannot touch '" + out + "': Permission denied", work, nil, "", ""},
		{"curl", "curl: (6) Could not resolve host: example.com", work, ws, DeniedNetwork, ""},
		{"go dial", "dial tcp 127.0.0.1:9: connect: connection refused", work, ws, DeniedNetwork, ""},
		{"network on", "curl: (6) Could not resolve host: example.com", work,
			&Policy{Mode: WorkspaceWrite, Workdir: work, Network: true}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := DetectDenial("some output\n"+c.output+"\n", c.cwd, c.p)
			if ok != (c.kind != "") || d.Kind != c.kind || d.Path != c.path {
				t.Fatalf("got %v %+v, want %q %q", ok, d, c.kind, c.path)
			}
			if ok && d.Line != c.output {
				t.Errorf("line %q, want %q", d.Line, c.output)
			}
		})
	}
}

// TestDetectDenialRealOutput runs real programs that fail with EACCES-like
// messages and classifies what they printed: touch in a missing folder is
// no denial, a refused write into a folder agentsh can write is.
func TestDetectDenialRealOutput(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Workdir: work}
	// A real "No such file" from touch: not the sandbox's.
	out, err := exec.Command("touch", filepath.Join(root, "missing", "x")).CombinedOutput()
	if err == nil {
		t.Fatal("touch in a missing folder succeeded")
	}
	if d, ok := DetectDenial(string(out), work, p); ok {
		t.Errorf("%q classified as %+v", out, d)
	}
	// bash's own message for a file it may not execute (a real EACCES,
	// also as root: no x bit) names a path outside the project that this
	// process may write: counted (the sandbox refuses in the same words).
	script := filepath.Join(root, "s.sh")
	if err := os.WriteFile(script, []byte("true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command("bash", "-c", script).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Fatalf("bash ran a file without x: %v %q", err, out)
	}
	d, ok := DetectDenial(string(out), work, p)
	if !ok || d.Kind != DeniedWrite || d.Path != script {
		t.Errorf("%q: got %v %+v", out, ok, d)
	}
	if want := "writing " + script + " (outside the sandbox's writable paths)"; d.Reason() != want {
		t.Errorf("reason %q, want %q", d.Reason(), want)
	}
}

// BenchmarkDetectDenial is the cost of looking at a failed sandboxed
// command's output: 200 lines, one of them a denial.
func BenchmarkDetectDenial(b *testing.B) {
	work := b.TempDir()
	p := &Policy{Mode: WorkspaceWrite, Workdir: work}
	out := strings.Repeat("building something long enough to be a line of output\n", 199) +
		"touch: cannot touch '" + filepath.Join(b.TempDir(), "x") + "': Permission denied\n"
	for b.Loop() {
		if _, ok := DetectDenial(out, work, p); !ok {
			b.Fatal("no denial")
		}
	}
}

// TestDetectDenialIn: a refusal on a relative path counts like an
// absolute one: a shell's redirection names the file without
// a slash, a command that changed directory printed its path from there
// (the first of dirs that gives a refusal), and ".." goes up from where
// the directory really is, as the kernel walks it.
func TestDetectDenialIn(t *testing.T) {
	root := t.TempDir()
	work, sub, real := filepath.Join(root, "work"), filepath.Join(root, "work", "sub"), filepath.Join(root, "real", "ws")
	for _, d := range []string{sub, real} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	ws := &Policy{Mode: WorkspaceWrite, Workdir: work}
	for _, c := range []struct {
		name, output string
		dirs         []string
		p            *Policy
		path         string
	}{
		{"redirect without a slash", "bash: line 2: f: Read-only file system", []string{work},
			&Policy{Mode: ReadOnly, Workdir: work}, filepath.Join(work, "f")},
		{"redirect up", "bash: line 1: ../f: Read-only file system", []string{work}, ws, filepath.Join(root, "f")},
		{"tee", "tee: ../f: Permission denied", []string{work}, ws, filepath.Join(root, "f")},
		{"after cd", "rm: cannot remove '../../f': Read-only file system", []string{sub, work}, ws, filepath.Join(root, "f")},
		{"inside from the first, outside from the second", "touch: cannot touch '../f': Read-only file system",
			[]string{sub, work}, ws, filepath.Join(root, "f")},
		{"symlinked folder", "touch: cannot touch '../f': Read-only file system", []string{link},
			&Policy{Mode: WorkspaceWrite, Workdir: link}, filepath.Join(root, "real", "f")},
		{"inside the project", "bash: line 1: f: Read-only file system", []string{work}, ws, ""},
		{"a word, not a path", "ls: cannot open directory: Permission denied", []string{work}, ws, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := DetectDenialIn("out\n"+c.output+"\n", c.dirs, c.p)
			if ok != (c.path != "") || d.Path != c.path {
				t.Fatalf("got %v %+v, want %q", ok, d, c.path)
			}
		})
	}
}
