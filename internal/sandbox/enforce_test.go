package sandbox_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/guard"
	"agentsh/internal/proctest"
	"agentsh/internal/pty"
	"agentsh/internal/sandbox"
)

// runConfined runs script with bash under a guardian confined by p and
// returns its output (stdout and stderr) and exit code.
func runConfined(t *testing.T, p *sandbox.Policy, dir, script string, args ...string) (string, int) {
	t.Helper()
	conf, err := p.Confine()
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	return runConfinedBy(t, conf, dir, script, args...)
}

// runConfinedBy runs script confined by conf (nil: unconfined).
func runConfinedBy(t *testing.T, conf *sandbox.Confinement, dir, script string, args ...string) (string, int) {
	t.Helper()
	var sb *guard.Sandbox
	if conf != nil {
		sb = &guard.Sandbox{Ruleset: conf.Ruleset, NewNetwork: conf.NewNetwork, View: conf.View, Unsetenv: sandbox.SocketEnv}
	}
	return runGuarded(t, sb, dir, script, args...)
}

// runGuarded runs script with bash under a guardian confined by sb.
func runGuarded(t *testing.T, sb *guard.Sandbox, dir, script string, args ...string) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bash := proctest.BashPath(t)
	proc, err := guard.Start(guard.Cmd{Path: bash, Args: append([]string{"bash", "-c", script, "bash"}, args...),
		Dir: dir, Files: []*os.File{nil, w, w}, Sandbox: sb, Grace: 50 * time.Millisecond})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	select {
	case s := <-out:
		code, _ := proc.ExitCode()
		return s, code
	case <-time.After(20 * time.Second):
		t.Fatal("the confined program did not end (hang guard)")
	}
	return "", 0
}

// TestWorkdirAboveDeniedFolder: with the session in HOME, the denied
// folder inside it stays unreadable while HOME's other folders take
// writes. With the mount view the denied folder is an empty read-only
// folder and HOME takes new entries; on the Landlock-only fallback (no
// user namespaces, forced here) HOME takes no new entries (a right on it
// would reach into the denied folder) and the denied folder's names stay
// listable: the documented edges of the ancestor walk.
func TestWorkdirAboveDeniedFolder(t *testing.T) {
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	wd, _ := os.Getwd()
	script := `echo w > proj/f && cat proj/f
cat .ssh/id_rsa
echo x > .ssh/authorized_keys
touch new && echo new
ls .ssh
echo end`
	run := func(f sandbox.Features) string {
		home, err := os.MkdirTemp(wd, ".sandbox-home-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(home)
		for _, d := range []string{".ssh", "proj"} {
			if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(home, ".ssh/id_rsa"), []byte("FAKE KEY\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: home, DenyRead: []string{filepath.Join(home, ".ssh")}}
		conf, err := sandbox.ConfineWith(p, f)
		if err != nil {
			t.Fatal(err)
		}
		defer conf.Close()
		out, code := runConfinedBy(t, conf, home, script)
		if code != 0 {
			t.Errorf("exit %d: %q", code, out)
		}
		return out
	}
	if f := sandbox.Detect(); f.Namespaces {
		want := "w\n" +
			"cat: .ssh/id_rsa: No such file or directory\n" +
			"bash: line 3: .ssh/authorized_keys: Read-only file system\n" +
			"new\nend\n"
		if got := run(f); got != want {
			t.Errorf("with the view: got %q, want %q", got, want)
		}
	}
	noNS := sandbox.Detect()
	noNS.Namespaces = false
	want := "w\n" +
		"cat: .ssh/id_rsa: Permission denied\n" +
		"bash: line 3: .ssh/authorized_keys: Permission denied\n" +
		"touch: cannot touch 'new': Permission denied\n" +
		"id_rsa\nend\n"
	if got := run(noNS); got != want {
		t.Errorf("Landlock only: got %q, want %q", got, want)
	}
}

// TestNetwork: network on leaves the host reachable (no namespace); off
// refuses the host's 127.0.0.1 with a new network namespace, and, on a
// kernel without usable user namespaces, with Landlock's TCP rules (ABI 4
// and later; forced here by hiding the namespaces from the policy).
func TestNetwork(t *testing.T) {
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	probe := fmt.Sprintf(`exec 5<>/dev/tcp/127.0.0.1/%d && echo connected`, port)
	on := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: t.TempDir(), Network: true}
	if out, code := runConfined(t, on, "", probe); out != "connected\n" || code != 0 {
		t.Errorf("network on: %q (exit %d)", out, code)
	}
	off := *on
	off.Network = false
	if sandbox.Detect().Namespaces {
		if out, code := runConfined(t, &off, "", probe); code == 0 || !strings.Contains(out, "Connection refused") {
			t.Errorf("network off: %q (exit %d)", out, code)
		}
	}
	if sandbox.Detect().Landlock >= 4 {
		noNS := sandbox.Detect()
		noNS.Namespaces = false
		conf, err := sandbox.ConfineWith(&off, noNS)
		if err != nil {
			t.Fatal(err)
		}
		defer conf.Close()
		if conf.NewNetwork {
			t.Fatal("a network namespace without namespaces")
		}
		if out, code := runConfinedBy(t, conf, "", probe); code == 0 || !strings.Contains(out, "Permission denied") {
			t.Errorf("network off, Landlock only: %q (exit %d)", out, code)
		}
	}
}

// TestNonRoot: the same confinement for a user who is not root, where
// bringing loopback up needs the ambient capability the guardian is given
// and no bounding set is dropped. The test binary runs itself as nobody.
func TestNonRoot(t *testing.T) {
	if os.Getenv("AGENTSH_SANDBOX_NONROOT") == "1" {
		nonRootChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to become another user")
	}
	f := sandbox.Detect()
	if f.Landlock == 0 || !f.Namespaces {
		t.Skip("needs Landlock and user namespaces: " + f.Describe(&sandbox.Policy{Mode: sandbox.WorkspaceWrite}))
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A folder nobody can enter, holding a copy of the test binary and a
	// project folder owned by nobody.
	dir, err := os.MkdirTemp("", "sandbox-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Outside every writable path, the temp directory included.
	outside := proctest.OutsideDir(t, ".sandbox-outside-")
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{work, outside} {
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The twin: unconfined, nobody can write there.
	if out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		"/bin/sh", "-c", `: > "$1/probe" && rm "$1/probe"`, "sh", outside).CombinedOutput(); err != nil {
		t.Skipf("nobody cannot reach %s even unconfined: %v %s", outside, err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^TestNonRoot$", "-test.v")
	cmd.Env = append(os.Environ(), "AGENTSH_SANDBOX_NONROOT=1", "LC_ALL=C", "HOME="+outside, "SBX_WORK="+work, "SBX_OUTSIDE="+outside,
		fmt.Sprintf("SBX_PORT=%d", ln.Addr().(*net.TCPAddr).Port), "GOCACHE=off", "XDG_CACHE_HOME="+filepath.Join(work, ".cache"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestNonRoot") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func nonRootChild(t *testing.T) {
	work, outside, port := os.Getenv("SBX_WORK"), os.Getenv("SBX_OUTSIDE"), os.Getenv("SBX_PORT")
	if os.Geteuid() == 0 {
		t.Fatal("still root")
	}
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	script := `echo in > in && cat in
echo x > "$1/x"
chmod 700 "$1"
echo '{}' > .agentsh/settings.json
exec 5<>/dev/tcp/127.0.0.1/$2 && echo connected
grep -E '^(NoNewPrivs|CapEff):' /proc/self/status`
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		script += `
/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
socket.create_connection(s.getsockname()); print("lo up")'`
	}
	out, _ := runConfined(t, p, work, script, outside, port)
	for _, want := range []string{"in\n", "/x: Read-only file system\n", "Connection refused", "NoNewPrivs:\t1\n", "CapEff:\t0000000000000000\n",
		"chmod: changing permissions of '" + outside + "': Read-only file system\n", ".agentsh/settings.json: Read-only file system\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "connected") {
		t.Errorf("reached the host's listener:\n%s", out)
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil && !strings.Contains(out, "lo up\n") {
		t.Errorf("loopback is not up inside:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("wrote outside")
	}
	// Through GuardSandbox, as the shells start: the second start joins
	// the first one's namespaces and builds its view there.
	var users []string
	for range 2 {
		out := runStarted(t, p, work, `echo x > "$1/y"; readlink /proc/self/ns/user`, outside)
		if !strings.HasPrefix(out, "bash: line 1: "+outside+"/y: Read-only file system\nuser:[") {
			t.Errorf("through GuardSandbox: %q", out)
		}
		users = append(users, out)
	}
	if users[0] != users[1] {
		t.Errorf("the second start did not join the first one's user namespace: %q", users)
	}
	// A folder above a denied one made unsearchable from inside, hiding
	// it from the next start's plan, is masked whole there.
	write(t, filepath.Join(work, "h/.ssh/key"), "KEY\n")
	dp := *p
	dp.DenyRead = []string{filepath.Join(work, "h/.ssh")}
	for i, script := range []string{`chmod 000 h && echo hidden`, `chmod 755 h; cat h/.ssh/key; echo end`} {
		out := runStarted(t, &dp, work, script)
		if i == 0 && out != "hidden\n" {
			t.Fatalf("chmod 000: %q", out)
		}
		if i == 1 && (strings.Contains(out, "KEY") || !strings.Contains(out, "chmod: changing permissions of 'h': Read-only file system\n")) {
			t.Errorf("an unsearchable folder above a denied one: %q", out)
		}
	}
	_ = os.Chmod(filepath.Join(work, "h"), 0o755)
	// A .git made unsearchable from inside, hiding its config from the
	// next start's plan, is protected whole there.
	if _, err := exec.LookPath("git"); err == nil {
		for i, script := range []string{`git init -q . && chmod 000 .git && echo hidden`,
			`chmod 755 .git; echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config; echo end`} {
			out := runStarted(t, p, work, script)
			if i == 0 && out != "hidden\n" {
				t.Fatalf("git init: %q", out)
			}
			if i == 1 && !strings.Contains(out, "chmod: changing permissions of '.git': Read-only file system\n") {
				t.Errorf("an unsearchable .git: %q", out)
			}
		}
		if err := os.Chmod(filepath.Join(work, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(work, ".git/config")); err != nil || strings.Contains(string(b), "fsmonitor") {
			t.Errorf(".git/config: %q, %v", b, err)
		}
	}
	// A folder the next shell starts in, made unsearchable from inside:
	// the sandbox keeps its namespaces and view (a failed chdir of the
	// guardian's exec read as namespaces refused, and the fallback
	// weakened that start and every later one to Landlock alone).
	cwd := filepath.Join(work, "cwd")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	out = runStarted(t, p, work, `chmod 000 cwd && echo locked`)
	if out != "locked\n" {
		t.Fatalf("chmod 000 cwd: %q", out)
	}
	out = runStarted(t, p, cwd, `echo x > "$1/z"; echo x > `+work+`/.agentsh/z`, outside)
	if want := "bash: line 1: " + outside + "/z: Read-only file system\nbash: line 1: " + work + "/.agentsh/z: Read-only file system\n"; out != want {
		t.Errorf("started in an unsearchable folder: %q, want %q", out, want)
	}
	_ = os.Chmod(cwd, 0o755)
	if f := sandbox.Detect(); !f.Namespaces {
		t.Errorf("after a start in an unsearchable folder the sandbox lost its namespaces: %v", f.NamespacesErr)
	}
}

// runStarted runs script in dir as a program the engine starts under p
// (pty.GuardSandbox: the view planned anew, as at each shell start).
func runStarted(t *testing.T, p *sandbox.Policy, dir, script string, args ...string) string {
	t.Helper()
	sb, err := pty.GuardSandbox(p)
	if err != nil {
		t.Fatal(err)
	}
	if sb.Ruleset != nil {
		defer sb.Ruleset.Close()
	}
	out, _ := runGuarded(t, sb, dir, script, args...)
	return out
}
