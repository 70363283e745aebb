package bash

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func withHome(t *testing.T, bashrc string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(bashrc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	RemoveSnapshots()
	t.Cleanup(RemoveSnapshots)
	return home
}

func snapshotWithGuard(t *testing.T, shell string) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() { ch <- GetOrCreateSnapshot(shell, nil) }()
	select {
	case p := <-ch:
		return p
	case <-time.After(hangGuard):
		t.Fatal("snapshot hung")
	}
	return ""
}

func TestSnapshotCarriesRcIntoRuns(t *testing.T) {
	home := withHome(t, `case $- in *i*) ;; *) return;; esac
alias ll='echo LL-ALIAS'
alias ls='ls --color=always'
myfn() { echo "MYFN $*"; }
_private() { :; }
shopt -s globstar
export PATH="$HOME/mybin:$PATH"
`)
	sh := testShell(t)
	snap := snapshotWithGuard(t, sh.Path)
	if snap == "" {
		t.Fatal("no snapshot")
	}
	sh.SnapshotPath = snap
	e := newTestExecutor(t)
	r := run(t, e, "ll; myfn a b; shopt globstar; echo \"$PATH\" | cut -d: -f1; type -t _private ls || true", RunOptions{Shell: sh})
	want := "LL-ALIAS\nMYFN a b\nglobstar       \ton\n" + home + "/mybin\nfile\n"
	if r.Output != want {
		t.Fatalf("got %q want %q", r.Output, want)
	}
	// Cached: the same file until it disappears.
	if again := GetOrCreateSnapshot(sh.Path, nil); again != snap {
		t.Fatalf("not cached: %s vs %s", again, snap)
	}
	os.Remove(snap)
	if again := GetOrCreateSnapshot(sh.Path, nil); again == snap || again == "" {
		t.Fatalf("not regenerated: %q", again)
	}
}

func TestSnapshotHangingOrFailingRc(t *testing.T) {
	for name, rc := range map[string]string{
		"hangs": "echo started >&2; sleep 100\n",
		"fails": "alias a=b\nexit 1\n",
		"junk":  "this is not bash (((\n",
	} {
		t.Run(name, func(t *testing.T) {
			withHome(t, rc)
			sh := testShell(t)
			sh.SnapshotPath = snapshotWithGuard(t, sh.Path)
			if name == "hangs" && sh.SnapshotPath != "" {
				t.Fatalf("a hanging rc produced a snapshot %s", sh.SnapshotPath)
			}
			e := newTestExecutor(t)
			expect(t, run(t, e, "echo works", RunOptions{Shell: sh}), "works\n", "0")
		})
	}
}

func TestSnapshotOnlyForBash(t *testing.T) {
	if p := GetOrCreateSnapshot("/bin/sh", nil); p != "" {
		t.Fatalf("snapshot for sh: %s", p)
	}
}

// A lazy snapshot is taken by the first run and carries the rc like an
// eager one.
func TestLazySnapshot(t *testing.T) {
	withHome(t, "myfn() { echo \"MYFN $*\"; }\n")
	sh := testShell(t)
	sh.SnapshotPath, sh.LazySnapshot = "", true
	e := newTestExecutor(t)
	r := run(t, e, "myfn lazy", RunOptions{Shell: sh})
	if r.Output != "MYFN lazy\n" {
		t.Fatalf("got %q", r.Output)
	}
}
