package sandbox

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"agentsh/internal/fsview"
)

// Features is what the kernel offers the sandbox (Detect).
type Features struct {
	// Supported is false on systems other than Linux: nothing is confined.
	Supported bool
	// Landlock is the kernel's Landlock ABI version; 0 = no Landlock, so
	// the filesystem is not confined.
	Landlock int
	// Namespaces reports that a new user and network namespace can be made
	// (a sandbox without network gets one, and every sandbox a mount view
	// in a user namespace); NamespacesErr says why not.
	Namespaces    bool
	NamespacesErr error
}

// Confinement is a Policy made ready for one shell start (Policy.Confine):
// what the guardian applies to the program it starts.
type Confinement struct {
	// Ruleset is the Landlock ruleset to restrict the program with; nil
	// when the kernel has none.
	Ruleset *os.File
	// NewNetwork runs the program in a new user and network namespace with
	// only the loopback interface, up: no host is reachable, not even this
	// one's 127.0.0.1, while servers the program starts itself work.
	NewNetwork bool
	// View is the filesystem view the program runs in (a mount namespace
	// in a new user namespace); nil without user namespaces.
	View fsview.View
}

// Close releases the ruleset descriptor (the guardian holds its own copy).
func (c *Confinement) Close() {
	if c != nil && c.Ruleset != nil {
		_ = c.Ruleset.Close()
	}
}

// Weaknesses lists what p would want and f cannot enforce, in words for
// the user; empty when p is fully enforced or confines nothing.
func (f Features) Weaknesses(p *Policy) []string {
	if !p.Enabled() {
		return nil
	}
	if !f.Supported {
		return []string{"sandbox OFF (not supported on " + runtime.GOOS + ")"}
	}
	var w []string
	view := f.Namespaces
	switch {
	case f.Landlock == 0 && !view:
		w = append(w, "filesystem OFF (no Landlock, no user namespaces)")
	case f.Landlock == 0:
		// The view holds, but /proc/<pid>/root of any outside process
		// of the user leads past it; Landlock's ptrace rule is what
		// refuses that.
		w = append(w, "filesystem view escapable through /proc (no Landlock)")
	default:
		if f.Landlock < 3 && !view {
			w = append(w, "truncation of outside files not controlled (Landlock ABI "+strconv.Itoa(f.Landlock)+")")
		}
		if f.Landlock < 6 {
			w = append(w, "can signal outside processes (Landlock ABI "+strconv.Itoa(f.Landlock)+")")
		}
	}
	if !view && f.Landlock > 0 {
		// Without the mount view: Landlock does not mediate chmod, utime
		// or xattrs, cannot keep .git or .agentsh read-only inside the
		// workspace, and (below ABI 9, unused here) lets a confined
		// program connect to an agent socket, a tmux server or
		// docker.sock and ask them to act outside.
		w = append(w, "no filesystem view (no user namespaces): chmod and xattrs outside, .git and .agentsh writable, unix sockets reachable (ssh-agent, tmux, docker)")
	}
	if !p.Network && !f.Namespaces {
		if f.Landlock >= 4 {
			w = append(w, "network: TCP blocked; UDP, MPTCP and unix open (no user namespaces)")
		} else {
			w = append(w, "network OPEN (no user namespaces, no Landlock network rules)")
		}
	}
	return w
}

// Describe is one line for the status line and `agentsh exec --sandbox`:
// the mode, the network, and what is weaker than asked ("sandbox weaker:
// …"), so the sandbox is never off without saying so.
func (f Features) Describe(p *Policy) string {
	if !p.Enabled() {
		return "sandbox: off"
	}
	net := "network off"
	if p.Network {
		net = "network on"
	}
	s := "sandbox: " + string(p.Mode) + ", " + net
	if w := f.Weaknesses(p); len(w) > 0 {
		s += "; sandbox weaker: " + strings.Join(w, ", ")
	}
	return s
}
