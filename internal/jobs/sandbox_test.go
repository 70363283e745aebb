package jobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/sandbox"
)

// TestSandboxedJob: a job started under a policy runs confined: a write
// outside its workdir fails, one inside works.
func TestSandboxedJob(t *testing.T) {
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	m := newManager(t)
	s := spec(t, `echo x > ../agentsh-job-outside; echo in > in.txt && cat in.txt; echo end`)
	outside := filepath.Join(filepath.Dir(s.Cwd), "agentsh-job-outside")
	s.Sandbox = &sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: s.Cwd}
	j := mustStart(t, m, s)
	out := readUntil(t, j, "end")
	refusal := "Permission denied"
	if sandbox.Detect().Namespaces {
		refusal = "Read-only file system" // the mount view
	}
	if !strings.Contains(out, "agentsh-job-outside: "+refusal) || !strings.Contains(out, "in.txt: "+refusal) {
		t.Errorf("read-only job wrote or failed unclearly: %q", out)
	}
	s2 := spec(t, `echo in > in.txt && cat in.txt; echo end`)
	s2.Sandbox = &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: s2.Cwd}
	out = readUntil(t, mustStart(t, m, s2), "end")
	if !strings.Contains(out, "in\r\nend") && !strings.Contains(out, "in\nend") {
		t.Errorf("workspace-write job could not write its workdir: %q", out)
	}
	for _, p := range []string{outside, filepath.Join(s.Cwd, "in.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the read-only job wrote %s", p)
		}
	}
}
