// Package targettest gives tests real targets to run on: a podman
// container built from a root folder of the host's own bash and coreutils
// (no image is pulled), on the runtime and cgroup manager that work on
// these machines (runc, cgroupfs). Imported only from tests.
package targettest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// containersConf is podman's configuration for the tests: runc and
// cgroupfs (crun and the systemd cgroup manager fail on these machines),
// no default ulimits, events to a file.
const containersConf = `[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`

// rootfsPrograms are copied into the container with their libraries.
var rootfsPrograms = []string{"bash", "sh", "cat", "env", "sleep", "ls", "head", "sha256sum", "rm", "mkdir"}

// libPath is a library path in ldd's output.
var libPath = regexp.MustCompile(`(/[^ \t]+) \(0x`)

// Podman starts a container that runs until the test ends and returns its
// name; the test is skipped, naming what is missing, without podman or runc.
// CONTAINERS_CONF points at the tests' configuration for the rest of the
// test (so the test cannot be parallel).
func Podman(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on this machine (make test installs it with apt-get as root)", tool)
		}
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(conf, []byte(containersConf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONTAINERS_CONF", conf)
	root := filepath.Join(dir, "rootfs")
	buildRootfs(t, root)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "agentsh-test-" + hex.EncodeToString(b)
	out, err := exec.Command("podman", "run", "-d", "--name", name, "--network", "none", "--rootfs", root,
		"/usr/bin/sleep", "100000").CombinedOutput()
	if err != nil {
		t.Fatalf("podman run: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("podman", "rm", "-f", "-t", "0", name).CombinedOutput(); err != nil {
			t.Errorf("podman rm %s: %v: %s", name, err, out)
		}
	})
	return name
}

// buildRootfs copies rootfsPrograms and the libraries ldd names for them
// into root, under the same paths.
func buildRootfs(t testing.TB, root string) {
	t.Helper()
	for _, d := range []string{"usr/bin", "tmp", "proc", "dev", "etc", "root"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("usr/bin", filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	for _, prog := range rootfsPrograms {
		path, err := exec.LookPath(prog)
		if err != nil {
			t.Fatalf("rootfs: %v", err)
		}
		copyFile(t, path, filepath.Join(root, "usr/bin", prog))
		// Every library and the loader: "name => /path (0x…)", "/path (0x…)".
		out, _ := exec.Command("ldd", path).Output() // a static program has none
		for _, m := range libPath.FindAllStringSubmatch(string(out), -1) {
			copyFile(t, m[1], filepath.Join(root, m[1]))
		}
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from) // through links: the file itself
	if err != nil {
		t.Fatalf("rootfs: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
