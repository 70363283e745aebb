package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"agentsh/internal/fsview"
)

// BenchmarkConfine is the ruleset's cost at each shell start (rules/op is
// its size): "home" denies the default folders of the real HOME
// (only those that exist are walked to); "tmp-home" a .ssh in a HOME made
// in the temp directory, so the walk lists every entry of / and of the temp
// directory.
func BenchmarkConfine(b *testing.B) {
	if Detect().Landlock == 0 {
		b.Skip("no Landlock")
	}
	home, _ := os.UserHomeDir()
	var deny []string
	for _, d := range []string{".ssh", ".gnupg", ".aws", ".config/gcloud", ".config/agentsh", ".local/share/agentsh"} {
		deny = append(deny, filepath.Join(home, d))
	}
	tmpHome := b.TempDir()
	if err := os.Mkdir(filepath.Join(tmpHome, ".ssh"), 0o700); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		deny []string
	}{{"home", deny}, {"tmp-home", []string{filepath.Join(tmpHome, ".ssh")}}} {
		b.Run(c.name, func(b *testing.B) {
			p := &Policy{Mode: WorkspaceWrite, Workdir: b.TempDir(), DenyRead: c.deny}
			for b.Loop() {
				conf, err := p.Confine()
				if err != nil {
					b.Fatal(err)
				}
				conf.Close()
			}
			w := append([]string{p.Workdir, os.TempDir(), "/tmp", "/dev/shm"}, cacheDirs()...)
			b.ReportMetric(float64(len(plan(resolve(c.deny), resolve(w), resolve(devices)))), "rules/op")
		})
	}
}

// BenchmarkViewApply is the mount view's cost in the guardian: a fresh
// mount namespace built on a throwaway locked thread (as root in the
// initial user namespace; the guardian does it in its own), ops/op its
// size. Its planning is part of BenchmarkConfine.
func BenchmarkViewApply(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs CAP_SYS_ADMIN")
	}
	p := &Policy{Mode: WorkspaceWrite, Workdir: b.TempDir(), DenyRead: []string{filepath.Join(b.TempDir(), "secret")}}
	_ = os.Mkdir(p.DenyRead[0], 0o700)
	v := p.View([]string{b.TempDir()}, nil)
	for b.Loop() {
		done := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with its view
			done <- fsview.Apply(v)
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(v)), "ops/op")
}
