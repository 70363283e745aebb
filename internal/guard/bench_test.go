package guard

import (
	"os/exec"
	"testing"

	"agentsh/internal/sandbox"
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

// BenchmarkStartTrueSandboxed is BenchmarkStartTrue with each part of a
// sandbox alone and together, the ruleset built once outside the loop (see
// internal/sandbox's BenchmarkConfine for its cost): where a confined
// shell's cold start goes.
func BenchmarkStartTrueSandboxed(b *testing.B) {
	conf, err := (&sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: b.TempDir()}).Confine()
	if err != nil || conf == nil || conf.Ruleset == nil {
		b.Skipf("no Landlock ruleset: %v", err)
	}
	defer conf.Close()
	for _, c := range []struct {
		name string
		sb   *Sandbox
	}{
		{"plain", nil},
		{"landlock", &Sandbox{Ruleset: conf.Ruleset}},
		{"netns", &Sandbox{NewNetwork: true}},
		{"both", &Sandbox{Ruleset: conf.Ruleset, NewNetwork: true}},
		// The mount view in a user namespace of its own
		// (network on), and with everything else (network off).
		{"view", &Sandbox{View: conf.View}},
		{"all", &Sandbox{Ruleset: conf.Ruleset, NewNetwork: true, View: conf.View}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.sb != nil && (c.sb.NewNetwork || c.sb.View != nil) && !sandbox.Detect().Namespaces {
				b.Skip("no user namespaces")
			}
			for b.Loop() {
				p, err := Start(Cmd{Path: "/bin/true", Args: []string{"true"}, Sandbox: c.sb})
				if err != nil {
					b.Fatal(err)
				}
				if code, _ := p.ExitCode(); code != 0 {
					b.Fatal(code)
				}
				p.Stop()
			}
		})
	}
}
