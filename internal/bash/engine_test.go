package bash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/guard"
	"agentsh/internal/sandbox"
)

// shellDirs lists the runtime folders of e's shells.
func shellDirs(e *Executor) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for s := range e.all {
		out = append(out, s.dir)
	}
	return out
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

// TestEngineFilesOutOfReach: the shells' runtime folders
// (command file, init, FIFOs) and the rc snapshot live in this process's
// 0700 engine folder, not in /dev/shm or the temp directory, outside every
// writable root of a sandbox; a confined command can neither rewrite the
// user's shell's command file nor the snapshot, and the user's shell runs
// on unharmed.
func TestEngineFilesOutOfReach(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	withRc := testShell(t)
	if err := os.WriteFile(filepath.Join(s.home, ".bashrc"), []byte("rcfn() { echo from-rc; }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withRc.SnapshotPath = snapshotWithGuard(t, withRc.Path)
	t.Cleanup(RemoveSnapshots)
	if withRc.SnapshotPath == "" {
		t.Fatal("no snapshot")
	}
	eu, em := newTestExecutor(t), newTestExecutor(t)
	expect(t, run(t, eu, "rcfn", RunOptions{Shell: withRc, SessionKey: "user"}), "from-rc\n", "0")
	o := s.opts(t)
	o.Shell.SnapshotPath = withRc.SnapshotPath
	expect(t, run(t, em, "rcfn", o), "from-rc\n", "0")

	engine, err := guard.EngineDir()
	if err != nil {
		t.Fatal(err)
	}
	// EngineBase as it was when this process first needed the folder
	// (an earlier test may have had another HOME).
	base := filepath.Dir(engine)
	if !strings.HasPrefix(filepath.Base(engine), "p-") || (filepath.Base(base) != "run" && filepath.Base(base) != "agentsh") {
		t.Fatalf("engine folder %s is not a process's folder under an EngineBase", engine)
	}
	dirs := append(shellDirs(eu), shellDirs(em)...)
	if len(dirs) != 2 {
		t.Fatalf("runtime folders %q", dirs)
	}
	writable := []string{s.work, os.TempDir(), "/tmp", "/dev/shm"}
	if c, err := os.UserCacheDir(); err == nil {
		writable = append(writable, c)
	}
	for _, p := range append(dirs, withRc.SnapshotPath) {
		if filepath.Dir(p) != engine {
			t.Errorf("%s is not in the engine folder %s", p, engine)
		}
		if within(p, "/dev/shm") {
			t.Errorf("%s is in /dev/shm", p)
		}
	}
	for _, d := range append(dirs, engine, base) {
		if m := mode(t, d); !m.IsDir() || m.Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a 0700 folder", d, m)
		}
	}
	if m := mode(t, withRc.SnapshotPath); m.Perm() != 0o600 {
		t.Errorf("snapshot mode %v", m)
	}
	for _, w := range writable {
		if within(engine, w) {
			// HOME (or the data folder) in the temp directory: Landlock
			// alone cannot keep a folder inside a writable root out; the
			// sandbox's mount view masks EngineBase.
			t.Skipf("the engine folder %s is inside the sandbox's writable %s: only the mount view keeps it out", engine, w)
		}
	}

	// The confined shell tries the user's shell's command file, a new
	// file in the engine folder and the snapshot.
	user := shellDirs(eu)[0]
	cmdFile := filepath.Join(user, "c")
	before, _ := os.ReadFile(cmdFile)
	snapBefore, _ := os.ReadFile(withRc.SnapshotPath)
	for _, cmd := range []string{
		"echo 'touch pwned' > " + shellQuote(cmdFile),
		"echo 'touch pwned' >> " + shellQuote(withRc.SnapshotPath),
		"echo x > " + shellQuote(filepath.Join(engine, "planted")),
	} {
		r := run(t, em, cmd, o)
		if r.ExitCode == nil || *r.ExitCode == 0 {
			t.Errorf("%s: exit %s, %q", cmd, code(r), r.Output)
		}
	}
	if after, _ := os.ReadFile(cmdFile); string(after) != string(before) {
		t.Errorf("command file changed: %q", after)
	}
	if after, _ := os.ReadFile(withRc.SnapshotPath); string(after) != string(snapBefore) {
		t.Errorf("snapshot changed: %q", after)
	}
	if _, err := os.Stat(filepath.Join(engine, "planted")); err == nil {
		t.Error("a confined command made a file in the engine folder")
	}
	expect(t, run(t, eu, "echo still; rcfn", RunOptions{Shell: withRc, SessionKey: "user"}), "still\nfrom-rc\n", "0")

	// Closing the shells removes their folders; CloseAll's last step
	// removes the engine folder.
	eu.Close()
	em.Close()
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s left after close", d)
		}
	}
}

// TestSnapshotTamperedIsNotSourced: a snapshot changed after
// agentsh took it (rewritten, made writable by others, replaced by a
// symlink) is never sourced: agentsh checks its hash, owner and mode
// before a shell sources it and takes it again.
func TestSnapshotTamperedIsNotSourced(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, snap, payload string)
	}{
		{"rewritten", func(t *testing.T, snap, payload string) {
			if err := os.WriteFile(snap, []byte(payload), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"appended", func(t *testing.T, snap, payload string) {
			f, err := os.OpenFile(snap, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(payload)
			f.Close()
		}},
		{"symlink", func(t *testing.T, snap, payload string) {
			other := filepath.Join(t.TempDir(), "evil.sh")
			if err := os.WriteFile(other, []byte(payload), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(snap)
			if err := os.Symlink(other, snap); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := withHome(t, "rcfn() { echo from-rc; }\n")
			sh := testShell(t)
			sh.SnapshotPath = snapshotWithGuard(t, sh.Path)
			if sh.SnapshotPath == "" {
				t.Fatal("no snapshot")
			}
			mark := filepath.Join(home, "pwned")
			c.tamper(t, sh.SnapshotPath, "touch "+shellQuote(mark)+"\nrcfn() { echo evil; }\n")
			e := newTestExecutor(t)
			expect(t, run(t, e, "rcfn", RunOptions{Shell: sh}), "from-rc\n", "0")
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("the tampered snapshot was sourced")
			}
			// Taken again, in place: a regular file of agentsh's.
			if m := mode(t, sh.SnapshotPath); !m.IsRegular() || m.Perm() != 0o600 {
				t.Errorf("snapshot after the check: %v", m)
			}
			if b, _ := os.ReadFile(sh.SnapshotPath); !strings.Contains(string(b), "echo from-rc") || strings.Contains(string(b), "pwned") {
				t.Errorf("snapshot after the check:\n%s", b)
			}
		})
	}
	t.Run("made writable", func(t *testing.T) {
		withHome(t, "rcfn() { echo from-rc; }\n")
		sh := testShell(t)
		sh.SnapshotPath = snapshotWithGuard(t, sh.Path)
		if err := os.Chmod(sh.SnapshotPath, 0o666); err != nil {
			t.Fatal(err)
		}
		expect(t, run(t, newTestExecutor(t), "rcfn", RunOptions{Shell: sh}), "from-rc\n", "0")
		if m := mode(t, sh.SnapshotPath); m.Perm() != 0o600 {
			t.Errorf("snapshot mode after the check: %v", m)
		}
	})
}
