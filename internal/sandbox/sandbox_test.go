package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlan: Landlock only grants, so a denied folder is one no rule covers:
// its parents get READ_DIR alone, their other entries a rule each, a
// writable root above it is split the same way, and symbolic links get
// none (what they point to is checked where it lives).
func TestPlan(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.ssh", "home/proj", "home/.config/gcloud", "home/.config/other", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/.ssh/id_rsa", "home/.bashrc"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "home/.ssh"), filepath.Join(root, "home/keys")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	deny := resolve([]string{home + "/.ssh", home + "/.config/gcloud", home + "/missing"})
	writable := resolve([]string{home, root + "/elsewhere"})
	got := map[string]uint64{}
	for _, r := range plan(deny, writable, []string{"/dev/null"}) {
		got[r.path] |= r.access
	}
	want := map[string]uint64{
		"/":                     fsReadDir,
		root:                    fsReadDir,
		home:                    fsReadDir,
		home + "/.config":       fsReadDir,
		home + "/.config/other": fsRead | fsWrite,
		home + "/proj":          fsRead | fsWrite,
		home + "/.bashrc":       fsRead | fsWrite,
		root + "/elsewhere":     fsRead | fsWrite,
		"/dev/null":             fsDev,
	}
	for p, a := range want {
		if got[p] != a {
			t.Errorf("%s: access %#x, want %#x", p, got[p], a)
		}
	}
	for p := range got {
		for _, d := range append(deny, home+"/keys") {
			if under(p, d) {
				t.Errorf("a rule covers the denied or linked %s: %s", d, p)
			}
		}
	}
	if len(deny) != 2 {
		t.Errorf("a missing path was kept: %v", deny)
	}
	if r := plan(nil, nil, nil); len(r) != 1 || r[0] != (rule{"/", fsRead}) {
		t.Errorf("no deny: %v, want one read rule on /", r)
	}
}

// TestDescribe: the status line names the mode and network and says what
// the kernel cannot enforce; a sandbox is never off without saying so.
func TestDescribe(t *testing.T) {
	ww := &Policy{Mode: WorkspaceWrite, Workdir: "/w"}
	full := Features{Supported: true, Landlock: 7, Namespaces: true}
	for _, c := range []struct {
		f    Features
		p    *Policy
		want string
	}{
		{full, nil, "sandbox: off"},
		{full, &Policy{Mode: Off}, "sandbox: off"},
		{full, ww, "sandbox: workspace-write, network off"},
		{full, &Policy{Mode: ReadOnly, Network: true}, "sandbox: read-only, network on"},
		{Features{Supported: true, Landlock: 0, NamespacesErr: errors.New("EPERM")}, ww,
			"sandbox: workspace-write, network off; sandbox weaker: filesystem OFF (no Landlock, no user namespaces), network OPEN (no user namespaces, no Landlock network rules)"},
		{Features{Supported: true, Landlock: 0, Namespaces: true}, ww,
			"sandbox: workspace-write, network off; sandbox weaker: filesystem view escapable through /proc (no Landlock)"},
		{Features{Supported: true, Landlock: 4}, ww,
			"sandbox: workspace-write, network off; sandbox weaker: can signal outside processes (Landlock ABI 4), no filesystem view (no user namespaces): chmod and xattrs outside, .git and .agentsh writable, unix sockets reachable (ssh-agent, tmux, docker), network: TCP blocked; UDP, MPTCP and unix open (no user namespaces)"},
		{Features{Supported: true, Landlock: 2, Namespaces: true}, ww,
			"sandbox: workspace-write, network off; sandbox weaker: can signal outside processes (Landlock ABI 2)"},
		{Features{Supported: true, Landlock: 2}, &Policy{Mode: WorkspaceWrite, Network: true},
			"sandbox: workspace-write, network on; sandbox weaker: truncation of outside files not controlled (Landlock ABI 2), can signal outside processes (Landlock ABI 2), no filesystem view (no user namespaces): chmod and xattrs outside, .git and .agentsh writable, unix sockets reachable (ssh-agent, tmux, docker)"},
		{Features{}, ww, "sandbox: workspace-write, network off; sandbox weaker: sandbox OFF (not supported on linux)"},
	} {
		if got := c.f.Describe(c.p); got != c.want {
			t.Errorf("%+v %+v:\n got %q\nwant %q", c.f, c.p, got, c.want)
		}
	}
}

// TestDetect: this kernel's answer agrees with what the kernel publishes.
func TestDetect(t *testing.T) {
	f := Detect()
	if !f.Supported {
		t.Fatal("Linux reported as unsupported")
	}
	if lsm, err := os.ReadFile("/sys/kernel/security/lsm"); err == nil {
		if on := strings.Contains(string(lsm), "landlock"); on != (f.Landlock > 0) {
			t.Errorf("lsm list %q, but Landlock ABI %d", lsm, f.Landlock)
		}
	}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" && f.Namespaces {
		t.Error("user namespaces are disabled, yet detected as usable")
	}
	if f.Namespaces != (f.NamespacesErr == nil) {
		t.Errorf("Namespaces %v with error %v", f.Namespaces, f.NamespacesErr)
	}
	t.Log(f.Describe(&Policy{Mode: WorkspaceWrite}))
}
