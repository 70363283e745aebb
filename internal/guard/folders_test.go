package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"agentsh/internal/proc"
)

// TestRemoveStale: folders whose owner is dead (its pid is free, or now
// belongs to a process that started at another time) go; folders of living
// owners, foreign names and non-folders stay.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	const prefix = "agentsh-test-"
	mine, err := MkdirOwned(dir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := proc.Stat(os.Getpid())
	if want := prefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(self.Start, 10) + "-"; !strings.HasPrefix(filepath.Base(mine), want) {
		t.Fatalf("folder %s does not name its owner (%s…)", mine, want)
	}
	// A pid that certainly is free: a child that was waited for.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := c.Process.Pid
	if proc.Alive(dead) {
		t.Skip("the pid was reused at once")
	}
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "c"), []byte("last command"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deadOwner := mk(prefix + strconv.Itoa(dead) + "-12345-1")
	reused := mk(prefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(self.Start+1, 10) + "-2")
	foreign := mk("other-" + strconv.Itoa(dead) + "-12345-3")
	legacy := mk(prefix + "123456789") // no owner in the name: left alone
	file := filepath.Join(dir, prefix+strconv.Itoa(dead)+"-1-4")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n := RemoveStale(dir, prefix); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	for p, want := range map[string]bool{mine: true, deadOwner: false, reused: false, foreign: true, legacy: true, file: true} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
