// Package guard contains every process a shell starts, even when agentsh
// itself dies. Each shell and each PTY program runs below a guardian: the
// agentsh binary re-executed in a hidden mode (see guardian.go). The
// guardian leads a process group of its own, is a child subreaper (so every
// orphan of the tree, whatever it did to its session or environment, is
// reparented to it and stays its descendant), starts the real program with
// the descriptors it was given, reaps everything below it and reports the
// program's exit status on a pipe.
//
// A lifeline pipe, whose write end only agentsh holds, ties it to agentsh:
// EOF on it (agentsh closed it, exited, or was SIGKILLed or OOM-killed) makes
// the guardian end every descendant and every process carrying the
// session's environment marker, remove the cleanup paths and exit. Closing a
// session is the same: Stop closes the lifeline and waits, so there is one
// kill mechanism. If the guardian itself was killed, Stop falls back to a
// /proc sweep of the program's session (proc.KillSession).
//
// With a Sandbox, the guardian confines the thread that starts the program
// (Landlock, no_new_privs, capabilities), in the user and network namespace
// its policy's guardians share (the first makes it, the others join it from
// a C constructor, setns_cgo.go) and, with a mount view, builds the view
// first (internal/fsview; sandbox.go). While it waits it gives back what
// memory it can (shed.go). EngineDir is each agentsh process's 0700 folder
// for the shells' runtime folders and the rc snapshot, out of every
// sandbox's reach; the folders of dead processes are removed (engine.go,
// folders.go; docs/decisions/0004-process-containment.md).
package guard

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"agentsh/internal/fsview"
	"agentsh/internal/proc"
)

// The hidden mode is selected by this environment entry; the guardian
// removes it from the program's environment.
const (
	envVar   = "AGENTSH_GUARDIAN"
	envValue = "v1"
)

// GuardianName is argv[0] of every guardian, so `ps` tells them apart.
const GuardianName = "agentsh-guard"

const (
	startTimeout = 10 * time.Second
	// stopBound is how long Stop waits beyond the grace for the guardian's
	// sweep (its SIGKILL rounds need a few seconds at worst) before it kills
	// the guardian and sweeps itself.
	stopBound = 10 * time.Second
)

// Cmd describes the program a guardian runs.
type Cmd struct {
	Path string   // looked up in $PATH when it has no slash, as exec.Command does
	Args []string // argv, Args[0] included
	Env  []string // nil = this process's environment
	Dir  string   // "" = the current directory
	// Files become the program's descriptors 0..len(Files)-1, as
	// exec.Cmd's Stdin, Stdout, Stderr and ExtraFiles do; nil is /dev/null.
	Files []*os.File
	// Setsid starts the program in a session of its own (else in a process
	// group of its own); Setctty makes Files[0] its controlling terminal.
	Setsid, Setctty bool
	// Marker is an environment entry ("NAME=value") the program's processes
	// carry; the sweep ends processes carrying it even outside the tree.
	Marker []byte
	Grace  time.Duration // SIGTERM → SIGKILL
	// Cleanup paths are removed after the final sweep, also when agentsh
	// died.
	Cleanup []string
	// Sandbox confines the program and every descendant; nil = none.
	Sandbox *Sandbox
}

// Sandbox is how a guardian confines its program (internal/sandbox makes
// one from a policy). Only the guardian's forking thread is restricted: the
// guardian itself stays free to sweep and remove its cleanup paths.
type Sandbox struct {
	// Ruleset is a Landlock ruleset the program is restricted by, after
	// no_new_privs and dropping every capability it could inherit; nil =
	// no Landlock.
	Ruleset *os.File
	// NewNetwork starts the guardian, and so the program, in a new user
	// and network namespace whose loopback interface it brings up.
	NewNetwork bool
	// View is the filesystem view the program runs in: the guardian runs
	// in a new user namespace (or the Share's) and its forking thread
	// builds the view in a mount namespace of its own (fsview.Apply); its
	// other threads keep agentsh's view for the sweep and the cleanup.
	// nil = none.
	View fsview.View
	// Unsetenv are variables the program does not get (the sockets of
	// outside servers: sandbox.SocketEnv).
	Unsetenv []string
	// Fallback, when the namespaces or the view cannot be made, gives the sandbox to
	// start with instead (its network confined otherwise); Start closes
	// its ruleset. nil: Start fails.
	Fallback func(err error) (*Sandbox, error)
	// Share, with NewNetwork or View, is the namespaces the programs of
	// one sandbox share (a session's shells and jobs: a server one started
	// is reachable from the next; and a user namespace is not made at each
	// start): the first start makes them, later ones join them. nil, or a
	// build without cgo: each start makes its own.
	Share *NsShare
}

// NsShare holds the namespaces the guardians of one policy share
// (Sandbox.Share): a user namespace, and a network namespace when the
// network is off; they live while it is open.
type NsShare struct {
	mu        sync.Mutex
	user, net *os.File // net nil: the user namespace alone
}

// Close lets the namespaces go once no program is left in them.
func (s *NsShare) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked()
}

func (s *NsShare) forgetLocked() {
	if s.user != nil {
		s.user.Close()
		s.user = nil
	}
	if s.net != nil {
		s.net.Close()
		s.net = nil
	}
}

// keepLocked holds the namespaces guardian pid was started in: its user
// namespace, and its network namespace with withNet.
func (s *NsShare) keepLocked(pid int, withNet bool) {
	u, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/user")
	if err != nil {
		return
	}
	var n *os.File
	if withNet {
		if n, err = os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net"); err != nil {
			u.Close()
			return
		}
	}
	s.user, s.net = u, n
}

// joinable reports whether a start of sb joins its share instead of
// making namespaces: the share holds them, and of the same kind.
func (sb *Sandbox) joinable() bool {
	sh := sb.Share
	return sh != nil && canJoin && sb.namespaced() && sh.user != nil && (sh.net != nil) == sb.NewNetwork
}

// namespaced reports whether sb runs the guardian in a user namespace.
func (sb *Sandbox) namespaced() bool { return sb.NewNetwork || sb.View != nil }

// joinEnv tells a guardian to join the namespaces at two of its
// descriptors ("user,net"); a guardian that runs with it set has joined
// (the constructor ends it otherwise).
const joinEnv = "AGENTSH_GUARD_JOIN"

// joinError is a guardian that could not join an NsShare's namespaces.
type joinError struct{ msg string }

func (e *joinError) Error() string { return "sandbox: " + e.msg }

// Process is a program running under a guardian.
type Process struct {
	guardian *exec.Cmd
	lifeline *os.File
	pid      int
	start    uint64
	marker   []byte
	grace    time.Duration
	cleanup  []string

	exited chan struct{} // the program's status is known, or the guardian is gone
	code   int
	known  bool
	gone   chan struct{} // the guardian exited and was waited for
	swept  bool          // it exited after a complete sweep
	stop   sync.Once
}

var selfExe = sync.OnceValues(func() (string, error) {
	// /proc/self/exe still runs this binary after it was replaced or
	// deleted on disk (an upgrade, a rebuild while agentsh runs).
	if err := syscall.Access("/proc/self/exe", 1 /* X_OK */); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
})

// Start starts the guardian and, through it, the program; it returns once
// the program has been exec'd (or failed to be).
func Start(c Cmd) (*Process, error) {
	if sb := c.Sandbox; sb != nil && sb.namespaced() && sb.Share != nil && canJoin {
		// One start at a time per share: the first makes the namespaces
		// the others join.
		sb.Share.mu.Lock()
		defer sb.Share.mu.Unlock()
	}
	p, err := startGuardian(c)
	var je *joinError
	if errors.As(err, &je) {
		// The share's namespaces are gone or refused: make new ones.
		c.Sandbox.Share.forgetLocked()
		p, err = startGuardian(c)
	}
	var nsErr *namespaceError
	if err == nil || !errors.As(err, &nsErr) || c.Sandbox.Fallback == nil {
		return p, err
	}
	sb, ferr := c.Sandbox.Fallback(nsErr.err)
	if ferr != nil {
		return nil, fmt.Errorf("%w (and without namespaces: %v)", err, ferr)
	}
	if sb != nil && sb.Ruleset != nil {
		defer sb.Ruleset.Close()
	}
	c.Sandbox = sb
	return startGuardian(c)
}

// namespaceError is a guardian that could not be started in new
// namespaces although the probe (sandbox.Detect) said it could: a limit
// was reached (ENOSPC), or a policy changed since (EPERM).
type namespaceError struct{ err error }

func (e *namespaceError) Error() string {
	return "start the sandbox's namespaces: " + e.err.Error()
}

func (e *namespaceError) Unwrap() error { return e.err }

func startGuardian(c Cmd) (*Process, error) {
	path := c.Path
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = lp
	}
	if c.Dir != "" {
		// Checked here: a failed chdir of the guardian would name the
		// agentsh binary instead of the directory.
		if _, err := os.Stat(c.Dir); err != nil {
			return nil, &os.PathError{Op: "chdir", Path: c.Dir, Err: errors.Unwrap(err)}
		}
	}
	self, err := selfExe()
	if err != nil {
		return nil, fmt.Errorf("find the agentsh binary for the guardian: %w", err)
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("guardian lifeline: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, fmt.Errorf("guardian report pipe: %w", err)
	}
	extra := []*os.File{lifeR, repW}
	var devnull *os.File
	for _, f := range c.Files {
		if f == nil {
			if devnull == nil {
				if devnull, err = os.Open(os.DevNull); err != nil {
					lifeR.Close()
					lifeW.Close()
					repR.Close()
					repW.Close()
					return nil, err
				}
			}
			f = devnull
		}
		extra = append(extra, f)
	}
	args := []string{GuardianName, "-n", strconv.Itoa(len(c.Files)), "-grace", strconv.FormatInt(int64(c.Grace), 10)}
	if c.Setsid {
		args = append(args, "-sid")
	}
	if c.Setctty {
		args = append(args, "-ctty")
	}
	if len(c.Marker) > 0 {
		args = append(args, "-mark", string(c.Marker))
	}
	for _, p := range c.Cleanup {
		args = append(args, "-rm", p)
	}
	sys := &syscall.SysProcAttr{Setpgid: true}
	if sb := c.Sandbox; sb != nil && len(sb.Unsetenv) > 0 {
		env := c.Env
		if env == nil {
			env = os.Environ()
		}
		kept := make([]string, 0, len(env))
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(sb.Unsetenv, k) {
				kept = append(kept, kv)
			}
		}
		c.Env = kept
	}
	if sb := c.Sandbox; sb != nil {
		if sb.View != nil {
			args = append(append(args, "-view"), sb.View.Args()...)
		}
		if sb.Ruleset != nil {
			args = append(args, "-ll", strconv.Itoa(lifelineFd+len(extra)))
			extra = append(extra, sb.Ruleset)
		}
		if sb.joinable() {
			env := c.Env
			if env == nil {
				env = os.Environ()
			}
			fds := strconv.Itoa(lifelineFd + len(extra))
			extra = append(extra, sb.Share.user)
			if sb.Share.net != nil {
				fds += "," + strconv.Itoa(lifelineFd+len(extra))
				extra = append(extra, sb.Share.net)
			}
			c.Env = append(env[:len(env):len(env)], joinEnv+"="+fds)
		} else if sb.NewNetwork || sb.View != nil {
			uid, gid := os.Getuid(), os.Getgid()
			sys.Cloneflags = syscall.CLONE_NEWUSER
			sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			sys.GidMappingsEnableSetgroups = false
			// A guardian that is not root loses every capability at its
			// own exec; it needs these to bring loopback up and to build
			// the view.
			if sb.NewNetwork {
				args = append(args, "-lo")
				sys.Cloneflags |= syscall.CLONE_NEWNET
				sys.AmbientCaps = append(sys.AmbientCaps, capNetAdmin)
			}
			if sb.View != nil {
				sys.AmbientCaps = append(sys.AmbientCaps, capSysAdmin)
			}
		}
	}
	dir := c.Dir
	if sb := c.Sandbox; sb != nil && sb.namespaced() && dir != "" {
		// The guardian enters it for the program only: a chdir that
		// fails at the guardian's own exec (a model's chmod 000 of the
		// folder) would read as namespaces refused (EACCES) and weaken
		// every later start to the fallback.
		args = append(args, "-dir", dir)
		dir = ""
	}
	args = append(append(args, "--", path), c.Args...)
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	g := &exec.Cmd{
		Path:       self,
		Args:       args,
		Env:        append(env[:len(env):len(env)], envVar+"="+envValue),
		Dir:        dir,
		ExtraFiles: extra,
		// A group of its own: neither a terminal's ^C to agentsh's group
		// nor a `kill 0` reaches it.
		SysProcAttr: sys,
	}
	err = g.Start()
	lifeR.Close()
	repW.Close()
	if devnull != nil {
		devnull.Close()
	}
	if err != nil {
		lifeW.Close()
		repR.Close()
		if c.Sandbox != nil && (c.Sandbox.NewNetwork || c.Sandbox.View != nil) &&
			(errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES)) {
			return nil, &namespaceError{err}
		}
		return nil, err
	}
	p := &Process{guardian: g, lifeline: lifeW, marker: c.Marker, grace: c.Grace, cleanup: c.Cleanup,
		exited: make(chan struct{}), gone: make(chan struct{})}
	first := make(chan string, 1)
	go p.watch(repR, first)
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	var line string
	select {
	case line = <-first:
	case <-timer.C:
		// Whatever it did start, it ends with the lifeline; a guardian
		// that does not react to that is killed.
		lifeW.Close()
		select {
		case <-p.gone:
		case <-time.After(c.Grace + stopBound):
			_ = g.Process.Kill()
			<-p.gone
		}
		return nil, fmt.Errorf("guardian did not start %s within %v", path, startTimeout)
	}
	if rest, ok := strings.CutPrefix(line, "P "); ok {
		if pid, err := strconv.Atoi(rest); err == nil {
			p.pid = pid
			if st, ok := proc.Stat(pid); ok {
				p.start = st.Start
			}
			if sb := c.Sandbox; sb != nil && sb.namespaced() && sb.Share != nil && canJoin && sb.Share.user == nil {
				sb.Share.keepLocked(g.Process.Pid, sb.NewNetwork)
			}
			return p, nil
		}
	}
	lifeW.Close()
	<-p.gone
	if msg, ok := strings.CutPrefix(line, "J "); ok {
		return nil, &joinError{msg}
	}
	if msg, ok := strings.CutPrefix(line, "N "); ok {
		// The mount namespace or the view cannot be made on this
		// system: the same fallback as namespaces that cannot be made.
		return nil, &namespaceError{errors.New(msg)}
	}
	if msg, ok := strings.CutPrefix(line, "X "); ok {
		return nil, errors.New(msg)
	}
	return nil, fmt.Errorf("guardian exited during start (%v)", g.ProcessState)
}

// watch reads the guardian's reports until it exits, then waits for it.
func (p *Process) watch(r *os.File, first chan<- string) {
	br := bufio.NewReader(r)
	started := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		if !started {
			started = true
			first <- line
			continue
		}
		if rest, ok := strings.CutPrefix(line, "E "); ok && !p.known {
			if code, err := strconv.Atoi(rest); err == nil {
				p.code, p.known = code, true
				close(p.exited)
			}
		}
	}
	r.Close()
	_ = p.guardian.Wait()
	ps := p.guardian.ProcessState
	p.swept = ps != nil && ps.Exited() && ps.ExitCode() == exitSwept
	if !p.known {
		p.code = waitCode(ps)
		close(p.exited)
	}
	if !started {
		first <- ""
	}
	close(p.gone)
}

// waitCode is a wait status as a shell reports it: 128+N for signal N.
func waitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Pid is the program's process id (not the guardian's).
func (p *Process) Pid() int { return p.pid }

// GuardianPid is the guardian's process id.
func (p *Process) GuardianPid() int { return p.guardian.Process.Pid }

// StartTime is the program's start time in clock ticks after boot.
func (p *Process) StartTime() uint64 { return p.start }

// Exited is closed once the program has exited, or once the guardian is
// gone without having seen it exit.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitCode is the program's wait status as a shell reports it (128+N for
// signal N); valid after Exited. known is false when the guardian died
// first: code is then the guardian's own status.
func (p *Process) ExitCode() (code int, known bool) {
	<-p.exited
	return p.code, p.known
}

// Stop ends the program and every process below it and removes the
// cleanup paths: it closes the lifeline and waits for the guardian's sweep,
// and sweeps itself when the guardian was killed or hangs. Later and
// concurrent calls wait for the first one.
func (p *Process) Stop() {
	p.stop.Do(func() {
		_ = p.lifeline.Close()
		t := time.NewTimer(p.grace + stopBound)
		select {
		case <-p.gone:
		case <-t.C:
			_ = p.guardian.Process.Kill()
			<-p.gone
		}
		t.Stop()
		if !p.swept {
			proc.KillSession(p.pid, p.marker, p.start, p.grace)
		}
		for _, c := range p.cleanup {
			_ = os.RemoveAll(c)
		}
	})
}
