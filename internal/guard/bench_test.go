package guard

import (
	"os/exec"
	"testing"
)

// BenchmarkStartTrue is a whole `true` under a guardian: start, exit
// status, Stop.
func BenchmarkStartTrue(b *testing.B) {
	for b.Loop() {
		p, err := Start(Cmd{Path: "/bin/true", Args: []string{"true"}})
		if err != nil {
			b.Fatal(err)
		}
		if code, _ := p.ExitCode(); code != 0 {
			b.Fatal(code)
		}
		p.Stop()
	}
}

// BenchmarkExecTrue is the baseline: `true` started by exec.Cmd.
func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
