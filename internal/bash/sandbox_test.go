package bash

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentsh/internal/jobs"
	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
	"agentsh/internal/testkit"
)

// sandboxEnv is a confined shell's world: a temporary HOME with a fake
// key and files outside every writable path, a project folder to work in,
// and the policy the model's shells would get.
type sandboxEnv struct {
	home, work string
	policy     *sandbox.Policy
}

// needSandbox skips when the kernel cannot confine: the product then says
// the sandbox is weaker (TestDescribe), and these tests have nothing to
// check.
func needSandbox(t testing.TB, namespaces bool) {
	t.Helper()
	f := sandbox.Detect()
	if f.Landlock == 0 {
		t.Skip("no Landlock in this kernel: " + f.Describe(&sandbox.Policy{Mode: sandbox.WorkspaceWrite}))
	}
	if namespaces && !f.Namespaces {
		t.Skipf("no user and network namespaces: %v", f.NamespacesErr)
	}
}

// newSandboxEnv makes the folders. HOME cannot live in the temp directory,
// which a workspace may write: it is made outside it (proctest.OutsideDir).
// GOCACHE keeps pointing at the real build cache, so `go build` inside
// stays incremental (and proves the cache writable).
func newSandboxEnv(t testing.TB, mode sandbox.Mode) *sandboxEnv {
	t.Helper()
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		t.Setenv("GOCACHE", strings.TrimSpace(string(out)))
	}
	home := proctest.OutsideDir(t, ".sandbox-home-")
	for name, body := range map[string]string{
		".ssh/id_rsa":  "FAKE PRIVATE KEY\n",
		"keep":         "kept\n",
		"readable.txt": "readable outside\n",
	} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	work := t.TempDir()
	return &sandboxEnv{home: home, work: work, policy: &sandbox.Policy{
		Mode: mode, Workdir: work, DenyRead: []string{filepath.Join(home, ".ssh")}}}
}

func (s *sandboxEnv) opts(t testing.TB) RunOptions {
	sh := testShell(t)
	sh.Sandbox = s.policy
	return RunOptions{Shell: sh, Cwd: s.work}
}

// refusals are what a user reads when the sandbox refuses: Landlock's
// EACCES, the mount view's read-only tree, and a masked (empty) folder.
var refusals = []string{"Permission denied", "Read-only file system", "No such file or directory"}

// refused reports whether out says the sandbox refused.
func refused(out string) bool {
	for _, w := range refusals {
		if strings.Contains(out, w) {
			return true
		}
	}
	return false
}

// denied checks that cmd failed as the sandbox refuses (refusals) and that
// path (if any) is unchanged: missing when it was missing, or still holding
// was.
func denied(t *testing.T, r BashResult, cmd, path, was string) {
	t.Helper()
	if r.ExitCode == nil || *r.ExitCode == 0 || !refused(r.Output) {
		t.Errorf("%s: want a refusal, got %q (exit %v)", cmd, r.Output, code(r))
	}
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	switch {
	case was == "" && err == nil:
		t.Errorf("%s: %s was written: %q", cmd, path, b)
	case was != "" && string(b) != was:
		t.Errorf("%s: %s changed: %q, %v", cmd, path, b, err)
	}
}

// TestSandboxWorkspaceWrite: the workdir and /tmp take writes; /etc, HOME
// and a denied key do not, with the message a user knows; reading
// elsewhere works; the shell persists its exports and functions inside.
func TestSandboxWorkspaceWrite(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	o := s.opts(t)

	r := run(t, e, `echo inside > f && cat f && t=$(mktemp /tmp/sbx.XXXXXX) && echo tmp > "$t" && cat "$t" && rm "$t"`, o)
	expect(t, r, "inside\ntmp\n", "0")

	etc := "/etc/agentsh-sandbox-" + randomHex(4)
	denied(t, run(t, e, "touch "+etc, o), "touch /etc", etc, "")
	denied(t, run(t, e, `echo x > "$HOME/outside"`, o), "echo > ~/outside", filepath.Join(s.home, "outside"), "")
	denied(t, run(t, e, `rm "$HOME/keep"`, o), "rm ~/keep", filepath.Join(s.home, "keep"), "kept\n")
	r = run(t, e, `cat "$HOME/.ssh/id_rsa"`, o)
	denied(t, r, "cat ~/.ssh/id_rsa", "", "")
	if strings.Contains(r.Output, "FAKE") {
		t.Errorf("the denied key was read: %q", r.Output)
	}
	expect(t, run(t, e, `cat "$HOME/readable.txt"`, o), "readable outside\n", "0")

	expect(t, run(t, e, `export SBX_A=persisted; sbxf() { echo "fn $1"; }; cd sub 2>/dev/null || mkdir sub && cd sub`, o), "", "0")
	o2 := o
	o2.Cwd = ""
	expect(t, run(t, e, `echo "$SBX_A"; sbxf ok; pwd`, o2), "persisted\nfn ok\n"+filepath.Join(s.work, "sub")+"\n", "0")
}

// TestSandboxNetworkOff: a listener the test holds on 127.0.0.1 is out of
// reach, while a server the sandbox starts itself on loopback works.
func TestSandboxNetworkOff(t *testing.T) {
	needSandbox(t, true)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	r := run(t, e, fmt.Sprintf(`exec 5<>/dev/tcp/127.0.0.1/%d && echo connected`, port), s.opts(t))
	if r.ExitCode == nil || *r.ExitCode == 0 || strings.Contains(r.Output, "connected") ||
		!strings.Contains(r.Output, "Connection refused") {
		t.Errorf("the outside listener was reachable or the error is unclear: %q (exit %s)", r.Output, code(r))
	}
	select {
	case <-accepted:
		t.Error("the outside listener accepted a connection from the sandbox")
	default:
	}
	if _, err := exec.LookPath("python3"); err == nil {
		r = run(t, e, `python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.send(b"lo up"); print(a.recv(5).decode())'`, s.opts(t))
		expect(t, r, "lo up\n", "0")
	}
	// In its own user namespace the sandbox cannot read agentsh's
	// environment (the provider keys) either.
	r = run(t, e, fmt.Sprintf(`cat /proc/%d/environ >/dev/null && echo readable || echo refused`, os.Getpid()), s.opts(t))
	if !strings.Contains(r.Output, "Permission denied") || !strings.HasSuffix(r.Output, "refused\n") {
		t.Errorf("agentsh's environment was readable from the sandbox: %q", r.Output)
	}
	// The twin: without the sandbox the same connection works.
	r = run(t, e, fmt.Sprintf(`exec 5<>/dev/tcp/127.0.0.1/%d && echo connected`, port), RunOptions{Cwd: s.work})
	expect(t, r, "connected\n", "0")
}

// TestSandboxNoEscape: what leaves the shell's session, environment or
// process tree stays confined, and so does a new user namespace: each
// attempt writes outside, and no write lands.
func TestSandboxNoEscape(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	attempts := map[string]string{
		"setsid -f":    `setsid -f sh -c 'echo x > "$1"; : > "$2"' sh %[1]q %[2]q`,
		"nohup":        `nohup sh -c 'echo x > "$1"; : > "$2"' sh %[1]q %[2]q >/dev/null 2>&1 &`,
		"double fork":  `( ( sh -c 'echo x > "$1"; : > "$2"' sh %[1]q %[2]q & ) & )`,
		"env -i":       `env -i /bin/sh -c 'echo x > "$1"; : > "$2"' sh %[1]q %[2]q`,
		"unshare -r":   `unshare -r sh -c 'echo x > "$1"' sh %[1]q; : > %[2]q`,
		"unshare -rn":  `unshare -rn sh -c 'echo x > "$1"' sh %[1]q; : > %[2]q`,
		"setsid+env-i": `env -i setsid -f /bin/sh -c 'echo x > "$1"; : > "$2"' sh %[1]q %[2]q`,
	}
	for name, script := range attempts {
		if tool := strings.Fields(name)[0]; tool != "double" && tool != "setsid+env-i" {
			if _, err := exec.LookPath(tool); err != nil {
				t.Logf("%s: not installed, skipped", tool)
				continue
			}
		}
		target := filepath.Join(s.home, "escaped-"+strings.NewReplacer(" ", "", "-", "", "+", "").Replace(name))
		done := filepath.Join(s.work, "done-"+filepath.Base(target))
		cmd := fmt.Sprintf(script, target, done) + fmt.Sprintf("\nfor i in $(seq 500); do [ -e %q ] && break; sleep 0.01; done; [ -e %[1]q ] && echo attempted", done)
		r := run(t, e, cmd, s.opts(t))
		if !strings.Contains(r.Output, "attempted") {
			t.Errorf("%s: the attempt never ran: %q", name, r.Output)
		}
		if b, err := os.ReadFile(target); err == nil {
			t.Errorf("%s: escaped the sandbox and wrote %s: %q", name, target, b)
		}
	}
}

// TestSandboxReadOnly: read-only refuses writes even in the workdir; the
// shell itself still runs and reads.
func TestSandboxReadOnly(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.ReadOnly)
	if err := os.WriteFile(filepath.Join(s.work, "in"), []byte("project file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newTestExecutor(t)
	denied(t, run(t, e, `echo x > new`, s.opts(t)), "echo > workdir/new", filepath.Join(s.work, "new"), "")
	denied(t, run(t, e, `t=$(mktemp /tmp/sbx.XXXXXX)`, s.opts(t)), "mktemp in /tmp", "", "")
	expect(t, run(t, e, `cat in; echo x >/dev/null; x=1; echo "$x"`, s.opts(t)), "project file\n1\n", "0")
}

// TestSandboxNilIsUnconfined: the twin shell (Sandbox nil, or Mode off)
// writes where the confined one cannot; they are different shells.
func TestSandboxNilIsUnconfined(t *testing.T) {
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	for i, p := range []*sandbox.Policy{nil, {Mode: sandbox.Off, Workdir: s.work}} {
		o := s.opts(t)
		o.Shell.Sandbox = p
		out := filepath.Join(s.home, fmt.Sprint("outside", i))
		expect(t, run(t, e, fmt.Sprintf("echo free > %q && cat %[1]q", out), o), "free\n", "0")
	}
}

// TestSandboxDeveloperTools: the everyday tools of a project work inside:
// git, an incremental go build (GOCACHE writable), python and make.
func TestSandboxDeveloperTools(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	files := map[string]string{
		"go.mod":    "module sbx\n\ngo 1.22\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built " + randomHex(4) + "\") }\n",
		"notes.txt": "notes\n",
		"Makefile":  "all:\n\t@echo made > made.txt\n\t@cat made.txt\n",
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(s.work, n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := s.opts(t)
	for _, c := range []struct{ tool, cmd, want string }{
		{"git", `git init -q . && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm one && echo x >> notes.txt && git status --short`, " M notes.txt\n"},
		{"go", `go build -o prog . && ./prog | cut -c1-5`, "built\n"},
		{"python3", `python3 -c 'print(1)'`, "1\n"},
		{"make", `make -s`, "made\n"},
	} {
		if _, err := exec.LookPath(c.tool); err != nil {
			t.Logf("%s: not installed, skipped", c.tool)
			continue
		}
		r := run(t, e, c.cmd, o)
		if r.ExitCode == nil || *r.ExitCode != 0 || r.Output != c.want {
			t.Errorf("%s: %q (exit %s), want %q", c.tool, r.Output, code(r), c.want)
		}
	}
}

// TestSandboxLeavesNothing: processes that left a confined shell's tree
// are ended when the run is cancelled and when the executor closes, as for
// an unconfined shell, with the guardian in its own namespaces.
func TestSandboxLeavesNothing(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := NewExecutor()
	defer e.Close()
	e.KillGrace = 20 * time.Millisecond
	tag := sleepTag()
	script := fmt.Sprintf(`env -i setsid -f sleep %[1]s; (sleep %[1]s &); nohup sleep %[1]s >/dev/null 2>&1 &
(unset %[2]s; setsid -f sleep %[1]s); sleep %[1]s`, tag, markerVar)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan BashResult, 1)
	go func() {
		r, _ := e.Run(ctx, script, s.opts(t))
		done <- r
	}()
	// done has room for the result: a run that ended early stops the wait.
	testkit.Eventually(t, hangGuard, "5 sleeps", func() (bool, string) {
		pids := proctest.WithArg(tag)
		return len(pids) >= 5 || len(done) > 0, fmt.Sprintf("sleeps %v", pids)
	})
	if len(done) > 0 {
		t.Fatalf("the run ended early: %+v", <-done)
	}
	cancel()
	select {
	case r := <-done:
		if !r.Cancelled {
			t.Errorf("not cancelled: %+v", r)
		}
	case <-time.After(hangGuard):
		t.Fatal("the cancelled run did not return (hang guard)")
	}
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("%d processes survived the cancel: %v", len(left), left)
	}

	tag = sleepTag()
	expect(t, run(t, e, fmt.Sprintf("env -i setsid -f sleep %[1]s; (sleep %[1]s &); echo ok", tag), s.opts(t)), "ok\n", "0")
	proctest.WaitWithArg(t, tag, 2)
	e.Close()
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Fatalf("%d processes survived the close: %v", len(left), left)
	}
}

// TestSandboxToolPaths: the bash tool confines the model's command on each
// of its paths, the engine, the PTY (`virtualTerminal: on`) and a
// background job, from the one policy in its settings.
func TestSandboxToolPaths(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	sh := testShell(t)
	sh.Sandbox = s.policy
	te := &toolEnv{tool: &Tool{Executor: newTestExecutor(t), Jobs: m},
		tc: ToolContext{Cwd: s.work, Settings: ToolSettings{Shell: sh}}}
	outside := func(path string) string {
		return fmt.Sprintf(`echo x > %q; echo "rc=$?"`, filepath.Join(s.home, path))
	}
	r := te.exec(t, ToolParams{Command: outside("engine")})
	if !refused(r.Content) || !strings.Contains(r.Content, "rc=1") {
		t.Errorf("engine: %q", r.Content)
	}
	pt := *te
	pt.tc.HasUI = true
	pt.tc.Settings.VirtualTerminal = "on"
	t.Setenv("AGENTSH_NO_PTY", "")
	r = pt.exec(t, ToolParams{Command: outside("pty")})
	if !refused(r.Content) || !strings.Contains(r.Content, "rc=1") {
		t.Errorf("pty: %q", r.Content)
	}
	te.exec(t, ToolParams{Command: outside("job"), Background: true})
	for _, j := range m.List() {
		select {
		case <-j.Done():
		case <-time.After(hangGuard):
			t.Fatal("the job did not end (hang guard)")
		}
	}
	for _, p := range []string{"engine", "pty", "job"} {
		if _, err := os.Stat(filepath.Join(s.home, p)); err == nil {
			t.Errorf("%s: wrote outside the sandbox", p)
		}
	}
	if len(m.List()) != 1 {
		t.Errorf("%d jobs started, want 1", len(m.List()))
	}
}

// TestSandboxStateStaysFromTheTwin: the state a confined model's run
// leaves (exports, functions) stays in the model's layer: the
// fresh unconfined shell that reruns a refused command outside the sandbox
// gets the user's state only, the session's directory included, and is
// not the model's shell.
func TestSandboxStateStaysFromTheTwin(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	st := NewSessionState(s.work)
	expect(t, run(t, e, "cd "+shellQuote(s.work)+" && mkdir -p sub && cd sub && export SBX_USER=user", RunOptions{SessionKey: "user", State: st, Capture: CaptureAll}), "", "0")
	in := s.opts(t)
	in.State, in.View, in.Capture, in.Cwd = st, ModelView, CaptureShell, st.Cwd()
	expect(t, run(t, e, `export SBX_TWIN=model && twinf() { echo twin-fn; }; { echo x > "$HOME/twin"; } 2>/dev/null || echo refused`, in), "refused\n", "0")
	out := in
	out.Shell.Sandbox, out.View, out.Capture, out.Fresh = nil, UserView, CaptureNone, true
	expect(t, run(t, e, `pwd; echo "$SBX_USER ${SBX_TWIN-unset} $(type -t twinf || echo nofunc)"; echo x > "$HOME/twin" && echo written`, out),
		filepath.Join(s.work, "sub")+"\nuser unset nofunc\nwritten\n", "0")
	// The model's next confined call still has its own.
	expect(t, run(t, e, `echo "$SBX_USER $SBX_TWIN"; twinf`, in), "user model\ntwin-fn\n", "0")
}

// TestSandboxNamespacesFailLater: when a shell cannot get its namespaces
// although the probe said it could (here the user namespace limit is set
// to 0 after the probe, inside a user namespace of the test's own), the
// shell still starts, confined by Landlock with TCP refused, and the status
// line now says the network is only partly blocked.
func TestSandboxNamespacesFailLater(t *testing.T) {
	if os.Getenv("AGENTSH_SANDBOX_NSLIMIT") == "1" {
		nsLimitChild(t)
		return
	}
	needSandbox(t, true)
	if sandbox.Detect().Landlock < 4 {
		t.Skip("needs Landlock network rules (ABI 4)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	runInUserNamespace(t, "TestSandboxNamespacesFailLater", "AGENTSH_SANDBOX_NSLIMIT=1", fmt.Sprintf("SBX_PORT=%d", ln.Addr().(*net.TCPAddr).Port))
}

// runInUserNamespace runs test again in this test binary, as root of a
// user namespace of its own (where it may lower the kernel's limits),
// with env added; it fails t unless the test passed there.
func runInUserNamespace(t *testing.T, test string, env ...string) {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "-Ur", self, "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("in a user namespace: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("in a user namespace: %v\n%s", err, out)
	}
}

func nsLimitChild(t *testing.T) {
	if !sandbox.Detect().Namespaces {
		t.Skipf("no nested namespaces: %v", sandbox.Detect().NamespacesErr)
	}
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0o644); err != nil {
		t.Skipf("cannot lower the namespace limit: %v", err)
	}
	e := newTestExecutor(t)
	r := run(t, e, fmt.Sprintf(`exec 5<>/dev/tcp/127.0.0.1/%s && echo connected; echo x > "$HOME/outside"`, os.Getenv("SBX_PORT")), s.opts(t))
	if strings.Contains(r.Output, "connected") || strings.Count(r.Output, "Permission denied") < 2 {
		t.Errorf("without namespaces the shell was not confined: %q", r.Output)
	}
	if d := sandbox.Detect().Describe(s.policy); !strings.Contains(d, "network: TCP blocked; UDP, MPTCP and unix open") {
		t.Errorf("the status does not say the network is only partly blocked: %q", d)
	}
}

// TestSandboxViewFailsLater: when the mount view cannot be made although
// user namespaces work (here the mount namespace limit is set to 0 inside
// a user namespace of the test's own), the shell still starts, confined by
// Landlock alone, and the status line now says there is no filesystem
// view.
func TestSandboxViewFailsLater(t *testing.T) {
	if os.Getenv("AGENTSH_SANDBOX_MNTLIMIT") == "1" {
		mntLimitChild(t)
		return
	}
	needSandbox(t, true)
	runInUserNamespace(t, "TestSandboxViewFailsLater", "AGENTSH_SANDBOX_MNTLIMIT=1")
}

func mntLimitChild(t *testing.T) {
	if !sandbox.Detect().Namespaces {
		t.Skipf("no nested namespaces: %v", sandbox.Detect().NamespacesErr)
	}
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	if d := sandbox.Detect().Describe(s.policy); strings.Contains(d, "no filesystem view") {
		t.Fatalf("the view is said to be missing before it failed: %q", d)
	}
	if err := os.WriteFile("/proc/sys/user/max_mnt_namespaces", []byte("0\n"), 0o644); err != nil {
		t.Skipf("cannot lower the mount namespace limit: %v", err)
	}
	e := newTestExecutor(t)
	r := run(t, e, `echo in > f && cat f; echo x > "$HOME/outside"; echo end`, s.opts(t))
	if !strings.HasPrefix(r.Output, "in\n") || !strings.Contains(r.Output, "outside: Permission denied\n") || !strings.HasSuffix(r.Output, "end\n") {
		t.Errorf("without the view the shell was not confined by Landlock: %q", r.Output)
	}
	if _, err := os.Stat(filepath.Join(s.home, "outside")); err == nil {
		t.Error("wrote outside")
	}
	if d := sandbox.Detect().Describe(s.policy); !strings.Contains(d, "no filesystem view (no user namespaces)") {
		t.Errorf("the status does not say the view is missing: %q", d)
	}
}

// TestSandboxAllowRead: a folder AllowRead names beneath a denied one (the
// session's artifacts in agentsh's data folder) is readable, its denied
// siblings are not.
func TestSandboxAllowRead(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	data := filepath.Join(s.home, ".local/share/agentsh")
	arts := filepath.Join(data, "sessions", "s1")
	for p, body := range map[string]string{filepath.Join(arts, "3.bash.log"): "full output\n",
		filepath.Join(data, "sessions", "s2", "0.bash.log"): "another session\n"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.policy.DenyRead = append(s.policy.DenyRead, data)
	s.policy.AllowRead = []string{arts}
	e := newTestExecutor(t)
	o := s.opts(t)
	expect(t, run(t, e, `cat "`+filepath.Join(arts, "3.bash.log")+`"`, o), "full output\n", "0")
	r := run(t, e, `cat "`+filepath.Join(data, "sessions", "s2", "0.bash.log")+`"`, o)
	denied(t, r, "cat another session's artifact", "", "")
	if strings.Contains(r.Output, "another session") {
		t.Errorf("a denied sibling was read: %q", r.Output)
	}
}

// TestSandboxOwnTemp: when the temp directory holds a denied folder (here
// a HOME in it, as in CI), the mount view masks the folder and the temp
// directory still takes new entries; without the view (no user
// namespaces) the shell gets a temp folder of its own instead: mktemp and
// new folders work there, the denied folder stays unreadable, the folder
// is not carried to an unconfined twin, and it is gone with the shell.
func TestSandboxOwnTemp(t *testing.T) {
	needSandbox(t, false)
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	denied := filepath.Join(t.TempDir(), "secret")
	if err := os.MkdirAll(denied, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(denied, "key"), []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.policy.DenyRead = append(s.policy.DenyRead, denied)
	if sandbox.Detect().Namespaces {
		if s.policy.NeedsOwnTemp() {
			t.Fatal("with the mount view the shell still gets a temp folder of its own")
		}
		e := newTestExecutor(t)
		tmp := os.TempDir()
		r := run(t, e, `d=$(mktemp -d "`+tmp+`/sbx.XXXXXX") && echo made > "$d/f" && cat "$d/f" && rm -r "$d" && echo "${TMPDIR:-unset}"; cat "`+filepath.Join(denied, "key")+`"`, s.opts(t))
		if !strings.HasPrefix(r.Output, "made\n"+os.Getenv("TMPDIR")) && !strings.HasPrefix(r.Output, "made\nunset\n") {
			t.Errorf("mktemp in the temp directory: %q", r.Output)
		}
		if strings.Contains(r.Output, "SECRET") || !strings.Contains(r.Output, "No such file or directory") {
			t.Errorf("the denied folder was read: %q", r.Output)
		}
		return
	}
	if !s.policy.NeedsOwnTemp() {
		t.Fatal("a denied folder in the temp directory needs no temp folder of its own")
	}
	e := newTestExecutor(t)
	st := NewSessionState(s.work)
	in := s.opts(t)
	in.State, in.Capture = st, CaptureAll
	r := run(t, e, `d=$(mktemp -d) && echo made > "$d/f" && cat "$d/f" && echo "$TMPDIR"`, in)
	lines := strings.Split(strings.TrimSpace(r.Output), "\n")
	if r.ExitCode == nil || *r.ExitCode != 0 || len(lines) != 2 || lines[0] != "made" {
		t.Fatalf("mktemp in the sandbox: %q (exit %v)", r.Output, code(r))
	}
	own := lines[1]
	if !strings.HasPrefix(own, os.TempDir()) || own == os.TempDir() {
		t.Errorf("TMPDIR %q is not a folder of its own in %s", own, os.TempDir())
	}
	denied2 := run(t, e, `cat "`+filepath.Join(denied, "key")+`"`, in)
	if strings.Contains(denied2.Output, "SECRET") {
		t.Errorf("the denied folder was read: %q", denied2.Output)
	}
	out := in
	out.Shell.Sandbox = nil
	if r := run(t, e, `echo "${TMPDIR:-unset}"`, out); strings.TrimSpace(r.Output) == own {
		t.Errorf("the sandbox's own temp folder reached the unconfined twin: %q", r.Output)
	}
	e.Close()
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the sandbox's temp folder outlived its shell: %v", err)
	}
}

// TestSandboxSharedNetwork: with the network off, the model's shells share
// one network namespace: a server a shell left running in the background
// is reachable from another shell (the next call, a fresh shell), while a
// listener of the host stays out of reach.
func TestSandboxSharedNetwork(t *testing.T) {
	needSandbox(t, true)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	s := newSandboxEnv(t, sandbox.WorkspaceWrite)
	e := newTestExecutor(t)
	a, b := s.opts(t), s.opts(t)
	a.SessionKey, b.SessionKey = "sbx-a", "sbx-b"
	serve := `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); c,_=s.accept(); c.send(b"hello across shells\n"); c.close()' > port.txt 2>/dev/null &
for i in $(seq 100); do [ -s port.txt ] && break; sleep 0.05; done; cat port.txt`
	r := run(t, e, serve, a)
	port := strings.TrimSpace(r.Output)
	if r.ExitCode == nil || *r.ExitCode != 0 || port == "" {
		t.Fatalf("the server did not start: %q", r.Output)
	}
	expect(t, run(t, e, `exec 3<>/dev/tcp/127.0.0.1/`+port+` && cat <&3`, b), "hello across shells\n", "0")
	// The shell that joined is confined like the one that made the
	// namespaces: no capability, nothing of the joining in its environment.
	expect(t, run(t, e, `grep -E '^Cap(Eff|Prm):' /proc/self/status | tr -s '\t ' ' '; env | grep -c AGENTSH_GUARD_`, b),
		"CapPrm: 0000000000000000\nCapEff: 0000000000000000\n0\n", "1")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hostPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	r = run(t, e, `exec 3<>/dev/tcp/127.0.0.1/`+hostPort+` && echo reached`, b)
	if strings.Contains(r.Output, "reached") {
		t.Errorf("the host's listener was reached from the shared namespace: %q", r.Output)
	}
}
