package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/targettest"
)

// The engine argv of podman:// and of the generic exec: form (as k8s://'s
// `kubectl exec -i` is, a stdio stream into the target) run a program in a
// real container: what it writes is the container's, not the host's, and
// the stream carries stdin both ways.
func TestPodmanTargets(t *testing.T) {
	name := targettest.Podman(t)
	host := filepath.Join("/tmp", "agentsh-target-probe-"+name)
	t.Cleanup(func() { os.Remove(host) })
	for _, uri := range []string{"podman://" + name, `exec:["podman","exec","-i","` + name + `"]`} {
		tg, err := Parse(uri)
		if err != nil {
			t.Fatal(err)
		}
		argv, err := tg.Command(nil, "bash", "-c", `read -r line; echo "$line from $(cat /proc/1/comm)" > `+host+`; cat `+host)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader("hello\n")
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "hello from sleep\n" {
			t.Fatalf("%s: %q: %q, %v", uri, argv, out, err)
		}
		if _, err := os.Stat(host); !os.IsNotExist(err) {
			t.Fatalf("%s: the file written on the target is on the host: %v", uri, err)
		}
	}
	// A container that does not exist: the engine's error names it.
	tg, _ := Parse("podman://agentsh-no-such-container")
	argv, _ := tg.Command(nil, "true")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "agentsh-no-such-container") {
		t.Fatalf("a missing container: %q, %v", out, err)
	}
}
