package guard

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"agentsh/internal/fsview"
	"agentsh/internal/sandbox"
)

// TestSandboxConfinesOnlyTheProgram: the program runs with no_new_privs,
// an empty bounding set when root, no ruleset descriptor and a Landlock
// domain that refuses a write; the guardian's own threads stay free, so it
// still removes a cleanup folder the program could not touch, and it sits
// in its own network namespace when one is asked for.
func TestSandboxConfinesOnlyTheProgram(t *testing.T) {
	f := sandbox.Detect()
	if f.Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	keep := filepath.Join(t.TempDir(), "cleanup")
	if err := os.MkdirAll(keep, 0o700); err != nil {
		t.Fatal(err)
	}
	conf, err := (&sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: filepath.Dir(keep)}).Confine()
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	script := `echo x > "$1/f" 2>/dev/null; echo "write=$?"
grep -E '^(NoNewPrivs|CapBnd|CapEff|CapInh|CapAmb):' /proc/self/status
for f in /proc/$$/fd/*; do readlink "$f"; done
echo end; read x`
	p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", script, "bash", keep},
		Files: []*os.File{inR, outW, outW}, Cleanup: []string{keep},
		Sandbox: &Sandbox{Ruleset: conf.Ruleset, NewNetwork: conf.NewNetwork}})
	inR.Close()
	outW.Close()
	var out strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "end\n") {
		n, err := outR.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			t.Fatalf("the program's output ended early: %q, %v", out.String(), err)
		}
	}
	got := out.String()
	for _, want := range []string{"write=1\n", "NoNewPrivs:\t1\n", "CapAmb:\t0000000000000000\n", "CapInh:\t0000000000000000\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the program's state lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "landlock") {
		t.Errorf("the ruleset descriptor reached the program:\n%s", got)
	}
	if os.Geteuid() == 0 && !strings.Contains(got, "CapBnd:\t0000000000000000\n") {
		t.Errorf("a root program kept a bounding set:\n%s", got)
	}
	gpid := p.GuardianPid()
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(gpid) + "/task/*/status")
	if len(tasks) == 0 {
		t.Fatal("no guardian threads found")
	}
	for _, st := range tasks {
		b, err := os.ReadFile(st)
		if err == nil && !strings.Contains(string(b), "NoNewPrivs:\t0\n") {
			t.Errorf("guardian thread %s is confined:\n%s", st, b)
		}
	}
	if conf.NewNetwork {
		mine, _ := os.Readlink("/proc/self/ns/net")
		its, _ := os.Readlink("/proc/" + strconv.Itoa(p.Pid()) + "/ns/net")
		if mine == its || its == "" {
			t.Errorf("the program shares agentsh's network namespace (%q, %q)", mine, its)
		}
	}
	_, _ = io.WriteString(inW, "\n")
	exitOf(t, p)
	p.Stop()
	if _, err := os.Stat(keep); !os.IsNotExist(err) {
		t.Errorf("the guardian could not remove its cleanup folder: %v", err)
	}
}

// TestNetShare: guardians with one NsShare run their programs in one
// network namespace, not agentsh's, with no capability there, also the
// ones that joined it; a share whose namespaces cannot be joined is
// replaced by new ones, and the start still succeeds.
func TestNetShare(t *testing.T) {
	if !canJoin {
		t.Skip("built without cgo: no shared namespaces")
	}
	if f := sandbox.Detect(); !f.Namespaces {
		t.Skipf("no user and network namespaces: %v", f.NamespacesErr)
	}
	netOf := func(sh *NsShare) string {
		t.Helper()
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer outR.Close()
		p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", "readlink /proc/self/ns/net; grep ^CapEff: /proc/self/status"},
			Files: []*os.File{nil, outW, outW}, Sandbox: &Sandbox{NewNetwork: true, Share: sh}})
		outW.Close()
		b, _ := io.ReadAll(outR)
		if code, ok := exitOf(t, p); !ok || code != 0 {
			t.Fatalf("the program failed (%d): %q", code, b)
		}
		ns, caps, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		if caps != "CapEff:\t0000000000000000" {
			t.Errorf("the program in %s kept capabilities: %q", ns, caps)
		}
		return ns
	}
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	sh := &NsShare{}
	defer sh.Close()
	first, second := netOf(sh), netOf(sh)
	if first == own || first != second {
		t.Errorf("namespaces: agentsh %s, first program %s, second %s; want the programs in one of their own", own, first, second)
	}

	// A network namespace where a user namespace is expected: setns
	// refuses it (EINVAL).
	bad := &NsShare{}
	defer bad.Close()
	u, err := os.Open("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	n, err := os.Open("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	bad.user, bad.net = u, n
	if got := netOf(bad); got == own || got == first {
		t.Errorf("after a failed join the program is in %s (agentsh %s, the other share %s)", got, own, first)
	}
}

// TestNsShareView: with the network on, guardians with a view and one
// NsShare run their programs in one user namespace (not agentsh's) and in
// agentsh's network namespace, in a mount namespace not agentsh's.
func TestNsShareView(t *testing.T) {
	if !canJoin {
		t.Skip("built without cgo: no shared namespaces")
	}
	if f := sandbox.Detect(); !f.Namespaces {
		t.Skipf("no user namespaces: %v", f.NamespacesErr)
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nsOf := func(sh *NsShare) []string {
		t.Helper()
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer outR.Close()
		p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", "readlink /proc/self/ns/user /proc/self/ns/net /proc/self/ns/mnt"},
			Files: []*os.File{nil, outW, outW}, Sandbox: &Sandbox{View: fsview.View{{Kind: fsview.Bind, Path: tmp}}, Share: sh}})
		outW.Close()
		b, _ := io.ReadAll(outR)
		if code, ok := exitOf(t, p); !ok || code != 0 {
			t.Fatalf("the program failed (%d): %q", code, b)
		}
		return strings.Fields(string(b))
	}
	var own []string
	for _, ns := range []string{"user", "net", "mnt"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		own = append(own, l)
	}
	sh := &NsShare{}
	defer sh.Close()
	a, b := nsOf(sh), nsOf(sh)
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("namespaces: %q, %q", a, b)
	}
	if a[0] == own[0] || a[0] != b[0] {
		t.Errorf("user namespaces: agentsh %s, first %s, second %s; want one of their own, shared", own[0], a[0], b[0])
	}
	if a[1] != own[1] || b[1] != own[1] {
		t.Errorf("network namespaces: agentsh %s, programs %s %s; want agentsh's (network on)", own[1], a[1], b[1])
	}
	// (A freed namespace's number is used again: the two programs, one
	// after the other, may show the same.)
	if a[2] == own[2] || b[2] == own[2] {
		t.Errorf("mount namespaces: agentsh %s, programs %s %s; want their own", own[2], a[2], b[2])
	}
}

// TestSandboxedGetsOnlyItsFiles: a confined program holds its Files and
// nothing agentsh inherited without close-on-exec: a folder's descriptor
// from outside the view would let it open paths past the view (openat
// resolves from where the folder was opened).
func TestSandboxedGetsOnlyItsFiles(t *testing.T) {
	if f := sandbox.Detect(); !f.Namespaces {
		t.Skipf("no user namespaces: %v", f.NamespacesErr)
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, err := syscall.Open("/", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(root)
	// As a program that started agentsh may leave one open (at a number
	// above the guardian's own, so it reaches the guardian as it is).
	const leaked = 200
	if err := syscall.Dup3(root, leaked, 0); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leaked)
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	p := start(t, Cmd{Path: bashPath(t), Args: []string{"bash", "-c", "ls /proc/$$/fd; exit"},
		Files: []*os.File{nil, outW, outW}, Sandbox: &Sandbox{View: fsview.View{{Kind: fsview.Bind, Path: tmp}}}})
	outW.Close()
	b, _ := io.ReadAll(outR)
	if code, ok := exitOf(t, p); !ok || code != 0 {
		t.Fatalf("the program failed (%d): %q", code, b)
	}
	if string(b) != "0\n1\n2\n" {
		t.Errorf("the confined program holds descriptors %q, want 0, 1 and 2", b)
	}
}
