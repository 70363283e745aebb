package sandbox

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Features is what the kernel offers the sandbox (Detect).
type Features struct {
	// Supported is false on systems other than Linux: nothing is confined.
	Supported bool
	// Landlock is the kernel's Landlock ABI version; 0 = no Landlock, so
	// the filesystem is not confined.
	Landlock int
	// Namespaces reports that a new user and network namespace can be made
	// (a sandbox without network gets one); NamespacesErr says why not.
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
	switch {
	case f.Landlock == 0:
		w = append(w, "filesystem OFF (no Landlock)")
	default:
		if f.Landlock < 3 {
			w = append(w, "truncation of outside files not controlled (Landlock ABI "+strconv.Itoa(f.Landlock)+")")
		}
		if f.Landlock < 6 {
			w = append(w, "can signal outside processes (Landlock ABI "+strconv.Itoa(f.Landlock)+")")
		}
	}
	// Landlock controls connecting to a pathname unix socket from ABI 9
	// on, and this package does not use it yet: an agent socket (ssh,
	// gpg), a tmux server or docker.sock can be reached and asked to act
	// outside.
	w = append(w, "unix sockets reachable (ssh-agent, tmux, docker)")
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
