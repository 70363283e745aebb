package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/confinedfs"
	"agentsh/internal/sandbox"
)

// benchEnvs are the two ways a file tool runs: on the host (the sandbox
// off, and every file tool before the file tools were confined) and through the sandbox's
// helper under a workspace-write policy for dir.
func benchEnvs(b *testing.B, dir string) []struct {
	name string
	env  Env
} {
	b.Helper()
	if sandbox.Detect().Landlock == 0 {
		b.Skip("no Landlock in this kernel")
	}
	home, _ := os.UserHomeDir()
	f := confinedfs.New(&sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: dir,
		Writable: []string{os.TempDir()}, DenyRead: []string{filepath.Join(home, ".ssh")}})
	b.Cleanup(confinedfs.StopAll)
	confined := envAt(dir)
	confined.FS = func() FS { return f }
	if _, err := f.Stat(dir); err != nil { // the helper's start is not measured
		b.Fatal(err)
	}
	return []struct {
		name string
		env  Env
	}{{"host", envAt(dir)}, {"confined", confined}}
}

// BenchmarkReadBoundary reads a 1 MB file (the first 2000 lines shown, the
// rest counted) on the host and through the sandbox's helper.
func BenchmarkReadBoundary(b *testing.B) {
	dir := b.TempDir()
	line := strings.Repeat("x", 79) + "\n"
	body := strings.Repeat(line, (1<<20)/len(line))
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"path":"f.txt"}`)
	for _, e := range benchEnvs(b, dir) {
		b.Run(e.name, func(b *testing.B) {
			tool := NewRead(e.env)
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if r := tool.Execute(context.Background(), args, nil); r.IsError {
					b.Fatal(r.Content)
				}
			}
		})
	}
}

// BenchmarkEditBoundary edits one line of a 1 MB file (read, check,
// temp file, rename) on the host and through the sandbox's helper.
func BenchmarkEditBoundary(b *testing.B) {
	dir := b.TempDir()
	line := strings.Repeat("x", 79) + "\n"
	body := "MARK-A\n" + strings.Repeat(line, (1<<20)/len(line))
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	args := [2]json.RawMessage{
		json.RawMessage(`{"path":"f.txt","oldText":"MARK-A","newText":"MARK-B"}`),
		json.RawMessage(`{"path":"f.txt","oldText":"MARK-B","newText":"MARK-A"}`),
	}
	i := 0 // the file's state carries over from one run to the next
	for _, e := range benchEnvs(b, dir) {
		b.Run(e.name, func(b *testing.B) {
			tool := NewEdit(e.env)
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if r := tool.Execute(context.Background(), args[i%2], nil); r.IsError {
					b.Fatal(r.Content)
				}
				i++
			}
		})
	}
}

// BenchmarkGrepBoundary searches 3000 files in 30 folders with the
// built-in walker and (when installed) ripgrep, on the host and in the
// sandbox's view (the walker through the helper, ripgrep below a confined
// guardian).
func BenchmarkGrepBoundary(b *testing.B) {
	dir := b.TempDir()
	for d := range 30 {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			text := fmt.Sprintf("package d%02d\n\nfunc F%03d() int { return %d }\n", d, f, f)
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	args := json.RawMessage(`{"pattern":"return 42 }"}`)
	engines := []struct {
		name string
		look func() (string, error)
	}{{"walker", func() (string, error) { return "", os.ErrNotExist }}}
	if rg, err := exec.LookPath("rg"); err == nil {
		engines = append(engines, struct {
			name string
			look func() (string, error)
		}{"rg", func() (string, error) { return rg, nil }})
	}
	for _, e := range benchEnvs(b, dir) {
		for _, eng := range engines {
			b.Run(eng.name+"-"+e.name, func(b *testing.B) {
				tool := &grepTool{env: e.env, lookRg: eng.look}
				for b.Loop() {
					if r := tool.Execute(context.Background(), args, nil); r.IsError || strings.Count(r.Content, "\n") != 29 {
						b.Fatal(r.Content)
					}
				}
			})
		}
	}
}
