package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
)

var detected = sync.OnceValue(func() Features {
	f := Features{Supported: true, Landlock: landlockABI()}
	f.NamespacesErr = probeNamespaces()
	f.Namespaces = f.NamespacesErr == nil
	return f
})

// nsFailed is why namespaces failed after the probe said they work.
var nsFailed atomic.Pointer[error]

// Detect reports what the kernel offers; it is probed once per process
// (the namespace probe starts one short process), then amended by
// NamespacesFailed.
func Detect() Features {
	f := detected()
	if e := nsFailed.Load(); e != nil {
		f.Namespaces, f.NamespacesErr = false, *e
	}
	return f
}

// NamespacesFailed records that a shell could not be given its namespaces
// although Detect said it could (a limit reached, a policy changed): from
// now on Detect says they are unusable, so later shells take the fallback
// at once and the status line says the sandbox is weaker.
func NamespacesFailed(err error) { nsFailed.Store(&err) }

// probeNamespaces starts a trivial program in a new user and network
// namespace, as the guardian would be: sysctls (user.max_user_namespaces,
// Debian's unprivileged_userns_clone) and LSM rules (Ubuntu's AppArmor
// restriction) all show as a failure here.
func probeNamespaces() error {
	prog := ""
	for _, p := range []string{"/bin/true", "/usr/bin/true", "/bin/sh"} {
		if syscall.Access(p, 1 /* X_OK */) == nil {
			prog = p
			break
		}
	}
	if prog == "" {
		return errors.New("no program to probe with")
	}
	uid, gid := os.Getuid(), os.Getgid()
	pid, err := syscall.ForkExec(prog, []string{prog}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
	}})
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return fmt.Errorf("probe exited with %v", ws)
	}
	return nil
}

// Confine prepares p for one shell start: the Landlock ruleset (built
// again at each start, since rules hold the inodes that exist now) and
// whether the shell gets a network namespace of its own. extra are further
// writable paths the shell itself needs (its runtime folder). It returns
// nil when p confines nothing. The caller closes the result after the
// guardian has started.
func (p *Policy) Confine(extra ...string) (*Confinement, error) {
	return p.confine(Detect(), nil, extra)
}

// ConfineHiding is Confine with hidden folders masked in the mount view
// besides DenyRead (the engine's folder, guard.EngineBase); extra folders
// beneath them are bound back.
func (p *Policy) ConfineHiding(hidden []string, extra ...string) (*Confinement, error) {
	return p.confine(Detect(), hidden, extra)
}

// confine is Confine on the kernel features f.
func (p *Policy) confine(f Features, hidden, extra []string) (*Confinement, error) {
	if !p.Enabled() {
		return nil, nil
	}
	c := &Confinement{NewNetwork: !p.Network && f.Namespaces}
	if f.Namespaces {
		c.View = p.View(hidden, extra)
	}
	if f.Landlock == 0 {
		return c, nil
	}
	if c.View == nil {
		// Landlock only allows: a hidden folder inside a writable root
		// stays writable, and the engine's holds the scripts the user's
		// own shells source. Refused rather than confined short of it.
		for _, h := range hidden {
			hr, in := resolveLoose(h), ""
			for _, w := range resolve(p.writableRoots()) {
				if under(hr, w) && len(w) > len(in) {
					in = w
				}
			}
			if in != "" {
				return nil, fmt.Errorf("sandbox: the engine folder %s is inside the writable folder %s, which Landlock alone (no user namespaces) cannot keep it out of: set XDG_RUNTIME_DIR or XDG_DATA_HOME to a folder outside it", hr, in)
			}
		}
	}
	writable := append(append([]string(nil), extra...), p.writableRoots()...)
	var rules []rule
	if c.View != nil {
		// The view masks DenyRead: Landlock is the second layer for
		// writes, and its ptrace rule keeps /proc/<pid>/root of outside
		// processes (agentsh's, the guardian's) out of reach.
		rules = plan(nil, resolve(writable), resolve(devices))
	} else {
		rules = plan(resolve(p.DenyRead), resolve(writable), resolve(devices))
		// Rules add up: reading beneath a denied folder is given back
		// where AllowRead says (the session's own artifacts in agentsh's
		// data).
		for _, a := range resolve(p.AllowRead) {
			rules = append(rules, rule{a, fsRead})
		}
	}
	rs, err := buildRuleset(f.Landlock, rules, !p.Network && !c.NewNetwork)
	if err != nil {
		return nil, fmt.Errorf("sandbox ruleset: %w", err)
	}
	c.Ruleset = rs
	return c, nil
}

// devices are what every shell may open for writing and use ioctls on:
// the null devices, terminals (a job's `: </dev/pts/N`, `script`, python's
// pty) and the pty multiplexer.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// cacheDirs are the build caches a workspace may write: an incremental
// `go build` writes GOCACHE, and other tools keep theirs in the user's
// cache folder. It is made if missing, as the first build would.
func cacheDirs() []string {
	var dirs []string
	if d := os.Getenv("GOCACHE"); d != "" && d != "off" {
		dirs = append(dirs, d)
	}
	if d, err := os.UserCacheDir(); err == nil {
		if os.MkdirAll(d, 0o700) == nil {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// NeedsOwnTemp reports whether the temp directory holds a folder p denies
// (a HOME or agentsh's data folder under /tmp, as in CI): Landlock then
// splits the temp directory, so its existing entries stay writable but no
// new one can be made in it (`mktemp`, `go build`'s work folder). Such a
// shell gets a temp folder of its own (TMPDIR), made before it starts.
// Only without the mount view (no user namespaces): the view masks a
// denied folder without touching its parent.
func (p *Policy) NeedsOwnTemp() bool {
	if !p.Enabled() || p.Mode != WorkspaceWrite || Detect().Namespaces {
		return false
	}
	temps := resolve([]string{os.TempDir(), "/tmp"})
	for _, d := range resolve(p.DenyRead) {
		for _, t := range temps {
			if d != t && under(d, t) {
				return true
			}
		}
	}
	return false
}

// resolveLoose is path absolute, clean and free of symbolic links as far
// as it exists (a folder not made yet is where it will be made).
func resolveLoose(path string) string {
	a, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	rest := ""
	for d := a; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == "/" || d == "." {
			return a
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}
